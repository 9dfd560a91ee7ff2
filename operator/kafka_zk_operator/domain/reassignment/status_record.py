"""The PartitionReassignment ``status`` as a typed record: read from the resource in one place
(:meth:`ReassignmentStatus.parse`) and turned back into merge-patch fields in one place
(:meth:`ReassignmentStatus.patch_fields`).

The service changes it with :func:`dataclasses.replace` (through ``Run.update``) and never handles
the raw dictionary. Two fields stay documents of their own, read through typed accessors:
``proposal`` (the summary shown to the reviewer, see ``service.reassignment.proposals``) and
``throttle`` (the write-ahead throttle record, :func:`~kafka_zk_operator.domain.reassignment.throttles.record_from_fields`).

Reading is lenient: a status written by an older operator, or edited by hand, parses into what
can be understood (a malformed value reads as absent) so that the reconcile can go on and the
next patch writes it right. Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kafka_zk_operator.domain.reassignment.spec import BatchLimits
from kafka_zk_operator.domain.reassignment.status import Phase, estimated_completion, timestamp
from kafka_zk_operator.domain.reassignment.throttles import ThrottleRecord, record_from_fields
from kafka_zk_operator.domain.timestamps import parse_timestamp


def _int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


#: Progress attribute -> ``status.progress`` key.
_PROGRESS_KEYS = {
    "partitions_done": "partitionsDone",
    "partitions_total": "partitionsTotal",
    "current_batch": "currentBatch",
    "batches_done": "batchesDone",
    "batches_total": "batchesTotal",
    "leaders_elected": "leadersElected",
    "started_at": "startedAt",
    "batch_started_at": "batchStartedAt",
    "batch_submitted": "batchSubmitted",
    "completed_at": "completedAt",
    "estimated_completion_at": "estimatedCompletionAt",
    "started_spec": "startedSpec",
}
_PROGRESS_TEXT = {"started_at", "batch_started_at", "completed_at", "estimated_completion_at", "started_spec"}


@dataclass(frozen=True)
class Progress:
    """``status.progress``: batch bookkeeping (``current_batch`` is submitted or about to be,
    ``batches_done`` are finished and never submitted again) and timings. ``None``: absent."""

    partitions_done: int | None = None
    partitions_total: int | None = None
    current_batch: int | None = None
    batches_done: int | None = None
    batches_total: int | None = None
    leaders_elected: int | None = None
    started_at: str | None = None
    batch_started_at: str | None = None
    batch_submitted: int | None = None
    completed_at: str | None = None
    estimated_completion_at: str | None = None
    started_spec: str | None = None

    @classmethod
    def parse(cls, raw: object) -> Progress:
        if not isinstance(raw, Mapping):
            return cls()
        values: dict[str, Any] = {
            name: (_str if name in _PROGRESS_TEXT else _int)(raw.get(key))
            for name, key in _PROGRESS_KEYS.items()
        }
        return cls(**values)

    def fields(self) -> dict[str, Any]:
        """The ``status.progress`` object (absent values left out)."""
        return {
            key: getattr(self, name)
            for name, key in _PROGRESS_KEYS.items()
            if getattr(self, name) is not None
        }

    @property
    def started(self) -> bool:
        return self.started_at is not None

    @property
    def batch(self) -> int:
        """The batch submitted or about to be (1 before the first)."""
        return 1 if self.current_batch is None else self.current_batch

    @property
    def finished_batches(self) -> int:
        return self.batches_done or 0

    @property
    def moved_partitions(self) -> int:
        return self.partitions_done or 0

    def advanced(self, now: datetime, **changes: Any) -> Progress:
        """``changes`` applied (attribute names; ``None`` removes), and the estimated completion
        kept in step: removed once completed, re-estimated only when partitions complete (so a
        poll that sees no change writes nothing)."""
        merged = dataclasses.replace(self, **changes)
        if merged.completed_at:
            return dataclasses.replace(merged, estimated_completion_at=None)
        if "partitions_done" in changes and changes["partitions_done"] != self.partitions_done:
            eta = estimated_completion(
                parse_timestamp(merged.started_at),
                now,
                merged.partitions_done or 0,
                merged.partitions_total or 0,
            )
            return dataclasses.replace(
                merged, estimated_completion_at=None if eta is None else timestamp(eta)
            )
        return merged


#: ReassignmentStatus attribute -> status key (``progress`` is a :class:`Progress`).
_STATUS_KEYS = {
    "phase": "phase",
    "observed_generation": "observedGeneration",
    "message": "message",
    "conditions": "conditions",
    "stuck": "stuck",
    "proposal": "proposal",
    "plan": "plan",
    "plan_truncated": "planTruncated",
    "plan_config_maps": "planConfigMaps",
    "progress": "progress",
    "progress_text": "progressText",
    "throttle": "throttle",
    "defaults": "defaults",
}


#: The status keys the operator writes (kopf keeps its own beside them).
OWNED_KEYS = frozenset(_STATUS_KEYS.values())


def _phase(value: object) -> Phase | None:
    try:
        return Phase(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _mappings(value: object) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, Mapping))


@dataclass(frozen=True)
class ReassignmentStatus:
    """What the operator keeps in a PartitionReassignment's ``status`` (``None``: absent)."""

    phase: Phase | None = None
    observed_generation: int | None = None
    message: str | None = None
    conditions: tuple[Mapping[str, Any], ...] = ()
    stuck: tuple[Mapping[str, Any], ...] = ()
    proposal: Mapping[str, Any] | None = None
    plan: tuple[Mapping[str, Any], ...] | None = None
    plan_truncated: bool | None = None
    plan_config_maps: tuple[str, ...] | None = None
    progress: Progress = field(default_factory=Progress)
    progress_text: str | None = None
    throttle: Mapping[str, Any] | None = None
    #: What applies where the spec leaves approval/throttle out (domain/reassignment/defaults.py).
    defaults: Mapping[str, Any] | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> ReassignmentStatus:
        """Every field the operator owns; anything else in ``raw`` (kopf's own) is not its business."""
        proposal, throttle, plan = raw.get("proposal"), raw.get("throttle"), raw.get("plan")
        defaults = raw.get("defaults")
        names = raw.get("planConfigMaps")
        truncated = raw.get("planTruncated")
        message = raw.get("message")
        return cls(
            phase=_phase(raw.get("phase")),
            observed_generation=_int(raw.get("observedGeneration")),
            message=message if isinstance(message, str) else None,
            conditions=_mappings(raw.get("conditions")),
            stuck=_mappings(raw.get("stuck")),
            proposal=dict(proposal) if isinstance(proposal, Mapping) else None,
            plan=_mappings(plan) if isinstance(plan, list) else None,
            plan_truncated=truncated if isinstance(truncated, bool) else None,
            plan_config_maps=tuple(str(n) for n in names) if isinstance(names, list) else None,
            progress=Progress.parse(raw.get("progress")),
            progress_text=_str(raw.get("progressText")),
            throttle=dict(throttle) if isinstance(throttle, Mapping) else None,
            defaults=dict(defaults) if isinstance(defaults, Mapping) else None,
        )

    def field_value(self, name: str) -> Any:
        """The status value of attribute ``name`` as it is written (``None``: removed)."""
        value = getattr(self, name)
        if name == "progress":
            return value.fields() or None
        if name == "phase":
            return None if value is None else value.value
        if name in ("conditions", "stuck"):
            return [dict(item) for item in value] or None
        if name in ("plan", "plan_config_maps"):
            return None if value is None else [dict(v) if isinstance(v, Mapping) else v for v in value]
        if name in ("proposal", "throttle", "defaults"):
            return None if value is None else dict(value)
        return value

    def fields(self) -> dict[str, Any]:
        """The whole status as the operator writes it (absent values left out)."""
        values = {key: self.field_value(name) for name, key in _STATUS_KEYS.items()}
        return {key: value for key, value in values.items() if value is not None}

    def patch_fields(self, names: Sequence[str], stored: Mapping[str, Any]) -> dict[str, Any]:
        """The merge patch that takes the ``stored`` status to this one for attributes ``names``,
        leaving out what already holds (a poll that changes nothing writes nothing). A value that
        became absent is sent as ``None`` (removed); so is a ``progress`` key that went away."""
        patch: dict[str, Any] = {}
        for name in names:
            key = _STATUS_KEYS[name]
            value = self.field_value(name)
            before = stored.get(key)
            if name == "progress":
                if value == before or (value is None and not before):
                    continue
                gone = before.keys() - (value or {}).keys() if isinstance(before, Mapping) else set()
                value = {**(value or {}), **dict.fromkeys(gone)}
            elif value == before:
                continue
            patch[key] = value
        return patch

    # -- typed views of the documents it keeps -----------------------------------------------------

    @property
    def current_phase(self) -> Phase:
        return self.phase or Phase.PENDING

    @property
    def started(self) -> bool:
        return self.progress.started

    @property
    def proposal_id(self) -> str | None:
        value = (self.proposal or {}).get("id")
        return None if value is None else str(value)

    @property
    def proposal_moves(self) -> int:
        return _int((self.proposal or {}).get("moves")) or 0

    @property
    def proposal_warnings(self) -> list[str]:
        return [str(w) for w in (self.proposal or {}).get("warnings") or []]

    def proposal_limits(self, fallback: BatchLimits) -> BatchLimits:
        """The batch limits the proposal was made with (the spec may have changed since)."""
        batch = (self.proposal or {}).get("batch") or {}
        try:
            return BatchLimits(int(batch["maxPartitions"]), int(batch["maxMovesPerBroker"]))
        except (KeyError, TypeError, ValueError):
            return fallback

    @property
    def throttle_record(self) -> ThrottleRecord | None:
        """The operator's throttle that is (or may be) applied."""
        return record_from_fields(self.throttle)

    @property
    def throttle_pending(self) -> bool:
        """A write-ahead record: its ZooKeeper changes may be only partly in place."""
        return (self.throttle or {}).get("applied") is False

    @property
    def throttle_applied(self) -> bool:
        return bool((self.throttle or {}).get("applied"))

    @property
    def was_stuck(self) -> bool:
        return bool(self.stuck)
