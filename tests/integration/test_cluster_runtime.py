"""runtime.clusters.ClusterRuntime on the session's real ZooKeeper: a chroot without a Kafka cluster
is reported as ClusterUnavailable saying so, not as topics asking for more than 0 brokers."""

from __future__ import annotations

import uuid

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator import config
from kafka_zk_operator.domain import errors
from kafka_zk_operator.runtime.clusters import ClusterRuntime
from tests.conftest import KafkaCluster


def test_a_chroot_without_kafka_is_cluster_unavailable_until_a_broker_creates_it(
    kafka_cluster: KafkaCluster, recwarn: pytest.WarningsRecorder
) -> None:
    chroot = f"/no-kafka-{uuid.uuid4().hex[:6]}"
    connect = f"{kafka_cluster.zk_hosts}{chroot}"
    runtime = ClusterRuntime(config.load({"KZO_ZOOKEEPER": connect}).clusters[0], patcher=None)
    try:
        with pytest.raises(errors.ClusterUnavailable) as raised:
            runtime.store()
        assert str(raised.value).startswith(
            f"no Kafka cluster at ZooKeeper {connect}: /brokers/ids does not exist"
        )
        assert raised.value.retryable
        assert not [w for w in recwarn if "chroot" in str(w.message)], "said once, as ClusterUnavailable"

        raw = KazooClient(hosts=kafka_cluster.zk_hosts)
        raw.start(timeout=15)
        try:
            raw.ensure_path(f"{chroot}/brokers/ids")  # what the first broker does
        finally:
            raw.stop()
            raw.close()
        assert runtime.store().broker_ids() == []
    finally:
        runtime.close()


def test_the_session_clusters_chroot_is_a_kafka_cluster(kafka_cluster: KafkaCluster) -> None:
    runtime = ClusterRuntime(
        config.load({"KZO_ZOOKEEPER": kafka_cluster.zk_connect}).clusters[0], patcher=None
    )
    try:
        assert len(runtime.store().broker_ids()) >= 3
    finally:
        runtime.close()
