"""What a resource says about its cluster's ZooKeeper → KRaft migration: two status fields, a
condition and an Event at each phase change.

``status.migrationPhase`` and ``status.backend`` appear once the cluster leaves plain ZooKeeper
mode (a cluster that never migrates keeps its statuses as they were), and stay up to date from
then on. A phase change seen by a resource's reconcile is a ``Normal`` Event
``KRaftMigrationPhase`` on it; a phase whose decision carries a warning (a ``/migration`` left
over from a rolled-back migration, a deleted ``/migration``) is a ``Warning`` Event
``KRaftMigrationWarning`` naming what to do, once per phase change.

The condition ``KRaftMigration`` (next to kstatus' ``Ready``/``Reconciling``/``Stalled``, which it
does not change) is ``True`` while a migration is under way (``MigrationPending``,
``InitialMetadataCopy``, ``Hybrid``, ``DualWrite``, ``NoController``) and ``False`` once it is over
(``KRaft``) or undone (``RolledBack``, or ``ZooKeeper`` after ``/migration`` was deleted); its
reason is the phase, its message the operator's reading of the cluster. Its
``lastTransitionTime`` moves at each phase change, so ``kubectl wait
--for=condition=KRaftMigration=False`` waits for the end of a migration. Like the fields, it is
absent on a cluster that never left ZooKeeper mode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from kafka_zk_operator.domain.migration import phase
from kafka_zk_operator.domain.timestamps import format_timestamp
from kafka_zk_operator.service.events import Event

PHASE_FIELD = "migrationPhase"
BACKEND_FIELD = "backend"
CONDITION = "KRaftMigration"
#: Phases of a migration under way: the condition is ``True``.
IN_PROGRESS = frozenset(
    {
        phase.Phase.MIGRATION_PENDING,
        phase.Phase.INITIAL_COPY,
        phase.Phase.HYBRID,
        phase.Phase.DUAL_WRITE,
        phase.Phase.NO_CONTROLLER,
    }
)
_MAX_MESSAGE = 4096


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


def phase_condition(
    decision: phase.PhaseDecision | None,
    conditions: Sequence[Mapping[str, Any]] | None,
    *,
    generation: int,
    now: datetime,
) -> list[dict[str, Any]] | None:
    """``conditions`` with ``KRaftMigration`` set for ``decision``; ``None`` when they stay as they are
    (no decision, plain ZooKeeper mode never left, or the same condition already there). Pure."""
    if decision is None:
        return None
    current = [dict(c) for c in conditions or () if isinstance(c, Mapping)]
    index = next((i for i, c in enumerate(current) if c.get("type") == CONDITION), None)
    if index is None and decision.phase is phase.Phase.ZOOKEEPER:
        return None
    message = decision.reason if decision.warning is None else f"{decision.reason} {decision.warning}"
    if len(message) > _MAX_MESSAGE:
        message = message[: _MAX_MESSAGE - 1] + "…"
    condition: dict[str, Any] = {
        "type": CONDITION,
        "status": "True" if decision.phase in IN_PROGRESS else "False",
        "reason": decision.phase.value,
        "message": message,
        "observedGeneration": generation,
    }
    old = current[index] if index is not None else {}
    same_phase = old.get("status") == condition["status"] and old.get("reason") == condition["reason"]
    condition["lastTransitionTime"] = (
        old.get("lastTransitionTime")
        if same_phase and old.get("lastTransitionTime")
        else format_timestamp(now)
    )
    if condition == old:
        return None
    if index is None:
        current.append(condition)
    else:
        current[index] = condition
    return current


def add_phase(
    status: dict[str, Any],
    decision: phase.PhaseDecision | None,
    previous: Mapping[str, Any],
    *,
    generation: int,
    now: datetime,
) -> None:
    """Put the phase fields and the ``KRaftMigration`` condition into ``status`` (the status a
    reconcile built, whose ``conditions`` replace ``previous``'s when present)."""
    status.update(phase_fields(decision, previous))
    conditions = status.get("conditions", previous.get("conditions"))
    updated = phase_condition(decision, conditions, generation=generation, now=now)
    if updated is not None:
        status["conditions"] = updated
