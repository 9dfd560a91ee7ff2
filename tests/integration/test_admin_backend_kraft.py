"""The Admin API backend on a native KRaft cluster (``kraft_cluster``: no ZooKeeper at all), where
it is the only backend: a KafkaTopic's passes (create with an explicit assignment, reconfigure,
grow, delete) through ``service.topics`` / ``service.deletion``, KRaft's own validation of an
assignment, and throttles on a broker. Kafka's view is read with Kafka's own ``TopicCommand``
and a plain kafka-python client, never through the backend."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kafka.admin import ConfigResource, ConfigResourceType

from kafka_zk_operator.adapters.kafka import admin_reassignments as reassignments
from kafka_zk_operator.adapters.kafka.admin_backend import AdminBackend
from kafka_zk_operator.domain import errors, model
from kafka_zk_operator.domain.topic.resource import parse_resource
from kafka_zk_operator.service.deletion import DeletionProgress, delete_topic
from kafka_zk_operator.service.topics import TopicPolicies, TopicResult, reconcile_topic
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for
from tests.kraft_stack import TOPIC_COMMAND, KRaftCluster, describe_replicas

POLICIES = TopicPolicies(create_wait_seconds=10)


@pytest.fixture
def backend(kraft_cluster: KRaftCluster) -> Iterator[AdminBackend]:
    made = AdminBackend(kraft_cluster.bootstrap_servers, client_id="kzo-test-admin-backend-kraft")
    try:
        yield made
    finally:
        made.close()


@pytest.fixture(scope="module")
def kraft_view(kraft_cluster: KRaftCluster) -> Iterator[KafkaView]:
    view = KafkaView(kraft_cluster.bootstrap_servers)
    try:
        yield view
    finally:
        view.close()


def _resource(topic: str, **spec: Any) -> Any:
    return parse_resource(
        {
            "metadata": {"name": topic, "namespace": "ns", "uid": "u-" + topic, "generation": 1},
            "spec": {"partitions": 1, "replicationFactor": 1, **spec},
        }
    )


def _merged(previous: dict[str, Any], result: TopicResult) -> dict[str, Any]:
    return {k: v for k, v in {**previous, **result.status}.items() if v is not None}


def _kafkas_replicas(kraft_cluster: KRaftCluster, topic: str) -> dict[int, list[int]]:
    return describe_replicas(kraft_cluster.kafka_cli(TOPIC_COMMAND, "--describe", "--topic", topic))


def test_a_kafkatopic_is_created_reconfigured_grown_and_deleted_on_kraft(
    backend: AdminBackend, kraft_cluster: KRaftCluster, kraft_view: KafkaView, unique_topic: str
) -> None:
    spec: dict[str, Any] = {"partitions": 2, "replicationFactor": 2, "assignment": {"0": [1, 2], "1": [2, 3]}}
    spec["config"] = {"retention.ms": "3600000"}
    created = reconcile_topic(_resource(unique_topic, **spec), backend, previous_status={}, policies=POLICIES)
    assert created.outcome is errors.Reason.CREATED, created.outcome
    assert _kafkas_replicas(kraft_cluster, unique_topic) == {0: [1, 2], 1: [2, 3]}
    assert kraft_view.configs(unique_topic)["retention.ms"] == "3600000"
    status = _merged({}, created)
    again = reconcile_topic(
        _resource(unique_topic, **spec), backend, previous_status=status, policies=POLICIES
    )
    assert again.outcome is errors.Reason.IN_SYNC and again.writes == 0

    spec["config"] = {"retention.ms": "7200000"}
    spec["partitions"], spec["assignment"] = 3, {"0": [1, 2], "1": [2, 3], "2": [3, 1]}
    changed = reconcile_topic(
        _resource(unique_topic, **spec), backend, previous_status=status, policies=POLICIES
    )
    assert changed.outcome is errors.Reason.UPDATED and changed.writes == 2, changed.outcome
    assert sorted(e.reason for e in changed.events) == ["ConfigChanged", "PartitionsAdded"]
    assert wait_for(
        lambda: kraft_view.configs(unique_topic).get("retention.ms") == "7200000", what="the config"
    )
    assert _kafkas_replicas(kraft_cluster, unique_topic) == {0: [1, 2], 1: [2, 3], 2: [3, 1]}
    status = _merged(status, changed)

    resource = _resource(unique_topic, **spec)
    assert delete_topic(resource, backend, marker_written_before=False).marker_written

    def finished() -> DeletionProgress | None:
        progress = delete_topic(resource, backend, marker_written_before=True)
        return progress if progress.done else None

    done = wait_for(finished, what="the deletion to be reported complete")
    assert done.event is not None and done.event.reason == "TopicDeleted"
    wait_for(lambda: unique_topic not in kraft_view.topic_names(), what="Kafka's view without the topic")
    assert backend.writes == 4


def test_kraft_refuses_an_assignment_to_a_broker_it_does_not_know(
    backend: AdminBackend, kraft_view: KafkaView, unique_topic: str
) -> None:
    """ZooKeeper mode accepts any broker id in an explicit assignment; KRaft checks registrations."""
    with pytest.raises(errors.InvalidSpec, match="fix the assignment"):
        backend.create_topic(unique_topic, {0: (1, 9)}, {})
    assert backend.writes == 0 and unique_topic not in kraft_view.topic_names()


def _broker_rate(view: KafkaView, broker: int) -> str | None:
    described = view.admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, str(broker))])
    entry = described["broker"][str(broker)].get(reassignments.LEADER_RATE)
    return None if entry is None else str(entry["value"])


def test_throttles_and_a_reassignment_on_kraft(
    backend: AdminBackend, kraft_cluster: KRaftCluster, kraft_view: KafkaView, unique_topic: str
) -> None:
    rate = {reassignments.LEADER_RATE: "1048576"}
    assert backend.update_entity_config("brokers", "2", lambda c: {**c, **rate})
    described = kraft_view.admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "2")])
    assert described["broker"]["2"][reassignments.LEADER_RATE]["value"] == "1048576"
    assert backend.update_entity_config(
        "brokers", "2", lambda c: {k: v for k, v in c.items() if k not in rate}
    )
    described = kraft_view.admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "2")])
    assert reassignments.LEADER_RATE not in described["broker"]["2"]
    backend.create_topic(unique_topic, {0: (1,)}, {})
    backend.create_reassignment([model.PartitionReassignment(unique_topic, 0, (2, 3))])
    assert wait_for(
        lambda: _kafkas_replicas(kraft_cluster, unique_topic) == {0: [2, 3]},
        what="KRaft to move the partition",
    )
    assert backend.pending_reassignment() is None or all(
        e.topic != unique_topic
        for e in backend.pending_reassignment().value  # type: ignore[union-attr]
    )
    # A cancel that comes after the move finished, or names a topic KRaft does not know, is no error.
    assert backend.can_cancel
    backend.cancel_reassignment(
        [model.TopicPartition(unique_topic, 0), model.TopicPartition(f"{unique_topic}-gone", 0)]
    )
    assert _kafkas_replicas(kraft_cluster, unique_topic) == {0: [2, 3]}
