"""The Kubernetes calls around a Spark planning job: create its objects, read and write chunks.

Used by the operator (``service.plan_offload``: submit, collect, clean up) and by the driver
program (``spark_driver``: read the input, write the result). Bodies are plain
dicts (the builders' output, and API answers through ``sanitize_for_serialization``). Every
failure other than "not found" / "already exists" is a retryable
:class:`~kafka_zk_operator.adapters.k8s.api.KubernetesApiError`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, cast

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.adapters.k8s.api import KubernetesApiError
from kafka_zk_operator.adapters.k8s.spark_submit import selector

#: Where a pod finds its own namespace.
NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


class SparkJobs:
    """ConfigMaps and Jobs of Spark planning jobs, through one API client."""

    def __init__(self, api: client.ApiClient) -> None:
        self.api = api
        self.core = client.CoreV1Api(api)
        self.batch = client.BatchV1Api(api)

    def _plain(self, obj: object) -> dict[str, Any]:
        return cast("dict[str, Any]", self.api.sanitize_for_serialization(obj))  # type: ignore[no-untyped-call]

    def create(self, body: Mapping[str, Any], *, dry_run: bool = False) -> dict[str, Any] | None:
        """Create a ConfigMap or Job; ``None`` when it already exists. ``dry_run``: server-side."""
        kind, ns = body["kind"], body["metadata"]["namespace"]
        mode = "All" if dry_run else None
        raw = cast("Any", dict(body))
        try:
            if kind == "ConfigMap":
                return self._plain(self.core.create_namespaced_config_map(ns, raw, dry_run=mode))
            if kind == "Job":
                return self._plain(self.batch.create_namespaced_job(ns, raw, dry_run=mode))
        except ApiException as exc:
            if exc.status == 409:
                return None
            raise KubernetesApiError(
                f"creating {kind} {ns}/{body['metadata']['name']} failed: {exc.status} {exc.reason}: {exc.body}"
            ) from exc
        raise ValueError(f"unsupported kind {kind}")

    def put_configmap(self, body: Mapping[str, Any]) -> None:
        """Create the ConfigMap, or replace it when it exists."""
        if self.create(body) is not None:
            return
        ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
        try:
            self.core.replace_namespaced_config_map(name, ns, cast("Any", dict(body)))
        except ApiException as exc:
            raise KubernetesApiError(
                f"replacing ConfigMap {ns}/{name} failed: {exc.status} {exc.reason}"
            ) from exc

    def configmaps(self, namespace: str, job: str, role: str) -> list[dict[str, Any]]:
        """The job's ConfigMaps of one role (input, result)."""
        return self.select_configmaps(namespace, selector(job, role))

    def select_configmaps(self, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        items = self._list(self.core.list_namespaced_config_map, "ConfigMaps", namespace, label_selector)
        return [self._plain(item) for item in items]

    def _list(self, call: Any, kind: str, namespace: str, label_selector: str) -> list[Any]:
        """``call(namespace, label_selector=...)``'s items (a ``list_namespaced_*`` of the client)."""
        try:
            return list(call(namespace, label_selector=label_selector).items)
        except ApiException as exc:
            raise KubernetesApiError(
                f"listing {kind} in {namespace} failed: {exc.status} {exc.reason}"
            ) from exc

    def job(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self._plain(self.batch.read_namespaced_job(name, namespace))
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise KubernetesApiError(
                f"reading Job {namespace}/{name} failed: {exc.status} {exc.reason}"
            ) from exc

    def delete(self, namespace: str, name: str) -> None:
        """Delete the Job (and its pods) and every ConfigMap of the job."""
        try:
            self.batch.delete_namespaced_job(name, namespace, propagation_policy="Background")
        except ApiException as exc:
            if exc.status != 404:
                raise KubernetesApiError(
                    f"deleting Job {namespace}/{name} failed: {exc.status} {exc.reason}"
                ) from exc
        self.delete_configmaps(namespace, selector(name))

    def delete_configmaps(self, namespace: str, label_selector: str) -> None:
        """Delete the ConfigMaps the selector matches (one by one: no ``deletecollection`` needed)."""
        for item in self.select_configmaps(namespace, label_selector):
            try:
                self.core.delete_namespaced_config_map(item["metadata"]["name"], namespace)
            except ApiException as exc:
                if exc.status != 404:
                    raise KubernetesApiError(
                        f"deleting ConfigMap {namespace}/{item['metadata']['name']} failed: "
                        f"{exc.status} {exc.reason}"
                    ) from exc

    def pods(self, namespace: str, label_selector: str) -> list[str]:
        """Names of the pods the selector matches (whatever their phase)."""
        items = self._list(self.core.list_namespaced_pod, "pods", namespace, label_selector)
        return [str(item.metadata.name) for item in items if item.metadata is not None]

    def delete_pods(self, namespace: str, label_selector: str) -> list[str]:
        """Delete the pods the selector matches (each with its own grace period); their names."""
        names = self.pods(namespace, label_selector)
        for name in names:
            try:
                self.core.delete_namespaced_pod(name, namespace)
            except ApiException as exc:
                if exc.status != 404:
                    raise KubernetesApiError(
                        f"deleting pod {namespace}/{name} failed: {exc.status} {exc.reason}"
                    ) from exc
        return names


#: Names the operator's own namespace when it runs outside a pod (a development machine, CI).
NAMESPACE_ENV = "KZO_OPERATOR_NAMESPACE"


def own_namespace(default: str = "default") -> str:
    """``$KZO_OPERATOR_NAMESPACE``, else the namespace of the pod this runs in (its service
    account's), else ``default``."""
    named = os.environ.get(NAMESPACE_ENV, "").strip()
    if named:
        return named
    try:
        with open(NAMESPACE_FILE, encoding="utf-8") as handle:
            return handle.read().strip() or default
    except OSError:
        return default
