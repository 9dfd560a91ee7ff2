"""The devstack's native KRaft cluster (``kraft_cluster``: controller 3000, brokers 1-3 in racks
rack-a/b/c, no ZooKeeper) as Kafka sees it: DescribeCluster through a Kafka client, the quorum
through Kafka's ``MetadataQuorumCommand``, and a topic created with an explicit assignment as
Kafka's own ``TopicCommand --describe`` shows it. The same for three combined broker+controller
nodes of Kafka 4.1 (``kzo dev up --kraft --kafka-version 4.1.2``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_zk_operator.devstack import artifacts
from kafka_zk_operator.devstack.kraft import KRaftSpec
from tests.integration.helpers import wait_for
from tests.kraft_stack import (
    QUORUM_COMMAND,
    TOPIC_COMMAND,
    KRaftCluster,
    describe_replicas,
    start_kraft_cluster,
)


def test_the_cluster_answers_describe_cluster_with_three_racked_brokers(kraft_cluster: KRaftCluster) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kraft_cluster.bootstrap_servers, request_timeout_ms=20000)
    try:
        described = admin.describe_cluster()
    finally:
        admin.close()
    racks = {b["broker_id"]: b["rack"] for b in described["brokers"]}
    assert racks == {1: "rack-a", 2: "rack-b", 3: "rack-c"}
    assert described["cluster_id"] == kraft_cluster.cluster_id


def test_the_quorum_is_the_dedicated_controller(kraft_cluster: KRaftCluster) -> None:
    """KRaft brokers answer DescribeCluster with a random broker as "controller" (KIP-590): the
    quorum's own view comes from Kafka's ``kafka-metadata-quorum describe --status``."""
    status = kraft_cluster.kafka_cli(QUORUM_COMMAND, "describe", "--status")
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    assert fields["LeaderId"].strip() == "3000", status
    assert fields["ClusterId"].strip() == kraft_cluster.cluster_id


@pytest.fixture(scope="module")
def kraft_4_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    """Three combined nodes of the newest KRaft-only line (the small footprint)."""
    version = artifacts.KRAFT_ONLY_KAFKA_VERSIONS[-1]
    spec = KRaftSpec(controllers="combined", kafka_version=version)
    cluster = start_kraft_cluster(tmp_path_factory.mktemp(f"kraft-{version}"), spec)
    try:
        yield cluster
    finally:
        cluster.stack.down()


def _create_and_describe(cluster: KRaftCluster, topic: str) -> None:
    assignment = {0: [1, 2], 1: [2, 3], 2: [3, 1]}
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=20000)
    try:
        admin.create_topics(
            [NewTopic(topic, num_partitions=-1, replication_factor=-1, replica_assignments=assignment)]
        )
    finally:
        admin.close()

    def described() -> dict[int, list[int]] | None:
        replicas = describe_replicas(cluster.kafka_cli(TOPIC_COMMAND, "--describe", "--topic", topic))
        return replicas if len(replicas) == len(assignment) else None

    assert wait_for(described, timeout=60, what=f"Kafka to describe {topic}") == assignment


def test_an_explicit_assignment_shows_in_kafkas_topic_describe(
    kraft_cluster: KRaftCluster, unique_topic: str
) -> None:
    _create_and_describe(kraft_cluster, unique_topic)


def test_kafka_4_runs_as_combined_racked_nodes_and_keeps_an_explicit_assignment(
    kraft_4_cluster: KRaftCluster, unique_topic: str
) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kraft_4_cluster.bootstrap_servers, request_timeout_ms=20000)
    try:
        described = admin.describe_cluster()
    finally:
        admin.close()
    assert {b["broker_id"]: b["rack"] for b in described["brokers"]} == {
        1: "rack-a",
        2: "rack-b",
        3: "rack-c",
    }
    status = kraft_4_cluster.kafka_cli(QUORUM_COMMAND, "describe", "--status")
    assert "CurrentVoters:" in status and all(f'"id": {i}' in status for i in (1, 2, 3)), status
    _create_and_describe(kraft_4_cluster, unique_topic)
