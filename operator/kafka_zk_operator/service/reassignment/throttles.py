"""The replication throttle of the batch in flight: applied with a write-ahead record in the status,
followed when ``spec.throttle`` changes, completed after a crash, and released."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.reassignment.throttles import (
    CLEARED_FIELDS,
    ThrottleRecord,
    record_fields,
)
from kafka_zk_operator.service.reassignment import execution
from kafka_zk_operator.service.reassignment.state import Run


def release(run: Run, record: ThrottleRecord, event: str | None = None) -> None:
    """Take the operator's throttle ``record`` off the cluster and clear it in the status (its rate
    stays, as what ``spec.throttle`` asked for); ``event``: the ThrottleRemoved message to post.

    A record whose application a crash cut short is completed first (:func:`settle`), so that
    removing it restores every broker.
    """
    settle(run, record)
    execution.remove_throttle(run.zk(), record)
    run.update(throttle={**CLEARED_FIELDS, "rate": record.rate})
    if event is not None:
        run.event("Normal", "ThrottleRemoved", event)


def ensure_throttle(run: Run, current: int, rate: int, batch: Sequence[PartitionMove]) -> None:
    """Throttle exactly this batch; the record reaches the status before ZooKeeper changes.

    :raises NotSupported: the cluster's line has no replication throttles (0.10.0).
    """
    store = run.zk()
    line = store.cluster_line()
    if not line.at_least(kafka_lines.FIRST_THROTTLE_LINE):
        raise errors.NotSupported(
            "spec.throttle needs Kafka 0.10.1 or later (replication throttles, KIP-73); this cluster "
            f"runs {line.describe()}. Remove spec.throttle to move without one."
        )
    record = run.status.throttle_record
    if record is not None and record.batch == current:
        execution.apply_throttle(store, record)  # idempotent: a crash may have cut it short
        run.update(throttle=record_fields(record))
        return
    if record is not None:
        release(run, record)
        run.save("throttle")
    fresh = execution.plan_batch_throttle(store, current, rate, batch)
    run.update(throttle={**record_fields(fresh), "applied": False})
    run.save("throttle")  # write-ahead
    execution.apply_throttle(store, fresh)
    run.update(throttle=record_fields(fresh))
    run.event(
        "Normal",
        "ThrottleApplied",
        f"Throttled batch {current} to {rate} B/s on brokers {', '.join(str(p.broker) for p in fresh.brokers)}",
    )


def adjust_throttle(run: Run, current: int, batch: Sequence[PartitionMove]) -> None:
    """Follow a ``spec.throttle`` changed while the batch runs: new rate, throttle added or removed."""
    raw = run.resource.spec.get("throttle")
    wanted = int(raw) if raw else None
    record = run.status.throttle_record
    if record is not None and record.batch != current:
        record = None  # a leftover of an earlier batch: replaced below or at the next submission
    if record is None:
        if wanted is not None and run.progress.batch_started_at:
            ensure_throttle(run, current, wanted, batch)
        return
    settle(run, record)
    if wanted == record.rate:
        return
    if wanted is None:
        execution.remove_throttle(run.zk(), record)
        run.update(throttle={**CLEARED_FIELDS, "rate": None})
        run.event("Normal", "ThrottleRemoved", f"spec.throttle was removed: batch {current} runs unthrottled")
        return
    changed = dataclasses.replace(record, rate=wanted)
    run.update(throttle={**record_fields(changed), "applied": False})
    run.save("throttle")  # write-ahead
    execution.apply_throttle(run.zk(), changed)
    run.update(throttle=record_fields(changed))
    run.event(
        "Normal",
        "ThrottleChanged",
        f"Batch {current} throttle changed from {record.rate} to {wanted} B/s",
    )


def settle(run: Run, record: ThrottleRecord) -> None:
    """Complete a record whose application was cut short (``applied: false`` in the status).

    A write-ahead record, or a rate change, reaches the status before ZooKeeper; a crash or a
    ZooKeeper error part-way leaves some brokers or topics without it. Applying it again is
    idempotent, and afterwards removing it restores every broker (``restore_broker_config``
    only resets values equal to the record's rate).
    """
    if run.status.throttle_pending:
        execution.apply_throttle(run.zk(), record)
        run.update(throttle=record_fields(record))
