"""runtime.health.HealthReporter on the real stack: watches follow tracking, and do not pile up."""

from __future__ import annotations

import threading
import time
from typing import Any

from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk import znodes_topics
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain import assignment
from kafka_zk_operator.runtime.health import HealthReporter
from tests.integration.helpers import wait_for


def test_untracking_and_tracking_again_leaves_one_set_of_watches(
    kafka_cluster: Any, unique_topic: str
) -> None:
    client: KazooClient = kafka_cluster.zk_client()
    patches: list[tuple[tuple[str, str], dict[str, Any]]] = []
    seen = threading.Event()

    def patcher(ref: tuple[str, str], fields: dict[str, Any]) -> None:
        patches.append((ref, fields))
        seen.set()

    store = ZkStore(client)
    brokers = assignment.brokers_for_assignment(store.live_brokers(), assignment.RackAwareMode.ENFORCED)
    store.create_topic(unique_topic, assignment.assign_replicas_to_brokers(brokers, 2, 3), {})
    reporter = HealthReporter(store, patcher, "test")
    reporter.start()
    topic_path = znodes_topics.topic_path(unique_topic)
    state_path = znodes_topics.partition_state_path(unique_topic, 0)
    watched = client._data_watchers  # kazoo keeps them by full path, chroot included

    def watches(path: str) -> int:
        return len(watched.get(client.chroot + path, ()))

    try:
        ref = ("ns", "t")
        reporter.track(unique_topic, ref)
        wait_for(lambda: watches(state_path), what="the partition state watch")
        reporter.untrack(unique_topic, ref)
        reporter.track(unique_topic, ref)  # before the old watches fired

        # Touch the topic znode (same data, new version) until only one watch is left. kazoo's
        # DataWatch re-registers before it hands the event over, so a watch told to stop ends at
        # its second event (the first may also be the controller writing the topic id); with
        # watches that never end there would be two forever.
        data, _ = client.get(topic_path)
        for _ in range(5):
            if watches(topic_path) == 1:
                break
            client.set(topic_path, data)
            time.sleep(1)
        wait_for(lambda: seen.wait(0.1) and patches, what="a status refresh after the change")
        assert watches(topic_path) == 1, f"{watches(topic_path)} watches on the topic znode"
        assert all(r == ref for r, _ in patches)
    finally:
        reporter.stop()
        client.stop()
        client.close()


def _status_recorder() -> tuple[dict[str, Any], list[dict[str, Any]], Any]:
    """A patcher merging into one status dict, as the API server does for a merge patch."""
    status: dict[str, Any] = {}
    patches: list[dict[str, Any]] = []

    def patcher(ref: tuple[str, str], fields: dict[str, Any]) -> None:
        patches.append(dict(fields))
        for key, value in fields.items():
            if value is None:
                status.pop(key, None)
            else:
                status[key] = value

    return status, patches, patcher


def test_a_refresh_overlapping_a_reconcile_is_repeated_after_the_reconciles_status_write(
    kafka_cluster: Any, unique_topic: str
) -> None:
    """The handler's status comes from a read made before a refresh's: written after it, it
    would show older leaders/ISR until the next event. The reporter is driven by hand (its
    worker thread not started) to make the interleaving exact."""
    client: KazooClient = kafka_cluster.zk_client()
    status, patches, patcher = _status_recorder()
    store = ZkStore(client)
    brokers = assignment.brokers_for_assignment(store.live_brokers(), assignment.RackAwareMode.ENFORCED)
    store.create_topic(unique_topic, assignment.assign_replicas_to_brokers(brokers, 2, 3), {})
    wait_for(lambda: len(store.partition_states(unique_topic, [0, 1])) == 2, what="leaders")
    reporter = HealthReporter(store, patcher, "test")
    ref = ("ns", "t")
    try:
        reporter.track(unique_topic, ref)
        reporter._refresh_one(unique_topic)
        truth = patches[-1]["partitionStates"]
        assert [s["leader"] for s in truth] == [
            s.leader for s in store.partition_states(unique_topic, [0, 1]).values()
        ]

        with reporter.reconciling(unique_topic):
            handler_view = [{**s, "leader": -1, "isr": []} for s in truth]  # read "before"
            reporter._refresh_one(unique_topic)  # a watch-driven refresh meanwhile: nothing new
            patcher(ref, {"partitionStates": handler_view, "offlinePartitions": 2})  # lands last
        assert status["partitionStates"] == handler_view, "the interleaving under test"

        reporter._refresh_one(unique_topic)  # what the worker does next: the topic was marked
        assert status["partitionStates"] == truth and status["offlinePartitions"] == 0

        count = len(patches)
        with reporter.reconciling(unique_topic):  # no overlapping refresh: nothing extra
            pass
        reporter._refresh_one(unique_topic)
        assert len(patches) == count, "an unchanged topic is not written again"
    finally:
        reporter.stop()
        client.stop()
        client.close()


def test_refreshes_keep_under_min_isr_partitions_of_a_topic_with_min_insync_replicas(
    kafka_cluster: Any, unique_topic: str
) -> None:
    """The handler reports underMinIsrPartitions when the topic sets min.insync.replicas; a
    refresh used to drop it (and the next resync to put it back, and so on)."""
    client: KazooClient = kafka_cluster.zk_client()
    status, _, patcher = _status_recorder()
    store = ZkStore(client)
    brokers = assignment.brokers_for_assignment(store.live_brokers(), assignment.RackAwareMode.ENFORCED)
    store.create_topic(
        unique_topic, assignment.assign_replicas_to_brokers(brokers, 2, 3), {"min.insync.replicas": "2"}
    )
    wait_for(lambda: len(store.partition_states(unique_topic, [0, 1])) == 2, what="leaders")
    reporter = HealthReporter(store, patcher, "test")
    try:
        reporter.track(unique_topic, ("ns", "t"))
        reporter._refresh_one(unique_topic)
        assert status["underMinIsrPartitions"] == 0 and status["underReplicatedPartitions"] == 0
    finally:
        reporter.stop()
        client.stop()
        client.close()
