"""adapters.kafka.admin_backend.AdminBackend against real Kafka 3.9.2 brokers (the shared stack,
ZooKeeper mode: its brokers run every Admin request themselves). Kafka's view is checked with a
plain kafka-python client (``tests.e2e.kafka_client.KafkaView``), never through the backend."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.kafka.admin_backend import AdminBackend
from kafka_zk_operator.domain import errors, model
from tests.conftest import KafkaCluster
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for


@pytest.fixture
def backend(kafka_cluster: KafkaCluster) -> Iterator[AdminBackend]:
    made = AdminBackend(kafka_cluster.bootstrap_servers, client_id="kzo-test-admin-backend")
    try:
        yield made
    finally:
        made.close()


def _sent_config_changes(backend: AdminBackend, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What the backend's own client sends as IncrementalAlterConfigs, call by call (the real
    call still goes out)."""
    sent: list[dict[str, Any]] = []
    admin = backend._client()
    alter = admin.alter_configs

    def recording(resources: list[Any], **kwargs: Any) -> Any:
        sent.extend(dict(resource.configs) for resource in resources)
        return alter(resources, **kwargs)

    monkeypatch.setattr(admin, "alter_configs", recording)
    return sent


def _replicas(kafka: KafkaView, topic: str) -> dict[int, list[int]] | None:
    described = kafka.describe(topic)
    return None if described is None else {p: entry["replicas"] for p, entry in described.items()}


def test_a_topic_is_created_with_exactly_its_assignment_and_overrides(
    backend: AdminBackend, kafka: KafkaView, zk: KazooClient, unique_topic: str
) -> None:
    assignment = {0: (1, 2), 1: (2, 3), 2: (3, 1)}
    backend.create_topic(unique_topic, assignment, {"retention.ms": "3600000", "cleanup.policy": "compact"})
    assert backend.writes == 1
    assert wait_for(lambda: _replicas(kafka, unique_topic), what="Kafka to know the topic") == {
        0: [1, 2],
        1: [2, 3],
        2: [3, 1],
    }
    configs = wait_for(lambda: kafka.configs(unique_topic), what="a broker that knows the topic's config")
    assert configs["retention.ms"] == "3600000" and configs["cleanup.policy"] == "compact"
    assert backend.wait_for_leaders(unique_topic, 3, timeout=30)
    observed = backend.read_topic(unique_topic)
    assert observed.assignment is not None and dict(observed.assignment.partitions) == assignment
    assert observed.config == {"retention.ms": "3600000", "cleanup.policy": "compact"}
    # Kafka's own text of the id, as the controller wrote it into the topic znode (and Kafka's
    # tools print it): the same string either backend reports in status.topicId.
    znode = json.loads(zk.get(f"/brokers/topics/{unique_topic}")[0])
    assert observed.assignment.topic_id == znode["topic_id"]
    assert set(observed.partition_states) == {0, 1, 2}
    assert all(state.leader == assignment[p][0] for p, state in observed.partition_states.items())
    assert not observed.is_reassigning and not observed.marked_for_deletion
    assert observed.config_version is None and observed.assignment_version == -1


