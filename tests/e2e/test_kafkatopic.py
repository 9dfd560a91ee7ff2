"""KafkaTopic end to end: real API server + the operator process + real Kafka 3.9 brokers."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic, wait_gone
from tests.e2e.kafka_client import KafkaView, expect_out_of_band_change_reverted
from tests.integration.helpers import wait_for


def _racks(cluster: KafkaCluster) -> dict[int, str | None]:
    return {b.id: b.rack for b in cluster.brokers}


def test_a_kafkatopic_creates_a_rack_diverse_topic_that_kafka_serves(
    topics: Resources, namespace: str, kafka: KafkaView, kafka_cluster: KafkaCluster, unique_topic: str
) -> None:
    body = kafkatopic(
        unique_topic, partitions=6, rf=3, config={"retention.ms": "7200000", "cleanup.policy": "delete"}
    )
    topics.create(namespace, body)
    ready = topics.wait_ready(namespace, unique_topic)

    described = wait_for(lambda: kafka.describe(unique_topic), what="Kafka to describe the topic")
    assert sorted(described) == list(range(6))
    racks = _racks(kafka_cluster)
    for partition in described.values():
        assert len(partition["replicas"]) == 3
        assert len({racks[b] for b in partition["replicas"]}) == 3, "replicas must span three racks"
    configs = wait_for(
        lambda: c if (c := kafka.configs(unique_topic)).get("retention.ms") == "7200000" else None
    )
    assert configs["cleanup.policy"] == "delete"

    messages = [f"message-{i}".encode() for i in range(50)]
    kafka.produce(unique_topic, messages)
    assert sorted(kafka.consume_all(unique_topic, expected=50)) == sorted(messages)

    status = ready["status"]
    assert status["partitions"] == 6 and status["replicationFactor"] == 3
    assert len(status["topicId"]) == 22
    assert status["underReplicatedPartitions"] == 0 and status["offlinePartitions"] == 0
    states = {s["partition"]: s for s in status["partitionStates"]}
    for partition_id, kafka_state in described.items():
        assert states[partition_id]["leader"] == kafka_state["leader"]
        assert sorted(states[partition_id]["isr"]) == sorted(kafka_state["isr"])
    reason = topics.condition(namespace, unique_topic)
    assert reason is not None and reason["reason"] in ("Created", "InSync")


def test_growing_partitions_and_changing_config_reach_kafka(
    topics: Resources, namespace: str, kafka: KafkaView, unique_topic: str
) -> None:
    topics.create(namespace, kafkatopic(unique_topic, partitions=2, rf=2, config={"retention.ms": "3600000"}))
    first = topics.wait_ready(namespace, unique_topic)
    topic_id = first["status"]["topicId"]

    topics.patch(namespace, unique_topic, {"spec": {"partitions": 5, "config": {"retention.ms": "600000"}}})
    topics.wait_ready(namespace, unique_topic)
    described = wait_for(lambda: d if (d := kafka.describe(unique_topic)) and len(d) == 5 else None)
    assert all(len(p["replicas"]) == 2 for p in described.values())
    wait_for(lambda: kafka.configs(unique_topic).get("retention.ms") == "600000", what="new retention.ms")
    after = topics.get(namespace, unique_topic)
    assert after is not None and after["status"]["topicId"] == topic_id, "topic_id must be preserved"
    assert after["status"]["partitions"] == 5


def test_deleting_the_resource_deletes_the_topic_in_kafka(
    topics: Resources, namespace: str, kafka: KafkaView, unique_topic: str
) -> None:
    topics.create(namespace, kafkatopic(unique_topic, partitions=2, rf=3))
    topics.wait_ready(namespace, unique_topic)
    # Ready comes from the controller's election; the broker that answers learns of it just after.
    wait_for(
        lambda: kafka.describe(unique_topic), timeout=30, what=f"Kafka's metadata to show {unique_topic}"
    )
    topics.delete(namespace, unique_topic)
    wait_gone(lambda: topics.get(namespace, unique_topic), what="the KafkaTopic to go away")
    wait_for(lambda: unique_topic not in kafka.topic_names(), what="Kafka to forget the topic")


def test_retain_policy_keeps_the_topic_when_the_resource_is_deleted(
    topics: Resources, namespace: str, kafka: KafkaView, unique_topic: str, api_client: client.ApiClient
) -> None:
    topics.create(namespace, kafkatopic(unique_topic, partitions=1, rf=1, deletionPolicy="Retain"))
    topics.wait_ready(namespace, unique_topic)
    topics.delete(namespace, unique_topic)
    wait_gone(lambda: topics.get(namespace, unique_topic))
    assert unique_topic in kafka.topic_names()
    retained = wait_for(
        lambda: [
            e.message
            for e in client.CoreV1Api(api_client).list_namespaced_event(namespace).items
            if e.involved_object.name == unique_topic and e.reason == "TopicRetained"
        ],
        what="the TopicRetained event",
    )
    assert retained == [f"Kafka topic '{unique_topic}' is kept"]


def test_an_existing_topic_is_adopted_without_recreating_it(
    topics: Resources, namespace: str, kafka: KafkaView, unique_topic: str, operator: OperatorProcess
) -> None:
    kafka.create_topic(unique_topic, 3, 2, {"retention.ms": "86400000"})
    before = wait_for(lambda: kafka.describe(unique_topic), what="the pre-existing topic")
    topics.create(
        namespace, kafkatopic(unique_topic, partitions=3, rf=2, config={"retention.ms": "86400000"})
    )
    ready = topics.wait_ready(namespace, unique_topic)
    assert topics.condition(namespace, unique_topic)["reason"] in ("Adopted", "InSync")  # type: ignore[index]
    assert kafka.describe(unique_topic) == before or {
        p: v["replicas"]
        for p, v in kafka.describe(unique_topic).items()  # type: ignore[union-attr]
    } == {p: v["replicas"] for p, v in before.items()}
    assert ready["status"]["partitions"] == 3


def test_two_resources_for_one_topic_the_older_wins(
    topics: Resources, namespace: str, unique_topic: str
) -> None:
    topics.create(
        namespace, kafkatopic("first-" + unique_topic[:40], partitions=1, rf=1, topicName=unique_topic)
    )
    topics.wait_ready(namespace, "first-" + unique_topic[:40])
    topics.create(
        namespace, kafkatopic("second-" + unique_topic[:40], partitions=4, rf=1, topicName=unique_topic)
    )
    cond = topics.wait_reason(namespace, "second-" + unique_topic[:40], "ResourceConflict")
    assert cond["status"] == "False"
    assert "first-" in cond["message"]
    first = topics.get(namespace, "first-" + unique_topic[:40])
    assert first is not None and first["status"]["partitions"] == 1, "the loser must not change the topic"


def test_paused_and_unmanaged_resources_write_nothing(
    topics: Resources, namespace: str, kafka: KafkaView, unique_topic: str
) -> None:
    topics.create(namespace, kafkatopic(unique_topic, partitions=2, rf=1))
    topics.wait_ready(namespace, unique_topic)
    topics.patch(
        namespace, unique_topic, {"metadata": {"annotations": {"kafka.zk-operator.io/paused": "true"}}}
    )
    wait_for(
        lambda: (
            (c := topics.condition(namespace, unique_topic, "ReconciliationPaused")) and c["status"] == "True"
        )
    )
    topics.patch(namespace, unique_topic, {"spec": {"partitions": 4}})
    # Several resync periods: a paused resource must not grow the topic.
    wait_for(
        lambda: (b := topics.get(namespace, unique_topic)) and b["status"].get("lastSyncTime"), timeout=15
    )
    import time

    time.sleep(12)
    assert len(kafka.describe(unique_topic) or {}) == 2

    topics.patch(
        namespace,
        unique_topic,
        {
            "metadata": {
                "annotations": {"kafka.zk-operator.io/paused": None, "kafka.zk-operator.io/managed": "false"}
            }
        },
    )
    wait_for(lambda: (c := topics.condition(namespace, unique_topic, "Unmanaged")) and c["status"] == "True")
    topics.delete(namespace, unique_topic)
    wait_gone(lambda: topics.get(namespace, unique_topic))
    assert unique_topic in kafka.topic_names(), "deleting an unmanaged resource keeps the topic"
    assert len(kafka.describe(unique_topic) or {}) == 2


def test_out_of_band_config_change_is_reverted(
    topics: Resources, namespace: str, kafka: KafkaView, kafka_cluster: KafkaCluster, unique_topic: str
) -> None:

    topics.create(namespace, kafkatopic(unique_topic, partitions=1, rf=1, config={"retention.ms": "3600000"}))
    topics.wait_ready(namespace, unique_topic)
    expect_out_of_band_change_reverted(
        kafka, unique_topic, "retention.ms", changed="1000", wanted="3600000", timeout=45
    )


@pytest.mark.parametrize(
    ("spec", "reason_or_message"),
    [
        ({"partitions": 1, "replicationFactor": 9}, "InvalidSpec"),
        ({"partitions": 1, "replicationFactor": 1, "config": {"retention.mss": "1"}}, "InvalidSpec"),
        ({"partitions": 1, "replicationFactor": 1, "config": {"retention.ms": "soon"}}, "InvalidSpec"),
    ],
)
def test_invalid_specs_are_reported_and_write_nothing(
    topics: Resources,
    namespace: str,
    kafka: KafkaView,
    unique_topic: str,
    spec: dict[str, Any],
    reason_or_message: str,
) -> None:
    body = kafkatopic(unique_topic)
    body["spec"] = spec
    topics.create(namespace, body)
    cond = topics.wait_reason(namespace, unique_topic, reason_or_message)
    assert cond["status"] == "False" and cond["message"]
    stalled = topics.condition(namespace, unique_topic, "Stalled")  # kstatus: Failed (docs/conditions.md)
    assert stalled is not None and stalled["status"] == "True" and stalled["message"] == cond["message"]
    assert unique_topic not in kafka.topic_names()
