"""ZkStore write guards on a real ZooKeeper and real brokers (issue #15, defects 3 to 6).

- a controller change (a KRaft controller taking over) between the KRaft guard's read and the
  write fails the write: the guard's ``/controller_epoch`` version is checked in the transaction;
- ``/config/brokers/<id>`` is written on Kafka 1.0, whose brokers never create ``/config/brokers``;
- a topic config is never re-created for a topic Kafka deleted (the throttle path included);
- a malformed ``/admin/reassign_partitions`` written by someone else does not stop KafkaTopic
  reconciles: configs are applied, only partition growth waits, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk import znodes_admin
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.adapters.zk.znodes_config import ConfigEntityType
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import assignment
from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.reassignment.throttles import apply_topic_config
from kafka_zk_operator.domain.topic.resource import parse_resource
from kafka_zk_operator.service.reassignment import execution
from kafka_zk_operator.service.topics import TopicPolicies, reconcile_topic
from tests.conftest import KafkaCluster
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import empty_chroot, kafka_tool, wait_for

ZK_CONTROLLER = b'{"version":2,"brokerid":1,"timestamp":"1700000000000","kraftControllerEpoch":-1}'
KRAFT_CONTROLLER = b'{"version":2,"brokerid":3000,"timestamp":"1700000000001","kraftControllerEpoch":5}'


@pytest.fixture
def controlled_chroot(kafka_cluster: KafkaCluster) -> Iterator[KazooClient]:
    """An empty chroot with a ZooKeeper-mode /controller and /controller_epoch, no broker watching."""
    client = empty_chroot(kafka_cluster.zk_hosts, "write-guards")
    for path in (
        "/brokers/topics",
        "/brokers/ids",
        "/config/topics",
        "/config/changes",
        "/admin/delete_topics",
    ):
        client.ensure_path(path)
    client.create("/controller", ZK_CONTROLLER)
    client.create("/controller_epoch", b"1")
    ZkStore(client).create_topic("existing", {0: [1]}, {})
    try:
        yield client
    finally:
        client.stop()
        client.close()


class _KRaftTakesOverAfterTheGuard(ZkStore):
    """The real store; right after its KRaft guard has read ZooKeeper, a KRaft controller claims the
    cluster the way Kafka's migration does (``/controller`` rewritten with a KRaft epoch,
    ``/controller_epoch`` moved on)."""

    def ensure_writable(self) -> int | None:
        version = super().ensure_writable()
        self.client.set("/controller", KRAFT_CONTROLLER)
        self.client.set("/controller_epoch", b"2")
        return version


def _writes(store: ZkStore) -> list[tuple[str, Callable[[], object]]]:
    topic = "guarded"
    return [
        ("create topic", lambda: store.create_topic(topic, {0: [1]}, {"retention.ms": "1000"})),
        (
            "topic config",
            lambda: store.write_entity_config(
                ConfigEntityType.TOPICS,
                "existing",
                {"retention.ms": "5"},
                expected_version=_config_version(store, "existing"),
            ),
        ),
        ("deletion marker", lambda: store.mark_topic_for_deletion(topic)),
        (
            "reassignment",
            lambda: store.create_reassignment([znodes_admin.PartitionReassignment(topic, 0, (1,))]),
        ),
        (
            "preferred election",
            lambda: store.create_preferred_election([znodes_admin.TopicPartition(topic, 0)]),
        ),
    ]


@pytest.mark.parametrize("index", range(5), ids=["create", "config", "marker", "reassignment", "election"])
def test_a_kraft_controller_taking_over_between_guard_and_write_makes_the_write_fail(
    controlled_chroot: KazooClient, index: int
) -> None:
    """Before the fix the guard read /controller and the write went ahead unconditionally."""
    store = _KRaftTakesOverAfterTheGuard(controlled_chroot)
    what, write = _writes(store)[index]
    before = _tree(controlled_chroot)
    with pytest.raises(
        errors.VersionConflict, match="the Kafka controller changed while the operator was writing"
    ):
        write()
    assert store.writes == 0, what
    after = _tree(controlled_chroot)
    assert {p: v for p, v in after.items() if p not in ("/controller", "/controller_epoch")} == {
        p: v for p, v in before.items() if p not in ("/controller", "/controller_epoch")
    }, f"{what}: something was written"
    # The next attempt (the caller re-reads) sees the KRaft controller and writes nothing.
    with pytest.raises(errors.KRaftMigrationDetected):
        _writes(ZkStore(controlled_chroot))[index][1]()


def test_a_controller_change_of_zookeeper_mode_is_retried_not_refused(controlled_chroot: KazooClient) -> None:
    store = ZkStore(controlled_chroot)
    epoch_version = store.ensure_writable()
    controlled_chroot.set("/controller_epoch", b"2")  # a ZooKeeper-mode re-election
    assert epoch_version is not None and store.ensure_writable() == epoch_version + 1
    store.create_topic("after-election", {0: [1]}, {})
    assert controlled_chroot.exists("/brokers/topics/after-election") is not None


def _config_version(store: ZkStore, topic: str) -> int:
    read = store.read_topic_config(topic)
    assert read is not None
    return read.version


def _tree(client: KazooClient, path: str = "/") -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for child in client.get_children(path):
        full = f"{path.rstrip('/')}/{child}"
        found[full] = client.get(full)[0]
        found.update(_tree(client, full))
    return found


# --- /config/brokers on Kafka 1.0 -----------------------------------------------------------------


def test_broker_configs_are_written_on_kafka_1_0_whose_brokers_never_create_config_brokers(
    kafka_cluster_factory: Callable[[str], KafkaCluster], tmp_path: Path
) -> None:
    """Before the fix the NoNode on the parent was retried as a version conflict and ended in
    'kept changing under concurrent writers': a throttled reassignment never started."""
    cluster = kafka_cluster_factory("1.0.2")
    with cluster.zk_session() as client:
        assert client.exists("/config/brokers") is None  # what Kafka 1.0 brokers leave
        store = ZkStore(client)
        rate = {
            "leader.replication.throttled.rate": "1048576",
            "follower.replication.throttled.rate": "1048576",
        }
        assert store.update_entity_config(ConfigEntityType.BROKERS, "1", lambda config: {**config, **rate})
        assert store.writes == 1
    described = kafka_tool(
        "1.0.2",
        "kafka.admin.ConfigCommand",
        cluster.zk_connect,
        tmp_path,
        *("--describe", "--entity-type", "brokers", "--entity-name", "1"),
    )
    assert "leader.replication.throttled.rate=1048576" in described, described
    assert "follower.replication.throttled.rate=1048576" in described, described
    with cluster.zk_session() as client:
        assert sorted(client.get_children("/brokers/ids")) == ["1", "2", "3"]


# --- a deleted topic's config is never re-created ------------------------------------------------


def test_a_topic_kafka_deleted_gets_no_config_back_from_the_throttle_path(
    kafka_cluster: KafkaCluster, zk: KazooClient, unique_topic: str
) -> None:
    """Before the fix a throttle set after Kafka's deletion re-created /config/topics/<t>, and the
    deletion never looked complete (topic_fully_deleted needs all three znodes gone)."""
    store = ZkStore(zk)
    store.create_topic(unique_topic, assignment.assign_replicas_to_brokers(store.live_brokers(), 1, 2), {})
    wait_for(lambda: store.partition_states(unique_topic, [0]), what="the topic's partition state")
    current = store.read_assignment(unique_topic)
    assert current is not None
    replicas = current.value.partitions[0]
    spare = next(b.id for b in store.live_brokers() if b.id not in replicas)
    batch = [PartitionMove(unique_topic, 0, tuple(replicas), (*replicas[1:], spare))]
    record = execution.plan_batch_throttle(store, 1, 1_000_000, batch)
    assert [t.topic for t in record.topics] == [unique_topic]

    store.mark_topic_for_deletion(unique_topic)
    wait_for(lambda: store.topic_fully_deleted(unique_topic), what="Kafka to delete the topic")
    with pytest.raises(errors.TopicBeingDeleted, match="its config is not written"):
        store.update_entity_config(
            ConfigEntityType.TOPICS, unique_topic, partial(apply_topic_config, added=record.topics[0])
        )
    execution.apply_throttle(store, record)  # the brokers' rates are set; the topic is skipped
    assert zk.exists(f"/config/topics/{unique_topic}") is None
    assert store.topic_fully_deleted(unique_topic)
    execution.remove_throttle(store, record)
    for broker in record.brokers:
        config = store.read_entity_config(ConfigEntityType.BROKERS, str(broker.broker))
        assert config is None or "leader.replication.throttled.rate" not in config.value


class _KafkaDeletesTheTopicMeanwhile(ZkStore):
    """The real store; Kafka removes the topic right after the store checked that it exists."""

    def _check_topic_exists(self, tx: Any, topic: str) -> str:
        path = super()._check_topic_exists(tx, topic)
        self.client.delete(f"/brokers/topics/{topic}", recursive=True)
        self.client.delete(f"/config/topics/{topic}")
        return path


def test_a_topic_deleted_between_the_check_and_the_write_gets_no_config(
    controlled_chroot: KazooClient,
) -> None:
    store = _KafkaDeletesTheTopicMeanwhile(controlled_chroot)
    ZkStore(controlled_chroot).create_topic("racing", {0: [1]}, {"retention.ms": "1000"})
    with pytest.raises(errors.TopicBeingDeleted):
        store.update_entity_config(
            ConfigEntityType.TOPICS, "racing", lambda config: {**config, "retention.ms": "2000"}
        )
    assert controlled_chroot.exists("/config/topics/racing") is None
    assert controlled_chroot.get_children("/config/changes") == []


# --- a malformed /admin/reassign_partitions ------------------------------------------------------


def test_a_malformed_reassignment_znode_lets_configs_through_and_holds_partition_growth(
    kafka_cluster_factory: Callable[[str], KafkaCluster], unique_topic: str
) -> None:
    """Before the fix every KafkaTopic reconcile failed with MalformedZnode while it existed."""
    cluster = kafka_cluster_factory("2.8.2")
    policies = TopicPolicies(create_wait_seconds=10)

    def resource(**spec: Any) -> Any:
        body = {"metadata": {"name": unique_topic, "namespace": "ns", "uid": "u", "generation": 1}}
        return parse_resource({**body, "spec": {"partitions": 1, "replicationFactor": 2, **spec}})

    view = KafkaView(cluster.bootstrap_servers)
    with cluster.zk_session() as client:
        store = ZkStore(client)
        created = reconcile_topic(resource(), store, previous_status={}, policies=policies)
        assert created.outcome is errors.Reason.CREATED
        client.create("/admin/reassign_partitions", b'{"version":1,"partitions":[{"topic":')  # cut short
        try:
            changed = reconcile_topic(
                resource(partitions=2, config={"retention.ms": "3600000"}),
                store,
                previous_status=created.status,
                policies=policies,
            )
            assert isinstance(changed.outcome, errors.ReassignmentInProgress), changed.outcome
            assert "once /admin/reassign_partitions can be read" in changed.outcome.message
            assert "znode /admin/reassign_partitions is malformed" in changed.outcome.message
            config_only = reconcile_topic(
                resource(config={"retention.ms": "3600000"}),
                store,
                previous_status=created.status,
                policies=policies,
            )
            assert config_only.outcome is errors.Reason.UPDATED, config_only.outcome
            assert wait_for(lambda: view.configs(unique_topic).get("retention.ms") == "3600000")
            assert len(view.describe(unique_topic) or {}) == 1
        finally:
            client.delete("/admin/reassign_partitions")
            client.delete("/controller")  # the controller stops watching after invalid JSON (8cd3520)
            view.close()


def test_a_topic_znode_over_zookeepers_request_limit_is_refused_without_losing_the_connection(
    controlled_chroot: KazooClient,
) -> None:
    """250,000 partitions make a 4 MB topic znode: ZooKeeper would close the connection instead of
    answering (found by the spec fuzzing, tests/e2e/test_fuzz_specs.py). The store refuses it with
    NotSupported before sending, so the session stays connected and nothing is written; growing a
    topic to that many partitions is refused the same way."""
    states: list[str] = []
    controlled_chroot.add_listener(lambda state: states.append(str(state)))
    store = ZkStore(controlled_chroot)
    with pytest.raises(errors.RequestTooLarge) as refused:
        store.create_topic("huge", {p: [1, 2] for p in range(250_000)}, {"retention.ms": "1000"})
    assert "Topic 'huge' with 250,000 partitions cannot be written to ZooKeeper" in refused.value.message
    existing = store.read_assignment("existing")
    assert existing is not None
    with pytest.raises(errors.RequestTooLarge):
        store.add_partitions("existing", {p: [1, 2] for p in range(1, 250_000)}, expected=existing)
    assert states == [], "the session never lost its connection"
    assert controlled_chroot.exists("/brokers/topics/huge") is None
    assert controlled_chroot.exists("/config/topics/huge") is None
    assert store.read_assignment("existing") == existing
    assert store.writes == 0
