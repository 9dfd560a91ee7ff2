"""ZkStore against real Kafka brokers: what we write is what Kafka's controller acts on."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any

import pytest
from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk import stat_probe, znodes_admin, znodes_config
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.adapters.zk.znodes_config import ConfigEntityType
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import assignment
from tests.conftest import LEGACY_KAFKA_VERSIONS, KafkaCluster
from tests.integration.helpers import empty_chroot, send_outcome, wait_for


def _kafka_assignment(store: ZkStore, partitions: int, rf: int) -> dict[int, list[int]]:
    return assignment.assign_replicas_to_brokers(store.live_brokers(), partitions, rf)


def _all_partitions_led(store: ZkStore, topic: str, partitions: int) -> bool:
    states = store.partition_states(topic, range(partitions))
    return len(states) == partitions and all(s.leader >= 0 for s in states.values())


def _create_and_wait(cluster: KafkaCluster, topic: str, partitions: int = 3, rf: int = 3) -> None:
    with cluster.zk_session() as client:
        store = ZkStore(client)
        store.create_topic(topic, _kafka_assignment(store, partitions, rf), {"retention.ms": "3600000"})
        wait_for(lambda: _all_partitions_led(store, topic, partitions), what=f"leaders for {topic}")


@pytest.mark.parametrize("version", ["3.9.2", "2.8.2"])
def test_created_topic_gets_leaders_and_a_topic_id_from_the_controller(
    version: str,
    kafka_cluster: KafkaCluster,
    kafka_cluster_factory: Callable[[str], KafkaCluster],
    unique_topic: str,
) -> None:
    cluster = kafka_cluster if version == kafka_cluster.kafka_version else kafka_cluster_factory(version)
    with cluster.zk_session() as client:
        store = ZkStore(client)
        writes_before = store.writes
        store.create_topic(unique_topic, _kafka_assignment(store, 6, 3), {"cleanup.policy": "compact"})
        assert store.writes == writes_before + 1, "a create must be exactly one ZooKeeper transaction"

        wait_for(lambda: _all_partitions_led(store, unique_topic, 6), what="partition leaders")
        topic = wait_for(
            lambda: a if (a := store.read_assignment(unique_topic)) and a.value.topic_id else None,
            what="the controller to assign a topic_id",
        )
        assert len(topic.value.topic_id or "") == 22
        states = store.partition_states(unique_topic, range(6))
        for partition, replicas in topic.value.partitions.items():
            assert len(set(replicas)) == 3
            assert set(states[partition].isr) == set(replicas)
            assert states[partition].leader == replicas[0]
        config = store.read_topic_config(unique_topic)
        assert config is not None and config.value == {"cleanup.policy": "compact"}


#: Lines whose controllers only know v1 topic znodes: 2.3.1 and the older ones under test.
PRE_24_KAFKA_VERSIONS = ("2.3.1", *LEGACY_KAFKA_VERSIONS)


@pytest.mark.parametrize("version", PRE_24_KAFKA_VERSIONS)
def test_pre_24_topic_is_created_with_a_v1_znode_and_gets_leaders(
    version: str, kafka_cluster_factory: Callable[[str], KafkaCluster], unique_topic: str
) -> None:
    cluster = kafka_cluster_factory(version)
    with cluster.zk_session() as client:
        store = ZkStore(client)
        assert store.topic_znode_version() == 1  # mirrored from the cluster's own (v1) topics
        store.create_topic(unique_topic, _kafka_assignment(store, 3, 2), {"retention.ms": "3600000"})
        wait_for(lambda: _all_partitions_led(store, unique_topic, 3), what=f"leaders on Kafka {version}")
        read = store.read_assignment(unique_topic)
        assert read is not None and read.value.topic_id is None and read.value.version == 1
        states = store.partition_states(unique_topic, range(3))
        for partition, replicas in read.value.partitions.items():
            assert states[partition].leader == replicas[0]
            assert set(states[partition].isr) == set(replicas)


@pytest.mark.parametrize("version", PRE_24_KAFKA_VERSIONS)
def test_pre_24_controller_creates_partitions_added_by_the_store(
    version: str, kafka_cluster_factory: Callable[[str], KafkaCluster], unique_topic: str
) -> None:
    """Before 1.1 the controller learns of new partitions from a zkclient data watch on the topic."""
    cluster = kafka_cluster_factory(version)
    _create_and_wait(cluster, unique_topic, partitions=1, rf=2)
    with cluster.zk_session() as client:
        store = ZkStore(client)
        before = store.read_assignment(unique_topic)
        assert before is not None
        new = assignment.assign_replicas_to_brokers(
            store.live_brokers(), 2, 2, fixed_start_index=0, start_partition_id=1
        )
        store.add_partitions(unique_topic, new, expected=before)
        wait_for(lambda: _all_partitions_led(store, unique_topic, 3), what=f"new partitions on {version}")
        after = store.read_assignment(unique_topic)
        assert after is not None and after.value.version == 1 and after.value.partition_count == 3
        assert after.value.partitions[0] == before.value.partitions[0]


@pytest.mark.parametrize("version", PRE_24_KAFKA_VERSIONS)
def test_pre_24_brokers_apply_a_config_change_written_by_the_store(
    version: str, kafka_cluster_factory: Callable[[str], KafkaCluster], unique_topic: str
) -> None:
    """The store's v2 ``/config/changes`` notification reaches the brokers: they start refusing
    records above the new ``max.message.bytes`` (Kafka's own behaviour, all lines since 0.10.1)."""
    cluster = kafka_cluster_factory(version)
    _create_and_wait(cluster, unique_topic, partitions=1, rf=2)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1, retries=0)
    try:
        assert (
            wait_for(lambda: send_outcome(producer, unique_topic, 4096), what="a broker's answer")
            == "accepted"
        )
        with cluster.zk_session() as client:
            changed = ZkStore(client).update_entity_config(
                ConfigEntityType.TOPICS, unique_topic, lambda cfg: {**cfg, "max.message.bytes": "1024"}
            )
        assert changed
        refused = wait_for(
            lambda: send_outcome(producer, unique_topic, 4096) == "refused",
            what=f"Kafka {version} to apply max.message.bytes",
        )
        assert refused
        assert (
            wait_for(lambda: send_outcome(producer, unique_topic, 100), what="a broker's answer")
            == "accepted"
        )
    finally:
        producer.close()


