"""The state of one reassignment reconcile and how it reaches the resource's status: the types
the phases share, and :class:`Run`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from kafka_zk_operator.adapters.k8s.spark_jobs import SparkJobs
from kafka_zk_operator.domain.reassignment.resource import ReassignmentResource
from kafka_zk_operator.domain.reassignment.status import Phase, Verdict, Why, progress_text, verdict_fields
from kafka_zk_operator.domain.reassignment.status_record import OWNED_KEYS, Progress, ReassignmentStatus
from kafka_zk_operator.service.backend import ReassignmentBackend
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
    #: ``spec.throttle`` of new resources that leave it out (bytes/s; ``None``: unthrottled).
    default_throttle: int | None = None


@dataclass
class Result:
    events: list[Event] = field(default_factory=list)
    status: dict[str, Any] = field(default_factory=dict)
    replicas_moved: int = 0
    #: A batch of this resource is in ``/admin/reassign_partitions`` (submitted or followed by this
    #: pass): the next step comes when the controller changes that znode.
    batch_in_flight: bool = False
    #: ``delete``: False while the finalizer must stay.
    done: bool = True
    message: str = ""


ClusterOf = Callable[[Mapping[str, Any]], str | None]


class Run:
    """One reconcile of one resource: the fresh body, the status being built, the verdict, the events.

    The phases (``propose``, ``queue``, ``batches``, ``throttles``, ``finish``) are functions of a
    ``Run``; this class only holds the state and writes it. The status is a typed
    :class:`ReassignmentStatus`, changed with :meth:`update`; :meth:`save` patches changed fields
    at once (write-ahead records), :meth:`flush` the rest at the end of the pass.
    """

    def __init__(
        self, resource: ReassignmentResource, api: ReassignmentApi, now: datetime, settings: Settings
    ) -> None:
        self.resource = resource
        self.api = api
        self.now = now
        self.settings = settings
        #: the status as read, and as this run builds it
        self.stored = ReassignmentStatus.parse(resource.status)
        self.status = self.stored
        self.result = Result()
        self.store: ReassignmentBackend | None = None
        #: reads bytes per partition from the brokers, for byte-balanced plans (None: cannot)
        self.sizes_for: Callable[[], Mapping[tuple[str, int], int]] | None = None
        self.verdict: Verdict | None = None
        self.warnings: list[str] = []
        #: status attributes this run changed, in order
        self.touched: dict[str, None] = {}
        #: status fields already patched by this run, with their values
        self.saved: dict[str, Any] = {}

    def update(self, **values: Any) -> None:
        """Change status attributes (:class:`ReassignmentStatus` names)."""
        self.status = dataclasses.replace(self.status, **values)
        self.touched.update(dict.fromkeys(values))

    @property
    def progress(self) -> Progress:
        return self.status.progress

    def set_progress(self, **values: Any) -> None:
        """Change ``status.progress`` (:class:`Progress` names; ``None`` removes)."""
        self.update(progress=self.status.progress.advanced(self.now, **values))

    def event(self, type_: str, reason: str, message: str) -> None:
        self.result.events.append(Event(type_, reason, message[:1000]))

    def decide(self, phase: Phase, why: Why | str, message: str, **kwargs: Any) -> None:
        self.verdict = Verdict(phase, why, message, warnings=tuple(self.warnings), **kwargs)

    def save(self, *names: str) -> None:
        """Patch now what changed among attributes ``names`` (all this run touched when none)."""
        changed = self.status.patch_fields(
            names or tuple(self.touched), {**self.resource.status, **self.saved}
        )
        if changed:
            self.api.patch_status(self.resource.ref, changed)
            self.saved.update(changed)

    def flush(self) -> None:
        if self.verdict is not None:
            fields = verdict_fields(
                self.verdict,
                generation=self.resource.generation,
                now=self.now,
                previous={"conditions": [dict(c) for c in self.status.conditions]},
            )
            self.update(
                phase=Phase(fields["phase"]),
                observed_generation=fields["observedGeneration"],
                message=fields["message"],
                conditions=tuple(fields["conditions"]),
                stuck=tuple(fields["stuck"] or ()),
            )
        progress = self.status.progress
        if progress.partitions_total is not None:
            self.update(progress_text=progress_text(progress.moved_partitions, progress.partitions_total))
        self.save()  # a poll that changes nothing writes nothing
        self.result.status = self._status_fields()

    def zk(self) -> ReassignmentBackend:
        assert self.store is not None
        return self.store

    def view_resource(self) -> ReassignmentResource:
        """The resource with the status as built so far (plan fields included)."""
        return dataclasses.replace(self.resource, status=self._status_fields())

    def _status_fields(self) -> dict[str, Any]:
        """The whole status as built so far (kopf's own fields as read)."""
        kept = {k: v for k, v in self.resource.status.items() if k not in OWNED_KEYS}
        return {**kept, **self.status.fields()}
