"""Integration test: our znode codecs read what real Kafka brokers and controllers write.

Kafka writes every znode here through its own mechanisms (broker startup, controller election, the
Admin API via ``kafka-python``: CreateTopics, AlterConfigs, CreatePartitions,
AlterPartitionReassignments); the tests only read ZooKeeper with kazoo,
decode with ``znodes`` and check that re-encoding gives JSON equal in meaning to Kafka's bytes.
Uses the session fixtures of ``tests/conftest.py`` (``kafka_cluster``, ``zk``, ``unique_topic``,
``kafka_cluster_factory``).
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kafka import KafkaProducer, TopicPartition
from kafka.admin import (
    ConfigResource,
    ConfigResourceType,
    KafkaAdminClient,
)
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk import znodes
from kafka_zk_operator.domain import model
from tests.conftest import LEGACY_KAFKA_VERSIONS, kafka_version_tuple
from tests.integration.helpers import alter_topic_config, kafka_tool

pytestmark = pytest.mark.integration

T = TypeVar("T")

#: Older Kafka lines whose own formats we also read (each a separate ZooKeeper-only stack).
OLDER_KAFKA_VERSIONS = ("2.8.2", "2.4.1", "2.3.1", *LEGACY_KAFKA_VERSIONS)


def eventually(probe: Callable[[], T | None], what: str, timeout: float = 60.0) -> T:
    """Poll ``probe`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


def read(zk: KazooClient, path: str) -> tuple[bytes, Any]:
    data, stat = zk.get(path)
    return data, stat


def assert_same_meaning(original: bytes, reencoded: bytes) -> None:
    assert json.loads(reencoded) == json.loads(original), (original, reencoded)


@pytest.fixture
def admin(kafka_cluster: Any) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="kzo-znode-tests")
    try:
        yield client
    finally:
        client.close()


def _create_topic(admin: KafkaAdminClient, topic: str, **options: Any) -> None:
    admin.create_topics({topic: options})


def _wait_for_states(zk: KazooClient, topic: str, partitions: int) -> dict[int, tuple[bytes, Any]]:
    def probe() -> dict[int, tuple[bytes, Any]] | None:
        found = {}
        for p in range(partitions):
            path = znodes.partition_state_path(topic, p)
            if not zk.exists(path):
                return None
            found[p] = read(zk, path)
        return found

    return eventually(probe, f"state znodes of {topic}")


# --------------------------------------------------------------------------- cluster-wide znodes


def test_broker_registrations_are_v5_with_rack_and_endpoints(kafka_cluster: Any, zk: KazooClient) -> None:
    expected = {b.id: b for b in kafka_cluster.brokers}
    live = sorted(int(child) for child in zk.get_children(znodes.BROKER_IDS_PATH))
    assert live == sorted(expected)
    for broker_id, broker in expected.items():
        path = znodes.BrokerIdZNode.path(broker_id)
        data, _ = read(zk, path)
        registration = znodes.BrokerIdZNode.decode(data, path)
        host, port = broker.bootstrap.rsplit(":", 1)
        assert registration.id == broker_id
        assert registration.version == 5
        assert registration.rack == broker.rack
        assert registration.broker.rack in {"rack-a", "rack-b", "rack-c"}
        assert (registration.host, registration.port) == (host, int(port))
        assert registration.endpoints == (znodes.Endpoint("PLAINTEXT", host, int(port), "PLAINTEXT"),)
        assert dict(registration.listener_security_protocol_map or {}) == {"PLAINTEXT": "PLAINTEXT"}
        assert registration.features is not None
        assert abs(registration.timestamp / 1000 - time.time()) < 24 * 3600
        assert_same_meaning(data, znodes.BrokerIdZNode.encode(registration))


def test_controller_is_v2_and_epoch_is_decimal_text(kafka_cluster: Any, zk: KazooClient) -> None:
    data, _ = read(zk, znodes.CONTROLLER_PATH)
    controller = znodes.ControllerZNode.decode(data, znodes.CONTROLLER_PATH)
    assert controller.version == 2
    assert controller.broker_id in {b.id for b in kafka_cluster.brokers}
    assert controller.kraft_controller_epoch == znodes.ZK_CONTROLLER_KRAFT_EPOCH
    assert not controller.is_kraft_controller
    assert znodes.ControllerZNode.encode(controller) == data  # Scala Map4 keeps insertion order: byte-exact

    epoch_data, _ = read(zk, znodes.CONTROLLER_EPOCH_PATH)
    epoch = znodes.ControllerEpochZNode.decode(epoch_data)
    assert epoch >= 1
    assert znodes.ControllerEpochZNode.encode(epoch) == epoch_data
    assert not zk.exists(znodes.MIGRATION_PATH)


def test_cluster_id_is_what_the_brokers_report(zk: KazooClient, admin: KafkaAdminClient) -> None:
    data, _ = read(zk, znodes.CLUSTER_ID_PATH)
    cluster_id = znodes.ClusterIdZNode.decode(data)
    assert cluster_id == admin.describe_cluster()["cluster_id"]
    assert znodes.ClusterIdZNode.encode(cluster_id) == data


def test_feature_znode_written_by_the_controller_decodes(zk: KazooClient) -> None:
    data, _ = read(zk, znodes.FEATURE_PATH)
    features = znodes.FeatureZNode.decode(data)
    assert features.version in (1, 2)
    assert features.status in tuple(znodes.FeatureZNodeStatus)


# --------------------------------------------------------------------------- topics


def test_topic_created_by_a_broker(
    kafka_cluster: Any, zk: KazooClient, admin: KafkaAdminClient, unique_topic: str
) -> None:
    _create_topic(
        admin,
        unique_topic,
        num_partitions=3,
        replication_factor=3,
        configs={"retention.ms": "3600000", "cleanup.policy": "compact"},
    )
    states = _wait_for_states(zk, unique_topic, 3)

    path = znodes.TopicZNode.path(unique_topic)
    data, _ = read(zk, path)
    topic = znodes.TopicZNode.decode(data, path)
    assert topic.version == 3
    assert topic.topic_id is not None and znodes.is_valid_topic_id(topic.topic_id)
    assert sorted(topic.partitions) == [0, 1, 2]
    assert all(sorted(r) == sorted(b.id for b in kafka_cluster.brokers) for r in topic.partitions.values())
    assert not topic.is_reassigning and not topic.extra
    assert_same_meaning(data, znodes.TopicZNode.encode(topic))

    described = admin.describe_topics([unique_topic])[0]
    reported_id = described.get("topic_id")
    if reported_id is not None:  # kafka-python gives a uuid.UUID built from Kafka's 16 bytes
        assert uuid.UUID(bytes=znodes.topic_id_to_bytes(topic.topic_id)) == uuid.UUID(str(reported_id))

    controller_epoch = znodes.ControllerEpochZNode.decode(read(zk, znodes.CONTROLLER_EPOCH_PATH)[0])
    for partition, (state_data, stat) in states.items():
        state_path = znodes.PartitionStateZNode.path(unique_topic, partition)
        state = znodes.PartitionStateZNode.decode(state_data, state_path, zk_version=stat.version)
        assert state.leader == topic.partitions[partition][0]
        assert set(state.isr) == set(topic.partitions[partition])
        assert state.partition_epoch == stat.version
        assert state.leader_recovery_state == znodes.LEADER_RECOVERED
        assert 1 <= state.controller_epoch <= controller_epoch

    config_path = znodes.topic_config_path(unique_topic)
    config_data, _ = read(zk, config_path)
    entity = znodes.ConfigEntityZNode.decode(config_data, config_path)
    assert dict(entity.config) == {"retention.ms": "3600000", "cleanup.policy": "compact"}
    assert_same_meaning(config_data, znodes.ConfigEntityZNode.encode(entity))


def test_topic_created_without_configs_still_has_a_config_znode(
    zk: KazooClient, admin: KafkaAdminClient, unique_topic: str
) -> None:
    _create_topic(admin, unique_topic, num_partitions=1, replication_factor=1)
    _wait_for_states(zk, unique_topic, 1)
    path = znodes.topic_config_path(unique_topic)
    data, _ = read(zk, path)
    assert dict(znodes.ConfigEntityZNode.decode(data, path).config) == {}
    assert_same_meaning(data, znodes.ConfigEntityZNode.encode(znodes.ConfigEntityZNode.decode(data, path)))


def test_adding_partitions_through_kafka_keeps_the_topic_id(
    zk: KazooClient, admin: KafkaAdminClient, unique_topic: str
) -> None:
    _create_topic(admin, unique_topic, num_partitions=2, replication_factor=2)
    _wait_for_states(zk, unique_topic, 2)
    path = znodes.TopicZNode.path(unique_topic)
    before = znodes.TopicZNode.decode(read(zk, path)[0], path)

    admin.create_partitions({unique_topic: 5})
    _wait_for_states(zk, unique_topic, 5)
    data, _ = read(zk, path)
    after = znodes.TopicZNode.decode(data, path)
    assert after.topic_id == before.topic_id
    assert sorted(after.partitions) == [0, 1, 2, 3, 4]
    assert {p: after.partitions[p] for p in before.partitions} == dict(before.partitions)
    assert_same_meaning(data, znodes.TopicZNode.encode(after))


# --------------------------------------------------------------------------- config changes


def _notifications(zk: KazooClient) -> list[tuple[str, znodes.ConfigChangeNotification, bytes]]:
    result = []
    for child in sorted(zk.get_children(znodes.CONFIG_CHANGES_PATH), key=znodes.config_change_sequence):
        path = f"{znodes.CONFIG_CHANGES_PATH}/{child}"
        data, _ = read(zk, path)
        result.append((child, znodes.ConfigChangeZNode.decode(data, path), data))
    return result


def _notification_for(
    zk: KazooClient, entity_path: str, after: int
) -> tuple[znodes.ConfigChangeNotification, bytes]:
    def probe() -> tuple[znodes.ConfigChangeNotification, bytes] | None:
        for child, notification, data in _notifications(zk):
            if znodes.config_change_sequence(child) > after and notification.entity_path == entity_path:
                return notification, data
        return None

    return eventually(probe, f"a config change notification for {entity_path}")


def _last_sequence(zk: KazooClient) -> int:
    children = zk.get_children(znodes.CONFIG_CHANGES_PATH)
    return max((znodes.config_change_sequence(c) for c in children), default=-1)


def test_topic_config_change_writes_full_config_and_a_v2_notification(
    zk: KazooClient, admin: KafkaAdminClient, unique_topic: str
) -> None:
    _create_topic(
        admin, unique_topic, num_partitions=1, replication_factor=3, configs={"retention.ms": "3600000"}
    )
    _wait_for_states(zk, unique_topic, 1)
    last = _last_sequence(zk)

    alter_topic_config(admin, unique_topic, {"max.message.bytes": "2000000"})
    notification, data = _notification_for(zk, f"topics/{unique_topic}", last)
    assert notification.version == znodes.CONFIG_CHANGE_V2
    assert notification.entity_type is znodes.ConfigEntityType.TOPICS
    assert notification.entity_name == unique_topic
    assert znodes.ConfigChangeZNode.encode(notification) == data  # Scala Map2 order: byte-exact

    path = znodes.topic_config_path(unique_topic)
    entity = znodes.ConfigEntityZNode.decode(read(zk, path)[0], path)
    assert entity.config.get("max.message.bytes") == "2000000"
    assert entity.config.get("retention.ms") == "3600000"  # incremental alter keeps the other key


def test_every_pending_notification_decodes(zk: KazooClient) -> None:
    for _child, notification, data in _notifications(zk):
        assert_same_meaning(data, znodes.ConfigChangeZNode.encode(notification))


# --------------------------------------------------------------------------- reassignment


def _fill_partition(bootstrap: str, topic: str, megabytes: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20, batch_size=256 * 1024)
    try:
        payload = b"z" * 1024
        for _ in range(megabytes * 1024):
            producer.send(topic, value=payload, partition=0)
        producer.flush(timeout=60)
    finally:
        producer.close()


def test_in_flight_reassignment_written_by_the_controller(
    kafka_cluster: Any, zk: KazooClient, admin: KafkaAdminClient, unique_topic: str
) -> None:
    """A throttled move keeps the controller's v3 znode with adding/removing replicas observable."""
    source, target = (b.id for b in kafka_cluster.brokers[:2])
    _create_topic(
        admin,
        unique_topic,
        assignments={0: [source]},
        configs={
            "leader.replication.throttled.replicas": f"0:{source}",
            "follower.replication.throttled.replicas": f"0:{target}",
        },
    )
    _wait_for_states(zk, unique_topic, 1)
    _fill_partition(kafka_cluster.bootstrap_servers, unique_topic, megabytes=4)
    last = _last_sequence(zk)
    broker_resource = ConfigResource(
        ConfigResourceType.BROKER, str(target), configs={"follower.replication.throttled.rate": "1"}
    )
    admin.alter_configs([broker_resource], raise_on_unknown=False)  # not a KafkaConfig key
    tp = TopicPartition(unique_topic, 0)
    path = znodes.TopicZNode.path(unique_topic)
    try:
        notification, _ = _notification_for(zk, f"brokers/{target}", last)
        assert notification.entity_type is znodes.ConfigEntityType.BROKERS
        config_path = znodes.broker_config_path(target)
        broker_config = znodes.ConfigEntityZNode.decode(read(zk, config_path)[0], config_path)
        assert broker_config.config.get("follower.replication.throttled.rate") == "1"

        original = znodes.TopicZNode.decode(read(zk, path)[0], path)
        assert dict(original.partitions) == {0: (source,)}
        assert admin.alter_partition_reassignments({tp: [target]}).get(tp) is None

        def moving() -> tuple[bytes, Any] | None:
            data, _ = read(zk, path)
            return (data, znodes.TopicZNode.decode(data, path)) if b'"adding_replicas":{"0"' in data else None

        data, topic = eventually(moving, "the controller to record the reassignment")
        assert topic.version == 3 and topic.topic_id == original.topic_id
        assert dict(topic.partitions) == {0: (target, source)}
        assert dict(topic.adding_replicas) == {0: (target,)}
        assert dict(topic.removing_replicas) == {0: (source,)}
        assert topic.is_reassigning
        assert_same_meaning(data, znodes.TopicZNode.encode(topic))
        listed = admin.list_partition_reassignments([tp])
        assert listed[tp]["adding_replicas"] == [target]
    finally:
        admin.alter_partition_reassignments({tp: None})
        admin.reset_configs(
            [
                ConfigResource(
                    ConfigResourceType.BROKER, str(target), configs=["follower.replication.throttled.rate"]
                )
            ],
            raise_on_unknown=False,
        )

    def reverted() -> model.TopicAssignment | None:
        current = znodes.TopicZNode.decode(read(zk, path)[0], path)
        return current if not current.is_reassigning else None

    back = eventually(reverted, "the cancelled reassignment to be reverted")
    assert dict(back.partitions) == {0: (source,)}

    def throttle_removed() -> znodes.ConfigEntity | None:
        path = znodes.broker_config_path(target)
        entity = znodes.ConfigEntityZNode.decode(read(zk, path)[0], path)
        return entity if "follower.replication.throttled.rate" not in entity.config else None

    eventually(throttle_removed, "the broker throttle to be removed")
    admin.delete_topics([unique_topic])


# --------------------------------------------------------------------------- older Kafka lines


def _kafka_creates_topic(
    cluster: Any, topic: str, partitions: int, rf: int, configs: dict[str, str], workdir: Path
) -> None:
    """Kafka creates the topic: a broker (CreateTopics, 0.10.1+), else Kafka's own topic tool."""
    if kafka_version_tuple(cluster.kafka_version) >= (0, 10, 1):
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, client_id="kzo-znode-tests-old")
        try:
            _create_topic(admin, topic, num_partitions=partitions, replication_factor=rf, configs=configs)
        finally:
            admin.close()
        return
    config_args = [arg for key, value in configs.items() for arg in ("--config", f"{key}={value}")]
    kafka_tool(
        cluster.kafka_version,
        "kafka.admin.TopicCommand",
        cluster.zk_connect,
        workdir,
        *("--create", "--topic", topic, "--partitions", str(partitions)),
        *("--replication-factor", str(rf), *config_args),
    )


def _broker_znode_version_for(kafka_version: tuple[int, ...]) -> int:
    """``/brokers/ids/<id>`` version a broker writes (with ``broker.rack``; IBP = its version)."""
    if kafka_version >= (2, 7):
        return 5
    return 4 if kafka_version >= (0, 10, 2) else 3


@pytest.mark.slow
@pytest.mark.parametrize("version", OLDER_KAFKA_VERSIONS)
def test_older_kafka_lines_write_formats_we_read(
    version: str, kafka_cluster_factory: Any, unique_topic: str, tmp_path: Path
) -> None:
    kafka_version = kafka_version_tuple(version)
    cluster = kafka_cluster_factory(version)
    zk = cluster.zk_client()
    try:
        for broker in cluster.brokers:
            path = znodes.BrokerIdZNode.path(broker.id)
            data, _ = read(zk, path)
            registration = znodes.BrokerIdZNode.decode(data, path)
            assert registration.version == _broker_znode_version_for(kafka_version)
            assert registration.rack == broker.rack
            assert_same_meaning(data, znodes.BrokerIdZNode.encode(registration))

        data, _ = read(zk, znodes.CONTROLLER_PATH)
        controller = znodes.ControllerZNode.decode(data)
        assert controller.version == 1 and controller.kraft_controller_epoch is None
        assert znodes.ControllerZNode.encode(controller) == data

        _kafka_creates_topic(cluster, unique_topic, 2, 2, {"retention.ms": "60000"}, tmp_path)
        _wait_for_states(zk, unique_topic, 2)
        path = znodes.TopicZNode.path(unique_topic)
        expected_version = znodes.topic_znode_version_for(kafka_version)

        def settled() -> tuple[bytes, Any] | None:
            data, _ = read(zk, path)
            topic = znodes.TopicZNode.decode(data, path)
            return (data, topic) if expected_version < 3 or topic.topic_id else None

        data, topic = eventually(settled, f"the {version} topic znode")
        assert topic.version == expected_version
        assert_same_meaning(data, znodes.TopicZNode.encode(topic))
        config_path = znodes.topic_config_path(unique_topic)
        assert dict(znodes.ConfigEntityZNode.decode(read(zk, config_path)[0], config_path).config) == {
            "retention.ms": "60000"
        }
    finally:
        zk.stop()
        zk.close()


#: Znodes Kafka writes that the operator never reads, hence no codec: producer-id blocks and the
#: leaders' ISR-change / log-dir-failure queues that the controller consumes.
_NOT_READ_BY_THE_OPERATOR = re.compile(
    r"/latest_producer_id_block|/(isr_change|log_dir_event)_notification/[^/]+"
)


def _check_znode(path: str, data: bytes, stat: Any) -> str:
    """Decode ``path`` with its codec and check the re-encoding; return the codec's name."""
    if re.fullmatch(r"/brokers/ids/\d+", path):
        assert_same_meaning(data, znodes.BrokerIdZNode.encode(znodes.BrokerIdZNode.decode(data, path)))
        return "BrokerIdZNode"
    if re.fullmatch(r"/brokers/topics/[^/]+", path):
        assert_same_meaning(data, znodes.TopicZNode.encode(znodes.TopicZNode.decode(data, path)))
        return "TopicZNode"
    if re.fullmatch(r"/brokers/topics/[^/]+/partitions/\d+/state", path):
        state = znodes.PartitionStateZNode.decode(data, path, zk_version=stat.version)
        assert json.loads(data) == {  # decode-only codec: every field Kafka wrote is understood
            "version": 1,
            "controller_epoch": state.controller_epoch,
            "leader": state.leader,
            "leader_epoch": state.leader_epoch,
            "isr": list(state.isr),
        }
        return "PartitionStateZNode"
    if path == znodes.CONTROLLER_PATH:
        assert znodes.ControllerZNode.encode(znodes.ControllerZNode.decode(data)) == data
        return "ControllerZNode"
    if path == znodes.CONTROLLER_EPOCH_PATH:
        assert znodes.ControllerEpochZNode.encode(znodes.ControllerEpochZNode.decode(data)) == data
        return "ControllerEpochZNode"
    if path == znodes.CLUSTER_ID_PATH:
        assert znodes.ClusterIdZNode.encode(znodes.ClusterIdZNode.decode(data)) == data
        return "ClusterIdZNode"
    if path == znodes.FEATURE_PATH:
        znodes.FeatureZNode.decode(data)
        return "FeatureZNode"
    if re.fullmatch(r"/config/changes/config_change_\d+", path):
        assert_same_meaning(
            data, znodes.ConfigChangeZNode.encode(znodes.ConfigChangeZNode.decode(data, path))
        )
        return "ConfigChangeZNode"
    if re.fullmatch(r"/config/(topics|clients|users|brokers|ips)/.+", path):
        assert_same_meaning(
            data, znodes.ConfigEntityZNode.encode(znodes.ConfigEntityZNode.decode(data, path))
        )
        return "ConfigEntityZNode"
    if path == znodes.REASSIGN_PARTITIONS_PATH:
        decoded = znodes.ReassignPartitionsZNode.decode(data, path)
        assert_same_meaning(data, znodes.ReassignPartitionsZNode.encode(decoded))
        return "ReassignPartitionsZNode"
    if path == znodes.PREFERRED_REPLICA_ELECTION_PATH:
        elected = znodes.PreferredReplicaElectionZNode.decode(data, path)
        assert_same_meaning(data, znodes.PreferredReplicaElectionZNode.encode(elected))
        return "PreferredReplicaElectionZNode"
    if _NOT_READ_BY_THE_OPERATOR.fullmatch(path):
        return "not read"
    raise AssertionError(f"no codec for {path} = {data!r}")


def _walk(zk: KazooClient, path: str = "/") -> Iterator[tuple[str, bytes, Any]]:
    for child in sorted(zk.get_children(path)):
        child_path = f"{path.rstrip('/')}/{child}"
        data, stat = zk.get(child_path)
        yield child_path, data, stat
        yield from _walk(zk, child_path)


@pytest.mark.slow
@pytest.mark.parametrize("version", OLDER_KAFKA_VERSIONS)
def test_every_znode_an_older_line_writes_decodes_and_round_trips(
    version: str, kafka_cluster_factory: Any, unique_topic: str, tmp_path: Path
) -> None:
    """Kafka writes a topic (broker, controller) and a config change (Kafka's own ZooKeeper tool,
    the writer brokers before 0.11 had no API for); then every znode with data must decode."""
    cluster = kafka_cluster_factory(version)
    zk = cluster.zk_client()
    try:
        _kafka_creates_topic(cluster, unique_topic, 2, 3, {}, tmp_path)
        _wait_for_states(zk, unique_topic, 2)
        last = _last_sequence(zk)
        kafka_tool(
            version,
            "kafka.admin.ConfigCommand",
            cluster.zk_connect,
            tmp_path,
            *("--alter", "--entity-type", "topics", "--entity-name", unique_topic),
            *("--add-config", "retention.ms=7200000"),
        )
        notification, data = _notification_for(zk, f"topics/{unique_topic}", last)
        assert notification.version == znodes.config_change_version_for(kafka_version_tuple(version))
        assert znodes.ConfigChangeZNode.encode(notification) == data

        seen: dict[str, list[str]] = {}
        for path, data, stat in _walk(zk):
            if data:  # Kafka's path-only znodes (/brokers, .../partitions/<p>, markers) hold no data
                seen.setdefault(_check_znode(path, data, stat), []).append(path)
    finally:
        zk.stop()
        zk.close()
    assert len(seen["BrokerIdZNode"]) == len(cluster.brokers)
    assert znodes.TopicZNode.path(unique_topic) in seen["TopicZNode"]
    assert len([p for p in seen["PartitionStateZNode"] if f"/{unique_topic}/" in p]) == 2
    assert znodes.topic_config_path(unique_topic) in seen["ConfigEntityZNode"]
    written = ["ControllerZNode", "ControllerEpochZNode", "ConfigChangeZNode"]
    if kafka_version_tuple(version) >= (0, 10, 1):
        written.append("ClusterIdZNode")  # /cluster/id arrived in 0.10.1 (KIP-78)
    for codec in written:
        assert seen.get(codec), f"Kafka {version} wrote no znode for {codec}"
