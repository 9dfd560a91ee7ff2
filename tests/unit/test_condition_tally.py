"""The ``kzo_kafkatopics`` gauge: KafkaTopics per (cluster, ready, reason), with a real
``prometheus_client`` gauge in its own registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Gauge, generate_latest

from kafka_zk_operator.runtime.condition_tally import ConditionTally, ready_labels


def _gauge() -> tuple[Gauge, CollectorRegistry]:
    registry = CollectorRegistry()
    gauge = Gauge(
        "kzo_kafkatopics", "KafkaTopics by Ready", ["cluster", "ready", "reason"], registry=registry
    )
    return gauge, registry


def _series(registry: CollectorRegistry) -> set[str]:
    return {
        line
        for line in generate_latest(registry).decode().splitlines()
        if line.startswith("kzo_kafkatopics{")
    }


def _ready(status: str, reason: str) -> dict[str, object]:
    return {
        "conditions": [
            {"type": "Paused", "status": "True"},
            {"type": "Ready", "status": status, "reason": reason},
        ]
    }


def test_ready_labels_come_from_the_ready_condition() -> None:
    assert ready_labels("main", _ready("False", "InvalidSpec")) == ("main", "False", "InvalidSpec")
    assert ready_labels("main", {}) == ("main", "Unknown", "")


def test_counts_follow_each_resource_and_empty_series_disappear() -> None:
    gauge, registry = _gauge()
    tally = ConditionTally(gauge)
    tally.record(("ns", "a"), ("main", "True", "Created"))
    tally.record(("ns", "b"), ("main", "True", "Created"))
    tally.record(("ns", "c"), ("main", "False", "InvalidSpec"))
    assert _series(registry) == {
        'kzo_kafkatopics{cluster="main",ready="True",reason="Created"} 2.0',
        'kzo_kafkatopics{cluster="main",ready="False",reason="InvalidSpec"} 1.0',
    }
    tally.record(("ns", "c"), ("main", "True", "Updated"))  # fixed
    tally.record(("ns", "a"), ("main", "True", "Created"))  # unchanged: no-op
    tally.forget(("ns", "b"))
    tally.forget(("ns", "unknown"))
    assert _series(registry) == {
        'kzo_kafkatopics{cluster="main",ready="True",reason="Created"} 1.0',
        'kzo_kafkatopics{cluster="main",ready="True",reason="Updated"} 1.0',
    }
    assert tally.counts() == {("main", "True", "Created"): 1, ("main", "True", "Updated"): 1}
