"""Snapshot documents: parsing into typed values, arrays round trip, one-line validation errors."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.documents.snapshot import (
    arrays_to_snapshot,
    parse_snapshot,
    parse_snapshot_json,
    snapshot_to_arrays,
)
from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.placement.synthetic import synthetic_cluster

GOOD = {
    "brokers": {"1": {"rack": "a"}, "2": {"rack": "b"}, "3": {"rack": "c"}, "7": {"rack": "a"}},
    "topics": {
        "orders": {"partitions": {"0": [1, 2, 3], "1": [2, 3, 1]}, "sizes": {"0": 100, "1": 5}},
        "audit": {"partitions": {"0": [3, 1]}},
    },
}


def test_parses_brokers_topics_and_sizes() -> None:
    snap = parse_snapshot(GOOD)
    assert snap.brokers == (Broker(1, "a"), Broker(2, "b"), Broker(3, "c"), Broker(7, "a"))
    assert list(snap.topics) == ["audit", "orders"]
    assert snap.topics["orders"].partitions[1] == (2, 3, 1)
    assert snap.topics["orders"].sizes == {0: 100, 1: 5}
    assert snap.topics["audit"].sizes == {}


def test_arrays_keep_order_leaders_and_empty_brokers() -> None:
    arrays = snapshot_to_arrays(parse_snapshot(GOOD))
    assert arrays.broker_ids.tolist() == [1, 2, 3, 7]
    assert arrays.topics == ("audit", "orders")
    ids = arrays.broker_ids
    rows = [[int(ids[b]) for b in row if b >= 0] for row in arrays.replicas]
    assert rows == [[3, 1], [1, 2, 3], [2, 3, 1]]
    assert arrays.sizes.tolist() == [0, 100, 5]


def test_round_trip_through_the_document() -> None:
    cluster = synthetic_cluster(6, 3, 100, seed=1)
    again = snapshot_to_arrays(parse_snapshot_json(json.dumps(arrays_to_snapshot(cluster))))
    assert np.array_equal(again.replicas, cluster.replicas)
    assert again.topics == cluster.topics
    assert np.array_equal(again.sizes, cluster.sizes)


def test_rack_unaware_cluster() -> None:
    snap = parse_snapshot(
        {"brokers": {"0": {}, "1": {"rack": None}}, "topics": {"t": {"partitions": {"0": [0, 1]}}}}
    )
    assert snapshot_to_arrays(snap).racks == (None,)


def _with(path: list[str], value: object) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(GOOD))
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (_with(["topics", "orders", "partitions", "0"], [1, 9, 3]), "names broker 9, which is not in"),
        (_with(["topics", "orders", "partitions", "0"], [1, 2, 1]), "lists broker 1 twice"),
        (_with(["topics", "orders", "partitions", "1"], [2, 3]), "mixes replication factors [2, 3]"),
        (_with(["topics", "orders", "partitions", "0"], "1,2,3"), "must be a non-empty list of broker ids"),
        (_with(["topics", "orders", "partitions", "0"], []), "must be a non-empty list"),
        (
            _with(["topics", "orders", "partitions", "0"], [1, "2", 3]),
            "must hold integer broker ids, found '2'",
        ),
        (_with(["topics", "orders", "partitions", "0"], [1, True, 3]), "must hold integer broker ids"),
        (
            _with(["topics", "orders", "partitions", "x"], [1, 2, 3]),
            "partition id must be a non-negative integer",
        ),
        (_with(["topics", "orders", "sizes", "0"], -1), "non-negative integer number of bytes"),
        (_with(["topics", "orders", "sizes", "5"], 1), "partition 5 is not in"),
        (_with(["topics", "orders"], []), "must be an object"),
        (_with(["brokers", "x1"], {}), "broker id must be a non-negative integer"),
        (_with(["brokers", "8"], {"rack": None}), "only some brokers have a rack"),
        (_with(["brokers", "8"], {"rack": 5}), "rack must be a non-empty string or null"),
        (_with(["brokers"], []), "'brokers' must be an object"),
        ({"brokers": {}, "topics": {}}, "lists no brokers"),
        ({"topics": {}}, "no 'brokers' object"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_validation_errors_are_one_line(doc: object, message: str) -> None:
    with pytest.raises(errors.InvalidSpec) as info:
        parse_snapshot(doc)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_mixed_replication_factors_can_be_allowed() -> None:
    doc = _with(["topics", "orders", "partitions", "1"], [2, 3])
    snap = parse_snapshot(doc, allow_mixed_rf=True)
    assert snap.topics["orders"].partitions[1] == (2, 3)


def test_malformed_json_is_a_user_error() -> None:
    with pytest.raises(errors.InvalidSpec, match="not valid JSON"):
        parse_snapshot_json('{"brokers": {')
