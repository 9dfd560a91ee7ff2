"""adapters.kafka.admin_results: kafka-python 3.x Admin answers (as recorded from Kafka 3.9.2) as
the domain's ObservedTopic, TopicAssignment, PartitionState and Broker values."""

from __future__ import annotations

from typing import Any

from kafka import TopicPartition

from kafka_zk_operator.adapters.kafka import admin_results
from kafka_zk_operator.domain import model

#: ``describe_topics(["ex1"])`` on Kafka 3.9.2 (ZooKeeper mode), partitions in Kafka's order.
DESCRIBED: list[dict[str, Any]] = [
    {
        "authorized_operations": ["READ", "WRITE", "DESCRIBE"],
        "error_code": 0,
        "is_internal": False,
        "name": "ex1",
        "partitions": [
            {"error_code": 0, "isr_nodes": [1, 2], "leader_epoch": 0, "leader_id": 1,
             "offline_replicas": [], "partition_index": 0, "replica_nodes": [1, 2]},
            {"error_code": 0, "isr_nodes": [3, 1], "leader_epoch": 2, "leader_id": 3,
             "offline_replicas": [], "partition_index": 2, "replica_nodes": [3, 1]},
            {"error_code": 0, "isr_nodes": [2], "leader_epoch": 0, "leader_id": -1,
             "offline_replicas": [3], "partition_index": 1, "replica_nodes": [2, 3]},
        ],
        "topic_id": "532c3527-f7ac-452e-81b6-b95676c35383",
    },
    {"error_code": 3, "is_internal": False, "name": "nope", "partitions": [], "topic_id": None},
]  # fmt: skip

#: ``list_partition_reassignments()`` while partition 0 of ex1 moves from [1, 2] to [2, 3].
LISTING = {
    TopicPartition("ex1", 0): {"adding_replicas": [3], "removing_replicas": [1], "replicas": [2, 3, 1]}
}

#: ``describe_configs([ConfigResource(TOPIC, "ex1")])``: an override among the defaults.
CONFIGS = {
    "topic": {
        "ex1": {
            "retention.ms": {"config_source": "DYNAMIC_TOPIC_CONFIG", "is_sensitive": False,
                             "read_only": False, "value": "1000"},
            "min.insync.replicas": {"config_source": "DYNAMIC_BROKER_CONFIG", "read_only": False, "value": "2"},
            "segment.bytes": {"config_source": "STATIC_BROKER_CONFIG", "read_only": False, "value": "1048576"},
            "cleanup.policy": {"config_source": "DEFAULT_CONFIG", "read_only": False, "value": "delete"},
        }
    }
}  # fmt: skip


def test_an_unknown_topic_has_no_entry_and_a_known_one_its_own() -> None:
    assert admin_results.topic_entry(DESCRIBED, "nope") is None
    assert admin_results.topic_entry(DESCRIBED, "other") is None
    entry = admin_results.topic_entry(DESCRIBED, "ex1")
    assert entry is not None and entry["name"] == "ex1"


def test_the_assignment_is_sorted_by_partition_with_the_topic_id() -> None:
    entry = admin_results.topic_entry(DESCRIBED, "ex1")
    assert entry is not None
    assignment = admin_results.topic_assignment(entry, {})
    assert dict(assignment.partitions) == {0: (1, 2), 1: (2, 3), 2: (3, 1)}
    assert list(assignment.partitions) == [0, 1, 2]
    # Kafka's Uuid.toString of that UUID (URL-safe base64 of its 16 bytes, no padding).
    assert assignment.topic_id == "Uyw1J_esRS6BtrlWdsNTgw"
    assert not assignment.is_reassigning and assignment.replication_factor == 2


def test_a_moving_partition_has_the_full_replica_set_with_adding_and_removing_replicas() -> None:
    """As ZooKeeper's topic znode holds it during a reassignment: the target first, then the
    replicas being removed; the replication factor is the one outside the reassignment."""
    entry = admin_results.topic_entry(DESCRIBED, "ex1")
    assert entry is not None
    moves = admin_results.moves_of(LISTING, "ex1")
    assert moves == {0: admin_results.PartitionMoves(replicas=(2, 3, 1), adding=(3,), removing=(1,))}
    assert admin_results.moves_of(LISTING, "other") == {}
    assignment = admin_results.topic_assignment(entry, moves)
    assert assignment.partitions[0] == (2, 3, 1) and assignment.partitions[1] == (2, 3)
    assert dict(assignment.adding_replicas) == {0: (3,)} and dict(assignment.removing_replicas) == {0: (1,)}
    assert assignment.is_reassigning and assignment.replication_factor == 2


