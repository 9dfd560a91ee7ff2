"""``adapters.zk.batched_sends`` on a real ZooKeeper, through a session as the operator opens it
(``session.connect``): requests queued together leave in fewer writes and every answer is the
right one; one session's requests are applied in the order they were sent (conditional writes
that succeed only in that order); a connection cut while thousands are queued answers or fails
every one of them, and the session goes on after it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import ConnectionLoss, KazooException

from kafka_zk_operator.adapters.zk import batched_sends, session
from kafka_zk_operator.config.zookeeper import ZkConnectionSettings
from kafka_zk_operator.devstack.toxiproxy import Proxy
from kafka_zk_operator.devstack.zookeeper import ZooKeeperServer
from tests.integration.helpers import wait_for
from tests.integration.test_toxiproxy import (  # noqa: F401  # the fixtures, shared
    proxy,
    toxiproxy,
    zookeeper,
)


class CountedWrites:
    """Counts the connection's socket writes (one per turn that sent something)."""

    def __init__(self, client: KazooClient) -> None:
        self.writes = 0
        connection: Any = client._connection
        original = connection._write

        def counted(message: bytes, timeout: float) -> None:
            self.writes += 1
            original(message, timeout)

        connection._write = counted


def _connected(connect: str) -> KazooClient:
    client = session.connect(ZkConnectionSettings(connect=connect))
    assert type(client._connection) is batched_sends.BatchingConnectionHandler
    return client


@pytest.fixture
def batched(zookeeper: ZooKeeperServer) -> Iterator[KazooClient]:  # noqa: F811
    client = _connected(zookeeper.connect)
    try:
        yield client
    finally:
        session.close(client)


@pytest.fixture
def base(batched: KazooClient) -> str:
    path = f"/batched-{uuid.uuid4().hex[:8]}"
    batched.ensure_path(path)
    return path


def test_requests_queued_together_leave_in_fewer_writes_with_the_right_answers(
    batched: KazooClient, base: str
) -> None:
    children = 100
    for n in range(children):
        batched.create(f"{base}/c{n}", f"data-{n}".encode())
    counted = CountedWrites(batched)
    results: dict[tuple[int, int], Any] = {}
    lock = threading.Lock()

    def ask(thread: int) -> None:
        sent = [(n, batched.get_async(f"{base}/c{n % children}")) for n in range(250)]
        for n, result in sent:
            data, _ = result.get(timeout=30)
            with lock:
                results[(thread, n)] = data

    threads = [threading.Thread(target=ask, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert len(results) == 8 * 250
    assert all(data == f"data-{n % children}".encode() for (_, n), data in results.items())
    assert counted.writes < len(results) / 4, f"{counted.writes} writes for {len(results)} requests"


def test_one_sessions_requests_are_applied_in_the_order_sent(batched: KazooClient, base: str) -> None:
    path = f"{base}/ordered"
    batched.create(path, b"0")
    # Each write is conditional on the version the previous one leaves: all succeed only in order.
    writes = [batched.set_async(path, str(n + 1).encode(), version=n) for n in range(500)]
    stats = [result.get(timeout=30) for result in writes]
    assert [stat.version for stat in stats] == list(range(1, 501))
    assert batched.get(path)[0] == b"500"

    sequential = [batched.create_async(f"{base}/seq-", str(n).encode(), sequence=True) for n in range(300)]
    created = [result.get(timeout=30) for result in sequential]
    assert created == sorted(created)
    assert [batched.get(name)[0] for name in created[:3]] == [b"0", b"1", b"2"]


def test_a_cut_connection_answers_or_fails_every_queued_request(proxy: Proxy) -> None:  # noqa: F811
    client = _connected(proxy.address)
    try:
        base = f"/batched-cut-{uuid.uuid4().hex[:8]}"
        client.ensure_path(base)
        sent = [client.exists_async(base) for _ in range(3000)]
        proxy.disable()
        answered = failed = 0
        for result in sent:
            try:
                assert result.get(timeout=30) is not None
                answered += 1
            except ConnectionLoss:
                failed += 1
            except KazooException as error:  # pragma: no cover - reported with its name
                pytest.fail(f"unexpected {type(error).__name__}: {error}")
        assert answered + failed == len(sent)

        proxy.enable()
        wait_for(lambda: client.state == KazooState.CONNECTED, timeout=30, what="the session to reconnect")
        assert client.exists(base) is not None
        assert [
            result.get(timeout=30) is not None for result in [client.exists_async(base) for _ in range(50)]
        ] == [True] * 50
    finally:
        proxy.enable()
        session.close(client)
