"""kopf's HTTP session to the API server, with a bounded connection pool.

kopf's own session opens as many TLS connections as there are requests in flight (aiohttp
``limit=0``). During a burst of KafkaTopics that was hundreds at once, and every connection holds
asyncio's 256 KiB TLS read buffer: in a 1,500-topic benchmark (memray, native) 154 MB of the
operator's 327 MB peak were those buffers, on 587 connections. Here the same credentials (kopf's
``login_via_client``: the ServiceAccount in a pod, else the kubeconfig) get a session whose pool
is bounded; requests beyond it wait for a free connection, which also saves a TLS handshake each.

They wait *before* the request starts (:class:`QueuedSession`): aiohttp counts the wait for a
pooled connection in the request's total timeout (kopf's ``request_timeout``), so in a burst of
10,000 KafkaTopics requests that merely queued behind others timed out by the thousand and were
retried (kopf's backoffs: up to 9 attempts each), adding load where there was already too much.
Only the time the API server takes is now held against a request's timeout.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

import aiohttp
import kopf

from kafka_zk_operator.adapters.k8s.lean_responses import LeanResponse

#: Long-lived watch streams kopf keeps per watched namespace (KafkaTopic, PartitionReassignment);
#: they hold a connection each and must never starve the requests.
WATCHES_PER_NAMESPACE = 2
#: kopf's own cluster-wide streams (namespace and CRD scanning) and headroom for them.
CLUSTER_STREAMS = 4


def pool_size(requests: int, watched_namespaces: int) -> int:
    """Connections for ``requests`` concurrent requests besides the watch streams of
    ``watched_namespaces`` namespaces (0: all namespaces, one cluster-wide stream per kind)."""
    return requests + WATCHES_PER_NAMESPACE * max(1, watched_namespaces) + CLUSTER_STREAMS


class QueuedSession:
    """An ``aiohttp.ClientSession`` (what kopf uses of it) whose requests take one of ``slots``
    before aiohttp starts them, and so before their timeout starts. A slot is held until the
    response's headers are in: kopf reads a body right after, so the pool is only ever briefly
    short of a connection. Watch streams (``watch=true``, each holding its connection for
    minutes) take no slot: the pool has room for them (:func:`pool_size`). Responses come without
    ``managedFields`` (``adapters.k8s.lean_responses``)."""

    def __init__(self, session: aiohttp.ClientSession, slots: int) -> None:
        self._session = session
        self._slots = asyncio.Semaphore(slots)

    async def request(self, method: str, url: Any, **kwargs: Any) -> aiohttp.ClientResponse:
        if is_watch(str(url)):
            response = await self._session.request(method, url, **kwargs)
        else:
            async with self._slots:
                response = await self._session.request(method, url, **kwargs)
        return cast(aiohttp.ClientResponse, LeanResponse(response))

    def __getattr__(self, name: str) -> Any:  # headers, closed, close(): the session's own
        return getattr(self._session, name)


def is_watch(url: str) -> bool:
    """Whether ``url`` opens a watch stream (kopf puts ``watch=true`` in the query)."""
    query = url.partition("?")[2]
    return "watch=true" in query.split("&")


def bounded_session(info: kopf.ConnectionInfo, *, connections: int, requests: int) -> kopf.AiohttpSession:
    """A kopf session with ``info``'s server, credentials and TLS, at most ``connections`` open
    connections and ``requests`` requests in flight besides watch streams (more wait in turn,
    outside their timeout). Call it in the event loop (aiohttp binds the session to it)."""
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=connections, ssl=info.as_ssl_context()),
        headers=info.as_http_headers(),
        proxy=info.proxy_url,
        trust_env=info.trust_env,
    )
    return kopf.AiohttpSession(
        server=info.server,
        default_namespace=info.default_namespace,
        priority=info.priority,
        expiration=info.expiration,
        aiohttp_session=cast(aiohttp.ClientSession, QueuedSession(session, requests)),
    )


async def login(requests: int, watched_namespaces: int, **kwargs: Any) -> kopf.AiohttpSession | None:
    """kopf's default login (the Kubernetes client's configuration), on a bounded pool with room
    for ``requests`` requests in flight besides the watch streams (:func:`pool_size`)."""
    info = kopf.login_via_client(**kwargs)
    if info is None:
        return None
    connections = pool_size(requests, watched_namespaces)
    return bounded_session(info, connections=connections, requests=requests)
