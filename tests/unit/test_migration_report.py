"""Unit tests for ``service.migration_report``: the status fields and Events of a migration phase."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kafka_zk_operator.domain.migration import phase
from kafka_zk_operator.service import migration_report


def _decision(which: phase.Phase, backend: phase.Backend, warning: str | None = None) -> phase.PhaseDecision:
    return phase.PhaseDecision(which, backend, f"{which.value} because.", warning)


ZK = _decision(phase.Phase.ZOOKEEPER, phase.Backend.ZOOKEEPER)
HYBRID = _decision(phase.Phase.HYBRID, phase.Backend.ADMIN)


def test_plain_zookeeper_mode_adds_nothing_to_a_status_that_never_showed_a_phase() -> None:
    assert migration_report.phase_fields(ZK, {}) == {}
    assert migration_report.phase_events(ZK, {}) == []
    assert migration_report.phase_fields(None, {}) == {}


def test_a_migration_phase_shows_in_the_status_with_its_backend() -> None:
    assert migration_report.phase_fields(HYBRID, {}) == {"migrationPhase": "Hybrid", "backend": "AdminAPI"}
    # Back in ZooKeeper mode (a rollback's end): shown, since the status showed a phase before.
    assert migration_report.phase_fields(ZK, {"migrationPhase": "RolledBack"}) == {
        "migrationPhase": "ZooKeeper",
        "backend": "ZooKeeper",
    }


def test_a_phase_change_is_one_normal_event_and_the_same_phase_none() -> None:
    (event,) = migration_report.phase_events(HYBRID, {"migrationPhase": "MigrationPending"})
    assert (event.type, event.reason) == ("Normal", "KRaftMigrationPhase")
    assert event.message == "KRaft migration phase MigrationPending -> Hybrid: Hybrid because."
    assert migration_report.phase_events(HYBRID, {"migrationPhase": "Hybrid"}) == []


def test_a_phase_with_a_warning_adds_a_warning_event_naming_what_to_do() -> None:
    rolled_back = _decision(phase.Phase.ROLLED_BACK, phase.Backend.ZOOKEEPER, "delete /migration first.")
    events = migration_report.phase_events(rolled_back, {"migrationPhase": "Hybrid"})
    assert [(e.type, e.reason) for e in events] == [
        ("Normal", "KRaftMigrationPhase"),
        ("Warning", "KRaftMigrationWarning"),
    ]
    assert events[1].message == "delete /migration first."


# --- the KRaftMigration condition ----------------------------------------------------------------

T0 = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
READY = {"type": "Ready", "status": "True", "reason": "InSync", "message": "ok"}


def _condition(conditions: list[dict[str, object]] | None) -> dict[str, object]:
    assert conditions is not None
    return next(c for c in conditions if c["type"] == "KRaftMigration")


def test_plain_zookeeper_mode_writes_no_condition() -> None:
    assert migration_report.phase_condition(ZK, [READY], generation=1, now=T0) is None
    assert migration_report.phase_condition(None, [READY], generation=1, now=T0) is None


def test_a_migration_under_way_is_true_with_the_phase_as_reason_and_keeps_other_conditions() -> None:
    conditions = migration_report.phase_condition(HYBRID, [READY], generation=3, now=T0)
    assert conditions is not None and conditions[0] == READY
    assert _condition(conditions) == {
        "type": "KRaftMigration", "status": "True", "reason": "Hybrid", "message": "Hybrid because.",
        "observedGeneration": 3, "lastTransitionTime": "2026-12-07T12:00:00Z",
    }  # fmt: skip


def test_the_same_phase_again_changes_nothing_and_a_new_phase_moves_the_transition_time() -> None:
    first = migration_report.phase_condition(HYBRID, [READY], generation=3, now=T0)
    later = T0 + timedelta(minutes=5)
    assert migration_report.phase_condition(HYBRID, first, generation=3, now=later) is None
    dual = _decision(phase.Phase.DUAL_WRITE, phase.Backend.ADMIN)
    second = _condition(migration_report.phase_condition(dual, first, generation=3, now=later))
    assert (second["status"], second["reason"]) == ("True", "DualWrite")
    assert second["lastTransitionTime"] == "2026-12-07T12:05:00Z"  # same status, new phase


def test_the_end_of_a_migration_and_a_rollback_are_false_and_a_rollback_names_the_znode() -> None:
    first = migration_report.phase_condition(HYBRID, [READY], generation=1, now=T0)
    kraft = _condition(
        migration_report.phase_condition(
            _decision(phase.Phase.KRAFT, phase.Backend.ADMIN), first, generation=1, now=T0
        )
    )
    assert (kraft["status"], kraft["reason"]) == ("False", "KRaft")
    rolled = _decision(
        phase.Phase.ROLLED_BACK, phase.Backend.ZOOKEEPER, "Delete /migration before a new attempt."
    )
    back = _condition(migration_report.phase_condition(rolled, first, generation=1, now=T0))
    assert (back["status"], back["reason"]) == ("False", "RolledBack")
    assert str(back["message"]).endswith("Delete /migration before a new attempt.")
    # /migration deleted after the rollback: ZooKeeper mode, still shown since it was shown before
    plain = _condition(migration_report.phase_condition(ZK, [back], generation=1, now=T0))
    assert (plain["status"], plain["reason"]) == ("False", "ZooKeeper")


def test_add_phase_puts_fields_and_condition_into_the_status_being_built() -> None:
    status: dict[str, object] = {"conditions": [READY]}
    migration_report.add_phase(status, HYBRID, {}, generation=2, now=T0)
    assert status["migrationPhase"] == "Hybrid" and status["backend"] == "AdminAPI"
    assert _condition(status["conditions"])["reason"] == "Hybrid"  # type: ignore[arg-type]
    untouched: dict[str, object] = {}
    migration_report.add_phase(untouched, ZK, {"conditions": [READY]}, generation=2, now=T0)
    assert untouched == {}


def test_a_pending_migration_is_lived_through_the_admin_api_by_reassignments_with_bootstrap_servers() -> None:
    pending = _decision(phase.Phase.MIGRATION_PENDING, phase.Backend.ZOOKEEPER)
    assert phase.for_reassignments(pending, True).backend is phase.Backend.ADMIN
    assert phase.for_reassignments(pending, False) == pending
    assert phase.for_reassignments(HYBRID, True) == HYBRID
