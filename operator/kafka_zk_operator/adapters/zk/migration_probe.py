"""The migration-phase probe: one read of ``/controller_epoch``, ``/migration``, ``/controller`` (and,
once a KRaft controller owns the cluster, the ids under ``/brokers/ids``) turned into the facts of
the decision table (``domain.migration.phase``), and the guard every ZooKeeper write goes through.

The store (``store_writes.GuardedWrites.ensure_writable``) sends the three gets ahead in one round trip,
the epoch first: its version is what every write transaction then checks, so a KRaft controller
claiming the cluster between this probe and the write fails the write (the claim bumps the epoch).
Each znode is decoded by its own codec (``znodes_cluster``); a znode Kafka would not have written
raises ``MalformedZnode``, as on every other read. Nothing is cached: each write probes again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from kazoo.protocol.states import ZnodeStat

from kafka_zk_operator.adapters.zk import znodes_cluster
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.migration import phase

log = logging.getLogger(__name__)

#: Reads a znode: its data and stat, or ``None`` when it does not exist (``StoreBase._get``).
Get = Callable[[str], "tuple[bytes, ZnodeStat] | None"]

#: The probe's gets, in the order they are taken (the epoch first), to send ahead together.
PROBE_PATHS: tuple[str, ...] = (
    znodes_cluster.CONTROLLER_EPOCH_PATH,
    znodes_cluster.MIGRATION_PATH,
    znodes_cluster.CONTROLLER_PATH,
)

_NO_ADMIN_BACKEND = (
    "This operator version has no Kafka Admin API backend yet, so it writes nothing in this phase; "
    "the write is retried and the phase read again each time."
)


@dataclass(frozen=True, slots=True)
class Probe:
    """What one probe read: the facts, and the ``/controller_epoch`` version writes are fenced on."""

    facts: phase.ProbeFacts
    epoch_version: int | None

    def decision(self) -> phase.PhaseDecision:
        return phase.decide(self.facts)


def probe(get: Get, broker_ids: Callable[[], list[int]]) -> Probe:
    """Read the phase's znodes (``broker_ids`` only when they decide something).

    :raises MalformedZnode: one of them holds data Kafka would not have written.
    """
    epoch_got = get(znodes_cluster.CONTROLLER_EPOCH_PATH)
    migration_got = get(znodes_cluster.MIGRATION_PATH)
    controller_got = get(znodes_cluster.CONTROLLER_PATH)
    migration = None if migration_got is None else _migration(migration_got[0])
    controller = None if controller_got is None else _controller(controller_got[0])
    registered = tuple(broker_ids()) if phase.registrations_matter(controller, migration) else None
    return Probe(
        facts=phase.ProbeFacts(
            zookeeper=True,
            controller_epoch=None
            if epoch_got is None
            else znodes_cluster.ControllerEpochZNode.decode(epoch_got[0]),
            controller=controller,
            migration=migration,
            zk_broker_ids=registered,
        ),
        epoch_version=None if epoch_got is None else epoch_got[1].version,
    )


def refuse_unless_writable(decision: phase.PhaseDecision) -> None:
    """Let a ZooKeeper write go ahead only where ZooKeeper is authoritative.

    :raises KRaftMigrationDetected: retryable, naming the phase and why (initial copy: the writes
        wait for it; hybrid, dual-write, KRaft: they need the Admin API backend).
    """
    if decision.zookeeper_writes:
        return
    message = decision.reason
    if decision.backend is phase.Backend.ADMIN:
        message = f"{message} {_NO_ADMIN_BACKEND}"
    if decision.warning is not None:
        message = f"{message} {decision.warning}"
    raise errors.KRaftMigrationDetected(message, phase=decision.phase.value)


def report_change(previous: phase.PhaseDecision | None, decision: phase.PhaseDecision) -> bool:
    """Log a phase change (the warning of a phase that has one as a warning); True if it changed."""
    if previous is not None and previous.phase is decision.phase and previous.warning == decision.warning:
        return False
    if decision.warning is not None:
        log.warning(
            "KRaft migration phase %s: %s %s", decision.phase.value, decision.reason, decision.warning
        )
    elif previous is not None or decision.phase is not phase.Phase.ZOOKEEPER:
        log.info("KRaft migration phase %s: %s", decision.phase.value, decision.reason)
    return True


def _controller(data: bytes) -> phase.ControllerFacts:
    registration = znodes_cluster.ControllerZNode.decode(data, znodes_cluster.CONTROLLER_PATH)
    return phase.ControllerFacts(
        node_id=registration.broker_id, kraft_controller_epoch=registration.kraft_controller_epoch
    )


def _migration(data: bytes) -> phase.MigrationFacts:
    state = znodes_cluster.MigrationZNode.decode(data, znodes_cluster.MIGRATION_PATH)
    return phase.MigrationFacts(
        kraft_controller_id=state.kraft_controller_id,
        kraft_controller_epoch=state.kraft_controller_epoch,
        kraft_metadata_offset=state.kraft_metadata_offset,
        kraft_metadata_epoch=state.kraft_metadata_epoch,
    )
