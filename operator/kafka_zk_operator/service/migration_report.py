"""What a resource says about its cluster's ZooKeeper → KRaft migration: two status fields and
an Event at each phase change.

``status.migrationPhase`` and ``status.backend`` appear once the cluster leaves plain ZooKeeper
mode (a cluster that never migrates keeps its statuses as they were), and stay up to date from
then on. A phase change seen by a resource's reconcile is a ``Normal`` Event
``KRaftMigrationPhase`` on it; a phase whose decision carries a warning (a ``/migration`` left
over from a rolled-back migration, a deleted ``/migration``) is a ``Warning`` Event
``KRaftMigrationWarning`` naming what to do, once per phase change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_zk_operator.domain.migration import phase
from kafka_zk_operator.service.events import Event

PHASE_FIELD = "migrationPhase"
BACKEND_FIELD = "backend"


def phase_fields(decision: phase.PhaseDecision | None, previous: Mapping[str, Any]) -> dict[str, str]:
    """The status fields for ``decision`` (none in plain ZooKeeper mode unless shown before)."""
    if decision is None:
        return {}
    if decision.phase is phase.Phase.ZOOKEEPER and PHASE_FIELD not in previous:
        return {}
    return {PHASE_FIELD: decision.phase.value, BACKEND_FIELD: decision.backend.value}


def phase_events(decision: phase.PhaseDecision | None, previous: Mapping[str, Any]) -> list[Event]:
    """The Events of a phase this resource's status did not show yet."""
    if decision is None:
        return []
    before = previous.get(PHASE_FIELD)
    if before == decision.phase.value or (before is None and decision.phase is phase.Phase.ZOOKEEPER):
        return []
    shown = f"{before} -> {decision.phase.value}" if before else decision.phase.value
    events = [Event("Normal", "KRaftMigrationPhase", f"KRaft migration phase {shown}: {decision.reason}")]
    if decision.warning is not None:
        events.append(Event("Warning", "KRaftMigrationWarning", decision.warning))
    return events
