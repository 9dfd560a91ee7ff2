"""service.topics.unreported: a resync in the same state posts no Warning again."""

from __future__ import annotations

from typing import Any

from kafka_zk_operator.service.topics import Event, unreported

INVALID = Event("Warning", "InvalidSpec", "config key 'retention.msx' is unknown")
DRIFT = Event("Warning", "Drift", "retention.ms is 1000 in Kafka, 2000 in the spec (reported, not changed)")
CREATED = Event("Normal", "TopicCreated", "Created Kafka topic 'orders' with 3 partitions")


def _status(
    reason: str, message: str, *, generation: int = 3, drift: list[str] | None = None
) -> dict[str, Any]:
    return {
        "observedGeneration": generation,
        "conditions": [{"type": "Ready", "status": "False", "reason": reason, "message": message}],
        "drift": drift,
    }


def test_the_same_error_is_not_posted_again_for_the_same_generation() -> None:
    previous = _status("InvalidSpec", INVALID.message)
    assert unreported([INVALID], previous, 3) == []


def test_a_new_error_a_new_message_or_a_new_generation_is_posted() -> None:
    assert unreported([INVALID], _status("ClusterUnavailable", "ZooKeeper is down"), 3) == [INVALID]
    assert unreported([INVALID], _status("InvalidSpec", "another problem"), 3) == [INVALID]
    assert unreported([INVALID], _status("InvalidSpec", INVALID.message, generation=2), 3) == [INVALID]
    assert unreported([INVALID], {}, 3) == [INVALID]


def test_drift_already_in_the_status_is_not_posted_again_but_new_drift_is() -> None:
    previous = _status("InSync", "", drift=[DRIFT.message])
    previous["conditions"][0]["status"] = "True"
    other = Event("Warning", "Drift", "cleanup.policy is compact in Kafka, delete in the spec")
    assert unreported([DRIFT, other], previous, 3) == [other]


def test_normal_events_always_go_out() -> None:
    previous = _status("InvalidSpec", INVALID.message)
    assert unreported([CREATED, INVALID], previous, 3) == [CREATED]
