"""Paged listings of the operator's custom resources, for its indexes (``handlers.indexes``).

One page (``PAGE_SIZE`` objects) is held at a time, so the memory of a listing does not grow
without bound with the resources. The page is large because only a first page comes from the API
server's watch cache: each further page is read from etcd at the first page's revision, at about
0.4 ms per object on the 2-core benchmark machine against 0.1 ms from the cache (10,000
KafkaTopics: 20 pages of 500 took 5.0-6.7 s, one page of 10,000 1.9-2.2 s; an operator restarting
over them reconciled the first after 7.1-10.7 s with pages of 500 and 3.5-6.2 s with one page,
its peak RSS 27 MB higher). This listing is waited for before any resource is handled; kopf's
own, which follows, stays in pages of 500 (``main``): the resources of its first page are handled
while the next pages come. When the API server has compacted away the snapshot a
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

PAGE_SIZE = 10_000
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
