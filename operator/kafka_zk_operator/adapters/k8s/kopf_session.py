"""kopf's HTTP session to the API server, with a bounded connection pool.

kopf's own session opens as many TLS connections as there are requests in flight (aiohttp
``limit=0``). During a burst of KafkaTopics that was hundreds at once, and every connection holds
asyncio's 256 KiB TLS read buffer: in a 1,500-topic benchmark (memray, native) 154 MB of the
operator's 327 MB peak were those buffers, on 587 connections. Here the same credentials (kopf's
``login_via_client``: the ServiceAccount in a pod, else the kubeconfig) get a session whose pool
is bounded; requests beyond it wait for a free connection, which also saves a TLS handshake each.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import kopf

#: Long-lived watch streams kopf keeps per watched namespace (KafkaTopic, PartitionReassignment);
#: they hold a connection each and must never starve the requests.
WATCHES_PER_NAMESPACE = 2
#: kopf's own cluster-wide streams (namespace and CRD scanning) and headroom for them.
CLUSTER_STREAMS = 4


def pool_size(requests: int, watched_namespaces: int) -> int:
    """Connections for ``requests`` concurrent requests besides the watch streams of
    ``watched_namespaces`` namespaces (0: all namespaces, one cluster-wide stream per kind)."""
    return requests + WATCHES_PER_NAMESPACE * max(1, watched_namespaces) + CLUSTER_STREAMS


def bounded_session(info: kopf.ConnectionInfo, *, connections: int) -> kopf.AiohttpSession:
    """A kopf session with ``info``'s server, credentials and TLS, and at most ``connections``
    open connections. Call it in the event loop (aiohttp binds the session to it)."""
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
        aiohttp_session=session,
    )


async def login(connections: int, **kwargs: Any) -> kopf.AiohttpSession | None:
    """kopf's default login (the Kubernetes client's configuration), on a bounded pool."""
    info = kopf.login_via_client(**kwargs)
    return None if info is None else bounded_session(info, connections=connections)
