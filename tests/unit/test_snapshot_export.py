"""Unit tests for ``kzo snapshot``'s pure parts: replica lists during reassignments
(``domain.reassignment.replica_views``), the snapshot document and its rendering (``domain.documents.snapshot_export``),
and DescribeLogDirs sizes. Every document built here must load with the placement engine's own
loader, ``domain.documents.snapshot.parse_snapshot_json``.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import pytest

from kafka_zk_operator.cli.log_dir_sizes import sizes_from_log_dirs
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.documents import snapshot, snapshot_export
from kafka_zk_operator.domain.documents.snapshot_export import TopicInput
from kafka_zk_operator.domain.model import Broker, TopicAssignment
from kafka_zk_operator.domain.reassignment.replica_views import (
    ReassignmentView,
    moving_partition,
    pending_targets,
    replicas_as_of,
)

RACKED = [Broker(3, "rack-c"), Broker(1, "rack-a"), Broker(2, "rack-b"), Broker(10, "rack-a")]


def assignment(
    partitions: dict[int, tuple[int, ...]],
    *,
    adding_replicas: dict[int, tuple[int, ...]] | None = None,
    removing_replicas: dict[int, tuple[int, ...]] | None = None,
    version: int = 3,
) -> TopicAssignment:
    return TopicAssignment(
        partitions=MappingProxyType(partitions),
        adding_replicas=MappingProxyType(adding_replicas or {}),
        removing_replicas=MappingProxyType(removing_replicas or {}),
        version=version,
    )


def body_of(snap: snapshot_export.Snapshot, section: str, key: str) -> Any:
    """``document[section][key]`` (the document is typed loosely as JSON)."""
    part: Any = snap.document[section]
    return part[key]


def loads(snap: snapshot_export.Snapshot, **kwargs: bool) -> snapshot.ClusterSnapshot:
    return snapshot.parse_snapshot_json(snapshot_export.render(snap.document), **kwargs)


# --- replica views --------------------------------------------------------------------------------


def test_a_2_4_plus_reassignment_yields_the_exact_target_and_original() -> None:
    # ORS [1,2,3] -> TRS [4,5,6]: RS = TRS ++ ORS (Kafka's own example, reference §9).
    topic = assignment(
        {0: (4, 5, 6, 1, 2, 3)}, adding_replicas={0: (4, 5, 6)}, removing_replicas={0: (1, 2, 3)}
    )
    move = moving_partition("t", 0, topic)
    assert move is not None
    assert move.target == (4, 5, 6) and move.original == (1, 2, 3) and move.original_exact


def test_overlapping_target_and_original_keep_the_target_order_exact() -> None:
    # ORS [1,2,3] -> TRS [3,1,4]: RS = [3,1,4,2], adding [4], removing [2].
    topic = assignment({0: (3, 1, 4, 2)}, adding_replicas={0: (4,)}, removing_replicas={0: (2,)})
    move = moving_partition("t", 0, topic)
    assert move is not None
    assert move.target == (3, 1, 4)
    assert set(move.original) == {1, 2, 3} and not move.original_exact, "old order is not in ZooKeeper"


def test_a_request_not_yet_acted_on_comes_from_the_reassign_znode() -> None:
    topic = assignment({0: (1, 2), 1: (2, 3)})
    pending = pending_targets([("t", 0, [3, 1]), ("other", 0, [1])])
    move = moving_partition("t", 0, topic, pending["t"])
    assert move is not None
    assert move.target == (3, 1) and move.original == (1, 2) and move.original_exact
    assert moving_partition("t", 1, topic, pending["t"]) is None


def test_before_2_4_the_union_in_the_topic_znode_makes_the_original_inexact() -> None:
    # Kafka 2.3 writes the union of old and new replicas while moving; only the znode has the target.
    topic = assignment({0: (1, 2, 3, 4)}, version=1)
    move = moving_partition("t", 0, topic, {0: (3, 4)})
    assert move is not None
    assert move.target == (3, 4) and not move.original_exact


def test_a_request_equal_to_the_current_list_is_not_a_move() -> None:
    assert moving_partition("t", 0, assignment({0: (1, 2)}), {0: (1, 2)}) is None


def test_replicas_as_of_each_view() -> None:
    topic = assignment({0: (2, 3, 1), 1: (1, 2)}, adding_replicas={0: (2, 3)}, removing_replicas={0: (1,)})
    target, moving = replicas_as_of("t", topic, ReassignmentView.TARGET)
    original, _ = replicas_as_of("t", topic, ReassignmentView.ORIGINAL)
    assert target == {0: (2, 3), 1: (1, 2)}
    assert original == {0: (1,), 1: (1, 2)}
    assert [m.partition for m in moving] == [0]


# --- the snapshot document ------------------------------------------------------------------------


def test_document_shape_order_and_loading() -> None:
    topics = [
        TopicInput("zeta", assignment({0: (1, 2), 1: (2, 3)})),
        TopicInput("alpha", assignment({10: (3, 1), 2: (1, 2), 0: (2, 3), 1: (3, 10)})),
    ]
    snap = snapshot_export.build(RACKED, topics)
    assert list(snap.document) == ["brokers", "topics"]
    document: Any = snap.document
    assert list(document["brokers"]) == ["1", "2", "3", "10"]
    assert document["brokers"]["10"] == {"rack": "rack-a"}
    assert list(document["topics"]) == ["alpha", "zeta"]
    assert list(document["topics"]["alpha"]["partitions"]) == ["0", "1", "2", "10"]
    assert snap.partition_count == 6 and not snap.moving and not snap.unregistered_replica_brokers

    loaded = loads(snap)
    assert [b.id for b in loaded.brokers] == [1, 2, 3, 10]
    assert dict(loaded.topics["alpha"].partitions) == {0: (2, 3), 1: (3, 10), 2: (1, 2), 10: (3, 1)}
    arrays = snapshot.snapshot_to_arrays(loaded)
    assert arrays.n_brokers == 4 and arrays.n_partitions == 6


def test_render_is_json_with_one_broker_or_topic_per_line_and_deterministic() -> None:
    topics = [TopicInput(f"t{i}", assignment({0: (1, 2), 1: (2, 3)})) for i in range(3)]
    first = snapshot_export.render(snapshot_export.build(RACKED, topics).document)
    again = snapshot_export.render(snapshot_export.build(list(reversed(RACKED)), topics[::-1]).document)
    assert first == again
    lines = first.splitlines()
    assert lines[0] == "{" and lines[-1] == "}"
    assert ' "t1":{"partitions":{"0":[1,2],"1":[2,3]}},' in lines
    assert ' "10":{"rack":"rack-a"}' in lines
    assert json.loads(first)["topics"]["t2"]["partitions"]["1"] == [2, 3]


def test_an_empty_cluster_renders_valid_json() -> None:
    text = snapshot_export.render(snapshot_export.build([], []).document)
    assert json.loads(text) == {"brokers": {}, "topics": {}}


def test_rackless_brokers_are_written_with_null_racks() -> None:
    snap = snapshot_export.build([Broker(1), Broker(2)], [TopicInput("t", assignment({0: (1, 2)}))])
    assert json.loads(snapshot_export.render(snap.document))["brokers"] == {
        "1": {"rack": None},
        "2": {"rack": None},
    }
    assert [b.rack for b in loads(snap).brokers] == [None, None]


def test_a_moving_partition_is_written_as_target_or_original_and_recorded() -> None:
    topics = [
        TopicInput(
            "moving",
            assignment({0: (2, 3, 1), 1: (1, 2)}, adding_replicas={0: (2, 3)}, removing_replicas={0: (1,)}),
        )
    ]
    target = snapshot_export.build(RACKED, topics)
    body = body_of(target, "topics", "moving")
    assert body["partitions"] == {"0": [2, 3], "1": [1, 2]}
    assert body["reassigning"] == {"view": "target", "partitions": {"0": {"target": [2, 3], "original": [1]}}}
    assert len(target.moving) == 1
    assert dict(loads(target, allow_mixed_rf=True).topics["moving"].partitions) == {0: (2, 3), 1: (1, 2)}

    original = snapshot_export.build(RACKED, topics, view=ReassignmentView.ORIGINAL)
    assert body_of(original, "topics", "moving")["partitions"]["0"] == [1]
    assert original.mixed_rf_topics == ("moving",)
    with pytest.raises(errors.InvalidSpec, match="mixes replication factors"):
        loads(original)
    assert loads(original, allow_mixed_rf=True).topics["moving"].partitions[0] == (1,)


def test_replicas_on_an_offline_broker_list_that_broker_so_the_document_loads() -> None:
    topics = [TopicInput("t", assignment({0: (1, 4), 1: (2, 3)}))]
    snap = snapshot_export.build(RACKED, topics, offline_racks={4: "rack-b"})
    assert snap.unregistered_replica_brokers == (4,)
    assert body_of(snap, "brokers", "4") == {"rack": "rack-b", "live": False}
    assert not snap.mixed_racks
    assert [b.id for b in loads(snap).brokers] == [1, 2, 3, 4, 10]


def test_an_offline_broker_without_a_known_rack_is_flagged() -> None:
    snap = snapshot_export.build(RACKED, [TopicInput("t", assignment({0: (1, 4)}))])
    assert body_of(snap, "brokers", "4") == {"rack": None, "live": False}
    assert snap.mixed_racks
    rackless = snapshot_export.build([Broker(1)], [TopicInput("t", assignment({0: (1, 4)}))])
    assert not rackless.mixed_racks
    assert [b.id for b in loads(rackless).brokers] == [1, 4]


@pytest.mark.parametrize(
    ("partitions", "reason"),
    [({}, "lists no partitions"), ({0: ()}, "has no replicas"), ({0: (1, 1)}, "lists a broker twice")],
)
def test_topics_kafka_could_not_serve_are_left_out_with_a_reason(
    partitions: dict[int, tuple[int, ...]], reason: str
) -> None:
    snap = snapshot_export.build(
        RACKED, [TopicInput("bad", assignment(partitions)), TopicInput("ok", assignment({0: (1,)}))]
    )
    assert [name for name, _ in snap.left_out] == ["bad"]
    assert reason in snap.left_out[0][1]
    assert list(loads(snap).topics) == ["ok"]


def test_sizes_are_written_per_partition_and_load() -> None:
    topics = [TopicInput("t", assignment({0: (1, 2), 1: (2, 3)})), TopicInput("u", assignment({0: (3,)}))]
    snap = snapshot_export.build(RACKED, topics, sizes={("t", 0): 2048, ("t", 1): 0, ("gone", 0): 5})
    assert body_of(snap, "topics", "t")["sizes"] == {"0": 2048, "1": 0}
    assert "sizes" not in body_of(snap, "topics", "u")
    loaded = loads(snap)
    assert dict(loaded.topics["t"].sizes) == {0: 2048, 1: 0}
    assert snapshot.snapshot_to_arrays(loaded).sizes.tolist() == [2048, 0, 0]


def test_describe_log_dirs_sizes_take_the_largest_current_replica() -> None:
    def part(p: int, size: int, future: bool = False) -> dict[str, object]:
        return {"partition_index": p, "partition_size": size, "offset_lag": 0, "is_future_key": future}

    responses = [
        {
            "broker": 1,
            "log_dirs": [
                {"error_code": 0, "topics": [{"name": "t", "partitions": [part(0, 100), part(1, 7)]}]}
            ],
        },
        {
            "broker": 2,
            "log_dirs": [
                {
                    "error_code": 0,
                    "topics": [{"name": "t", "partitions": [part(0, 90), part(0, 999, future=True)]}],
                },
                {"error_code": 57, "topics": [{"name": "t", "partitions": [part(1, 10**9)]}]},
            ],
        },
    ]
    assert sizes_from_log_dirs(responses) == {("t", 0): 100, ("t", 1): 7}
