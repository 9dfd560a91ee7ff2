"""One operator, two Kafka clusters (3.9.2 and 2.8.2), restricted to one namespace."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from kubernetes import client

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic, scoped_operator
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for


@pytest.fixture
def two_cluster_operator(
    kafka_cluster: KafkaCluster,
    kafka_cluster_factory: Callable[[str], KafkaCluster],
    operator: OperatorProcess,
    namespace: str,
    tmp_path: Path,
) -> Iterator[tuple[OperatorProcess, KafkaCluster]]:
    legacy = kafka_cluster_factory("2.8.2")
    clusters = {"main": kafka_cluster.zk_connect, "legacy": legacy.zk_connect}
    with scoped_operator(kafka_cluster, operator, namespace, tmp_path, clusters) as scoped:
        yield scoped, legacy


def test_resources_reach_the_cluster_they_name_and_other_namespaces_are_ignored(
    two_cluster_operator: tuple[OperatorProcess, KafkaCluster],
    kafka_cluster: KafkaCluster,
    api_client: client.ApiClient,
    namespace: str,
    unique_topic: str,
) -> None:
    _, legacy = two_cluster_operator
    topics = Resources(api_client, "kafkatopics")
    topics.create(namespace, kafkatopic("on-main", partitions=2, rf=3, topicName=unique_topic))
    topics.create(
        namespace, kafkatopic("on-legacy", partitions=3, rf=2, cluster="legacy", topicName=unique_topic)
    )
    topics.create(namespace, kafkatopic("on-nowhere", partitions=1, rf=1, cluster="nowhere"))
    topics.wait_ready(namespace, "on-main")
    topics.wait_ready(namespace, "on-legacy")
    cond = topics.wait_reason(namespace, "on-nowhere", "InvalidSpec")
    assert "unknown cluster 'nowhere'" in cond["message"]

    main_view, legacy_view = KafkaView(kafka_cluster.bootstrap_servers), KafkaView(legacy.bootstrap_servers)
    try:
        assert len(wait_for(lambda: main_view.describe(unique_topic))) == 2
        legacy_topic = wait_for(
            lambda: legacy_view.describe(unique_topic), what="the topic on the 2.8.2 cluster"
        )
        assert len(legacy_topic) == 3 and all(len(p["replicas"]) == 2 for p in legacy_topic.values())
    finally:
        main_view.close()
        legacy_view.close()

    other = f"{namespace}-other"
    client.CoreV1Api(api_client).create_namespace(cast(Any, {"metadata": {"name": other}}))
    topics.create(other, kafkatopic("outside", partitions=1, rf=1))
    import time

    time.sleep(8)  # longer than a resync period: a scoped operator must not touch it
    assert (topics.get(other, "outside") or {}).get("status") is None
