"""Live partition health in KafkaTopic status, admission-time validation, Events and metrics."""

from __future__ import annotations

import time
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import GROUP, VERSION, Resources, kafkatopic
from tests.integration.helpers import wait_for


def _urp(topics: Resources, namespace: str, name: str) -> int | None:
    body = topics.get(namespace, name) or {}
    value = (body.get("status") or {}).get("underReplicatedPartitions")
    return value if isinstance(value, int) else None


def test_stopping_a_broker_shows_in_the_status_within_30_seconds_and_recovers(
    topics: Resources, namespace: str, kafka_cluster: KafkaCluster, unique_topic: str
) -> None:
    topics.create(namespace, kafkatopic(unique_topic, partitions=6, rf=3))
    topics.wait_ready(namespace, unique_topic)
    assert _urp(topics, namespace, unique_topic) == 0
    victim = 3
    stopped_at = time.monotonic()
    kafka_cluster.stack.stop_broker(victim)
    try:
        wait_for(  # the ISRs shrink one state znode at a time: wait for all of them, within 30 s
            lambda: _urp(topics, namespace, unique_topic) == 6,
            timeout=30,
            what="underReplicatedPartitions to reach 6 after a broker stopped",
        )
        rose_after = time.monotonic() - stopped_at
        status = (topics.get(namespace, unique_topic) or {})["status"]
        assert status["underReplicatedPartitions"] == 6, "every partition has a replica on the stopped broker"
        for state in status["partitionStates"]:
            assert victim not in state["isr"]
    finally:
        kafka_cluster.stack.restart_broker(victim)
    wait_for(
        lambda: _urp(topics, namespace, unique_topic) == 0,
        timeout=60,
        what="underReplicatedPartitions to fall after the broker returned",
    )
    assert rose_after < 30


@pytest.mark.parametrize(
    ("spec", "name", "expected"),
    [
        ({"topicName": "bad name!"}, "bad-chars", "topicName"),
        ({"topicName": "x" * 250}, "too-long", "249"),
        ({"topicName": "__consumer_offsets"}, "internal", "internal"),
        ({"topicName": ".."}, "dotdot", "topicName"),
        ({"partitions": 0}, "zero-partitions", "partitions"),
    ],
)
def test_invalid_specs_are_rejected_at_admission(
    api_client: client.ApiClient, namespace: str, spec: dict[str, Any], name: str, expected: str, crds: None
) -> None:
    body = kafkatopic(name, partitions=1, rf=1)
    body["spec"].update(spec)
    api = client.CustomObjectsApi(api_client)
    with pytest.raises(ApiException) as raised:
        api.create_namespaced_custom_object(GROUP, VERSION, namespace, "kafkatopics", body)
    assert raised.value.status == 422
    assert expected.lower() in str(raised.value.body).lower()


@pytest.mark.parametrize(
    ("created", "changed"),
    [(None, "elsewhere"), ("local", "elsewhere"), ("local", None)],
    ids=["set", "changed", "removed"],
)
def test_changing_the_cluster_is_rejected_at_admission(
    topics: Resources, namespace: str, unique_topic: str, created: str | None, changed: str | None
) -> None:
    """A topic stays in the cluster it was created in: the operator would otherwise lose track of it
    and, once the resource is deleted, leave it in Kafka (found by tests/e2e/test_fuzz_specs.py)."""
    body = kafkatopic(unique_topic, partitions=1, rf=1)
    if created is not None:
        body["spec"]["cluster"] = created
    topics.create(namespace, body)
    topics.wait_ready(namespace, unique_topic)
    with pytest.raises(ApiException) as raised:
        topics.patch(namespace, unique_topic, {"spec": {"cluster": changed}})
    assert raised.value.status == 422
    assert "cluster cannot be changed" in str(raised.value.body)
    topics.patch(namespace, unique_topic, {"spec": {"cluster": created}})  # unchanged: accepted


def test_decreasing_partitions_is_rejected_at_admission(
    topics: Resources, namespace: str, unique_topic: str
) -> None:
    topics.create(namespace, kafkatopic(unique_topic, partitions=3, rf=1))
    topics.wait_ready(namespace, unique_topic)
    with pytest.raises(ApiException) as raised:
        topics.patch(namespace, unique_topic, {"spec": {"partitions": 2}})
    assert raised.value.status == 422
    with pytest.raises(ApiException):
        topics.patch(namespace, unique_topic, {"spec": {"topicName": "renamed"}})


def test_a_name_colliding_with_an_existing_topic_is_reported_and_not_written(
    topics: Resources, namespace: str, kafka_cluster: KafkaCluster, unique_topic: str
) -> None:
    dotted = unique_topic.replace("-", ".", 1)
    underscored = dotted.replace(".", "_")
    topics.create(namespace, kafkatopic("collide-a", partitions=1, rf=1, topicName=dotted))
    topics.wait_ready(namespace, "collide-a")
    topics.create(namespace, kafkatopic("collide-b", partitions=1, rf=1, topicName=underscored))
    cond = topics.wait_reason(namespace, "collide-b", "InvalidSpec")
    assert "collid" in cond["message"].lower()
    with kafka_cluster.zk_session() as zk:
        assert zk.exists(f"/brokers/topics/{underscored}") is None
        assert zk.exists(f"/config/topics/{underscored}") is None


def test_an_explicit_assignment_is_written_exactly(
    topics: Resources, namespace: str, kafka_cluster: KafkaCluster, unique_topic: str
) -> None:
    assignment = {"0": [2, 1], "1": [3, 2], "2": [1, 3]}
    topics.create(namespace, kafkatopic(unique_topic, partitions=3, rf=2, assignment=assignment))
    ready = topics.wait_ready(namespace, unique_topic)
    states = {s["partition"]: s for s in ready["status"]["partitionStates"]}
    for partition, replicas in assignment.items():
        assert states[int(partition)]["replicas"] == replicas
        assert states[int(partition)]["leader"] == replicas[0]


def test_events_are_posted_and_metrics_move(
    topics: Resources,
    namespace: str,
    api_client: client.ApiClient,
    operator: OperatorProcess,
    unique_topic: str,
) -> None:
    def counter(text: str, prefix: str) -> float:
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))

    before = operator.metrics()
    topics.create(namespace, kafkatopic(unique_topic, partitions=2, rf=1))
    topics.wait_ready(namespace, unique_topic)
    topics.patch(namespace, unique_topic, {"spec": {"config": {"retention.ms": "123456"}}})
    wait_for(
        lambda: (
            "retention.ms=123456"
            in ((topics.get(namespace, unique_topic) or {}).get("status") or {}).get("appliedConfig", [])
        ),
        what="the config change to be applied",
    )
    core = client.CoreV1Api(api_client)

    def reasons() -> set[str | None] | None:
        events = core.list_namespaced_event(namespace).items
        found = {e.reason for e in events if e.involved_object.name == unique_topic}
        return found if {"TopicCreated", "ConfigChanged"} <= found else None

    wait_for(reasons, what="TopicCreated and ConfigChanged events")
    after = operator.metrics()
    assert counter(after, "kzo_reconciliations_total") > counter(before, "kzo_reconciliations_total")
    assert counter(after, "kzo_zookeeper_writes_total") >= counter(before, "kzo_zookeeper_writes_total") + 2
    assert 'kzo_zookeeper_session_connected{cluster="local"} 1.0' in after
    # Every reconciled KafkaTopic counts once, under its Ready condition.
    assert counter(after, 'kzo_kafkatopics{cluster="local",ready="True",') >= 1
    assert 'kzo_kafkatopics{cluster="local",ready="True",reason="Updated"}' in after
