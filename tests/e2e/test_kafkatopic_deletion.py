"""Deleting a KafkaTopic on brokers that run with ``delete.topic.enable=false``.

Kafka's controller then removes the deletion marker and keeps the topic (0.10.2 and later); 0.10.0
and 0.10.1 controllers leave the marker alone instead, and the operator withdraws it once it has
been ignored for a minute. The operator must not wait forever (the resource would never go away)
nor pretend the topic is gone: it posts a ``DeletionRefusedByKafka`` Warning event, releases the
resource and leaves the topic in Kafka.

The refusing cluster is one real Kafka broker (3.9.2, 1.1.1 or 0.10.0.1) in its own chroot of the
session's ZooKeeper; one operator process serves it and the main cluster, scoped to the test's
namespace.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.security import make_acl
from kubernetes import client

from kafka_zk_operator.devstack import artifacts, ports
from kafka_zk_operator.devstack.kafka import KafkaBroker
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic, scoped_operator, wait_gone
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for


@dataclass
class RefusingCluster:
    zk_connect: str
    bootstrap: str


#: Kafka lines whose controllers refuse a deletion: the session's (3.9.2, KafkaZkClient), and the
#: zkclient-based controllers of 1.1 and 0.10.0 (``make test`` fetches both).
REFUSING_VERSIONS = ("3.9.2", "1.1.1", "0.10.0.1")


@pytest.fixture(params=REFUSING_VERSIONS)
def refusing_cluster(
    kafka_cluster: KafkaCluster, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[RefusingCluster]:
    """One broker (rack-a) of the given Kafka line with delete.topic.enable=false in a fresh chroot."""
    version: str = request.param
    chroot = f"/kafka-no-delete-{uuid.uuid4().hex[:6]}"
    zk_connect = f"{kafka_cluster.zk_hosts}{chroot}"
    broker = KafkaBroker(
        broker_id=1,
        rack="rack-a",
        port=ports.free_port(),
        workdir=tmp_path / "broker",
        libs=artifacts.kafka_libs(version),
        zk_connect=zk_connect,
        cluster_size=1,
        extra_properties={"delete.topic.enable": "false"},
    )
    broker.start()
    try:
        broker.wait_listening()
        with _zk(zk_connect) as zk:
            wait_for(
                lambda: zk.exists("/brokers/ids/1") and zk.exists("/controller"),
                timeout=60,
                what="the delete-refusing broker to register and become controller",
            )
        yield RefusingCluster(zk_connect, broker.bootstrap)
    finally:
        broker.kill()  # a graceful stop of a pre-3.x lone broker takes ~35 s (controlled shutdown retries)


class _zk:
    """A started kazoo client as a context manager."""

    def __init__(self, hosts: str) -> None:
        self.client = KazooClient(hosts=hosts, timeout=15)

    def __enter__(self) -> KazooClient:
        self.client.start(timeout=15)
        return self.client

    def __exit__(self, *_: object) -> None:
        self.client.stop()
        self.client.close()


@pytest.fixture
def two_cluster_operator(
    kafka_cluster: KafkaCluster,
    refusing_cluster: RefusingCluster,
    operator: OperatorProcess,
    namespace: str,
    tmp_path: Path,
) -> Iterator[OperatorProcess]:
    clusters = {"main": kafka_cluster.zk_connect, "no-delete": refusing_cluster.zk_connect}
    with scoped_operator(kafka_cluster, operator, namespace, tmp_path, clusters) as scoped:
        yield scoped


def _events(api_client: client.ApiClient, namespace: str, name: str) -> dict[str, str]:
    listed = client.CoreV1Api(api_client).list_namespaced_event(
        namespace, field_selector=f"involvedObject.name={name}"
    )
    return {str(event.reason): str(event.message) for event in listed.items}


def test_a_refused_deletion_releases_the_resource_keeps_the_topic_and_says_why(
    two_cluster_operator: OperatorProcess,
    refusing_cluster: RefusingCluster,
    api_client: client.ApiClient,
    namespace: str,
    unique_topic: str,
) -> None:
    topics = Resources(api_client, "kafkatopics")
    topics.create(
        namespace, kafkatopic("kept", partitions=2, rf=1, cluster="no-delete", topicName=unique_topic)
    )
    topics.wait_ready(namespace, "kept")

    topics.delete(namespace, "kept")
    try:
        # 0.10.0 keeps the marker: the operator withdraws it after domain.topic.deletion.IGNORED_AFTER_S.
        wait_gone(lambda: topics.get(namespace, "kept"), timeout=150, what="the resource to be released")
    except AssertionError:
        pytest.fail(f"resource not released; operator log:\n{two_cluster_operator.log_tail(80)}")

    def refused_events() -> dict[str, str] | None:
        found = _events(api_client, namespace, "kept")
        return found if "DeletionRefusedByKafka" in found else None

    events = wait_for(refused_events, timeout=30, what="the DeletionRefusedByKafka event")
    assert "TopicDeletionRequested" in events  # the operator did ask Kafka
    assert "delete.topic.enable=false" in events["DeletionRefusedByKafka"]
    assert "TopicDeleted" not in events

    with _zk(refusing_cluster.zk_connect) as zk:
        assert zk.exists(f"/brokers/topics/{unique_topic}") is not None
        # Removed by Kafka (0.10.2+), or withdrawn by the operator (0.10.0/0.10.1 ignore it).
        assert zk.exists(f"/admin/delete_topics/{unique_topic}") is None
    view = KafkaView(refusing_cluster.bootstrap)
    try:
        described = wait_for(lambda: view.describe(unique_topic), what="Kafka to still describe the topic")
        assert sorted(described) == [0, 1]
    finally:
        view.close()


def test_a_failed_first_deletion_attempt_is_retried_not_taken_for_a_refusal(
    kafka_cluster: KafkaCluster,
    topics: Resources,
    api_client: client.ApiClient,
    namespace: str,
    unique_topic: str,
) -> None:
    """The deletion marker cannot be written at first (ZooKeeper says NoAuth): the operator keeps
    retrying, and once it can write the marker Kafka deletes the topic as usual."""
    topics.create(namespace, kafkatopic("doomed", partitions=1, rf=3, topicName=unique_topic))
    topics.wait_ready(namespace, "doomed")

    with kafka_cluster.zk_session() as zk:
        zk.ensure_path("/admin/delete_topics")
        open_acl = zk.get_acls("/admin/delete_topics")[0]
        zk.set_acls("/admin/delete_topics", [make_acl("world", "anyone", read=True, admin=True)])
        try:
            topics.delete(namespace, "doomed")

            def attempts() -> int | None:
                body = topics.get(namespace, "doomed")
                assert body is not None, "the resource was released although the topic was never marked"
                progress = ((body.get("status") or {}).get("kopf") or {}).get("progress") or {}
                retries = int((progress.get("kafkatopic_delete") or {}).get("retries") or 0)
                return retries if retries >= 2 else None

            wait_for(attempts, timeout=40, what="two failed deletion attempts")
            assert zk.exists(f"/brokers/topics/{unique_topic}") is not None
        finally:
            zk.set_acls("/admin/delete_topics", open_acl)

        wait_gone(
            lambda: topics.get(namespace, "doomed"),
            timeout=90,
            what="the resource after Kafka deleted the topic",
        )
        assert zk.exists(f"/brokers/topics/{unique_topic}") is None
    events = _events(api_client, namespace, "doomed")
    assert "TopicDeleted" in events and "DeletionRefusedByKafka" not in events, events
