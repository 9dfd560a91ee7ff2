"""The PartitionReassignment a KafkaTopic hands its replication-factor change to.

Owned by the KafkaTopic (``ownerReferences`` without ``blockOwnerDeletion``, so namespace and
GitOps deletions are never blocked), ``mode: ReplicationFactor`` for exactly that topic,
``approval: Auto``. Created once per target factor; an existing one is left alone.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.adapters.k8s.api import api_client, owner_reference
from kafka_zk_operator.domain.crd_identity import (
    API_VERSION,
    GROUP,
    KAFKA_TOPIC,
    PARTITION_REASSIGNMENT,
    TOPIC_RESOURCE_LABEL,
    VERSION,
)
from kafka_zk_operator.domain.topic.resource import KafkaTopicResource

PLURAL = PARTITION_REASSIGNMENT.plural
TOPIC_LABEL = TOPIC_RESOURCE_LABEL
MAX_NAME = 63  # keep it a valid label value too


def reassignment_name(resource_name: str, replication_factor: int) -> str:
    suffix = f"-rf{replication_factor}"
    if len(resource_name) + len(suffix) <= MAX_NAME:
        return resource_name + suffix
    digest = hashlib.sha256(resource_name.encode()).hexdigest()[:8]
    return f"{resource_name[: MAX_NAME - len(suffix) - 9].rstrip('-.')}-{digest}{suffix}"


def build(resource: KafkaTopicResource, replication_factor: int) -> dict[str, Any]:
    """The PartitionReassignment body (pure)."""
    spec: dict[str, Any] = {
        "mode": "ReplicationFactor",
        "replicationFactors": {resource.topic_name: replication_factor},
        "approval": "Auto",
    }
    if resource.cluster:
        spec["cluster"] = resource.cluster
    return {
        "apiVersion": API_VERSION,
        "kind": PARTITION_REASSIGNMENT.kind,
        "metadata": {
            "name": reassignment_name(resource.name, replication_factor),
            "namespace": resource.namespace,
            "labels": {TOPIC_LABEL: resource.name[:63]},
            "ownerReferences": [owner_reference(KAFKA_TOPIC, resource.name, resource.uid, controller=True)],
        },
        "spec": spec,
    }


def ensure(resource: KafkaTopicResource, replication_factor: int) -> bool:
    """Create the reassignment unless it exists. Returns True when it was created now."""
    body = build(resource, replication_factor)
    api = client.CustomObjectsApi(api_client())
    try:
        api.create_namespaced_custom_object(GROUP, VERSION, resource.namespace, PLURAL, body)
    except ApiException as exc:
        if exc.status == 409:
            return False
        raise
    return True
