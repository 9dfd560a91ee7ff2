"""The smallest topic znode a spec can make, and the refusals it drives before any placement."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
import yaml

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import znode_bounds
from kafka_zk_operator.domain.model import Broker, TopicAssignment
from kafka_zk_operator.domain.topic.planning import DesiredTopic, ObservedTopic, plan_topic

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("partitions", "rf"), [(1, 1), (10, 3), (1000, 3), (123, 7), (101, 12)])
def test_lower_bound_is_never_above_the_shortest_real_encoding(partitions: int, rf: int) -> None:
    shortest = json.dumps({str(p): list(range(rf)) for p in range(partitions)}, separators=(",", ":"))
    assert znode_bounds.min_topic_znode_bytes(partitions, rf) == len(shortest) - 2  # without the braces


def test_digits_below_counts_every_decade() -> None:
    assert [znode_bounds.digits_below(n) for n in (0, 1, 10, 11, 100, 1001)] == [0, 1, 10, 12, 190, 2894]


def _largest_partitions(rf: int) -> int:
    low, high = 1, 10**6
    while low < high:
        mid = (low + high + 1) // 2
        fits = znode_bounds.min_topic_znode_bytes(mid, rf) <= znode_bounds.MAX_REQUEST_BYTES
        low, high = (mid, high) if fits else (low, mid - 1)
    return low


def test_crd_maxima_follow_from_the_request_limit() -> None:
    crd = yaml.safe_load((ROOT / "crds" / "kafkatopics.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["properties"]["partitions"]["maximum"] == _largest_partitions(1) == 88307
    rules = [v["rule"] for v in spec["x-kubernetes-validations"]]
    assert "self.partitions * self.replicationFactor <= 524287" in rules
    # Sound: no admitted-out spec could have fitted (every replica costs at least two bytes).
    assert all(_largest_partitions(rf) * rf <= 524287 for rf in (1, 2, 3, 5, 32, 1000))


def _brokers() -> list[Broker]:
    return [Broker(i, None) for i in range(3)]


@pytest.mark.parametrize(("partitions", "rf"), [(1_000_000, 1), (88_308, 1), (66_231, 3), (100_000, 3)])
def test_create_too_large_for_zookeeper_is_refused_without_placing(partitions: int, rf: int) -> None:
    tracemalloc.start()
    with pytest.raises(errors.RequestTooLarge) as refused:
        plan_topic(DesiredTopic("huge", partitions, rf, {}, None), None, _brokers())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1_000_000, f"{peak:,} bytes allocated before refusing"
    assert f"{partitions:,} partitions" in refused.value.message and "jute.maxbuffer" in refused.value.message
    assert refused.value.reason == errors.Reason.NOT_SUPPORTED


def test_largest_fitting_topic_is_still_planned() -> None:
    plan = plan_topic(DesiredTopic("big", 66_230, 3, {}, None), None, _brokers())
    assert plan.actions


def test_grow_too_large_for_zookeeper_is_refused_without_placing() -> None:
    current = TopicAssignment(partitions={0: (0, 1, 2)}, topic_id="fuxffnL_TWKJE99B8vHPmQ")
    have = ObservedTopic(current, {}, False, False)
    with pytest.raises(errors.RequestTooLarge, match="100,000 partitions"):
        plan_topic(DesiredTopic("huge", 100_000, 3, {}, None), have, _brokers())
