"""KafkaTopic configs follow the rules of the cluster's Kafka line, end to end (issue #15).

A broker builds every topic's LogConfig from ``/config/topics/<t>`` when it starts and dies on a
value its own line does not accept. One operator serves a real Kafka 1.1.1 cluster twice: once
with ``kafkaVersion: "1.1"`` in its clusters file, once without (the line is then inferred from
the brokers' ``/brokers/ids`` v4 registrations: 0.10.2), and the main 3.9.2 cluster. Kafka's view
comes from a Kafka client and the ZooKeeper znodes Kafka's own tools read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kubernetes import client

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic, scoped_operator
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for


def test_configs_are_judged_by_the_clusters_own_line_and_refused_ones_write_nothing(
    kafka_cluster: KafkaCluster,
    kafka_cluster_factory: Callable[[str], KafkaCluster],
    operator: OperatorProcess,
    api_client: client.ApiClient,
    namespace: str,
    tmp_path: Path,
    unique_topic: str,
) -> None:
    old = kafka_cluster_factory("1.1.1")
    clusters = {"main": kafka_cluster.zk_connect, "old": old.zk_connect, "old-inferred": old.zk_connect}
    names = {name: f"{unique_topic}-{name}" for name in ("fits", "zstd", "format", "inferred", "main")}
    topics = Resources(api_client, "kafkatopics")
    with scoped_operator(
        kafka_cluster, operator, namespace, tmp_path, clusters, settings={"old": {"kafkaVersion": "1.1"}}
    ):
        fits = {
            "compression.type": "lz4",
            "message.format.version": "1.1-IV0",
            "cleanup.policy": "compact,delete",
        }
        specs = {  # resource name -> (cluster, replication factor, config)
            "fits": ("old", 2, fits),
            "zstd": ("old", 2, {"compression.type": "zstd"}),
            "format": ("old", 2, {"message.format.version": "2.0"}),
            "inferred": ("old-inferred", 2, {"message.format.version": "1.1-IV0"}),
            "main": ("main", 3, {"compression.type": "zstd"}),
        }
        for name, (cluster, rf, config) in specs.items():
            body = kafkatopic(name, 1, rf, cluster=cluster, topicName=names[name], config=config)
            topics.create(namespace, body)

        topics.wait_ready(namespace, "fits")
        topics.wait_ready(namespace, "main")  # Kafka 3.9 has zstd
        zstd = topics.wait_reason(namespace, "zstd", "InvalidSpec")["message"]
        assert (
            "compression.type='zstd': 'zstd' is not one of" in zstd
            and "; it needs Kafka 2.1 or later, and this cluster runs Kafka 1.1 (kafkaVersion in the "
            "operator's cluster settings)"
            in zstd
        ), zstd
        version = topics.wait_reason(namespace, "format", "InvalidSpec")["message"]
        assert "message.format.version='2.0'" in version and "it needs Kafka 2.0 or later" in version, version
        inferred = topics.wait_reason(namespace, "inferred", "InvalidSpec")["message"]
        assert (
            "it needs Kafka 1.1 or later, and this cluster runs Kafka 0.10.2 (brokers 1, 2, 3 register "
            "/brokers/ids v4, which Kafka 0.10.2 to 3.9 writes; set kafkaVersion" in inferred
        ), inferred

    view = KafkaView(old.bootstrap_servers)
    try:
        assert wait_for(lambda: view.describe(names["fits"]), what="the topic on the 1.1.1 cluster")
        reported = view.configs(names["fits"])
        assert {key: reported.get(key) for key in fits} == fits
        known = view.topic_names()
        assert not {names["zstd"], names["format"], names["inferred"]} & known
    finally:
        view.close()
    with old.zk_session() as zk:  # what a restarting broker would read: nothing was written
        for name in ("zstd", "format", "inferred"):
            assert zk.exists(f"/config/topics/{names[name]}") is None
            assert zk.exists(f"/brokers/topics/{names[name]}") is None
