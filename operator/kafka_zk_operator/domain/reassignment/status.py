"""The PartitionReassignment ``status``: phase, conditions and progress, built by pure functions.

The service decides *what happened* (a :class:`Verdict`: phase, reason, message, stuck
partitions, warnings); :func:`verdict_fields` turns it into the merge-patch fields of the status.
Conditions (``lastTransitionTime`` kept unless the condition flips; :func:`phase_conditions`;
the table in docs/conditions.md is the user's view):

* ``Ready`` - ``True`` only in phase ``Completed``; otherwise ``False`` with the reason of the
  current step (``AwaitingApproval``, ``Queued``, ``Running``, ``InvalidSpec``, ...);
* ``ProposalReady`` - ``True`` once a proposal is computed and from then on while it is the one
  that runs (phases ``ProposalReady``, ``Queued``, ``Running``, ``Completed``);
* ``Running`` - ``True`` in phase ``Running`` (a batch is submitted or about to be);
* ``Stalled`` (kstatus) - ``True`` in phases ``Failed`` and ``Stopped``: the end, a person must act;
* ``Reconciling`` (kstatus) - ``True`` while the operator works towards the end by itself
  (``Pending``, ``Queued``, ``Running``, an approved ``ProposalReady``); not while a proposal
  waits for approval, so that a Flux health check passes on a resource that waits for a person;
* ``Stuck`` - ``True`` while partitions of the batch in flight make no progress (dead target
  broker, nothing joining the ISR); present once it has been ``True``;
* ``Warning`` - planning warnings (rack spread under ``rackPolicy: Warn``), when there are any.

``progressText`` ("12/40") feeds the ``Progress`` printer column; ``estimated_completion`` gives
``progress.estimatedCompletionAt`` from the rate so far.

Pure: the clock is passed in.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kafka_zk_operator.domain.reassignment.progress import Stuck
from kafka_zk_operator.domain.timestamps import format_timestamp

READY = "Ready"
PROPOSAL_READY = "ProposalReady"
RUNNING = "Running"
#: kstatus' abnormal-true conditions: present only while ``True``.
STALLED = "Stalled"
RECONCILING = "Reconciling"
STUCK = "Stuck"
WARNING = "Warning"
_OWN = frozenset({READY, PROPOSAL_READY, RUNNING, STALLED, RECONCILING, STUCK, WARNING})
MAX_MESSAGE_LENGTH = 4096
MAX_STUCK = 1000
STATUS_PLAN_LIMIT = 500


class Phase(enum.StrEnum):
    PENDING = "Pending"
    PROPOSAL_READY = "ProposalReady"
    QUEUED = "Queued"
    RUNNING = "Running"
    COMPLETED = "Completed"
    FAILED = "Failed"
    STOPPED = "Stopped"


TERMINAL = frozenset({Phase.COMPLETED, Phase.FAILED, Phase.STOPPED})
#: Phases in which a computed proposal is the one that runs (or ran).
_WITH_PROPOSAL = frozenset({Phase.PROPOSAL_READY, Phase.QUEUED, Phase.RUNNING, Phase.COMPLETED})


class Why(enum.StrEnum):
    """Reasons of the ``Ready`` condition (part of the status API; never rename)."""

    PENDING = "Pending"
    PLANNING = "Planning"
    AWAITING_APPROVAL = "AwaitingApproval"
    APPROVED = "Approved"
    PROPOSAL_STALE = "ProposalStale"
    QUEUED = "Queued"
    WAITING_FOR_EXTERNAL = "WaitingForExternalReassignment"
    WAITING_FOR_BROKERS = "WaitingForBrokers"
    RUNNING = "Running"
    STOPPING = "Stopping"
    COMPLETED = "Completed"
    STOPPED = "Stopped"
    FAILED = "Failed"
    INVALID_SPEC = "InvalidSpec"
    NOT_SUPPORTED = "NotSupported"
    CLUSTER_UNAVAILABLE = "ClusterUnavailable"
    ZOOKEEPER_ERROR = "ZooKeeperError"


#: Reasons of phase ``ProposalReady`` that wait for a person (approval, or a refresh of a stale one).
AWAITING_PERSON = frozenset({Why.AWAITING_APPROVAL, Why.PROPOSAL_STALE})


@dataclass(frozen=True)
class Verdict:
    phase: Phase
    why: Why | str
    message: str
    stuck: Sequence[Stuck] = ()
    warnings: Sequence[str] = field(default=())


def timestamp(now: datetime) -> str:
    return format_timestamp(now)


def _clip(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE_LENGTH else message[: MAX_MESSAGE_LENGTH - 1] + "…"


def _condition(kind: str, status: bool, reason: str, message: str, generation: int) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True" if status else "False",
        "reason": reason,
        "message": _clip(message),
        "observedGeneration": generation,
    }


def phase_conditions(verdict: Verdict, generation: int) -> list[dict[str, Any]]:
    """``Ready``, ``ProposalReady``, ``Running`` (always written, ``True`` or ``False``) and
    ``Stalled`` or ``Reconciling`` (written only while ``True``) for the verdict's phase; each
    carries the verdict's reason. Pure."""
    phase, why, message = verdict.phase, str(verdict.why), verdict.message
    with_proposal = phase in _WITH_PROPOSAL
    proposal_text = message
    if with_proposal and phase is not Phase.PROPOSAL_READY:
        proposal_text = f"The proposal was computed and approved (phase {phase.value})."
    conditions = [
        _condition(READY, phase is Phase.COMPLETED, why, message, generation),
        _condition(PROPOSAL_READY, with_proposal, why, proposal_text, generation),
        _condition(RUNNING, phase is Phase.RUNNING, why, message, generation),
    ]
    if phase in (Phase.FAILED, Phase.STOPPED):
        conditions.append(_condition(STALLED, True, why, message, generation))
    elif phase is not Phase.COMPLETED and not (phase is Phase.PROPOSAL_READY and why in AWAITING_PERSON):
        conditions.append(_condition(RECONCILING, True, why, message, generation))
    return conditions


