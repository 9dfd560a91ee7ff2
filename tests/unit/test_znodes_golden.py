"""Golden tests: znode bytes captured from a real Kafka 3.9.2 cluster (3 brokers, racks rack-a/b/c).

Captured with kazoo from the stack of ``tests/conftest.py`` after CreateTopics, AlterConfigs,
AlterUserScramCredentials and AlterPartitionReassignments through ``kafka-python``. Kafka orders JSON keys by Scala hash-map
iteration, so several differ in key order from our encoders (which follow the reference's examples):
those compare as parsed JSON; the rest are byte-exact.
"""

from __future__ import annotations

import json

import pytest

from kafka_zk_operator.adapters.zk import znodes

BROKER_1 = (
    b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
    b'"endpoints":["PLAINTEXT://127.0.0.1:36823"],"rack":"rack-a","jmx_port":-1,"port":36823,'
    b'"host":"127.0.0.1","version":5,"timestamp":"1795344406982"}'
)
CONTROLLER = b'{"version":2,"brokerid":1,"timestamp":"1795344407027","kraftControllerEpoch":-1}'
CONTROLLER_EPOCH = b"1"
CLUSTER_ID = b'{"version":"1","id":"oSnX_6W7T6ig0zYPTdih7Q"}'
FEATURE = b'{"features":{},"version":2,"status":1}'
TOPIC = (
    b'{"partitions":{"0":[1,2,3],"1":[2,3,1],"2":[3,1,2]},"topic_id":"9Bgl_BK6RiStZXMlxjQ5Ow",'
    b'"adding_replicas":{},"removing_replicas":{},"version":3}'
)
STATE_1 = b'{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":0,"isr":[2,3,1]}'
TOPIC_CONFIG = b'{"version":1,"config":{"retention.ms":"3600000"}}'
USER_CONFIG = (
    b'{"version":1,"config":{"SCRAM-SHA-256":"salt=eqZTk+/6lOzHGfAbZr5rF3EILxtGVrJR,'
    b"stored_key=01E+EWruDL3k1ZJI0TGM3bvzqwBvd8au7MMKhPfwEnI=,"
    b'server_key=NGVox1MXqzLiNqyD+sxC9lw3axrp8Jy3/Fb7Wt7LPhs=,iterations=4096"}}'
)
#: During a throttled move of partition 0 from broker 1 to broker 2 (AlterPartitionReassignments).
TOPIC_IN_FLIGHT = (
    b'{"partitions":{"0":[2,1]},"topic_id":"_v7mE39sSu6fT7b4C6wvfA","adding_replicas":{"0":[2]},'
    b'"removing_replicas":{"0":[1]},"version":3}'
)
STATE_IN_FLIGHT = b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":1,"isr":[1]}'
BROKER_THROTTLE = b'{"version":1,"config":{"follower.replication.throttled.rate":"1"}}'
TOPIC_THROTTLES = (
    b'{"version":1,"config":{"leader.replication.throttled.replicas":"0:1",'
    b'"follower.replication.throttled.replicas":"0:2"}}'
)
TOPIC_CHANGE = b'{"version":2,"entity_path":"topics/scratch-a0c80c"}'
USER_CHANGE = b'{"version":2,"entity_path":"users/scratch-user"}'


def test_broker_registration() -> None:
    registration = znodes.BrokerIdZNode.decode(BROKER_1, "/brokers/ids/1")
    assert registration.broker.rack == "rack-a"
    assert registration.endpoints == (znodes.Endpoint("PLAINTEXT", "127.0.0.1", 36823, "PLAINTEXT"),)
    assert json.loads(znodes.BrokerIdZNode.encode(registration)) == json.loads(BROKER_1)


def test_controller_epoch_cluster_id_are_byte_exact() -> None:
    assert znodes.ControllerZNode.encode(znodes.ControllerZNode.decode(CONTROLLER)) == CONTROLLER
    assert znodes.ControllerEpochZNode.encode(znodes.ControllerEpochZNode.decode(CONTROLLER_EPOCH)) == b"1"
    assert znodes.ClusterIdZNode.encode(znodes.ClusterIdZNode.decode(CLUSTER_ID)) == CLUSTER_ID


def test_feature() -> None:
    features = znodes.FeatureZNode.decode(FEATURE)
    assert (features.version, features.status, dict(features.features)) == (
        2,
        znodes.FeatureZNodeStatus.ENABLED,
        {},
    )


def test_topic_and_state() -> None:
    topic = znodes.TopicZNode.decode(TOPIC, "/brokers/topics/scratch-a0c80c")
    assert topic.topic_id == "9Bgl_BK6RiStZXMlxjQ5Ow"
    assert dict(topic.partitions) == {0: (1, 2, 3), 1: (2, 3, 1), 2: (3, 1, 2)}
    assert json.loads(znodes.TopicZNode.encode(topic)) == json.loads(TOPIC)
    state = znodes.PartitionStateZNode.decode(
        STATE_1, "/brokers/topics/scratch-a0c80c/partitions/1/state", zk_version=0
    )
    assert (state.leader, state.isr, state.leader_epoch, state.controller_epoch) == (2, (2, 3, 1), 0, 1)


@pytest.mark.parametrize(
    ("data", "path"), [(TOPIC_CONFIG, "/config/topics/t"), (USER_CONFIG, "/config/users/u")]
)
def test_config_entities_are_byte_exact(data: bytes, path: str) -> None:
    assert znodes.ConfigEntityZNode.encode(znodes.ConfigEntityZNode.decode(data, path)) == data


@pytest.mark.parametrize("data", [TOPIC_CHANGE, USER_CHANGE])
def test_notifications_are_byte_exact(data: bytes) -> None:
    path = "/config/changes/config_change_0000000000"
    assert znodes.ConfigChangeZNode.encode(znodes.ConfigChangeZNode.decode(data, path)) == data
