"""The bounded connection pool kopf gets for the API server (adapters.k8s.kopf_session)."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import kopf
import pytest
from aiohttp import web

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
        context = kopf_session.bounded_session(info, connections=7, requests=3)
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


def test_watch_urls_are_told_apart() -> None:
    assert kopf_session.is_watch("https://h/apis/g/v1/kafkatopics?watch=true&resourceVersion=5")
    assert kopf_session.is_watch("/api/v1/namespaces?resourceVersion=1&watch=true")
    assert not kopf_session.is_watch("https://h/apis/g/v1/namespaces/n/kafkatopics/watch=true")
    assert not kopf_session.is_watch("https://h/api/v1/events?fieldSelector=watch%3Dtrue")


async def _slow_server(delay: float) -> tuple[web.AppRunner, str]:
    async def slow(_: web.Request) -> web.Response:
        await asyncio.sleep(delay)
        return web.json_response({})

    app = web.Application()
    app.router.add_get("/slow", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}/slow"


def _three_at_once(queued: bool) -> list[str]:
    """Three requests of 0.3 s each through one connection, each with a 0.5 s total timeout."""

    async def run() -> list[str]:
        runner, url = await _slow_server(0.3)
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1))
        client: Any = kopf_session.QueuedSession(session, 1) if queued else session
        timeout = aiohttp.ClientTimeout(total=0.5)

        async def one() -> str:
            try:
                response = await client.request("get", url, timeout=timeout)
                await response.read()
                return "ok"
            except TimeoutError:
                return "timeout"

        try:
            return list(await asyncio.gather(one(), one(), one()))
        finally:
            await session.close()
            await runner.cleanup()

    return asyncio.run(run())


@pytest.mark.parametrize("queued", [False, True], ids=["aiohttp-pool", "queued-session"])
def test_waiting_for_a_connection_does_not_count_against_the_timeout(queued: bool) -> None:
    outcomes = _three_at_once(queued)
    if queued:
        assert outcomes == ["ok", "ok", "ok"], "each request's 0.5 s starts when it is sent"
    else:
        assert "timeout" in outcomes, "aiohttp counts the wait for the pool (why the queue is needed)"
