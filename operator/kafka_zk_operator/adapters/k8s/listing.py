"""Paged listings of the operator's custom resources, for its indexes (``handlers.indexes``).

One page (``PAGE_SIZE`` objects) is held at a time: at 10,000 KafkaTopics the whole list at once
was tens of megabytes of text and parse. When the API server has compacted away the snapshot a
``continue`` token points into (410 Gone, a listing slower than its compaction), the listing
starts again from the beginning, as client-go's pager does; objects already yielded may come
twice, and the index keeps the last.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.adapters.k8s.api import KubernetesApiError, reachable
from kafka_zk_operator.domain.crd_identity import GROUP, VERSION, CustomResource

PAGE_SIZE = 500
#: Fresh starts after a 410 before the listing gives up (each one means the API server compacted
#: faster than this listing read a page).
RESTARTS = 3


def list_resources(
    custom: client.CustomObjectsApi, resource: CustomResource, namespaces: Sequence[str]
) -> Iterator[Mapping[str, Any]]:
    """Every object of ``resource`` in ``namespaces`` (empty: all namespaces), page by page.

    :raises KubernetesApiError: the API server refused the listing or could not be reached.
    """
    for namespace in namespaces or (None,):
        for restart in range(RESTARTS + 1):
            try:
                yield from _pages(custom, resource, namespace)
                break
            except ApiException as exc:
                if exc.status == 410 and restart < RESTARTS:
                    continue
                where = f"namespace {namespace}" if namespace else "all namespaces"
                raise KubernetesApiError(
                    f"listing {resource.plural} in {where} failed: {exc.status} {exc.reason}"
                ) from exc


def _pages(
    custom: client.CustomObjectsApi, resource: CustomResource, namespace: str | None
) -> Iterator[Mapping[str, Any]]:
    token: str | None = None
    while True:
        options: dict[str, Any] = {"limit": PAGE_SIZE}
        if token:
            options["_continue"] = token
        with reachable(f"list {resource.plural}"):
            if namespace is None:
                found = custom.list_cluster_custom_object(GROUP, VERSION, resource.plural, **options)
            else:
                found = custom.list_namespaced_custom_object(
                    GROUP, VERSION, namespace, resource.plural, **options
                )
        page = cast(Mapping[str, Any], found)
        yield from page.get("items") or ()
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return
