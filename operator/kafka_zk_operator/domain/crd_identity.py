"""The operator's Kubernetes identity, in one place: its API group and version, its two kinds, and
the name of every finalizer, annotation and label it owns.

Everything that names a resource of this operator, or a key under its group, imports it from here:
the kopf handlers, the Kubernetes adapters, the Spark job objects, the demo and the import CLI.
The CRDs in ``crds/`` spell the same names (``tests/unit/test_crd_identity.py`` compares them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

GROUP: Final = "kafka.zk-operator.io"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"


@dataclass(frozen=True, slots=True)
class CustomResource:
    """One of the operator's kinds: what ``kubectl`` and the API paths call it."""

    kind: str
    plural: str


KAFKA_TOPIC: Final = CustomResource(kind="KafkaTopic", plural="kafkatopics")
PARTITION_REASSIGNMENT: Final = CustomResource(kind="PartitionReassignment", plural="partitionreassignments")

#: The finalizer kopf puts on every resource it handles.
FINALIZER: Final = f"{GROUP}/finalizer"
#: Prefix under which earlier versions kept kopf's diff base in an annotation (the diff base is in
#: the status now: ``handlers.diffbase``). Not GROUP itself: kopf leaves every annotation under the
#: prefix of its storage out of its change detection, which hid the operator's own annotations
#: (paused, managed, approve, stop, refresh) from the update handlers.
KOPF_PREFIX: Final = f"kopf.{GROUP}"
#: The name of kopf's diff base ("the last handled configuration").
LAST_HANDLED_KEY: Final = "last-handled-configuration"
#: kopf's annotations as earlier versions stored them; removed on the next reconcile. Those under
#: GROUP first: their ``kopf-managed`` marker alone makes kopf ignore the whole GROUP prefix.
LEGACY_KOPF_ANNOTATIONS: Final = (
    f"{GROUP}/{LAST_HANDLED_KEY}",
    f"{GROUP}/kopf-managed",
    f"{KOPF_PREFIX}/{LAST_HANDLED_KEY}",
)

# KafkaTopic annotations.
#: ``"true"``: nothing is written to Kafka for the topic.
PAUSED_ANNOTATION: Final = f"{GROUP}/paused"
#: ``"false"``: the operator lets go of the topic (deleting the resource leaves the topic).
MANAGED_ANNOTATION: Final = f"{GROUP}/managed"

# PartitionReassignment annotations.
#: ``true`` or a proposal id: start the proposed moves.
APPROVE_ANNOTATION: Final = f"{GROUP}/approve"
#: ``true``: compute a new proposal.
REFRESH_ANNOTATION: Final = f"{GROUP}/refresh"
#: ``true``: stop after the batch in flight.
STOP_ANNOTATION: Final = f"{GROUP}/stop"

#: On a PartitionReassignment the operator made for a KafkaTopic's replication-factor change.
TOPIC_RESOURCE_LABEL: Final = f"{GROUP}/topic-resource"
#: On a plan ConfigMap: the PartitionReassignment it belongs to.
PLAN_REASSIGNMENT_LABEL: Final = f"{GROUP}/reassignment"
#: On a plan ConfigMap: the proposal id its moves belong to.
PLAN_PROPOSAL_ANNOTATION: Final = f"{GROUP}/proposal"
#: On a plan ConfigMap: ``<n>/<of>``.
PLAN_PART_ANNOTATION: Final = f"{GROUP}/part"

# Spark job objects (ConfigMaps, Jobs, pods).
SPARK_JOB_LABEL: Final = f"{GROUP}/spark-job"
SPARK_ROLE_LABEL: Final = f"{GROUP}/spark-role"
SPARK_CHUNK_ANNOTATION: Final = f"{GROUP}/chunk"
SPARK_SHA_ANNOTATION: Final = f"{GROUP}/sha256"
#: On the ConfigMap that holds the operator's Spark settings.
SPARK_SETTINGS_LABEL: Final = f"{GROUP}/spark-settings"
