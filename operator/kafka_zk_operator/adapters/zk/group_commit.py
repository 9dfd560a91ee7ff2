"""Topic creates from many worker threads, sent to ZooKeeper together (a group commit).

Kafka's controller handles every change of ``/brokers/topics`` as one event: it lists all topics,
compares them with its own, and sends the new partitions' LeaderAndIsr and UpdateMetadata
requests, and every broker then rebuilds its metadata cache, whose size is all partitions. Topics
that arrive one at a time cost each of these once per topic; topics that arrive together cost
them once. On this project's stack (issue #16), 10,000 topics written one transaction each at
137 a second needed 198.9 broker CPU-seconds and had their last leaders 50 s after the last
write; the same topics 27 to a transaction needed 103.0 CPU-seconds and 3.5 s
(``benchmarks/stack_floor_bench.py --batch``).

:class:`CreateBatcher` holds a create for at most ``window`` seconds so that creates from other
threads can join it, then sends them as ONE ZooKeeper transaction: the guards once (the KRaft
check of ``/controller_epoch``, the leader's fence), then each topic's operations. The
transaction is atomic, so each topic is still written whole or not at all. When it fails, nothing
of it was written, and each create is sent again alone: the one at fault gets its own error (e.g.
the topic exists), the others are written. A connection lost while it was in flight is reported
to every create in it, as it would be to a create sent alone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_zk_operator.adapters.zk.store_writes import MAX_REQUEST_BYTES, request_bytes
from kafka_zk_operator.domain import errors

#: Topics in one transaction at most (ZooKeeper's request size limit is checked as well).
MAX_TOPICS_PER_TRANSACTION = 200


@dataclass
class PendingCreate:
    """One topic's create transaction, waiting to be sent."""

    tx: Any
    #: The paths of ``tx``'s operations, in order; the first ``guards`` are the guard checks.
    paths: list[str]
    guards: int
    size: int
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


#: Sends one transaction (its operations' paths in order); raises what the store raises.
Commit = Callable[[Any, list[str]], None]


class CreateBatcher:
    """Collects the creates that arrive within ``window`` seconds of the first and sends them as
    one transaction through ``commit`` (the store's guarded commit)."""

    def __init__(self, new_transaction: Callable[[], Any], commit: Commit, window: float) -> None:
        self._new_transaction = new_transaction
        self._commit = commit
        self.window = window
        self._lock = threading.Lock()
        self._full = threading.Condition(self._lock)
        self._queue: list[PendingCreate] = []
        self._collecting = False
        #: Transactions sent (for tests and benchmarks).
        self.transactions = 0

    def create(self, tx: Any, paths: list[str], guards: int) -> None:
        """Send ``tx`` (whose first ``guards`` operations are the guard checks), possibly together
        with other creates; returns once it is written. Raises what sending it alone would raise."""
        pending = PendingCreate(tx, paths, guards, request_bytes(tx))
        with self._lock:
            self._queue.append(pending)
            leads = not self._collecting
            self._collecting = True
            if not leads and len(self._queue) >= MAX_TOPICS_PER_TRANSACTION:
                self._full.notify()
        if leads:
            self._collect_and_send()
        pending.done.wait()
        if pending.error is not None:
            raise pending.error

    def _collect_and_send(self) -> None:
        deadline = time.monotonic() + self.window
        with self._lock:
            while len(self._queue) < MAX_TOPICS_PER_TRANSACTION:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._full.wait(left)
            batch, self._queue = self._queue, []
            self._collecting = False  # the next create leads the next batch
        for group in _groups(batch):
            self._send(group)

    def _send(self, group: list[PendingCreate]) -> None:
        try:
            if len(group) == 1:
                self._send_alone(group[0])
                return
            try:
                tx, paths = self._combined(group)
                self._count()
                self._commit(tx, paths)
            except Exception as error:
                if not _refused(error):
                    for pending in group:
                        pending.error = error
                    return
                for pending in group:  # nothing was written: each alone, for its own answer
                    self._send_alone(pending)
        finally:
            for pending in group:
                pending.done.set()

    def _combined(self, group: list[PendingCreate]) -> tuple[Any, list[str]]:
        """One transaction of the group: the (shared) guards once, then each create's operations."""
        first = group[0]
        tx = self._new_transaction()
        tx.operations.extend(first.tx.operations[: first.guards])
        paths = list(first.paths[: first.guards])
        for pending in group:
            tx.operations.extend(pending.tx.operations[pending.guards :])
            paths.extend(pending.paths[pending.guards :])
        return tx, paths

    def _count(self) -> None:
        with self._lock:
            self.transactions += 1

    def _send_alone(self, pending: PendingCreate) -> None:
        self._count()
        try:
            self._commit(pending.tx, pending.paths)
        except Exception as error:
            pending.error = error


def _refused(error: BaseException) -> bool:
    """True when the transaction was refused, by ZooKeeper or before it was sent (nothing of it
    written), as opposed to no answer (a lost connection: whether it was written is not known)."""
    return isinstance(error, errors.KzoError) and not isinstance(error, errors.ClusterUnavailable)


def _groups(batch: list[PendingCreate]) -> list[list[PendingCreate]]:
    """The batch in transactions that each fit one ZooKeeper request and share the same guards."""
    groups: list[list[PendingCreate]] = []
    size = 0
    for pending in batch:
        current = groups[-1] if groups else None
        if (
            current is None
            or len(current) >= MAX_TOPICS_PER_TRANSACTION
            or size + pending.size > MAX_REQUEST_BYTES
            or _guard_operations(current[0]) != _guard_operations(pending)
        ):
            groups.append([pending])
            size = pending.size
        else:
            current.append(pending)
            size += pending.size
    return groups


def _guard_operations(pending: PendingCreate) -> list[Any]:
    return list(pending.tx.operations[: pending.guards])
