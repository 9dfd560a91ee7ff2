"""The end of a reassignment: its verdict and events, always with the operator's throttle removed."""

from __future__ import annotations

from kafka_zk_operator.domain.reassignment.status import Phase, Why, timestamp
from kafka_zk_operator.domain.reassignment.throttles import CLEARED_FIELDS
from kafka_zk_operator.service.reassignment import throttles
from kafka_zk_operator.service.reassignment.state import Run


def remove_leftover_throttle(run: Run) -> None:
    record = run.status.throttle_record
    if record is not None:
        throttles.release(run, record, f"Removed the replication throttle of batch {record.batch}")


def finish_run(run: Run, phase: Phase, why: Why, message: str, partitions_done: int) -> None:
    record = run.status.throttle_record
    if record is not None:
        throttles.release(run, record, f"Removed the replication throttle of batch {record.batch}")
    elif run.status.throttle_applied:  # applied, but names no batch or rate: clear it
        run.update(throttle={**CLEARED_FIELDS, "rate": (run.status.throttle or {}).get("rate")})
    run.set_progress(completed_at=timestamp(run.now), partitions_done=partitions_done)
    run.decide(phase, why, message)
    kind = "Warning" if phase is Phase.FAILED else "Normal"
    run.event(kind, phase.value, message)
