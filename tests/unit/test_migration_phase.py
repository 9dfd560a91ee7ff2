"""Unit tests of the migration-phase decision table (``domain.migration.phase``): every phase, and the
edges (missing znodes, stale values, ZooKeeper and KRaft brokers mixed, no ZooKeeper at all)."""

from __future__ import annotations

import itertools

import pytest

from kafka_zk_operator.domain.migration.phase import (
    AdminFacts,
    Backend,
    ControllerFacts,
    MigrationFacts,
    Phase,
    ProbeFacts,
    decide,
    registrations_matter,
)

ZK_CONTROLLER = ControllerFacts(node_id=1, kraft_controller_epoch=-1)
ZK_CONTROLLER_V1 = ControllerFacts(node_id=1, kraft_controller_epoch=None)  # /controller v1 (< 3.4)
KRAFT_CONTROLLER = ControllerFacts(node_id=3000, kraft_controller_epoch=5)
CREATED = MigrationFacts()  # every field -1: what a migration-enabled controller creates at start
CLAIMED = MigrationFacts(kraft_controller_id=3000, kraft_controller_epoch=5)
COPIED = MigrationFacts(3000, 5, 42, 5)
BROKERS = (1, 2, 3)


def _facts(**kwargs: object) -> ProbeFacts:
    return ProbeFacts(controller_epoch=3, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("controller", [ZK_CONTROLLER, ZK_CONTROLLER_V1, None], ids=["v2", "v1", "none"])
def test_no_migration_and_a_zookeeper_controller_or_none_is_zookeeper_mode(
    controller: ControllerFacts | None,
) -> None:
    decision = decide(_facts(controller=controller, zk_broker_ids=BROKERS))
    assert (decision.phase, decision.backend) == (Phase.ZOOKEEPER, Backend.ZOOKEEPER)
    assert decision.zookeeper_writes and not decision.topic_ids_required
    assert decision.warning is None
    assert "ZooKeeper mode" in decision.reason


def test_a_kraft_controller_epoch_of_zero_is_not_a_kraft_controller() -> None:
    """Kafka's own guard is ``kraftControllerEpoch > 0``."""
    decision = decide(_facts(controller=ControllerFacts(1, 0)))
    assert decision.phase is Phase.ZOOKEEPER


@pytest.mark.parametrize("controller", [ZK_CONTROLLER, ZK_CONTROLLER_V1, None], ids=["v2", "v1", "none"])
def test_the_all_unset_migration_znode_means_pending_with_zookeeper_authoritative(
    controller: ControllerFacts | None,
) -> None:
    decision = decide(_facts(controller=controller, migration=CREATED, zk_broker_ids=BROKERS))
    assert (decision.phase, decision.backend) == (Phase.MIGRATION_PENDING, Backend.ZOOKEEPER)
    assert decision.zookeeper_writes and decision.topic_ids_required
    assert "kraft_metadata_offset -1" in decision.reason
    assert "topic id" in decision.reason
    assert decision.warning is None


def test_an_earlier_claim_without_a_finished_copy_is_still_pending_and_says_so() -> None:
    """A rollback before the copy finished: ZooKeeper is the only copy, a new attempt copies again."""
    decision = decide(_facts(controller=ZK_CONTROLLER, migration=CLAIMED))
    assert decision.phase is Phase.MIGRATION_PENDING
    assert "KRaft controller 3000 (epoch 5) claimed the cluster before" in decision.reason


@pytest.mark.parametrize("migration", [CREATED, CLAIMED], ids=["before-migration-update", "after"])
def test_a_kraft_controller_before_the_offset_is_written_is_the_initial_copy(
    migration: MigrationFacts,
) -> None:
    """Right after the claim ``/migration`` may still hold -1 for the controller (it is rewritten
    just after the claim); either way the offset is -1 until the copy is done."""
    decision = decide(_facts(controller=KRAFT_CONTROLLER, migration=migration, zk_broker_ids=BROKERS))
    assert (decision.phase, decision.backend) == (Phase.INITIAL_COPY, Backend.NONE)
    assert not decision.zookeeper_writes
    assert "copying the metadata from ZooKeeper to KRaft" in decision.reason
    assert "retried" in decision.reason


def test_zookeeper_brokers_left_with_a_kraft_controller_and_a_copy_is_hybrid() -> None:
    decision = decide(_facts(controller=KRAFT_CONTROLLER, migration=COPIED, zk_broker_ids=(2, 1)))
    assert (decision.phase, decision.backend) == (Phase.HYBRID, Backend.ADMIN)
    assert not decision.zookeeper_writes and not decision.topic_ids_required
    assert "2 brokers (1, 2) still run in ZooKeeper mode" in decision.reason
    assert "never to ZooKeeper" in decision.reason


def test_hybrid_with_admin_facts_names_the_brokers_already_in_kraft_mode() -> None:
    """ZooKeeper-mode and KRaft brokers mixed: only the former register in ZooKeeper."""
    admin = AdminFacts(reachable=True, broker_ids=(1, 2, 3))
    decision = decide(_facts(controller=KRAFT_CONTROLLER, migration=COPIED, zk_broker_ids=(1,), admin=admin))
    assert decision.phase is Phase.HYBRID
    assert "1 broker (1) still run in ZooKeeper mode, 2 brokers (2, 3) in KRaft mode" in decision.reason
    rolled_none = decide(
        _facts(controller=KRAFT_CONTROLLER, migration=COPIED, zk_broker_ids=BROKERS, admin=admin)
    )
    assert "none in KRaft mode yet" in rolled_none.reason


def test_no_broker_left_in_zookeeper_is_dual_write() -> None:
    decision = decide(_facts(controller=KRAFT_CONTROLLER, migration=COPIED, zk_broker_ids=()))
    assert (decision.phase, decision.backend) == (Phase.DUAL_WRITE, Backend.ADMIN)
    assert "or finalized" in decision.reason
    with_admin = decide(
        _facts(
            controller=KRAFT_CONTROLLER,
            migration=COPIED,
            zk_broker_ids=(),
            admin=AdminFacts(True, (1, 2, 3)),
        )
    )
    assert "the Admin API lists 3 KRaft brokers" in with_admin.reason
    unreachable = decide(
        _facts(controller=KRAFT_CONTROLLER, migration=COPIED, zk_broker_ids=(), admin=AdminFacts(False))
    )
    assert unreachable.phase is Phase.DUAL_WRITE
    assert "does not answer" in unreachable.reason


def test_stale_epochs_do_not_change_the_phase() -> None:
    """A new KRaft leader claimed /controller (epoch 7) and /migration still names the old one (5):
    the phase comes from who owns /controller and whether the copy is done."""
    decision = decide(_facts(controller=ControllerFacts(3001, 7), migration=COPIED, zk_broker_ids=(1,)))
    assert decision.phase is Phase.HYBRID
    assert "KRaft controller 3001 (epoch 7)" in decision.reason


def test_a_kraft_controller_without_migration_znode_refuses_zookeeper_with_a_warning() -> None:
    """Kafka never claims /controller before /migration exists: someone deleted it."""
    decision = decide(_facts(controller=KRAFT_CONTROLLER, zk_broker_ids=()))
    assert (decision.phase, decision.backend) == (Phase.DUAL_WRITE, Backend.ADMIN)
    assert decision.warning is not None and "/migration is missing" in decision.warning
    hybrid = decide(_facts(controller=KRAFT_CONTROLLER, zk_broker_ids=(1,)))
    assert hybrid.phase is Phase.HYBRID and hybrid.warning is not None


@pytest.mark.parametrize("controller", [ZK_CONTROLLER, ZK_CONTROLLER_V1], ids=["v2", "v1"])
def test_a_zookeeper_controller_after_a_completed_copy_is_a_rollback_with_a_warning(
    controller: ControllerFacts,
) -> None:
    decision = decide(_facts(controller=controller, migration=COPIED, zk_broker_ids=BROKERS))
    assert (decision.phase, decision.backend) == (Phase.ROLLED_BACK, Backend.ZOOKEEPER)
    assert decision.zookeeper_writes and decision.topic_ids_required
    assert decision.warning is not None
    assert "deleteall /migration" in decision.warning
    assert "metadata offset 42 of KRaft controller 3000" in decision.warning


def test_no_controller_after_a_completed_copy_waits() -> None:
    decision = decide(_facts(migration=COPIED, zk_broker_ids=BROKERS))
    assert (decision.phase, decision.backend) == (Phase.NO_CONTROLLER, Backend.NONE)
    assert "rollback" in decision.reason and "retried" in decision.reason


@pytest.mark.parametrize(
    "admin", [None, AdminFacts(True, (1, 2, 3)), AdminFacts(False)], ids=["no-admin", "admin", "unreachable"]
)
def test_no_zookeeper_at_all_is_kraft_through_the_admin_api(admin: AdminFacts | None) -> None:
    decision = decide(ProbeFacts(zookeeper=False, admin=admin))
    assert (decision.phase, decision.backend) == (Phase.KRAFT, Backend.ADMIN)
    assert "no ZooKeeper is configured" in decision.reason
    assert ("do not answer" in decision.reason) is (admin is not None and not admin.reachable)


def test_without_zookeeper_the_znode_facts_are_ignored() -> None:
    decision = decide(ProbeFacts(zookeeper=False, controller=ZK_CONTROLLER, migration=CREATED))
    assert decision.phase is Phase.KRAFT


CONTROLLERS = [None, ZK_CONTROLLER, ZK_CONTROLLER_V1, KRAFT_CONTROLLER]
MIGRATIONS = [None, CREATED, CLAIMED, COPIED]
BROKER_SETS = [(), (1,), BROKERS]


@pytest.mark.parametrize(
    ("controller", "migration", "brokers"), list(itertools.product(CONTROLLERS, MIGRATIONS, BROKER_SETS))
)
def test_the_table_is_total_and_zookeeper_writes_only_where_no_kraft_controller_owns_it(
    controller: ControllerFacts | None, migration: MigrationFacts | None, brokers: tuple[int, ...]
) -> None:
    decision = decide(_facts(controller=controller, migration=migration, zk_broker_ids=brokers))
    kraft_owned = controller is not None and controller.is_kraft
    assert decision.zookeeper_writes is (
        not kraft_owned and not (controller is None and migration is not None and migration.initial_copy_done)
    )
    assert decision.reason.endswith(".") and decision.reason[0].isupper()
    assert decision.topic_ids_required is (decision.phase in (Phase.MIGRATION_PENDING, Phase.ROLLED_BACK))
    # Registrations are only read when they decide something.
    if not registrations_matter(controller, migration):
        assert decide(_facts(controller=controller, migration=migration)) == decision


def test_registrations_matter_only_once_a_kraft_controller_finished_the_copy() -> None:
    assert not registrations_matter(None, None)
    assert not registrations_matter(ZK_CONTROLLER, COPIED)
    assert not registrations_matter(KRAFT_CONTROLLER, CREATED)
    assert registrations_matter(KRAFT_CONTROLLER, COPIED)
    assert registrations_matter(KRAFT_CONTROLLER, None)
