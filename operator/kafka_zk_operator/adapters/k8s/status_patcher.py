"""Merge-patch the ``status`` of a custom resource outside a kopf handler (watch-driven refreshes):
best effort, a failure is logged and the next refresh or reconcile writes the status again."""

from __future__ import annotations

import logging
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.adapters.k8s.api import api_client, merge_patch_status
from kafka_zk_operator.domain.crd_identity import CustomResource

log = logging.getLogger(__name__)


class StatusPatcher:
    """Callable ``(ref, fields) -> None`` patching ``status`` of one kind of the operator's resources."""

    def __init__(self, resource: CustomResource) -> None:
        self.resource = resource
        self._api: client.CustomObjectsApi | None = None

    def _custom(self) -> client.CustomObjectsApi:
        if self._api is None:
            self._api = client.CustomObjectsApi(api_client())
        return self._api

    def __call__(self, ref: tuple[str, str], fields: dict[str, Any]) -> bool:
        """Whether the patch landed (False: the resource is gone, or the API server refused it)."""
        try:
            return merge_patch_status(self._custom(), self.resource, ref, fields)
        except ApiException as exc:
            log.warning("patching status of %s/%s failed: %s %s", *ref, exc.status, exc.reason)
            return False
