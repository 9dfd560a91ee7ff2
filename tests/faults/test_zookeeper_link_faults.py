"""Faults of the link between the operator and ZooKeeper, injected by Toxiproxy: 2 s of latency,
and the connection cut while a create or a config-change transaction is in flight - once after
ZooKeeper committed it, so that the answer is lost.

Here the operator reaches the ensemble only through one proxy per ZooKeeper server and serves the
test's namespace only; the suite's own operator is stopped meanwhile.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kubernetes import client

from kafka_zk_operator.devstack import ports
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from kafka_zk_operator.devstack.toxiproxy import Proxy, Stream, ToxiproxyServer
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.faults.conftest import assert_converged, operator_process
from tests.integration.helpers import wait_for

CONFIG = {"retention.ms": "3600000"}


@pytest.fixture(scope="module")
def toxiproxy(ensemble: KafkaCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Proxy]]:
    """One proxy per ZooKeeper server of the ensemble."""
    server = ToxiproxyServer(tmp_path_factory.mktemp("toxiproxy"), ports.free_port())
    server.start()
    server.wait_ready()
    proxies = [
        server.client.create_proxy(f"zookeeper-{i}", ports.free_port(), zk.connect)
        for i, zk in enumerate(ensemble.stack.zookeepers, start=1)
    ]
    try:
        yield proxies
    finally:
        server.stop()


@pytest.fixture
def proxied_operator(
    ensemble: KafkaCluster,
    suite_operator_paused: None,
    toxiproxy: list[Proxy],
    ns: str,
    tmp_path: Path,
) -> Iterator[OperatorProcess]:
    """``kzo operator`` whose ZooKeeper connect string names the proxies, serving only the test's
    namespace (the topics of earlier tests would otherwise queue ahead of its own, each read
    through the slowed link)."""
    through_proxies = ",".join(p.address for p in toxiproxy) + ensemble.chroot
    with operator_process(ensemble, through_proxies, tmp_path / "operator.log", KZO_NAMESPACES=ns) as process:
        yield process


@pytest.fixture
def link(toxiproxy: list[Proxy], proxied_operator: OperatorProcess) -> Iterator[list[Proxy]]:
    """The proxies, healthy again after the test."""
    yield toxiproxy
    for proxy in toxiproxy:
        for toxic in proxy.toxics():
            proxy.remove_toxic(toxic.name)
        proxy.enable()


@pytest.fixture
def proxied_topics(api: client.ApiClient, proxied_operator: OperatorProcess) -> Resources:
    return Resources(api, "kafkatopics")


def _cut(link: list[Proxy], seconds: float = 2.0) -> None:
    """Close every connection through the proxies, refuse new ones for ``seconds``, then heal."""
    for proxy in link:
        proxy.disable()
    time.sleep(seconds)
    for proxy in link:
        for toxic in proxy.toxics():
            proxy.remove_toxic(toxic.name)
        proxy.enable()


def _slow(link: list[Proxy], stream: Stream, latency_ms: int) -> None:
    for proxy in link:
        proxy.add_toxic("latency", {"latency": latency_ms, "jitter": 0}, stream=stream)


def _version(zk: KazooClient, path: str) -> int | None:
    stat = zk.exists(path)
    return None if stat is None else int(stat.version)


def test_two_seconds_of_latency_to_zookeeper(
    api: client.ApiClient,
    proxied_topics: Resources,
    link: list[Proxy],
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
) -> None:
    """Promise: with 2 s added to every ZooKeeper round trip (1 s each way), a topic is created,
    its config changed and its partitions grown, each exactly once, and the operator reports Ready."""
    topic = f"{ns}-slow"
    _slow(link, "upstream", 1000)
    _slow(link, "downstream", 1000)
    proxied_topics.create(ns, kafkatopic(topic, partitions=2, rf=3, config=CONFIG))
    proxied_topics.wait_ready(ns, topic, timeout=240)
    proxied_topics.patch(ns, topic, {"spec": {"partitions": 3, "config": {"retention.ms": "7200000"}}})
    assert_converged(api, ns, kafka_view, zk, timeout=300)
    config_stat = zk.exists(f"/config/topics/{topic}")
    assert config_stat is not None and config_stat.version == 1, "the config change was not written once"
    data, stat = zk.get(f"/brokers/topics/{topic}")
    # created, topic_id written back by Kafka's controller, grown once
    assert stat.version == 2 and len(json.loads(data)["partitions"]) == 3


def test_connection_cut_after_the_create_transaction_committed(
    api: client.ApiClient,
    proxied_topics: Resources,
    link: list[Proxy],
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
) -> None:
    """Promise: when the connection drops after ZooKeeper committed the create transaction but
    before its answer reached the operator, the topic exists exactly once with its full config,
    and the operator converges on it (no second create, no rewrite)."""
    topic = f"{ns}-answer-lost"
    _slow(link, "downstream", 3000)  # answers take 3 s: time to cut the link after the commit
    proxied_topics.create(ns, kafkatopic(topic, partitions=2, rf=3, config=CONFIG))
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic}"), timeout=120, interval=0.05, what="the commit")
    _cut(link)
    assert_converged(api, ns, kafka_view, zk, timeout=240)
    assert _version(zk, f"/config/topics/{topic}") == 0
    assert _version(zk, f"/brokers/topics/{topic}") == 1  # the create, then Kafka's topic_id


def test_connection_cut_after_the_config_change_committed(
    api: client.ApiClient,
    proxied_topics: Resources,
    link: list[Proxy],
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
) -> None:
    """Promise: when the connection drops after ZooKeeper committed a config change (config znode
    and change notification, one transaction) but before the answer arrived, the change is in
    Kafka exactly once and the operator converges without writing it again."""
    topic = f"{ns}-change-answer-lost"
    proxied_topics.create(ns, kafkatopic(topic, partitions=2, rf=3, config=CONFIG))
    proxied_topics.wait_ready(ns, topic, timeout=120)
    _slow(link, "downstream", 3000)
    proxied_topics.patch(ns, topic, {"spec": {"config": {"retention.ms": "7200000"}}})
    wait_for(
        lambda: (_version(zk, f"/config/topics/{topic}") or 0) >= 1,
        timeout=120,
        interval=0.05,
        what="the config change to commit",
    )
    _cut(link)
    assert_converged(api, ns, kafka_view, zk, timeout=240)
    assert _version(zk, f"/config/topics/{topic}") == 1
    assert kafka_view.configs(topic).get("retention.ms") == "7200000"
