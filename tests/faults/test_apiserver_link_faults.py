"""Faults of the link between the operator and kube-apiserver, injected by Toxiproxy: latency,
every connection cut (watches and requests) while resources change, and a black hole (the
connections stay open, nothing gets through) that only the watch's inactivity timeout notices.

Here the operator reaches the API server only through the proxy (a kubeconfig naming it; TLS
passes through unchanged) and serves the test's namespace only; the suite's own operator is
stopped meanwhile. The test itself talks to the API server directly.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kazoo.client import KazooClient
from kubernetes import client

from kafka_zk_operator.devstack import ports
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from kafka_zk_operator.devstack.toxiproxy import Proxy, ToxiproxyServer
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.faults.burst import creating, wait_under_way
from tests.faults.conftest import assert_converged, operator_process
from tests.faults.invariants import created_count, written_once
from tests.integration.helpers import wait_for

CONFIG = {"retention.ms": "3600000"}
CHANGED = {"retention.ms": "7200000"}
#: The burst's client (which reaches the API server directly, not through the proxy) waits this
#: long between two creates, so that the link is cut while it still has most to create.
PACE_S = 0.1


@pytest.fixture(scope="module")
def apiserver_proxy(ensemble: KafkaCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    assert ensemble.stack.controlplane is not None
    server = ToxiproxyServer(tmp_path_factory.mktemp("toxiproxy-api"), ports.free_port())
    server.start()
    server.wait_ready()
    upstream = f"{ports.LOOPBACK}:{ensemble.stack.controlplane.apiserver_port}"
    try:
        yield server.client.create_proxy("kube-apiserver", ports.free_port(), upstream)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def proxied_kubeconfig(
    ensemble: KafkaCluster, apiserver_proxy: Proxy, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The admin kubeconfig with the proxy as its server (the serving certificate names 127.0.0.1)."""
    kubeconfig = yaml.safe_load(ensemble.kubeconfig.read_text())
    for entry in kubeconfig["clusters"]:
        entry["cluster"]["server"] = f"https://{apiserver_proxy.address}"
    path = tmp_path_factory.mktemp("proxied-kubeconfig") / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))
    path.chmod(0o600)
    return path


@pytest.fixture
def proxied_operator(
    ensemble: KafkaCluster,
    suite_operator_paused: None,
    proxied_kubeconfig: Path,
    ns: str,
    tmp_path: Path,
) -> Iterator[OperatorProcess]:
    with operator_process(
        ensemble,
        ensemble.zk_connect,
        tmp_path / "operator.log",
        kubeconfig=proxied_kubeconfig,
        KZO_NAMESPACES=ns,
    ) as process:
        yield process


@pytest.fixture
def link(apiserver_proxy: Proxy, proxied_operator: OperatorProcess) -> Iterator[Proxy]:
    """The proxy, healthy again after the test."""
    yield apiserver_proxy
    _heal(apiserver_proxy)


@pytest.fixture
def proxied_topics(api: client.ApiClient, proxied_operator: OperatorProcess) -> Resources:
    return Resources(api, "kafkatopics")


def _heal(proxy: Proxy) -> None:
    for toxic in proxy.toxics():
        proxy.remove_toxic(toxic.name)
    proxy.enable()


def _change_while_unreachable(
    topics: Resources, ns: str, ready: list[str], deleted: list[str], added: list[str]
) -> None:
    """What users do while the operator cannot reach the API server: change configs, delete
    topics, create new ones (the operator sees it all only after its watch reconnects)."""
    for name in ready:
        topics.patch(ns, name, {"spec": {"config": CHANGED}})
    for name in deleted:
        topics.delete(ns, name)
    for name in added:
        topics.create(ns, kafkatopic(name, partitions=1, rf=3, config=CONFIG))


def _assert_outcome(
    zk: KazooClient, kafka_view: KafkaView, changed: list[str], deleted: list[str], created: list[str]
) -> None:
    twice = [problem for name in created for problem in written_once(zk, name)]
    twice += [problem for name in changed for problem in written_once(zk, name, config_changes=1)]
    assert not twice, twice[:20]
    assert all(kafka_view.configs(name).get("retention.ms") == CHANGED["retention.ms"] for name in changed)
    wait_for(
        lambda: not set(deleted) & kafka_view.topic_names() or None,
        timeout=60,
        what="Kafka to drop the deleted topics",
    )