def test_creating_an_existing_or_invalid_topic_is_refused_without_a_write(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    kafka.create_topic(unique_topic, 1, 1)
    with pytest.raises(errors.VersionConflict, match="TOPIC_ALREADY_EXISTS"):
        backend.create_topic(unique_topic, {0: (1,)}, {})
    with pytest.raises(
        errors.InvalidConfig, match=r"Invalid value abc for configuration retention\.ms.*fix spec\.config"
    ):
        backend.create_topic(f"{unique_topic}-c", {0: (1,)}, {"retention.ms": "abc"})
    with pytest.raises(errors.InvalidSpec, match="Duplicate replica assignment"):
        backend.create_topic(f"{unique_topic}-d", {0: (1, 1)}, {})
    with pytest.raises(errors.InvalidTopicName):
        backend.create_topic("bad/name", {0: (1,)}, {})
    assert backend.writes == 0
    assert not {f"{unique_topic}-c", f"{unique_topic}-d"} & kafka.topic_names()


def test_a_config_write_sends_only_the_keys_that_differ_and_nothing_when_equal(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kafka.create_topic(
        unique_topic, 1, 1, {"retention.ms": "1000", "cleanup.policy": "compact", "segment.ms": "600000"}
    )
    wait_for(lambda: kafka.configs(unique_topic).get("segment.ms") == "600000", what="the topic's overrides")
    sent = _sent_config_changes(backend, monkeypatch)
    wanted = {"retention.ms": "2000", "segment.ms": "600000", "max.message.bytes": "100000"}
    backend.write_topic_config(unique_topic, wanted, expected_version=None)
    assert sent == [
        {
            "max.message.bytes": ("SET", "100000"),
            "retention.ms": ("SET", "2000"),
            "cleanup.policy": ("DELETE", None),
        }
    ]
    assert backend.writes == 1
    configs = kafka.configs(unique_topic)
    assert {k: configs.get(k) for k in wanted} == wanted
    assert configs.get("cleanup.policy", "delete") == "delete"  # the override is gone: Kafka's default
    backend.write_topic_config(unique_topic, wanted, expected_version=None)  # the same again
    assert len(sent) == 1 and backend.writes == 1
    assert backend.read_topic(unique_topic).config == wanted


def test_a_refused_config_value_says_what_kafka_said(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    kafka.create_topic(unique_topic, 1, 1)
    wait_for(lambda: kafka.describe(unique_topic), what="Kafka to know the topic")
    with pytest.raises(errors.InvalidConfig, match=r"retention\.ms"):
        backend.write_topic_config(unique_topic, {"retention.ms": "soon"}, expected_version=None)
    assert backend.writes == 0 and "retention.ms" not in kafka.configs(unique_topic)


def test_partitions_grow_with_their_assignment_and_only_ever_grow(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    backend.create_topic(unique_topic, {0: (1, 2)}, {})
    found = backend.read_assignment(unique_topic)
    assert found is not None and found.version == -1 and dict(found.value.partitions) == {0: (1, 2)}
    with pytest.raises(errors.InvalidPartitions):
        backend.add_partitions(unique_topic, {2: (2, 3)}, expected=found)  # a gap
    stale = model.Versioned(model.TopicAssignment(partitions={0: (1, 2), 1: (2, 3)}), -1)
    with pytest.raises(errors.VersionConflict, match="has 1 partitions, not the 2"):
        backend.add_partitions(unique_topic, {2: (3, 1)}, expected=stale)
    backend.add_partitions(unique_topic, {1: (2, 3), 2: (3, 1)}, expected=found)
    assert backend.writes == 2
    assert wait_for(lambda: _replicas(kafka, unique_topic) if len(_replicas(kafka, unique_topic) or {}) == 3 else None,
                    what="Kafka to show 3 partitions") == {0: [1, 2], 1: [2, 3], 2: [3, 1]}  # fmt: skip
    with pytest.raises(errors.VersionConflict):  # planned from one partition: Kafka has three now
        backend.add_partitions(unique_topic, {1: (1, 2)}, expected=found)
    assert backend.writes == 2


def test_a_topic_is_deleted_and_then_reported_gone(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    kafka.create_topic(unique_topic, 2, 2)
    wait_for(lambda: kafka.describe(unique_topic), what="Kafka to know the topic")
    assert not backend.is_marked_for_deletion(unique_topic)  # nobody asked this backend
    assert backend.mark_topic_for_deletion(unique_topic)
    assert backend.writes == 1
    wait_for(lambda: unique_topic not in kafka.topic_names(), what="Kafka to delete the topic")
    assert wait_for(lambda: backend.topic_fully_deleted(unique_topic), what="the backend to see it gone")
    assert not backend.is_marked_for_deletion(unique_topic)
    assert backend.mark_topic_for_deletion(unique_topic) is False  # nothing left to delete
    assert backend.writes == 1 and backend.topics_marked_for_deletion() == []


def test_an_unknown_topic_reads_as_absent_and_is_not_written(
    backend: AdminBackend, unique_topic: str
) -> None:
    observed = backend.read_topic(unique_topic)
    assert observed.assignment is None and observed.config == {} and not observed.marked_for_deletion
    assert backend.read_assignment(unique_topic) is None
    assert backend.partition_states(unique_topic, [0]) == {}
    assert backend.maybe_in_reassignment(unique_topic) == (False, None)
    assert backend.topic_fully_deleted(unique_topic)
    assert backend.wait_for_leaders(unique_topic, 1, timeout=0.3) is False
    with pytest.raises(errors.TopicBeingDeleted):
        backend.write_topic_config(unique_topic, {"retention.ms": "1000"}, expected_version=None)
    expected = model.Versioned(model.TopicAssignment(partitions={0: (1,)}), -1)
    with pytest.raises(errors.VersionConflict, match="disappeared"):
        backend.add_partitions(unique_topic, {1: (2,)}, expected=expected)
    assert backend.writes == 0


def test_the_brokers_and_their_racks_come_from_describe_cluster(
    backend: AdminBackend, kafka_cluster: KafkaCluster, unique_topic: str
) -> None:
    wanted = [model.Broker(b.id, b.rack) for b in sorted(kafka_cluster.brokers, key=lambda b: b.id)]
    assert backend.live_brokers() == wanted
    assert backend.broker_ids() == [b.id for b in wanted]
    observed, registrations = backend.read_topic_and_brokers(unique_topic)
    assert observed.assignment is None and [r.broker for r in registrations] == wanted
    assert unique_topic not in backend.topic_names()


def test_unreachable_servers_are_cluster_unavailable_naming_them() -> None:
    nowhere = "127.0.0.1:1"  # nothing listens on port 1
    backend = AdminBackend(nowhere, client_id="kzo-test-nowhere", timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(errors.ClusterUnavailable, match=f"cannot reach Kafka at {nowhere}"):
        backend.read_topic("t")
    assert time.monotonic() - started < 10
    with pytest.raises(errors.ClusterUnavailable, match=nowhere):
        backend.create_topic("t", {0: (1,)}, {})
    assert backend.writes == 0
