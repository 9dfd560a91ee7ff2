"""adapters.kafka.admin_reassignments against real Kafka 3.9.2 brokers (the shared stack):
throttles on brokers and topics, a throttled reassignment seen while it runs and cancelled, one
that completes, and a preferred-leader election. Kafka's view is read with a plain kafka-python
client (``tests.e2e.kafka_client.KafkaView``), never through the module under test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kafka.admin import ConfigResource, ConfigResourceType

from kafka_zk_operator.adapters.kafka import admin_reassignments as reassignments
from kafka_zk_operator.adapters.kafka.admin_backend import AdminBackend
from kafka_zk_operator.adapters.kafka.admin_results import PartitionMoves
from kafka_zk_operator.domain import errors, model
from tests.conftest import KafkaCluster
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for

THROTTLES = (
    reassignments.LEADER_RATE,
    reassignments.FOLLOWER_RATE,
    reassignments.LEADER_REPLICAS,
    reassignments.FOLLOWER_REPLICAS,
)


@pytest.fixture
def backend(kafka_cluster: KafkaCluster) -> Iterator[AdminBackend]:
    made = AdminBackend(kafka_cluster.bootstrap_servers, client_id="kzo-test-admin-reassignments")
    try:
        yield made
    finally:
        made.close()


def _broker_overrides(kafka: KafkaView, broker: int) -> dict[str, str]:
    """The broker's own dynamic overrides as Kafka reports them."""
    described = kafka.admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, str(broker))])
    return {
        key: data["value"]
        for key, data in described["broker"][str(broker)].items()
        if data["config_source"] == "DYNAMIC_BROKER_CONFIG"
    }


def _without_throttles(config: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in config.items() if key not in THROTTLES}


def _moving(kafka: KafkaView, topic: str) -> dict[int, dict[str, Any]]:
    return {
        tp.partition: entry
        for tp, entry in kafka.admin.list_partition_reassignments().items()
        if tp.topic == topic
    }


