"""The devstack's native KRaft cluster (``kraft_cluster``: controller 3000, brokers 1-3 in racks
rack-a/b/c, no ZooKeeper) as Kafka sees it: DescribeCluster through a Kafka client, and a topic
created with an explicit assignment as Kafka's own ``TopicCommand --describe`` shows it."""

from __future__ import annotations

from kafka.admin import KafkaAdminClient, NewTopic

from tests.integration.helpers import wait_for
from tests.kraft_stack import QUORUM_COMMAND, TOPIC_COMMAND, KRaftCluster, describe_replicas


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


def test_an_explicit_assignment_shows_in_kafkas_topic_describe(
    kraft_cluster: KRaftCluster, unique_topic: str
) -> None:
    assignment = {0: [1, 2], 1: [2, 3], 2: [3, 1]}
    admin = KafkaAdminClient(bootstrap_servers=kraft_cluster.bootstrap_servers, request_timeout_ms=20000)
    try:
        admin.create_topics(
            [NewTopic(unique_topic, num_partitions=-1, replication_factor=-1, replica_assignments=assignment)]
        )
    finally:
        admin.close()

    def described() -> dict[int, list[int]] | None:
        replicas = describe_replicas(
            kraft_cluster.kafka_cli(TOPIC_COMMAND, "--describe", "--topic", unique_topic)
        )
        return replicas if len(replicas) == len(assignment) else None

    assert wait_for(described, timeout=60, what=f"Kafka to describe {unique_topic}") == assignment
