"""KafkaTopic custom-resource bodies → domain values (no API calls here).

Reads ``spec`` (with ``metadata.name`` as the default topic name), the management annotations
and the deletion policy, and parses the spec once into the :class:`DesiredTopic` a reconcile
plans with. A malformed spec that slipped past the CRD schema (e.g. written by an older CRD
version) gives no desired topic but the ``InvalidSpec`` error, with the field path, that the
reconcile reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import KAFKA_TOPIC, MANAGED_ANNOTATION, PAUSED_ANNOTATION
from kafka_zk_operator.domain.topic.new_partitions import Placement
from kafka_zk_operator.domain.topic.plan import DesiredTopic
from kafka_zk_operator.domain.topic.status import ReconcileMode

PLURAL = KAFKA_TOPIC.plural
KIND = KAFKA_TOPIC.kind


@dataclass(frozen=True)
class KafkaTopicResource:
    namespace: str
    name: str
    uid: str
    generation: int
    created: str  # creationTimestamp (RFC 3339; compares chronologically as text)
    cluster: str | None
    topic_name: str
    deletion_policy: str
    mode: ReconcileMode
    spec: Mapping[str, Any]
    #: A reconcile succeeded once (status.appliedConfig present): it owns its Kafka topic.
    reconciled: bool = False
    #: The topic the spec asks for; ``None`` when the spec is malformed (then ``spec_error``).
    desired: DesiredTopic | None = None
    #: Why the spec could not be parsed (a field with the wrong type); ``None`` with ``desired``.
    spec_error: errors.InvalidSpec | None = None

    @property
    def ref(self) -> tuple[str, str]:
        return self.namespace, self.name

    @property
    def seniority(self) -> tuple[int, str, str]:
        """Who wins a name conflict (lowest first): a resource that already manages the topic,
        then the oldest (creationTimestamp has one-second resolution, so GitOps tools applying many
        manifests at once create ties), then the uid, so the choice is deterministic and stable."""
        return (0 if self.reconciled else 1), self.created, self.uid


def _true(value: object) -> bool:
    return str(value).strip().lower() in ("true", "yes", "1")


def _false(value: object) -> bool:
    return str(value).strip().lower() in ("false", "no", "0")


def parse_resource(body: Mapping[str, Any]) -> KafkaTopicResource:
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    annotations = meta.get("annotations") or {}
    if _false(annotations.get(MANAGED_ANNOTATION, "true")):
        mode = ReconcileMode.UNMANAGED
    elif _true(annotations.get(PAUSED_ANNOTATION, "false")):
        mode = ReconcileMode.PAUSED
    else:
        mode = ReconcileMode.MANAGED
    topic_name = str(spec.get("topicName") or meta.get("name", ""))
    desired: DesiredTopic | None = None
    spec_error: errors.InvalidSpec | None = None
    try:
        desired = _desired_topic(topic_name, spec)
    except errors.InvalidSpec as error:
        spec_error = error
    return KafkaTopicResource(
        namespace=str(meta.get("namespace", "")),
        name=str(meta.get("name", "")),
        uid=str(meta.get("uid", "")),
        generation=int(meta.get("generation") or 0),
        created=str(meta.get("creationTimestamp", "")),
        cluster=spec.get("cluster") or None,
        topic_name=topic_name,
        deletion_policy=str(spec.get("deletionPolicy") or "Delete"),
        mode=mode,
        spec=spec,
        reconciled=isinstance((body.get("status") or {}).get("appliedConfig"), list),
        desired=desired,
        spec_error=spec_error,
    )


def _desired_topic(topic_name: str, spec: Mapping[str, Any]) -> DesiredTopic:
    """The topic the spec asks for. :raises InvalidSpec: a field has the wrong type."""
    try:
        partitions = int(spec["partitions"])
        replication_factor = int(spec["replicationFactor"])
    except (KeyError, TypeError, ValueError) as exc:
        raise errors.InvalidSpec(
            "spec.partitions and spec.replicationFactor must be positive integers"
        ) from exc
    raw_config = spec.get("config") or {}
    if not isinstance(raw_config, Mapping):
        raise errors.InvalidSpec("spec.config must be a map of config names to string values")
    config = {str(k): str(v) for k, v in raw_config.items()}
    assignment = None
    raw_assignment = spec.get("assignment")
    if raw_assignment:
        try:
            assignment = {int(p): tuple(int(b) for b in replicas) for p, replicas in raw_assignment.items()}
        except (TypeError, ValueError, AttributeError) as exc:
            raise errors.InvalidSpec(
                'spec.assignment must map partition ids ("0", "1", ...) to lists of broker ids'
            ) from exc
    raw_placement = spec.get("placement") or Placement.KAFKA.value
    try:
        placement = Placement(raw_placement)
    except ValueError as exc:
        raise errors.InvalidSpec(
            f"spec.placement must be {' or '.join(p.value for p in Placement)}, not {raw_placement!r}"
        ) from exc
    return DesiredTopic(
        name=topic_name,
        partitions=partitions,
        replication_factor=replication_factor,
        config=config,
        assignment=assignment,
        placement=placement,
    )
