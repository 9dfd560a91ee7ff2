"""Toxiproxy (``devstack.toxiproxy``) between a kazoo client and a real ZooKeeper.

Checks that the fault injector does to a real connection what the fault tests rely on: a proxied
read works, a latency toxic delays a round trip, a disabled proxy drops the client (which
reconnects to the same session once the proxy is back), and a reset_peer toxic drops the
connection. ZooKeeper is the one of Kafka ``artifacts.DEFAULT_KAFKA_VERSION``'s jars; the Toxiproxy
server is built from its Go module on first use (``kzo dev prepare`` builds it beforehand).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import ConnectionLoss

from kafka_zk_operator.devstack import artifacts, ports
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.devstack.toxiproxy import Proxy, ToxiproxyServer
from kafka_zk_operator.devstack.zookeeper import ZooKeeperServer
from tests.integration.helpers import wait_for

PATH = "/toxiproxy-test"
VALUE = b"written straight to ZooKeeper"
#: Long enough that a 1.5 s latency or a short outage does not expire the session.
SESSION_TIMEOUT_S = 10.0


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    server = ZooKeeperServer(
        tmp_path_factory.mktemp("zookeeper"),
        ports.free_port(),
        artifacts.kafka_libs(artifacts.DEFAULT_KAFKA_VERSION),
    )
    server.start()
    try:
        server.wait_ready(timeout=60)
        direct = KazooClient(hosts=server.connect, timeout=SESSION_TIMEOUT_S)
        direct.start(timeout=15)
        try:
            direct.ensure_path(PATH)
            direct.set(PATH, VALUE)
        finally:
            direct.stop()
            direct.close()
        yield server
    finally:
        assert server.process is not None
        server.process.stop()


@pytest.fixture(scope="module")
def toxiproxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToxiproxyServer]:
    server = ToxiproxyServer(tmp_path_factory.mktemp("toxiproxy"), ports.free_port())
    server.start()
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@pytest.fixture
def proxy(toxiproxy: ToxiproxyServer, zookeeper: ZooKeeperServer) -> Iterator[Proxy]:
    created = toxiproxy.client.create_proxy(
        f"zk-{uuid.uuid4().hex[:8]}", ports.free_port(), zookeeper.connect
    )
    try:
        yield created
    finally:
        created.delete()


@dataclass
class WatchedClient:
    """A kazoo client connected through the proxy, with every state change it went through."""

    client: KazooClient
    states: list[KazooState] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, state: KazooState) -> None:
        with self._lock:
            self.states.append(state)

    def saw(self, state: KazooState) -> bool:
        with self._lock:
            return state in self.states

    def clear(self) -> None:
        with self._lock:
            self.states.clear()


@pytest.fixture
def zk(proxy: Proxy) -> Iterator[WatchedClient]:
    client = KazooClient(
        hosts=proxy.address,
        timeout=SESSION_TIMEOUT_S,
        # Reconnect quickly once the proxy lets connections through again.
        connection_retry={"max_tries": -1, "delay": 0.1, "backoff": 1, "max_delay": 0.2},
    )
    watched = WatchedClient(client)
    client.add_listener(watched.record)
    client.start(timeout=15)
    try:
        yield watched
    finally:
        client.stop()
        client.close()


def _reconnected(watched: WatchedClient, session_id: int) -> None:
    wait_for(lambda: watched.client.state == KazooState.CONNECTED, timeout=15, what="kazoo to reconnect")
    assert watched.client.get(PATH)[0] == VALUE
    assert watched.client.client_id[0] == session_id, "the session should have survived the outage"
    assert not watched.saw(KazooState.LOST)


def test_a_read_goes_through_the_proxy(
    toxiproxy: ToxiproxyServer, zookeeper: ZooKeeperServer, proxy: Proxy, zk: WatchedClient
) -> None:
    assert zk.client.get(PATH)[0] == VALUE
    assert proxy.listen_port != zookeeper.port and proxy.upstream == zookeeper.connect
    assert [p.name for p in toxiproxy.client.proxies()] == [proxy.name]
    assert toxiproxy.client.version() == artifacts.TOXIPROXY_MODULE_VERSION.lstrip("v")


def test_latency_toxic_delays_a_round_trip(proxy: Proxy, zk: WatchedClient) -> None:
    zk.client.get(PATH)
    toxic = proxy.add_toxic("latency", {"latency": 1500, "jitter": 0})
    assert (toxic.name, toxic.kind, toxic.stream) == ("latency_downstream", "latency", "downstream")
    assert proxy.toxics() == [toxic]

    started = time.monotonic()
    assert zk.client.get(PATH)[0] == VALUE
    assert time.monotonic() - started >= 1.5

    proxy.remove_toxic(toxic.name)
    assert proxy.toxics() == []
    started = time.monotonic()
    zk.client.get(PATH)
    assert time.monotonic() - started < 1.0


def test_disabled_proxy_drops_the_client_until_enabled(proxy: Proxy, zk: WatchedClient) -> None:
    session_id = zk.client.client_id[0]
    zk.clear()

    proxy.disable()
    assert not proxy.enabled
    wait_for(lambda: zk.saw(KazooState.SUSPENDED), timeout=10, what="kazoo to lose its connection")
    assert not ports.port_open(proxy.listen_port), "a disabled proxy should refuse new connections"

    proxy.enable()
    assert proxy.enabled
    _reconnected(zk, session_id)


def test_reset_peer_toxic_drops_the_connection(
    toxiproxy: ToxiproxyServer, proxy: Proxy, zk: WatchedClient
) -> None:
    session_id = zk.client.client_id[0]
    zk.clear()

    proxy.add_toxic("reset_peer", {"timeout": 0}, stream="upstream")
    with pytest.raises(ConnectionLoss):
        zk.client.get(PATH)  # the request reaches the toxic, which resets the connection
    assert zk.saw(KazooState.SUSPENDED)

    toxiproxy.client.reset()  # removes the toxic
    assert proxy.toxics() == []
    _reconnected(zk, session_id)


def test_api_errors_name_the_status_and_the_answer(toxiproxy: ToxiproxyServer, proxy: Proxy) -> None:
    with pytest.raises(StackError, match=r"HTTP 409: .*proxy already exists"):
        toxiproxy.client.create_proxy(proxy.name, 0, proxy.upstream)
    with pytest.raises(StackError, match=r"HTTP 404: .*toxic not found"):
        proxy.remove_toxic("no-such-toxic")
    with pytest.raises(StackError, match=r"HTTP 400: .*invalid toxic type"):
        proxy.add_toxic("no_such_kind", {})  # type: ignore[arg-type]
