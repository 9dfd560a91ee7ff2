"""Stopping and deleting a running PartitionReassignment on a native KRaft cluster: the Admin API
cancels the batch in flight at once (KIP-455), where ZooKeeper mode waits for it
(``test_partitionreassignment.py``).

The operator runs as a real process serving only the KRaft cluster of ``tests/kraft_stack.py``.
The move is made slow enough to be in flight for minutes: 1.3 MB in the partition and a throttle
of 2 KB/s (Kafka lets the first ``replica.fetch.max.bytes``, 1 MiB, through unthrottled). Kafka's
view is read with a plain kafka-python client: nothing reassigning, the replicas from before, no
throttle key on any broker or on the topic.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kafka import TopicPartition
from kubernetes import client

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, serving_alone, wait_gone
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import (
    STOP,
    create_topic,
    explicit_moves,
    fill_slow,
    kafka_broker_throttles,
    kafka_topic_throttles,
    wait_phase,
)
from tests.integration.helpers import wait_for
from tests.kraft_stack import KRaftCluster

#: Bytes/s: the ~0.3 MB left after the unthrottled first fetch take minutes at this rate.
CRAWL = 2048
#: A stop or a deletion ends well within this (the move itself would take minutes).
PROMPT_S = 30.0
BEFORE = {0: [1, 2]}


@pytest.fixture(scope="module")
def kprs(
    kafka_cluster: KafkaCluster,
    kraft_cluster: KRaftCluster,
    operator: OperatorProcess,
    crds: None,
    api_client: client.ApiClient,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Resources]:
    """PartitionReassignments, served by ``kzo operator`` for the KRaft cluster alone."""
    entry = {"name": "kraft", "bootstrapServers": kraft_cluster.bootstrap_servers}
    with serving_alone(kafka_cluster, operator, tmp_path_factory.mktemp("kraft-cancel"), entry):
        yield Resources(api_client, "partitionreassignments")


@pytest.fixture
def view(kraft_cluster: KRaftCluster) -> Iterator[KafkaView]:
    kafka = KafkaView(kraft_cluster.bootstrap_servers)
    try:
        yield kafka
    finally:
        kafka.close()


def _moving(view: KafkaView, topic: str) -> dict[int, list[int]]:
    """Kafka's reassignments of ``topic``: partition -> replicas (target + removing)."""
    listed = view.admin.list_partition_reassignments([TopicPartition(topic, 0)])
    return {tp.partition: list(entry["replicas"]) for tp, entry in listed.items() if tp.topic == topic}


def _start_crawling_move(kprs: Resources, namespace: str, name: str, view: KafkaView, topic: str) -> None:
    create_topic(view, topic, BEFORE)
    fill_slow(view, topic, 0)
    kprs.create(namespace, explicit_moves(name, topic, {0: [3, 1]}, throttle=CRAWL))
    wait_for(lambda: _moving(view, topic), timeout=60, interval=0.2, what="Kafka to move partition 0")
    wait_phase(kprs, namespace, name, "Running", timeout=30)
    assert kafka_broker_throttles(view, 3).get("follower.replication.throttled.rate") == str(CRAWL)


def _kafka_back_as_before(view: KafkaView, kraft_cluster: KRaftCluster, topic: str) -> None:
    wait_for(lambda: not _moving(view, topic), timeout=15, what="Kafka to list no reassignment")
    wait_for(
        lambda: (d := view.describe(topic)) and d[0]["replicas"] == BEFORE[0],
        timeout=15,
        what="partition 0 back on its replicas from before",
    )
    wait_for(lambda: kafka_topic_throttles(view, topic) == {}, timeout=15, what="the topic's throttle gone")
    assert {b.id: kafka_broker_throttles(view, b.id) for b in kraft_cluster.brokers} == {
        b.id: {} for b in kraft_cluster.brokers
    }


def test_stop_cancels_the_batch_in_flight_and_removes_its_throttles(
    kprs: Resources, namespace: str, view: KafkaView, kraft_cluster: KRaftCluster, unique_topic: str
) -> None:
    _start_crawling_move(kprs, namespace, "stop-now", view, unique_topic)
    asked = time.monotonic()
    kprs.patch(namespace, "stop-now", {"metadata": {"annotations": {STOP: "true"}}})
    body = wait_phase(kprs, namespace, "stop-now", "Stopped", timeout=PROMPT_S)
    print(f"[figures] stop -> Stopped in {time.monotonic() - asked:.1f} s")
    status = body["status"]
    assert "the move of 1 partition of the batch was cancelled" in status["message"], status["message"]
    assert status["progress"]["partitionsDone"] == 0
    _kafka_back_as_before(view, kraft_cluster, unique_topic)


def test_deleting_a_running_reassignment_cancels_it_and_releases_the_resource_at_once(
    kprs: Resources, namespace: str, view: KafkaView, kraft_cluster: KRaftCluster, unique_topic: str
) -> None:
    _start_crawling_move(kprs, namespace, "delete-now", view, unique_topic)
    asked = time.monotonic()
    kprs.delete(namespace, "delete-now")
    wait_gone(lambda: kprs.get(namespace, "delete-now"), timeout=PROMPT_S, what="the resource to go away")
    print(f"[figures] delete -> gone in {time.monotonic() - asked:.1f} s")
    _kafka_back_as_before(view, kraft_cluster, unique_topic)
