"""The migration-phase decision table: one probe's facts → the phase, the backend to write through,
and a reason a user can read.

Read from Kafka 3.9's sources (``KRaftMigrationDriver``, ``ZkMigrationLeadershipState``,
``KafkaZkClient``, ``ZkMigrationClient``, ``KafkaServer``, ``docs/ops.html``):

* A migration-enabled KRaft controller creates ``/migration`` as soon as it starts, with every field
  -1 (``RecoverMigrationStateFromZKEvent`` → ``getOrCreateMigrationState(EMPTY)``), before it is
  leader and before any broker is rolled. Reverting the "provisioning the controller quorum" step
  leaves it (the docs' revert table says nothing to delete), so an all -1 ``/migration`` next to a
  ZooKeeper-mode controller is simply "pending".
* The leader claims ``/controller`` in one multi (``tryRegisterKRaftControllerAsActiveController``:
  bump ``/controller_epoch``, re-create ``/controller`` **persistent** with its
  ``kraftControllerEpoch`` > 0), then writes its id and epoch to ``/migration``; ZooKeeper-mode
  brokers never elect themselves while ``/controller`` exists. Kafka's own "a KRaft controller owns
  the cluster" test is ``kraftControllerEpoch > 0`` (``setOrCreateEntityConfigs``).
* The initial copy is done exactly when ``kraft_metadata_offset > 0``
  (``initialZkMigrationComplete``); the offset then advances with every dual-write batch.
* Brokers rolled to KRaft never register in ``/brokers/ids``; ZooKeeper-mode brokers register the
  same JSON with or without the migration flag (``KafkaServer`` registers
  ``BrokerFeatures.createEmpty()``: ``"features":{}``; nothing in a registration names the
  migration). So registrations only tell hybrid (some still there) from dual-write (none left), and
  finalization is invisible in ZooKeeper (the znodes just stop moving).
* Rolling back needs ``rmr /controller`` so that a ZooKeeper-mode broker is elected again; only one
  revert step of the docs also removes ``/migration``. A ``/migration`` with a completed copy next
  to a ZooKeeper-mode controller is therefore a rolled-back migration whose znode was left behind,
  which makes a later attempt skip the copy and wipe ZooKeeper (strimzi-kafka-operator#11262).

``/controller_epoch`` decides no phase: it is the fence of every ZooKeeper write (a claim moves it,
so a write planned under one phase cannot land in the next).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

#: The value Kafka writes in a ``/migration`` field it does not know yet.
UNSET = -1


class Phase(enum.StrEnum):
    """Where a cluster is on its way from ZooKeeper to KRaft (values are shown to users)."""

    ZOOKEEPER = "ZooKeeper"
    MIGRATION_PENDING = "MigrationPending"
    INITIAL_COPY = "InitialMetadataCopy"
    HYBRID = "Hybrid"
    DUAL_WRITE = "DualWrite"
    KRAFT = "KRaft"
    ROLLED_BACK = "RolledBack"
    #: No controller although ``/migration`` records a completed copy: a rollback under way.
    NO_CONTROLLER = "NoController"


class Backend(enum.StrEnum):
    """Through what the operator writes in a phase."""

    ZOOKEEPER = "ZooKeeper"
    ADMIN = "AdminAPI"
    #: Nothing, for now: the writes wait (retried) until the phase moves on.
    NONE = "None"


@dataclass(frozen=True, slots=True)
class ControllerFacts:
    """``/controller``: the controller's id and, from Kafka 3.4 (v2), ``kraftControllerEpoch``."""

    node_id: int
    kraft_controller_epoch: int | None = UNSET

    @property
    def is_kraft(self) -> bool:
        return self.kraft_controller_epoch is not None and self.kraft_controller_epoch > 0


@dataclass(frozen=True, slots=True)
class MigrationFacts:
    """``/migration`` (``ZkMigrationLeadershipState``); every field -1 until Kafka knows it."""

    kraft_controller_id: int = UNSET
    kraft_controller_epoch: int = UNSET
    kraft_metadata_offset: int = UNSET
    kraft_metadata_epoch: int = UNSET

    @property
    def initial_copy_done(self) -> bool:
        return self.kraft_metadata_offset > 0


