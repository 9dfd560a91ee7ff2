"""A PartitionReassignment as the operator reads it: the parsed body (:class:`ReassignmentResource`,
no API call), what its annotations ask for (approve, refresh, stop), and its place in its
cluster's queue (:func:`queue_rank`: one already started first, then by creation time, the uid
breaking ties - how the queue and the kopf index agree)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka_zk_operator.domain.crd_identity import APPROVE_ANNOTATION, REFRESH_ANNOTATION, STOP_ANNOTATION
from kafka_zk_operator.domain.reassignment.defaults import defaults_for, with_defaults
from kafka_zk_operator.domain.reassignment.status import TERMINAL
from kafka_zk_operator.domain.reassignment.status_record import ReassignmentStatus


@dataclass(frozen=True)
class ReassignmentResource:
    namespace: str
    name: str
    uid: str
    generation: int
    created: str
    annotations: Mapping[str, str]
    spec: Mapping[str, Any]
    status: Mapping[str, Any]
    deleting: bool

    @property
    def ref(self) -> tuple[str, str]:
        return self.namespace, self.name

    @property
    def cluster_name(self) -> str | None:
        value = self.spec.get("cluster")
        return str(value) if value else None

    @property
    def display(self) -> str:
        return f"{self.namespace}/{self.name}"

    def annotation(self, key: str) -> str | None:
        value = self.annotations.get(key)
        return None if value is None else str(value).strip()


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("true", "yes", "1")


def parse_resource(body: Mapping[str, Any]) -> ReassignmentResource:
    meta = body.get("metadata") or {}
    return ReassignmentResource(
        namespace=str(meta.get("namespace", "")),
        name=str(meta.get("name", "")),
        uid=str(meta.get("uid", "")),
        generation=int(meta.get("generation") or 0),
        created=str(meta.get("creationTimestamp", "")),
        annotations=dict(meta.get("annotations") or {}),
        spec=dict(body.get("spec") or {}),
        status=dict(body.get("status") or {}),
        deleting=bool(meta.get("deletionTimestamp")),
    )


def stop_requested(resource: ReassignmentResource) -> bool:
    return _truthy(resource.annotation(STOP_ANNOTATION))


def refresh_requested(resource: ReassignmentResource) -> bool:
    return _truthy(resource.annotation(REFRESH_ANNOTATION))


def approved(resource: ReassignmentResource, proposal_id: str | None) -> bool:
    """``approval: Auto`` (given or by default, :mod:`kafka_zk_operator.domain.reassignment.defaults`), or the approve
    annotation is ``"true"`` or names this proposal's id."""
    if with_defaults(resource.spec, defaults_for(resource.status))["approval"] == "Auto":
        return True
    value = resource.annotation(APPROVE_ANNOTATION)
    return value is not None and (_truthy(value) or (proposal_id is not None and value == proposal_id))


def is_started(status: Mapping[str, Any]) -> bool:
    return ReassignmentStatus.parse(status).started


QueueRank = tuple[int, str, str, str]


def queue_rank(resource: ReassignmentResource) -> QueueRank | None:
    """Position key in its cluster's queue; ``None`` when it does not (or no longer) wait to run."""
    status = ReassignmentStatus.parse(resource.status)
    if status.phase in TERMINAL or resource.deleting:
        return None
    if not status.started and (stop_requested(resource) or not approved(resource, status.proposal_id)):
        return None
    return (0 if status.started else 1, resource.created, resource.uid, resource.display)
