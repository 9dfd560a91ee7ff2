"""When the PartitionReassignment poll timer keeps running (kopf's ``when=`` filter)."""

from __future__ import annotations

from typing import Any

from kafka_zk_operator.handlers.partitionreassignment import _active

RECORD = {"batch": 1, "rate": 100, "previousRates": [{"broker": 1}], "addedReplicas": []}
REFRESH = {"kafka.zk-operator.io/refresh": "true"}


def _polls(status: dict[str, Any], annotations: dict[str, str] | None = None) -> bool:
    return _active(status, annotations or {})  # type: ignore[arg-type]


def test_polls_until_finished_and_while_any_throttle_record_is_left() -> None:
    assert _polls({"phase": "Running"})
    assert not _polls({"phase": "Completed", "throttle": {"applied": False, "rate": 100}})
    assert _polls({"phase": "Completed", "throttle": {**RECORD, "applied": True}})
    # A write-ahead record (applied: false) whose ZooKeeper changes may be in place still needs removing.
    assert _polls({"phase": "Stopped", "throttle": {**RECORD, "applied": False}})


def test_a_refresh_of_a_reassignment_that_failed_before_it_started_is_polled_for() -> None:
    # kopf never calls the update handler for annotations under the operator's own prefix.
    assert _polls({"phase": "Failed"}, REFRESH)
    assert not _polls({"phase": "Failed"})
    assert not _polls({"phase": "Failed", "progress": {"startedAt": "2026-01-01T00:00:00Z"}}, REFRESH)
    assert not _polls({"phase": "Completed"}, REFRESH)
