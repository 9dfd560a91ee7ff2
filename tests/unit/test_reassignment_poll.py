"""When the PartitionReassignment poll timer keeps running (kopf's ``when=`` filter)."""

from __future__ import annotations

from typing import Any

from kafka_zk_operator.handlers.partitionreassignment import _active

RECORD = {"batch": 1, "rate": 100, "previousRates": [{"broker": 1}], "addedReplicas": []}


def test_polls_until_finished_and_while_any_throttle_record_is_left() -> None:
    running: dict[str, Any] = {"phase": "Running"}
    assert _active(running)  # type: ignore[arg-type]
    assert not _active({"phase": "Completed", "throttle": {"applied": False, "rate": 100}})  # type: ignore[arg-type]
    assert _active({"phase": "Completed", "throttle": {**RECORD, "applied": True}})  # type: ignore[arg-type]
    # A write-ahead record (applied: false) whose ZooKeeper changes may be in place still needs removing.
    assert _active({"phase": "Stopped", "throttle": {**RECORD, "applied": False}})  # type: ignore[arg-type]
