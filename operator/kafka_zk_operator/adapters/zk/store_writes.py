"""The writes of the ZooKeeper store: the migration-phase guard every write goes through, the
transactions it opens (checked against ``/controller_epoch`` and, with leader election, the
leader's fence), and the size of a request as a ZooKeeper server checks it.

``GuardedWrites`` builds on ``StoreBase`` (``adapters.zk.store_base``: the session and its reads);
the writing parts - entity configs (``store_configs``), admin requests (``store_admin``) and
topics (``store``) - build on it, and ``adapters.zk.group_commit`` sizes its batches with
:func:`request_bytes`.
"""

from __future__ import annotations

from typing import Any

from kazoo.protocol.serialization import Transaction

from kafka_zk_operator.adapters.zk import errors as zk_errors
from kafka_zk_operator.adapters.zk import migration_probe, znodes_cluster
from kafka_zk_operator.adapters.zk.store_base import ReadAhead, StoreBase
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import znode_bounds
from kafka_zk_operator.domain.migration import phase

#: The longest request a ZooKeeper server accepts (``domain.kafka.znode_bounds``, 0xfffff bytes). It
#: closes the connection of a client that sends a longer one ("Len error"), without an answer: the client sees a connection loss, every request in flight on that session fails with it, and a
#: retry of the same write does the same again.
MAX_REQUEST_BYTES = znode_bounds.MAX_REQUEST_BYTES
#: What precedes a request's body on the wire (after the length): the xid and the operation type.
_REQUEST_HEADER_BYTES = 8


def request_bytes(tx: Any) -> int:
    """The length of a kazoo transaction's request as the server reads it (what it checks)."""
    return _REQUEST_HEADER_BYTES + len(Transaction(tx.operations).serialize())


def check_request_size(tx: Any, path: str) -> None:
    """Refuse a transaction whose request a ZooKeeper server would not accept (it is never sent).

    :raises RequestTooLarge: the serialized request is longer than :data:`MAX_REQUEST_BYTES`.
    """
    size = request_bytes(tx)
    if size > MAX_REQUEST_BYTES:
        raise errors.RequestTooLarge(
            f"writing {path} takes a ZooKeeper request of {size:,} bytes, more than the {MAX_REQUEST_BYTES:,} "
            "a ZooKeeper server accepts (jute.maxbuffer); it is not sent"
        )


class GuardedWrites(StoreBase):
    """The migration-phase guard and the guarded transactions of every write to ZooKeeper."""

    def ensure_writable(self) -> int | None:
        """Refuse to write where ZooKeeper is not authoritative: the migration-phase probe
        (``adapters.zk.migration_probe``) decides, on every write, nothing cached.

        Returns the ``/controller_epoch`` version read *before* the probe's other reads (None: no
        controller was ever elected here). Every write transaction checks it (:meth:`_transaction`):
        any controller change since (a KRaft claim among them) fails the write; the caller re-reads.
        Unlike ``/controller``'s version (Kafka's 3.x config writer), the epoch also moves when an
        ephemeral ``/controller`` is re-created at version 0 and while no controller is registered.

        :raises KRaftMigrationDetected: (retryable) the phase's writes do not go to ZooKeeper.
        """
        with self.reading_ahead(*self.guard_reads()):
            return self._ensure_writable()

    @staticmethod
    def guard_reads() -> tuple[ReadAhead, ...]:
        """The reads of :meth:`ensure_writable`, in its order (the epoch first), to send ahead."""
        return tuple(("get", path) for path in migration_probe.PROBE_PATHS)

    def _ensure_writable(self) -> int | None:
        probed = migration_probe.probe(self._get, self.broker_ids)
        decision = probed.decision()
        self._phase.decision = decision  # this thread's write follows it (topic ids)
        self._note_phase(decision)
        migration_probe.refuse_unless_writable(decision)
        return probed.epoch_version

    def read_phase(self) -> phase.PhaseDecision:
        """The migration phase as ZooKeeper shows it now (one round trip; nothing cached), for
        choosing the backend of a pass (``runtime.clusters``). Writes still run their own guard."""
        with self.reading_ahead(*self.guard_reads()):
            decision = migration_probe.probe(self._get, self.broker_ids).decision()
        self._note_phase(decision)
        return decision

    def _note_phase(self, decision: phase.PhaseDecision) -> None:
        with self._lock:
            previous, self.migration_phase = self.migration_phase, decision
        if migration_probe.report_change(previous, decision) and self.on_phase is not None:
            self.on_phase(decision)

    def topic_ids_required(self) -> bool:
        """This thread's last guard decided a phase whose topic creates carry a ``topic_id``."""
        return bool(getattr(self._phase, "decision", None) and self._phase.decision.topic_ids_required)

    def _transaction(self) -> tuple[Any, list[str]]:
        """A transaction that starts with the KRaft guard's ``/controller_epoch`` check and, with
        leader election, the leader's fence check; and the paths of its operations."""
        if self.leadership_guard is not None:
            self.leadership_guard()
        epoch_version = self.ensure_writable()
        tx = self.client.transaction()
        paths: list[str] = []
        if epoch_version is not None:
            tx.check(znodes_cluster.CONTROLLER_EPOCH_PATH, epoch_version)
            paths.append(znodes_cluster.CONTROLLER_EPOCH_PATH)
        if self.fence is not None:
            tx.check(*self.fence)
            paths.append(self.fence[0])
        return tx, paths

    def _commit(self, tx: Any, paths: list[str]) -> None:
        """Send ``tx`` (whose operations are on ``paths``, in order).

        :raises RequestTooLarge: more than a ZooKeeper server accepts in one request (not sent).
        """
        check_request_size(tx, paths[-1])
        if self.leadership_guard is not None:
            self.leadership_guard()
        with zk_errors.mapped(self.client, paths[-1]):
            results = tx.commit()
        failure = zk_errors.transaction_failure(list(results), paths)
        if failure is not None:
            if self.fence is not None and failure.message.startswith(self.fence[0] + " "):
                message = (
                    f"another operator replica claimed the leader's fence {self.fence[0]}: this one is "
                    "no longer the leader; nothing was written"
                )
                if self.on_fenced is not None:
                    self.on_fenced(message)
                raise errors.LeadershipLost(message) from None
            if paths[0] == znodes_cluster.CONTROLLER_EPOCH_PATH and failure.message.startswith(
                paths[0] + " "
            ):
                raise errors.VersionConflict(
                    "the Kafka controller changed while the operator was writing (/controller_epoch moved "
                    "since the KRaft-migration guard read it); nothing was written, re-reading"
                ) from None
            raise failure
        self._count_write()