def test_throttles_are_set_and_removed_on_brokers_and_topics(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    kafka.create_topic(unique_topic, 1, 2)
    wait_for(lambda: kafka.describe(unique_topic), what="Kafka to know the topic")
    rates = {reassignments.LEADER_RATE: "1048576", reassignments.FOLLOWER_RATE: "2097152"}
    lists = {reassignments.LEADER_REPLICAS: "0:1", reassignments.FOLLOWER_REPLICAS: "0:2"}
    assert reassignments.update_entity_config(backend, "brokers", "1", lambda c: {**c, **rates})
    assert reassignments.update_entity_config(backend, "topics", unique_topic, lambda c: {**c, **lists})
    assert backend.writes == 2
    assert {k: v for k, v in _broker_overrides(kafka, 1).items() if k in rates} == rates
    assert {k: v for k, v in kafka.configs(unique_topic).items() if k in lists} == lists
    assert reassignments.read_entity_config(backend, "topics", unique_topic) == lists
    # The same again, or a change of other keys only: nothing is sent.
    assert not reassignments.update_entity_config(backend, "brokers", "1", lambda c: {**c, **rates})
    assert not reassignments.update_entity_config(
        backend, "topics", unique_topic, lambda c: {**c, "retention.ms": "1000"}
    )
    assert backend.writes == 2 and "retention.ms" not in kafka.configs(unique_topic)
    assert reassignments.update_entity_config(backend, "brokers", "1", _without_throttles)
    assert reassignments.update_entity_config(backend, "topics", unique_topic, _without_throttles)
    assert backend.writes == 4
    assert not set(THROTTLES) & set(_broker_overrides(kafka, 1))
    assert not set(THROTTLES) & set(kafka.configs(unique_topic))
    assert reassignments.read_entity_config(backend, "topics", f"{unique_topic}-gone") is None
    with pytest.raises(errors.TopicBeingDeleted):
        reassignments.update_entity_config(
            backend, "topics", f"{unique_topic}-gone", lambda c: {**c, **lists}
        )


def test_a_throttled_reassignment_is_seen_while_it_runs_and_cancelled(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    kafka.admin.create_topics({unique_topic: {"assignments": {0: [1]}}})
    wait_for(lambda: kafka.describe(unique_topic), what="Kafka to know the topic")
    kafka.produce(unique_topic, [bytes(10_000)] * 200)  # 2 MB: minutes at 1 KB/s
    slow = {reassignments.LEADER_RATE: "1024", reassignments.FOLLOWER_RATE: "1024"}
    for broker in (1, 2):
        reassignments.update_entity_config(backend, "brokers", str(broker), lambda c: {**c, **slow})
    reassignments.update_entity_config(
        backend,
        "topics",
        unique_topic,
        lambda c: {**c, reassignments.LEADER_REPLICAS: "0:1", reassignments.FOLLOWER_REPLICAS: "0:2"},
    )
    try:
        assert reassignments.submit(backend, {(unique_topic, 0): [2]}) == {}
        assert _moving(kafka, unique_topic) == {
            0: {"replicas": [2, 1], "adding_replicas": [2], "removing_replicas": [1]}
        }
        assert reassignments.ongoing(backend, {unique_topic: [0]}) == {
            (unique_topic, 0): PartitionMoves(replicas=(2, 1), adding=(2,), removing=(1,))
        }
        observed = backend.read_topic(unique_topic)
        assert observed.in_reassignment and observed.assignment is not None
        assert dict(observed.assignment.adding_replicas) == {0: (2,)}
        assert dict(observed.assignment.removing_replicas) == {0: (1,)}
        assert observed.assignment.replication_factor == 1
        assert backend.maybe_in_reassignment(unique_topic) == (True, None)
        found = backend.read_assignment(unique_topic)
        assert found is not None
        with pytest.raises(errors.ReassignmentInProgress):
            backend.add_partitions(unique_topic, {1: (3,)}, expected=found)
        assert reassignments.cancel(backend, [(unique_topic, 0), (unique_topic, 0)]) == {}
        wait_for(lambda: not _moving(kafka, unique_topic), what="Kafka to stop the reassignment")
        assert wait_for(lambda: (kafka.describe(unique_topic) or {}).get(0, {}).get("replicas") == [1])
        assert reassignments.cancel(backend, [(unique_topic, 0)]) == {}  # nothing moves: no error
        # The backend's method as the service calls it: a partition that finished (or was cancelled)
        # meanwhile and one whose topic is gone are no error either.
        backend.cancel_reassignment(
            [model.TopicPartition(unique_topic, 0), model.TopicPartition(f"{unique_topic}-gone", 0)]
        )
    finally:
        for broker in (1, 2):
            reassignments.update_entity_config(backend, "brokers", str(broker), _without_throttles)
        reassignments.update_entity_config(backend, "topics", unique_topic, _without_throttles)


def test_a_reassignment_completes_and_the_preferred_leader_is_elected(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    kafka.admin.create_topics({unique_topic: {"assignments": {0: [1], 1: [1]}}})
    wait_for(lambda: kafka.describe(unique_topic), what="Kafka to know the topic")
    assert reassignments.submit(backend, {(unique_topic, 0): [2, 3], (unique_topic, 1): [3, 1]}) == {}
    wait_for(
        lambda: (
            {p: e["replicas"] for p, e in (kafka.describe(unique_topic) or {}).items()}
            == {0: [2, 3], 1: [3, 1]}
            and not _moving(kafka, unique_topic)
        ),
        what="Kafka to complete the reassignment",
    )
    assert not {key for key in reassignments.ongoing(backend) if key[0] == unique_topic}
    # Partition 1 kept its leader 1 (still a replica): the preferred leader is 3.
    wait_for(
        lambda: set((kafka.describe(unique_topic) or {}).get(1, {}).get("isr", [])) == {1, 3}, what="the ISR"
    )
    writes = backend.writes
    refused = reassignments.elect_preferred(backend, {unique_topic: [0, 1]})
    assert refused == {} and backend.writes == writes + 1
    assert wait_for(
        lambda: (kafka.describe(unique_topic) or {}).get(1, {}).get("leader") == 3, what="leader 3"
    )
    assert backend.read_topic(unique_topic).partition_states[1].leader == 3


def test_refused_partitions_are_reported_not_raised(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    kafka.admin.create_topics({unique_topic: {"assignments": {0: [1]}}})
    wait_for(lambda: kafka.describe(unique_topic), what="Kafka to know the topic")
    refused = reassignments.submit(backend, {(unique_topic, 0): [1, 9], (f"{unique_topic}-gone", 0): [1]})
    assert set(refused) == {(unique_topic, 0), (f"{unique_topic}-gone", 0)}
    assert isinstance(refused[(unique_topic, 0)], errors.InvalidSpec)
    assert isinstance(refused[(f"{unique_topic}-gone", 0)], errors.VersionConflict)
    assert backend.writes == 0 and not _moving(kafka, unique_topic)
    elected = reassignments.elect_preferred(backend, {f"{unique_topic}-gone": [0]})
    assert isinstance(elected[(f"{unique_topic}-gone", 0)], errors.VersionConflict)
    with pytest.raises(errors.NotSupported):
        reassignments.read_entity_config(backend, "users", "alice")


def test_the_reassignment_backend_methods_start_list_and_elect(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    """``service.backend.ReassignmentBackend`` as the PartitionReassignment service calls it."""
    kafka.admin.create_topics({unique_topic: {"assignments": {0: [1, 2]}}})
    wait_for(lambda: kafka.describe(unique_topic), what="Kafka to know the topic")
    assert backend.read_entity_config("topics", unique_topic) is None  # no overrides at all
    backend.create_reassignment([model.PartitionReassignment(unique_topic, 0, (3, 2))])
    pending = backend.pending_reassignment()
    assert pending is None or all(e.replicas == (3, 2) for e in pending.value if e.topic == unique_topic)
    wait_for(
        lambda: (kafka.describe(unique_topic) or {}).get(0, {}).get("replicas") == [3, 2], what="the move"
    )
    wait_for(
        lambda: set((kafka.describe(unique_topic) or {}).get(0, {}).get("isr", [])) == {2, 3}, what="the ISR"
    )
    assert backend.create_preferred_election([model.TopicPartition(unique_topic, 0)])
    assert wait_for(
        lambda: (kafka.describe(unique_topic) or {}).get(0, {}).get("leader") == 3, what="leader 3"
    )
    with pytest.raises(errors.InvalidSpec, match=f"{unique_topic}-0"):
        backend.create_reassignment([model.PartitionReassignment(unique_topic, 0, (1, 9))])
    assert backend.update_entity_config(
        "topics", unique_topic, lambda c: {**c, reassignments.LEADER_REPLICAS: "0:3"}
    )
    found = backend.read_topic_config(unique_topic)
    assert found is not None and found.value == {reassignments.LEADER_REPLICAS: "0:3"} and found.version == -1
    assert kafka.configs(unique_topic)[reassignments.LEADER_REPLICAS] == "0:3"
