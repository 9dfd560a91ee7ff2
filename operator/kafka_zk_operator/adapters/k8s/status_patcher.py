"""Merge-patch the ``status`` of a custom resource outside kopf's own patch: watch-driven refreshes,
and KafkaTopic reconciles that must order their status write with those refreshes.

Uses the official ``kubernetes`` client with the same credentials kopf uses: in-cluster
ServiceAccount when running in a pod, else ``$KUBECONFIG``/``~/.kube/config``.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.adapters.k8s.partitionreassignment import KubernetesApiError

log = logging.getLogger(__name__)


#: Connections kept per API server: kopf's handler threads (``settings.execution.max_workers``,
#: 16 in ``main``) and the health reporters all write statuses through one client; with the
#: client's default (5 per CPU) a burst of reconciles kept opening and discarding TLS connections.
CONNECTION_POOL_SIZE = 32


def api_client(pool_size: int = CONNECTION_POOL_SIZE) -> client.ApiClient:
    """The official client with the operator's credentials (in-cluster, else KUBECONFIG)."""
    try:
        config.load_incluster_config()  # type: ignore[no-untyped-call]
    except config.ConfigException:
        config.load_kube_config()  # type: ignore[no-untyped-call]
    configuration = client.Configuration.get_default_copy()
    configuration.connection_pool_maxsize = pool_size
    return client.ApiClient(configuration)


class StatusPatcher:
    """Callable ``(ref, fields) -> None`` patching ``status`` of ``group/version/plural`` objects."""

    def __init__(self, group: str, version: str, plural: str) -> None:
        self.group, self.version, self.plural = group, version, plural
        self._api: client.CustomObjectsApi | None = None
        self._guard = threading.Lock()

    def _custom(self) -> client.CustomObjectsApi:
        with self._guard:  # called from many threads: one client, one connection pool
            if self._api is None:
                self._api = client.CustomObjectsApi(api_client())
            return self._api

    def patch(self, ref: tuple[str, str], fields: dict[str, Any]) -> None:
        """Merge-patch ``status``; raises unless the API server accepted it (or the object is gone).

        :raises KubernetesApiError: the API server refused or failed the call.
        """
        namespace, name = ref
        try:
            self._custom().patch_namespaced_custom_object_status(
                self.group,
                self.version,
                namespace,
                self.plural,
                name,
                {"status": fields},
                _content_type="application/merge-patch+json",
            )
        except ApiException as exc:
            if exc.status == 404:
                return  # deleted meanwhile
            raise KubernetesApiError(
                f"patching the status of {namespace}/{name} failed: {exc.status} {exc.reason}"
            ) from exc

    def __call__(self, ref: tuple[str, str], fields: dict[str, Any]) -> None:
        """Like ``patch``, but a failure is only logged (the next refresh tries again)."""
        try:
            self.patch(ref, fields)
        except KubernetesApiError as error:
            log.warning("%s", error.message)
