"""Merge-patch the ``status`` of a custom resource outside a kopf handler (watch-driven refreshes).

Uses the official ``kubernetes`` client with the same credentials kopf uses: in-cluster
ServiceAccount when running in a pod, else ``$KUBECONFIG``/``~/.kube/config``.
"""

from __future__ import annotations

import logging
from typing import Any

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

log = logging.getLogger(__name__)


def api_client() -> client.ApiClient:
    """The official client with the operator's credentials (in-cluster, else KUBECONFIG)."""
    try:
        config.load_incluster_config()  # type: ignore[no-untyped-call]
    except config.ConfigException:
        config.load_kube_config()  # type: ignore[no-untyped-call]
    return client.ApiClient()


class StatusPatcher:
    """Callable ``(ref, fields) -> None`` patching ``status`` of ``group/version/plural`` objects."""

    def __init__(self, group: str, version: str, plural: str) -> None:
        self.group, self.version, self.plural = group, version, plural
        self._api: client.CustomObjectsApi | None = None

    def _custom(self) -> client.CustomObjectsApi:
        if self._api is None:
            self._api = client.CustomObjectsApi(api_client())
        return self._api

    def __call__(self, ref: tuple[str, str], fields: dict[str, Any]) -> None:
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
            log.warning("patching status of %s/%s failed: %s %s", namespace, name, exc.status, exc.reason)
