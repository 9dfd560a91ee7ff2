"""The Kubernetes calls the reassignment service needs (the parsed resource, its annotations and
its queue rank are ``domain.reassignment.resource``).

:class:`KubernetesReassignments` is the service's port onto the API server: a fresh read of the
resource (never the possibly stale body a handler was called with), *strict* status patches (the
throttle record is written ahead of the ZooKeeper change it describes, so a failed patch must
stop the change), annotation removal, a fresh list for the queue, and the ConfigMaps that hold
plans too long for the status. ConfigMaps are owned by the resource through an ownerReference
**without** ``blockOwnerDeletion`` (Argo CD cannot prune resources blocked by one, reference
product-landscape §7.5) so Kubernetes' garbage collector removes them with it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, cast

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.adapters.k8s.api import (
    KubernetesApiError,
    api_client,
    merge_patch_status,
    owner_reference,
)
from kafka_zk_operator.adapters.k8s.spark_jobs import SparkJobs
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import (
    GROUP,
    PARTITION_REASSIGNMENT,
    PLAN_PART_ANNOTATION,
    PLAN_PROPOSAL_ANNOTATION,
    PLAN_REASSIGNMENT_LABEL,
    REFRESH_ANNOTATION,
    VERSION,
)
from kafka_zk_operator.domain.reassignment.resource import ReassignmentResource

log = logging.getLogger(__name__)

PLURAL = PARTITION_REASSIGNMENT.plural
KIND = PARTITION_REASSIGNMENT.kind
PLAN_KEY = "plan.json"
#: Serialized plan bytes per ConfigMap (the API server's limit is 1 MiB for the whole object).
CONFIGMAP_BUDGET = 700_000


class KubernetesReassignments:
    """The API calls of the reassignment service, with the credentials kopf uses.

    ``namespaces``: the namespaces the operator serves (empty: all). Lists stay inside them, so a
    namespace-scoped installation (Roles, no ClusterRole) works.
    """

    def __init__(self, namespaces: Sequence[str] = ()) -> None:
        self.namespaces = tuple(namespaces)
        self._client: client.ApiClient | None = None

    def api_client(self) -> client.ApiClient:
        return self._api()

    def spark_jobs(self) -> SparkJobs:
        """The Spark planning jobs' port on this client."""
        return SparkJobs(self._api())

    def _api(self) -> client.ApiClient:
        if self._client is None:
            self._client = api_client()
        return self._client

    def _custom(self) -> client.CustomObjectsApi:
        return client.CustomObjectsApi(self._api())

    def _core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self._api())

    @staticmethod
    def _failed(what: str, exc: ApiException) -> errors.KzoError:
        return KubernetesApiError(f"Kubernetes API call failed ({what}): {exc.status} {exc.reason}")

    def get(self, ref: tuple[str, str]) -> dict[str, Any] | None:
        namespace, name = ref
        try:
            body = cast(
                "dict[str, Any]",
                self._custom().get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name),
            )
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise self._failed(f"get {namespace}/{name}", exc) from exc
        return body

    def list_all(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        try:
            if not self.namespaces:
                listing = cast(
                    "dict[str, Any]", self._custom().list_cluster_custom_object(GROUP, VERSION, PLURAL)
                )
                return list(listing.get("items") or [])
            for namespace in self.namespaces:
                listing = cast(
                    "dict[str, Any]",
                    self._custom().list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL),
                )
                items.extend(listing.get("items") or [])
        except ApiException as exc:
            raise self._failed("list partitionreassignments", exc) from exc
        return items

    def patch_status(self, ref: tuple[str, str], fields: Mapping[str, Any]) -> None:
        """Merge-patch ``status``; raises unless the API server accepted it (or the object is gone)."""
        try:
            merge_patch_status(self._custom(), PARTITION_REASSIGNMENT, ref, fields)  # False: gone
        except ApiException as exc:
            raise self._failed("patch status of {}/{}".format(*ref), exc) from exc

    def patch_annotations(self, ref: tuple[str, str], annotations: Mapping[str, str | None]) -> None:
        namespace, name = ref
        try:
            self._custom().patch_namespaced_custom_object(
                GROUP, VERSION, namespace, PLURAL, name, {"metadata": {"annotations": dict(annotations)}},
                _content_type="application/merge-patch+json",
            )  # fmt: skip
        except ApiException as exc:
            if exc.status != 404:
                raise self._failed(f"patch annotations of {namespace}/{name}", exc) from exc

    # ------------------------------------------------------------------ plan ConfigMaps
    def write_plan(
        self, owner: ReassignmentResource, proposal_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        """Store ``entries`` in ConfigMaps ``<name>-plan-<id>-<n>``; returns their names in order."""
        chunks: list[list[Mapping[str, Any]]] = [[]]
        size = 0
        for entry in entries:
            length = len(json.dumps(entry, separators=(",", ":"))) + 1
            if chunks[-1] and size + length > CONFIGMAP_BUDGET:
                chunks.append([])
                size = 0
            chunks[-1].append(entry)
            size += length
        names = []
        for index, chunk in enumerate(chunks):
            name = f"{owner.name[:200]}-plan-{proposal_id}-{index}"
            body = client.V1ConfigMap(
                metadata=client.V1ObjectMeta(
                    name=name,
                    namespace=owner.namespace,
                    labels={
                        "app.kubernetes.io/managed-by": "kafka-zk-operator",
                        PLAN_REASSIGNMENT_LABEL: owner.name[:63],
                    },
                    annotations={
                        PLAN_PROPOSAL_ANNOTATION: proposal_id,
                        PLAN_PART_ANNOTATION: f"{index + 1}/{len(chunks)}",
                    },
                    owner_references=[
                        cast("Any", owner_reference(PARTITION_REASSIGNMENT, owner.name, owner.uid))
                    ],
                ),
                data={PLAN_KEY: json.dumps(chunk, separators=(",", ":"))},
            )
            try:
                self._core().create_namespaced_config_map(owner.namespace, body)
            except ApiException as exc:
                if exc.status != 409:
                    raise self._failed(f"create ConfigMap {name}", exc) from exc
                self._core().replace_namespaced_config_map(name, owner.namespace, body)
            names.append(name)
        return names

    def read_plan(self, namespace: str, names: Sequence[str], proposal_id: str) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        for name in names:
            try:
                cm = self._core().read_namespaced_config_map(name, namespace)
            except ApiException as exc:
                if exc.status == 404:
                    raise errors.InvalidSpec(
                        f"plan ConfigMap {namespace}/{name} is missing; annotate the resource with "
                        f"{REFRESH_ANNOTATION}=true to compute a new proposal"
                    ) from exc
                raise self._failed(f"read ConfigMap {name}", exc) from exc
            stored = ((cm.metadata.annotations if cm.metadata else None) or {}).get(PLAN_PROPOSAL_ANNOTATION)
            if stored != proposal_id:
                raise errors.InvalidSpec(
                    f"plan ConfigMap {namespace}/{name} holds proposal {stored}, not {proposal_id}; "
                    f"annotate the resource with {REFRESH_ANNOTATION}=true"
                )
            entries.extend(json.loads((cm.data or {}).get(PLAN_KEY) or "[]"))
        return entries

    def delete_configmaps(self, namespace: str, names: Sequence[str]) -> None:
        for name in names:
            try:
                self._core().delete_namespaced_config_map(name, namespace)
            except ApiException as exc:
                if exc.status != 404:
                    log.warning("deleting ConfigMap %s/%s failed: %s", namespace, name, exc.reason)