def test_one_second_of_latency_to_the_apiserver(
    api: client.ApiClient,
    proxied_topics: Resources,
    link: Proxy,
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
) -> None:
    """Promise: with 1 s added each way to every API-server round trip (watches, status patches,
    Events), topics are created, changed and deleted exactly as asked, each written once."""
    names = [f"{ns}-slow-{i:02d}" for i in range(12)]
    link.add_toxic("latency", {"latency": 1000, "jitter": 0}, stream="upstream")
    link.add_toxic("latency", {"latency": 1000, "jitter": 0}, stream="downstream")
    for name in names:
        proxied_topics.create(ns, kafkatopic(name, partitions=1, rf=3, config=CONFIG))
    for name in names:
        proxied_topics.wait_ready(ns, name, timeout=300)
    changed, deleted = names[:4], names[4:6]
    _change_while_unreachable(proxied_topics, ns, changed, deleted, [])
    assert_converged(api, ns, kafka_view, zk, timeout=300)
    _assert_outcome(zk, kafka_view, changed, deleted, names[6:])


def test_apiserver_connections_cut_during_a_burst(
    api: client.ApiClient,
    proxied_topics: Resources,
    link: Proxy,
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
) -> None:
    """Promise: every connection to the API server closed in the middle of a burst and refused for
    20 s, while configs are changed, topics deleted and new ones created: after the link heals
    the operator lists again and applies all of it, each create and change written once."""
    early = [f"{ns}-early-{i:02d}" for i in range(10)]
    burst = [f"{ns}-burst-{i:02d}" for i in range(60)]
    added = [f"{ns}-added-{i:02d}" for i in range(10)]
    for name in early:
        proxied_topics.create(ns, kafkatopic(name, partitions=1, rf=3, config=CONFIG))
    for name in early:
        proxied_topics.wait_ready(ns, name, timeout=180)
    bodies = [kafkatopic(name, partitions=1, rf=3, config=CONFIG) for name in burst]
    with creating(proxied_topics, ns, bodies, pace_s=PACE_S) as creates:
        wait_under_way(zk, burst, 5)
        link.disable()
        client_still_creating = not creates.done()
        cut_with = created_count(zk, burst)
        _change_while_unreachable(proxied_topics, ns, early[:5], early[5:], added)
        time.sleep(20)
        _heal(link)
        healed = time.monotonic()
    assert_converged(api, ns, kafka_view, zk)
    print(
        f"[figures] API-server link cut with {cut_with}/{len(burst)} burst topics in ZooKeeper "
        f"(the client still creating: {client_still_creating}); "
        f"converged {time.monotonic() - healed:.0f} s after it healed"
    )
    assert client_still_creating and cut_with < len(burst), "the link was cut after the burst, not in it"
    _assert_outcome(zk, kafka_view, early[:5], early[5:], burst + added)


def test_apiserver_link_black_holed(
    api: client.ApiClient,
    proxied_topics: Resources,
    link: Proxy,
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
) -> None:
    """Promise: a black-holed link (connections stay open, no byte gets through either way, as
    after a silent network partition) for 40 s while resources change: the operator's watch
    notices the silence and reconnects, and every change made meanwhile is applied once."""
    early = [f"{ns}-hole-{i:02d}" for i in range(6)]
    added = [f"{ns}-hole-added-{i:02d}" for i in range(6)]
    for name in early:
        proxied_topics.create(ns, kafkatopic(name, partitions=1, rf=3, config=CONFIG))
    for name in early:
        proxied_topics.wait_ready(ns, name, timeout=180)
    link.add_toxic("timeout", {"timeout": 0}, stream="upstream")
    link.add_toxic("timeout", {"timeout": 0}, stream="downstream")
    _change_while_unreachable(proxied_topics, ns, early[:3], early[3:], added)
    time.sleep(40)
    _heal(link)
    healed = time.monotonic()
    assert_converged(api, ns, kafka_view, zk)
    print(f"[figures] black hole of 40 s; converged {time.monotonic() - healed:.0f} s after it healed")
    _assert_outcome(zk, kafka_view, early[:3], early[3:], added)
