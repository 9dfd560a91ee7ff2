"""The state of one reassignment reconcile and how it reaches the resource's status: the types
the phases share, and :class:`Run`."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from kafka_zk_operator.adapters.k8s.spark_jobs import SparkJobs
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain.reassignment_resource import ReassignmentResource
from kafka_zk_operator.domain.reassignment_status import (
    Phase,
    Verdict,
    Why,
    estimated_completion,
    progress_text,
    timestamp,
    verdict_fields,
)
from kafka_zk_operator.domain.timestamps import parse_timestamp
from kafka_zk_operator.service.events import Event
from kafka_zk_operator.service.reassignment import proposals

Ref = tuple[str, str]
Key = tuple[str, int]


class ReassignmentApi(proposals.PlanStorage, Protocol):
    def get(self, ref: Ref) -> dict[str, Any] | None: ...

    def spark_jobs(self) -> SparkJobs | None: ...

    def list_all(self) -> list[dict[str, Any]]: ...

    def patch_status(self, ref: Ref, fields: Mapping[str, Any]) -> None: ...

    def patch_annotations(self, ref: Ref, annotations: Mapping[str, str | None]) -> None: ...


@dataclass(frozen=True)
class Settings:
    #: A batch in flight longer than this with target replicas outside the ISR is reported stuck.
    stuck_after_seconds: float = 1800.0


@dataclass
class Result:
    events: list[Event] = field(default_factory=list)
    status: dict[str, Any] = field(default_factory=dict)
    replicas_moved: int = 0
    #: ``delete``: False while the finalizer must stay.
    done: bool = True
    message: str = ""


ClusterOf = Callable[[Mapping[str, Any]], str | None]


class Run:
    """One reconcile of one resource: the fresh body, the status being built, the verdict, the events.

    The phases (``propose``, ``queue``, ``batches``, ``throttles``, ``finish``) are functions of a
    ``Run``; this class only holds the state and writes it (:meth:`flush` patches what changed).
    """

    def __init__(
        self, resource: ReassignmentResource, api: ReassignmentApi, now: datetime, settings: Settings
    ) -> None:
        self.resource = resource
        self.api = api
        self.now = now
        self.settings = settings
        self.status: dict[str, Any] = copy.deepcopy(dict(resource.status))
        self.patch: dict[str, Any] = {}
        self.result = Result()
        self.store: ZkStore | None = None
        self.verdict: Verdict | None = None
        self.warnings: list[str] = []
        #: status fields already patched by an earlier flush of this run, with their values
        self.saved: dict[str, Any] = {}

    def set(self, key: str, value: Any) -> None:
        self.patch[key] = value
        self.status[key] = value

    @property
    def progress(self) -> dict[str, Any]:
        return dict(self.status.get("progress") or {})

    def set_progress(self, **values: Any) -> None:
        previous = self.progress
        merged = {**previous, **values}
        if merged.get("completedAt"):
            if merged.get("estimatedCompletionAt") is not None:
                merged["estimatedCompletionAt"] = None  # merge patch: removed
        elif "partitionsDone" in values and values["partitionsDone"] != previous.get("partitionsDone"):
            # Re-estimated only when partitions complete, so a poll that sees no change writes nothing.
            eta = estimated_completion(
                parse_timestamp(merged.get("startedAt")),
                self.now,
                int(merged.get("partitionsDone") or 0),
                int(merged.get("partitionsTotal") or 0),
            )
            if eta is not None:
                merged["estimatedCompletionAt"] = timestamp(eta)
            elif merged.get("estimatedCompletionAt") is not None:
                merged["estimatedCompletionAt"] = None
        self.set("progress", merged)

    def event(self, type_: str, reason: str, message: str) -> None:
        self.result.events.append(Event(type_, reason, message[:1000]))

    def decide(self, phase: Phase, why: Why | str, message: str, **kwargs: Any) -> None:
        self.verdict = Verdict(phase, why, message, warnings=tuple(self.warnings), **kwargs)

    def flush(self) -> None:
        if self.verdict is not None:
            fields = verdict_fields(
                self.verdict, generation=self.resource.generation, now=self.now, previous=self.status
            )
            for key, value in fields.items():
                self.set(key, value)
        progress = self.status.get("progress") or {}
        if "partitionsTotal" in progress:
            self.set(
                "progressText",
                progress_text(int(progress.get("partitionsDone", 0)), int(progress["partitionsTotal"])),
            )
        stored = {**self.resource.status, **self.saved}
        changed = {key: value for key, value in self.patch.items() if stored.get(key) != value}
        if changed:  # a poll that changes nothing writes nothing
            self.api.patch_status(self.resource.ref, changed)
            self.saved.update(changed)
        self.result.status = self.status

    def zk(self) -> ZkStore:
        assert self.store is not None
        return self.store

    def view_resource(self) -> ReassignmentResource:
        """The resource with the status as built so far (plan fields included)."""
        return dataclasses.replace(self.resource, status=self.status)
