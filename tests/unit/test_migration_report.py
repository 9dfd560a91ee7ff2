"""Unit tests for ``service.migration_report``: the status fields and Events of a migration phase."""

from __future__ import annotations

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