def has_phase_conditions(conditions: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a stored status carries the conditions :func:`phase_conditions` writes (one that an
    operator before them wrote has ``Ready`` alone)."""
    kinds = {c.get("type") for c in conditions}
    return {PROPOSAL_READY, RUNNING} <= kinds


def verdict_fields(
    verdict: Verdict, *, generation: int, now: datetime, previous: Mapping[str, Any]
) -> dict[str, Any]:
    """``phase``, ``observedGeneration``, ``message``, ``conditions`` and ``stuck`` of the status."""
    stamp = timestamp(now)
    old = {c.get("type"): c for c in previous.get("conditions") or [] if isinstance(c, Mapping)}
    new = phase_conditions(verdict, generation)
    if verdict.stuck:
        text = "; ".join(f"{s.topic}-{s.partition}: {s.reason}" for s in verdict.stuck[:10])
        more = len(verdict.stuck) - 10
        new.append(
            _condition(
                STUCK,
                True,
                "NoProgress",
                f"{len(verdict.stuck)} partition(s) make no progress: {text}"
                + (f" (and {more} more)" if more > 0 else ""),
                generation,
            )
        )
    elif STUCK in old:
        new.append(
            _condition(STUCK, False, "Progressing", "Every partition in flight is progressing.", generation)
        )
    if verdict.warnings:
        new.append(
            _condition(
                WARNING, True, "PlanWarnings", "; ".join(w.rstrip(" ;") for w in verdict.warnings), generation
            )
        )
    merged = []
    for condition in new:
        before = old.get(condition["type"])
        unchanged = before is not None and before.get("status") == condition["status"]
        condition["lastTransitionTime"] = (
            (before or {}).get("lastTransitionTime", stamp) if unchanged else stamp
        )
        merged.append(condition)
    merged += [dict(c) for kind, c in old.items() if kind not in _OWN]
    return {
        "phase": verdict.phase.value,
        "observedGeneration": generation,
        "message": _clip(verdict.message),
        "conditions": merged,
        "stuck": [
            {"topic": s.topic, "partition": s.partition, "reason": s.reason}
            for s in verdict.stuck[:MAX_STUCK]
        ]
        or None,
    }


def progress_text(done: int, total: int) -> str:
    return f"{done}/{total}"


def estimated_completion(
    started_at: datetime | None, now: datetime, done: int, total: int
) -> datetime | None:
    """When the reassignment should end if the rest goes at the pace so far (partitions per second
    since ``started_at``); ``None`` before the first partition is done, once all are, or without a
    start. An estimate: batches move partitions of different sizes, and throttles change the pace."""
    if started_at is None or done <= 0 or done >= total or now <= started_at:
        return None
    elapsed = (now - started_at).total_seconds()
    return now + timedelta(seconds=round(elapsed * (total - done) / done))


def is_terminal(phase: object) -> bool:
    return phase in {p.value for p in TERMINAL}
