"""PartitionReassignment ``spec.balance: bytes`` end to end: real API server, the operator process,
real Kafka 3.9 brokers in three racks. Data is produced with a Kafka client, and the bytes per
broker before and after are read with Kafka's own DescribeLogDirs through the test's Admin client,
never through the project's code.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import cast

from kafka.admin import KafkaAdminClient
from kubernetes import client

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, scoped_operator
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import create_topic, fill, reassignment, wait_phase
from tests.integration.helpers import wait_for


def _bytes_per_broker(bootstrap: str, brokers: list[int], topics: set[str]) -> Counter[int]:
    """Bytes of ``topics`` on each broker, as each broker reports them (DescribeLogDirs)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="e2e-log-dirs")
    try:
        held: Counter[int] = Counter()
        for node in brokers:
            for response in admin.describe_log_dirs(brokers=[node]):
                for log_dir in response.get("log_dirs") or []:
                    for topic in log_dir.get("topics") or []:
                        if topic.get("name") not in topics:
                            continue
                        for partition in topic.get("partitions") or []:
                            if not partition.get("is_future_key"):
                                held[node] += int(partition.get("partition_size", 0))
        return held
    finally:
        admin.close()


def test_balance_bytes_moves_the_data_not_only_the_replica_counts(
    kafka_cluster: KafkaCluster,
    operator: OperatorProcess,
    api_client: client.ApiClient,
    kafka: KafkaView,
    namespace: str,
    tmp_path: Path,
    unique_topic: str,
) -> None:
    brokers = sorted(b.id for b in kafka_cluster.brokers)[:3]
    heavy, light = f"{unique_topic}-heavy", f"{unique_topic}-light"
    # Replica counts are already even (3 per broker), the bytes are not: every heavy partition
    # sits on the first broker.
    create_topic(kafka, heavy, {p: [brokers[0]] for p in range(3)})
    create_topic(kafka, light, {p: [brokers[1 + p % 2]] for p in range(6)})
    for p in range(3):
        fill(kafka, heavy, count=400, size=10_000, partition=p)  # about 4 MB each
    for p in range(6):
        fill(kafka, light, count=10, size=1_000, partition=p)
    topics = {heavy, light}
    before = cast(
        "Counter[int]",
        wait_for(
            lambda: (
                (held := _bytes_per_broker(kafka_cluster.bootstrap_servers, brokers, topics))[brokers[0]]
                > 10_000_000
                and held
            ),
            what="the produced data in the brokers' log sizes",
        ),
    )
    assert max(before.values()) > 2.5 * (sum(before.values()) / 3), before
    kprs = Resources(api_client, "partitionreassignments")
    settings = {"main": {"bootstrapServers": kafka_cluster.bootstrap_servers}}
    with scoped_operator(
        kafka_cluster, operator, namespace, tmp_path, {"main": kafka_cluster.zk_connect}, settings=settings
    ):
        kprs.create(
            namespace,
            reassignment(
                "by-bytes", mode="Rebalance", approval="Auto", topics=sorted(topics), balance="bytes"
            ),
        )
        body = wait_phase(kprs, namespace, "by-bytes", "Completed", timeout=240)
    assert body["status"]["proposal"]["moves"] > 0
    after = cast(
        "Counter[int]",
        wait_for(
            lambda: (
                (held := _bytes_per_broker(kafka_cluster.bootstrap_servers, brokers, topics))
                and len(held) == 3
                and max(held.values()) <= 1.2 * (sum(held.values()) / 3)
                and held
            ),
            timeout=120,
            what="bytes per broker evened out (Kafka's own DescribeLogDirs)",
        ),
    )
    assert sum(after.values()) >= 0.95 * sum(before.values())  # moved, not lost
    for topic in topics:  # Kafka serves every partition, each on one live broker
        described = kafka.describe(topic) or {}
        assert all(len(d["replicas"]) == 1 for d in described.values())


def test_balance_bytes_without_bootstrap_servers_is_refused_saying_what_to_configure(
    operator: OperatorProcess, api_client: client.ApiClient, namespace: str
) -> None:
    kprs = Resources(api_client, "partitionreassignments")
    kprs.create(namespace, reassignment("no-sizes", mode="Rebalance", approval="Auto", balance="bytes"))
    body = wait_phase(kprs, namespace, "no-sizes", "Failed", timeout=60)
    assert "bootstrapServers" in (body["status"].get("message") or str(body["status"])), body["status"]
