"""A PartitionReassignment at its schema maxima: refused before it is built, or bounded.

The e2e side (the operator under the chart's memory limit) is tests/e2e/test_memory_bound.py;
docs/reliability.md ("Memory bound per admitted input") has the table.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import znode_bounds
from kafka_zk_operator.domain.reassignment.batches import check_batches_fit, make_batches
from kafka_zk_operator.domain.reassignment.plan import ClusterView, PartitionMove
from kafka_zk_operator.domain.reassignment.request import BatchLimits, parse_request, plan_request
from kafka_zk_operator.domain.reassignment.spec import MAX_REPLICAS, MAX_REQUESTED_PARTITIONS

ROOT = Path(__file__).resolve().parents[2]


def test_the_explicit_maxima_are_the_crds() -> None:
    crd = yaml.safe_load((ROOT / "crds" / "partitionreassignments.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert spec["partitions"]["maxItems"] == MAX_REQUESTED_PARTITIONS
    assert spec["partitions"]["items"]["properties"]["replicas"]["maxItems"] == MAX_REPLICAS


def _json_spec(document: object) -> dict[str, object]:
    return {"mode": "Explicit", "reassignmentJson": json.dumps(document)}


def test_deeply_nested_json_is_a_reason_not_a_traceback() -> None:
    with pytest.raises(errors.InvalidSpec, match="nests arrays or objects too deeply"):
        parse_request({"mode": "Explicit", "reassignmentJson": "[" * 200_000})


def test_a_replica_list_longer_than_the_schema_allows_is_refused_at_once() -> None:
    """200,000 distinct broker ids in one list (a 1 MiB string): the duplicate check was
    quadratic (hours of CPU); now the length is refused before the list is read."""
    document = {"partitions": [{"topic": "t", "partition": 0, "replicas": list(range(200_000))}]}
    started = time.perf_counter()
    with pytest.raises(errors.InvalidSpec, match=f"200,000 replicas; at most {MAX_REPLICAS}"):
        parse_request(_json_spec(document))
    assert time.perf_counter() - started < 2


def test_more_partitions_than_spec_partitions_allows_are_refused() -> None:
    document = {"partitions": [{"topic": "t", "partition": p, "replicas": [0]} for p in range(25_000)]}
    with pytest.raises(errors.InvalidSpec, match="25,000 partitions; at most 20,000"):
        parse_request(_json_spec(document))


def _cluster(topics: dict[str, int]) -> ClusterView:
    return ClusterView(
        brokers={0: None, 1: None, 2: None},
        assignments={t: {p: (p % 3, (p + 1) % 3) for p in range(n)} for t, n in topics.items()},
    )


def test_thousands_of_unknown_topics_make_a_short_message() -> None:
    names = [f"missing-{i:05d}-{'x' * 230}" for i in range(5_000)]
    request = parse_request({"mode": "Rebalance", "topics": names})
    with pytest.raises(errors.InvalidSpec) as refused:
        plan_request(request, _cluster({"present": 3}))
    message = str(refused.value)
    assert message.startswith("spec.topics names topics that do not exist: missing-00000-")
    assert message.endswith(" and 4,990 more") and len(message) < 4_096  # whole in status


def test_a_batch_too_long_for_one_znode_is_refused_when_proposed() -> None:
    """10,000 partitions of a 249-character topic in one batch: about 2.9 MB of
    /admin/reassign_partitions, which ZooKeeper would refuse when the batch is submitted."""
    topic = "t" * 249
    moves = [PartitionMove(topic, p, (0, 1, 2), (3, 4, 5)) for p in range(10_000)]
    limits = BatchLimits(max_partitions=10_000, max_moves_per_broker=10_000)
    batches = make_batches(moves, limits)
    with pytest.raises(
        errors.RequestTooLarge, match=r"2,978,918 bytes.*maxPartitions to at most 3,504 "
    ) as refused:
        check_batches_fit(batches, limits)
    suggested = int(str(refused.value).split("at most ")[1].split(" ")[0].replace(",", ""))
    entries = [(m.topic, m.partition, m.target) for m in moves[-suggested:]]  # the widest ids
    assert znode_bounds.admin_znode_bytes(entries) <= znode_bounds.MAX_ADMIN_DATA_BYTES
    entries.append((topic, 0, (3, 4, 5)))
    assert znode_bounds.admin_znode_bytes(entries) > znode_bounds.MAX_ADMIN_DATA_BYTES - 300


def test_the_default_batches_of_a_large_plan_fit() -> None:
    moves = [PartitionMove("t" * 249, p, (0, 1, 2), (3, 4, 5)) for p in range(20_000)]
    check_batches_fit(make_batches(moves, BatchLimits()), BatchLimits())


def test_the_admin_znode_length_is_exact() -> None:
    entries = [("orders", 12, (1, 20, 300)), ("t" * 249, 0, (7,))]
    document = {
        "version": 1,
        "partitions": [{"topic": t, "partition": p, "replicas": list(r)} for t, p, r in entries],
    }
    assert znode_bounds.admin_znode_bytes(entries) == len(json.dumps(document, separators=(",", ":")))


def test_a_thousand_unregistered_brokers_make_a_short_message() -> None:
    request = parse_request({"mode": "AddBrokers", "brokers": list(range(1_000, 2_000))})
    with pytest.raises(errors.InvalidSpec) as refused:
        plan_request(request, _cluster({"present": 3}))
    message = str(refused.value)
    assert "and 980 more are not registered (registered: 0, 1, 2)" in message and len(message) < 400