def test_partition_states_carry_leader_isr_and_epoch_and_no_leader_as_minus_one() -> None:
    entry = admin_results.topic_entry(DESCRIBED, "ex1")
    assert entry is not None
    states = admin_results.partition_states(entry)
    assert states[2] == model.PartitionState(leader=3, isr=(3, 1), leader_epoch=2, controller_epoch=-1)
    assert states[1].leader == -1 and states[1].isr == (2,)
    assert set(admin_results.partition_states(entry, [0, 7])) == {0}


def test_leaders_are_elected_only_when_every_partition_has_one() -> None:
    entry = admin_results.topic_entry(DESCRIBED, "ex1")
    assert admin_results.leaders_elected(entry, 1)
    assert not admin_results.leaders_elected(entry, 3)  # partition 1 has none
    assert not admin_results.leaders_elected(entry, 4)  # partition 3 is not known yet
    assert not admin_results.leaders_elected(None, 1)


def test_only_the_topics_own_overrides_count_as_its_config() -> None:
    """Broker-wide dynamic and static values are not the topic's (ZooKeeper: not in /config/topics/<t>)."""
    assert admin_results.topic_overrides(CONFIGS, "ex1") == {"retention.ms": "1000"}
    assert admin_results.topic_overrides({"topic": {"nope": {}}}, "nope") == {}
    assert admin_results.topic_overrides({}, "ex1") == {}


def test_config_operations_set_what_differs_delete_what_is_not_wanted_and_nothing_when_equal() -> None:
    current = {"retention.ms": "1000", "cleanup.policy": "compact", "segment.ms": "5"}
    wanted = {"retention.ms": "2000", "segment.ms": "5", "max.message.bytes": "100"}
    assert admin_results.config_operations(current, wanted) == {
        "max.message.bytes": ("SET", "100"),
        "retention.ms": ("SET", "2000"),
        "cleanup.policy": ("DELETE", None),
    }
    assert admin_results.config_operations(current, dict(current)) == {}
    assert admin_results.config_operations({}, {}) == {}


def test_an_observed_topic_has_no_versions_and_an_absent_one_nothing() -> None:
    entry = admin_results.topic_entry(DESCRIBED, "ex1")
    moves = admin_results.moves_of(LISTING, "ex1")
    observed = admin_results.observed_topic(entry, overrides={"retention.ms": "1000"}, moves=moves)
    assert observed.assignment is not None and observed.config == {"retention.ms": "1000"}
    assert observed.in_reassignment and observed.is_reassigning and observed.reassignment_note is None
    assert observed.config_version is None and observed.assignment_version == -1
    assert set(observed.partition_states) == {0, 1, 2}
    assert (
        admin_results.observed_topic(entry, overrides={}, moves={}, with_states=False).partition_states == {}
    )
    unreadable = admin_results.observed_topic(entry, overrides={}, moves={}, reassignment_note="no listing")
    assert unreadable.in_reassignment and unreadable.reassignment_note == "no listing"
    absent = admin_results.observed_topic(None, overrides={"x": "y"}, moves=moves)
    assert absent.assignment is None and absent.config == {} and not absent.in_reassignment


def test_brokers_come_sorted_with_racks_and_fencing() -> None:
    described = {
        "brokers": [
            {"broker_id": 2, "host": "127.0.0.1", "port": 9093, "rack": "rack-b"},
            {"broker_id": 3, "host": "127.0.0.1", "port": 9094, "rack": None, "is_fenced": True},
            {"broker_id": 1, "host": "127.0.0.1", "port": 9092, "rack": "rack-a"},
        ],
        "cluster_id": "S_zSIe-MTbyvutAqe8QbMQ",
        "controller_id": 1,
    }
    brokers = admin_results.brokers_of(described)
    assert [b.broker for b in brokers] == [
        model.Broker(1, "rack-a"),
        model.Broker(2, "rack-b"),
        model.Broker(3),
    ]
    assert [b.fenced for b in brokers] == [False, False, True]
    assert brokers[0].host == "127.0.0.1" and brokers[0].port == 9092
    assert admin_results.brokers_of({}) == []