@pytest.mark.parametrize("version", PRE_24_KAFKA_VERSIONS)
def test_pre_24_controller_deletes_a_topic_marked_by_the_store(
    version: str, kafka_cluster_factory: Callable[[str], KafkaCluster], unique_topic: str
) -> None:
    cluster = kafka_cluster_factory(version)
    _create_and_wait(cluster, unique_topic, partitions=2, rf=2)
    with cluster.zk_session() as client:
        store = ZkStore(client)
        assert store.mark_topic_for_deletion(unique_topic) is True
        wait_for(
            lambda: store.topic_fully_deleted(unique_topic), timeout=90, what=f"Kafka {version} to delete"
        )
        # the name can be used again at once, with a new assignment
        store.create_topic(unique_topic, _kafka_assignment(store, 1, 2), {})
        wait_for(lambda: _all_partitions_led(store, unique_topic, 1), what="leaders of the re-created topic")


def test_adding_partitions_keeps_the_topic_id_and_new_partitions_get_leaders(
    kafka_cluster: KafkaCluster, zk: KazooClient, unique_topic: str
) -> None:
    _create_and_wait(kafka_cluster, unique_topic, partitions=2)
    store = ZkStore(zk)
    before = wait_for(lambda: a if (a := store.read_assignment(unique_topic)) and a.value.topic_id else None)
    new = assignment.assign_replicas_to_brokers(
        store.live_brokers(), 3, 3, fixed_start_index=0, start_partition_id=2
    )
    store.add_partitions(unique_topic, new, expected=before)
    wait_for(lambda: _all_partitions_led(store, unique_topic, 5), what="leaders for new partitions")
    after = store.read_assignment(unique_topic)
    assert after is not None
    assert after.value.topic_id == before.value.topic_id
    assert after.value.partition_count == 5
    assert {p: after.value.partitions[p] for p in (0, 1)} == dict(before.value.partitions)


def test_a_write_based_on_a_stale_read_is_refused_and_changes_nothing(
    kafka_cluster: KafkaCluster, zk: KazooClient, unique_topic: str
) -> None:
    _create_and_wait(kafka_cluster, unique_topic, partitions=1)
    store = ZkStore(zk)
    stale = wait_for(lambda: a if (a := store.read_assignment(unique_topic)) and a.value.topic_id else None)
    fresh_partitions = assignment.assign_replicas_to_brokers(store.live_brokers(), 1, 3, start_partition_id=1)
    store.add_partitions(unique_topic, fresh_partitions, expected=stale)
    second = assignment.assign_replicas_to_brokers(store.live_brokers(), 1, 3, start_partition_id=1)
    with pytest.raises(errors.VersionConflict):
        store.add_partitions(unique_topic, second, expected=stale)
    current = store.read_assignment(unique_topic)
    assert current is not None and current.value.partition_count == 2