@dataclass(frozen=True, slots=True)
class AdminFacts:
    """What the Kafka Admin API said, when it was asked (DescribeCluster)."""

    reachable: bool
    broker_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ProbeFacts:
    """One probe of a cluster. ``zk_broker_ids`` is ``None`` when not read (not needed: see
    :func:`registrations_matter`); ``zookeeper`` is False for a cluster configured without one."""

    zookeeper: bool = True
    controller_epoch: int | None = None
    controller: ControllerFacts | None = None
    migration: MigrationFacts | None = None
    zk_broker_ids: tuple[int, ...] | None = None
    admin: AdminFacts | None = None


@dataclass(frozen=True, slots=True)
class PhaseDecision:
    """The phase, the backend, why (a complete sentence) and, when a person should act, a warning."""

    phase: Phase
    backend: Backend
    reason: str
    warning: str | None = None

    @property
    def zookeeper_writes(self) -> bool:
        """ZooKeeper is authoritative: the operator may write Kafka's znodes."""
        return self.backend is Backend.ZOOKEEPER

    @property
    def topic_ids_required(self) -> bool:
        """Topic znodes the operator creates must carry a ``topic_id``: a migration may start (or
        start again) at any moment, and Kafka's copy aborts on a topic znode without one."""
        return self.phase in (Phase.MIGRATION_PENDING, Phase.ROLLED_BACK)


def for_reassignments(decision: PhaseDecision, bootstrap_servers: bool) -> PhaseDecision:
    """The decision as a PartitionReassignment lives it: while a migration is pending its batches
    go through the Admin API when the cluster has ``bootstrapServers`` (the ZooKeeper-mode
    controller carries them out, and no ``/admin/reassign_partitions`` is left behind that a
    controller elected after a rollback would act on again)."""
    if decision.phase is Phase.MIGRATION_PENDING and bootstrap_servers:
        return dataclasses.replace(decision, backend=Backend.ADMIN)
    return decision


def registrations_matter(controller: ControllerFacts | None, migration: MigrationFacts | None) -> bool:
    """Whether :func:`decide` needs ``/brokers/ids``: only once a KRaft controller owns the cluster
    (hybrid or dual-write). A ZooKeeper-mode probe does without the read."""
    return (
        controller is not None and controller.is_kraft and (migration is None or migration.initial_copy_done)
    )


def decide(facts: ProbeFacts) -> PhaseDecision:
    """The decision table (see the module docstring for where each rule comes from)."""
    if not facts.zookeeper:
        return _kraft_only(facts.admin)
    controller, migration = facts.controller, facts.migration
    if controller is not None and controller.is_kraft:
        return _kraft_controller(facts, controller, migration)
    if migration is None:
        return PhaseDecision(
            Phase.ZOOKEEPER,
            Backend.ZOOKEEPER,
            f"ZooKeeper mode: no /migration, {_zk_controller(controller)}; the operator writes Kafka's znodes.",
        )
    if not migration.initial_copy_done:
        return PhaseDecision(
            Phase.MIGRATION_PENDING,
            Backend.ZOOKEEPER,
            "KRaft migration pending: /migration exists but no metadata was copied to KRaft yet "
            f"(kraft_metadata_offset {migration.kraft_metadata_offset}){_earlier_claim(migration)}, "
            f"and {_zk_controller(controller)}, so ZooKeeper is still authoritative; the operator "
            "writes Kafka's znodes and gives every topic it creates a topic id, which Kafka's copy "
            "to KRaft requires.",
        )
    if controller is None:
        return PhaseDecision(
            Phase.NO_CONTROLLER,
            Backend.NONE,
            "No controller owns /controller while /migration records metadata copied to KRaft "
            f"(kraft_metadata_offset {migration.kraft_metadata_offset}): a rollback to ZooKeeper mode is "
            "under way (after /controller is deleted a ZooKeeper-mode broker is elected) or /controller "
            "was deleted by hand; writes wait for a controller and are retried.",
        )
    return PhaseDecision(
        Phase.ROLLED_BACK,
        Backend.ZOOKEEPER,
        f"Rolled back to ZooKeeper mode: {_zk_controller(controller)} again, so ZooKeeper is "
        "authoritative and the operator writes Kafka's znodes; /migration is left over from the "
        "migration.",
        warning=_stale_migration_warning(migration),
    )


