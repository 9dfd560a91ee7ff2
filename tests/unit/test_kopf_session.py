"""The bounded connection pool kopf gets for the API server (adapters.k8s.kopf_session)."""

from __future__ import annotations

import asyncio

import kopf

from kafka_zk_operator.adapters.k8s import kopf_session


def test_the_pool_leaves_room_for_every_watch_stream() -> None:
    # all namespaces: one stream per kind, plus kopf's cluster-wide scanning
    assert kopf_session.pool_size(32, 0) == 32 + 2 + 4
    # 10 namespaces: two streams each on top of the requests
    assert kopf_session.pool_size(32, 10) == 32 + 20 + 4


def test_the_session_keeps_the_credentials_and_bounds_the_pool() -> None:
    info = kopf.ConnectionInfo(
        server="https://127.0.0.1:6443",
        token="secret-token",
        insecure=True,
        default_namespace="kafka",
        priority=10,
    )

    async def build() -> tuple[kopf.AiohttpSession, int, str | None]:
        context = kopf_session.bounded_session(info, connections=7)
        session = context.aiohttp_session
        try:
            return (
                context,
                session.connector.limit if session.connector else -1,
                session.headers.get("Authorization"),
            )
        finally:
            await session.close()

    context, limit, authorization = asyncio.run(build())
    assert limit == 7
    assert authorization == "Bearer secret-token"
    assert (context.server, context.default_namespace, context.priority) == (
        "https://127.0.0.1:6443",
        "kafka",
        10,
    )