def test_concurrent_config_writers_lose_no_update(kafka_cluster: KafkaCluster, unique_topic: str) -> None:
    _create_and_wait(kafka_cluster, unique_topic, partitions=1)
    writers = 6
    failures: list[BaseException] = []

    def writer(index: int) -> None:
        try:
            with kafka_cluster.zk_session() as client:
                store = ZkStore(client)
                for round_ in range(3):
                    key = f"x-test-{index}-{round_}"

                    def add_key(cfg: dict[str, str], key: str = key) -> dict[str, str]:
                        return {**cfg, key: "1"}

                    store.update_entity_config(ConfigEntityType.TOPICS, unique_topic, add_key, attempts=50)
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    with kafka_cluster.zk_session() as client:
        config = ZkStore(client).read_topic_config(unique_topic)
    assert config is not None
    expected = {f"x-test-{i}-{r}" for i in range(writers) for r in range(3)}
    assert expected <= set(config.value), f"lost updates: {sorted(expected - set(config.value))}"
    assert config.value["retention.ms"] == "3600000"


def test_config_change_is_applied_by_the_brokers(
    kafka_cluster: KafkaCluster, zk: KazooClient, unique_topic: str
) -> None:
    _create_and_wait(kafka_cluster, unique_topic, partitions=1)
    store = ZkStore(zk)
    current = store.read_topic_config(unique_topic)
    assert current is not None
    store.write_entity_config(
        ConfigEntityType.TOPICS,
        unique_topic,
        {"retention.ms": "7200000", "max.message.bytes": "2000000"},
        expected_version=current.version,
    )
    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers)
    try:

        def broker_view() -> dict[str, str] | None:
            result = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, unique_topic)])
            # kafka-python 3: {resource_type: {resource_name: {config_key: {config data}}}}
            per_topic = next(iter(result.values()))[unique_topic]
            entries = {
                key: data["value"] if isinstance(data, dict) else data for key, data in per_topic.items()
            }
            return entries if entries.get("retention.ms") == "7200000" else None

        entries = wait_for(broker_view, what="the broker to report the new retention.ms")
        assert entries["max.message.bytes"] == "2000000"
    finally:
        admin.close()


def test_creating_an_existing_topic_is_a_retryable_conflict_and_leaves_it_untouched(
    kafka_cluster: KafkaCluster, zk: KazooClient, unique_topic: str
) -> None:
    """Someone else created it between our read and our create: retry, i.e. re-read and adopt."""
    _create_and_wait(kafka_cluster, unique_topic, partitions=1)
    store = ZkStore(zk)
    before = store.read_topic_config(unique_topic)
    with pytest.raises(errors.VersionConflict, match="created by someone else") as raised:
        store.create_topic(unique_topic, {0: [1, 2, 3]}, {"retention.ms": "1"})
    assert raised.value.retryable
    after = store.read_topic_config(unique_topic)
    assert before == after


def test_a_create_from_a_read_a_config_writer_overtook_is_refused_and_writes_nothing(
    kafka_cluster: KafkaCluster, zk: KazooClient, unique_topic: str
) -> None:
    """``create_topic(observed=...)`` takes the config version from the caller's read instead of
    reading it again: a leftover config (an interrupted create) rewritten after that read fails
    the transaction, which then wrote neither znode; from a fresh read the create replaces it."""
    store = ZkStore(zk)
    config_path, topic_path = f"/config/topics/{unique_topic}", f"/brokers/topics/{unique_topic}"
    zk.create(config_path, b'{"version":1,"config":{"retention.ms":"5000"}}')
    observed = store.read_topic(unique_topic)
    assert observed.assignment is None and observed.config_version == 0
    zk.set(config_path, b'{"version":1,"config":{"retention.ms":"6000"}}')  # after the read
    with pytest.raises(errors.VersionConflict):
        store.create_topic(unique_topic, {0: [1, 2, 3]}, {"retention.ms": "7000"}, observed=observed)
    assert zk.exists(topic_path) is None
    assert store.read_topic_config(unique_topic).value == {"retention.ms": "6000"}  # type: ignore[union-attr]
    store.create_topic(
        unique_topic, {0: [1, 2, 3]}, {"retention.ms": "7000"}, observed=store.read_topic(unique_topic)
    )
    wait_for(lambda: _all_partitions_led(store, unique_topic, 1), what=f"leaders for {unique_topic}")
    assert store.read_topic_config(unique_topic).value == {"retention.ms": "7000"}  # type: ignore[union-attr]


def test_marking_for_deletion_makes_kafka_remove_topic_and_config(
    kafka_cluster: KafkaCluster, zk: KazooClient, unique_topic: str
) -> None:
    _create_and_wait(kafka_cluster, unique_topic, partitions=2)
    store = ZkStore(zk)
    assert store.mark_topic_for_deletion(unique_topic) is True
    assert store.mark_topic_for_deletion(unique_topic) in (True, False)
    wait_for(lambda: store.topic_fully_deleted(unique_topic), timeout=90, what="Kafka to delete the topic")