def _kraft_only(admin: AdminFacts | None) -> PhaseDecision:
    reason = "KRaft: no ZooKeeper is configured for this cluster; it is served through the Kafka Admin API"
    if admin is not None and not admin.reachable:
        reason += ", whose bootstrap servers do not answer right now (retried)"
    elif admin is not None:
        reason += f" ({_count(len(admin.broker_ids), 'broker')})"
    return PhaseDecision(Phase.KRAFT, Backend.ADMIN, reason + ".")


def _kraft_controller(
    facts: ProbeFacts, controller: ControllerFacts, migration: MigrationFacts | None
) -> PhaseDecision:
    who = (
        f"KRaft controller {controller.node_id} (epoch {controller.kraft_controller_epoch}) owns /controller"
    )
    if migration is not None and not migration.initial_copy_done:
        return PhaseDecision(
            Phase.INITIAL_COPY,
            Backend.NONE,
            f"Initial metadata copy: {who} and is copying the metadata from ZooKeeper to KRaft "
            f"(/migration kraft_metadata_offset {migration.kraft_metadata_offset}); writes wait until "
            "the copy is done and are retried.",
        )
    warning = None
    if migration is None:
        copied = "; /migration is missing"
        warning = (
            f"/migration is missing although {who}: Kafka creates it before a KRaft controller claims "
            "/controller, so it was deleted by hand, and the KRaft controller's next write to "
            "ZooKeeper fails its check on it; do not delete /migration during a migration."
        )
    else:
        copied = f" and the metadata was copied to KRaft (offset {migration.kraft_metadata_offset})"
    zk_brokers = facts.zk_broker_ids or ()
    tail = (
        "ZooKeeper only receives the KRaft controller's dual writes and ignores or overwrites direct "
        "znode writes, so the operator writes through the Kafka Admin API, never to ZooKeeper."
    )
    if zk_brokers:
        kraft_brokers = _kraft_brokers(facts.admin, zk_brokers)
        return PhaseDecision(
            Phase.HYBRID,
            Backend.ADMIN,
            f"Hybrid phase of the KRaft migration: {who}{copied}; "
            f"{_count(len(zk_brokers), 'broker')} ({_ids(zk_brokers)}) still run in ZooKeeper mode"
            f"{kraft_brokers}. {tail}",
            warning,
        )
    return PhaseDecision(
        Phase.DUAL_WRITE,
        Backend.ADMIN,
        f"Dual-write phase of the KRaft migration (or finalized: ZooKeeper cannot tell): {who}{copied}, "
        f"and no broker registers in ZooKeeper any more{_admin_brokers(facts.admin)}. {tail}",
        warning,
    )


def _zk_controller(controller: ControllerFacts | None) -> str:
    if controller is None:
        return "no controller is registered right now (a ZooKeeper-mode broker is elected as brokers start)"
    return f"the controller is ZooKeeper-mode broker {controller.node_id}"


def _earlier_claim(migration: MigrationFacts) -> str:
    if migration.kraft_controller_id == UNSET:
        return ""
    return (
        f"; KRaft controller {migration.kraft_controller_id} (epoch {migration.kraft_controller_epoch}) "
        "claimed the cluster before, without finishing the copy"
    )


def _stale_migration_warning(migration: MigrationFacts) -> str:
    return (
        "/migration is left over from a rolled-back KRaft migration (it records metadata offset "
        f"{migration.kraft_metadata_offset} of KRaft controller {migration.kraft_controller_id}): delete "
        "it (zookeeper-shell: get /migration, then deleteall /migration) before the migration is "
        "attempted again; an attempt that finds it skips the copy from ZooKeeper and can overwrite "
        "ZooKeeper's metadata with an empty KRaft image."
    )


def _kraft_brokers(admin: AdminFacts | None, zk_brokers: tuple[int, ...]) -> str:
    if admin is None or not admin.reachable:
        return ""
    kraft = tuple(sorted(set(admin.broker_ids) - set(zk_brokers)))
    if not kraft:
        return ", none in KRaft mode yet"
    return f", {_count(len(kraft), 'broker')} ({_ids(kraft)}) in KRaft mode"


def _admin_brokers(admin: AdminFacts | None) -> str:
    if admin is None:
        return ""
    if not admin.reachable:
        return " (the Admin API does not answer right now)"
    return f" (the Admin API lists {_count(len(admin.broker_ids), 'KRaft broker')})"


def _ids(ids: tuple[int, ...]) -> str:
    return ", ".join(str(i) for i in sorted(ids))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