def test_nothing_is_written_when_the_cluster_migrates_to_kraft(kafka_cluster: KafkaCluster) -> None:
    client = empty_chroot(kafka_cluster.zk_hosts, "kraft-guard")  # no brokers see it
    try:
        client.ensure_path("/brokers/topics")
        client.create(
            "/migration",
            b'{"version":0,"kraft_controller_id":3000,"kraft_controller_epoch":1,'
            b'"kraft_metadata_offset":1,"kraft_metadata_epoch":1}',
        )
        store = ZkStore(client)
        with pytest.raises(errors.KRaftMigrationDetected):
            store.create_topic("any-topic", {0: [1]}, {})
        assert client.exists("/brokers/topics/any-topic") is None
        assert store.writes == 0
    finally:
        client.stop()
        client.close()


@pytest.mark.parametrize("expected_partitions", [0, 1, 3, 5])
def test_reads_sent_ahead_find_what_reads_one_at_a_time_find(
    kafka_cluster: KafkaCluster, zk: KazooClient, unique_topic: str, expected_partitions: int
) -> None:
    """A topic read with its reads sent together (whatever partition count the caller expects:
    none, too few, right, too many) is the topic read one znode at a time, leaders and ISR that
    Kafka's controller wrote included; and Kafka's own client sees the same partitions."""
    _create_and_wait(kafka_cluster, unique_topic, partitions=3)
    store = ZkStore(zk)
    wait_for(  # settled: no ISR change between the two reads compared below
        lambda: all(len(s.isr) == 3 for s in store.partition_states(unique_topic, range(3)).values()),
        what=f"full ISR for {unique_topic}",
    )

    class _OneAtATime(ZkStore):
        def reading_ahead(self, *reads: object) -> Any:  # nothing sent ahead
            return contextlib.nullcontext()

    alone = _OneAtATime(zk).read_topic(unique_topic)
    together = store.read_topic(unique_topic, expected_partitions=expected_partitions)
    assert together == alone
    assert sorted(together.partition_states) == [0, 1, 2]
    assert all(state.leader >= 0 and state.isr for state in together.partition_states.values())
    leaders = {p: s.leader for p, s in together.partition_states.items()}
    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, request_timeout_ms=20000)
    try:  # the broker answering learns of the leaders a moment after ZooKeeper holds them
        wait_for(
            lambda: (
                {
                    p["partition_index"]: p["leader_id"]
                    for p in admin.describe_topics([unique_topic])[0]["partitions"]
                }
                == leaders
            ),
            what=f"Kafka's metadata showing the leaders of {unique_topic}",
        )
    finally:
        admin.close()
    missing = store.read_topic(unique_topic + "-none", expected_partitions=expected_partitions)
    assert missing.assignment is None and missing.partition_states == {}


@pytest.mark.parametrize("expected_partitions", [0, 3], ids=["two-round-trips", "one-round-trip"])
def test_a_reads_own_stamps_are_what_a_probe_finds(
    kafka_cluster: KafkaCluster, zk: KazooClient, unique_topic: str, expected_partitions: int
) -> None:
    """The stamps a reconcile's read records from its own answers (``read_stamps``) are the ones a
    probe asks of every znode the read depends on (the next resync compares the two), however
    many round trips the read took; a config write moves the config znode's."""
    _create_and_wait(kafka_cluster, unique_topic, partitions=3)
    store = ZkStore(zk)
    wait_for(
        lambda: all(len(s.isr) == 3 for s in store.partition_states(unique_topic, range(3)).values()),
        what=f"full ISR for {unique_topic}",
    )
    paths = store.topic_read_paths(unique_topic, 3)
    with store.recording_stamps() as read:
        store.read_topic_and_brokers(unique_topic, expected_partitions=expected_partitions)
    recorded = read.of(paths)
    assert recorded is not None and recorded == asyncio.run(stat_probe.stamps(zk, paths))
    assert recorded[paths.index(znodes_admin.delete_topic_path(unique_topic))] is None, "absent: found absent"

    config = store.read_topic_config(unique_topic)
    assert config is not None
    store.write_entity_config(
        ConfigEntityType.TOPICS,
        unique_topic,
        {**config.value, "retention.ms": "7200000"},
        expected_version=config.version,
    )
    moved = asyncio.run(stat_probe.stamps(zk, paths))
    assert moved is not None
    changed = [path for path, old, new in zip(paths, recorded, moved, strict=True) if old != new]
    assert changed == [znodes_config.ConfigEntityZNode.path(ConfigEntityType.TOPICS, unique_topic)]
    with store.recording_stamps() as again:
        store.read_topic_and_brokers(unique_topic, expected_partitions=3)
    assert again.of(paths) == moved
