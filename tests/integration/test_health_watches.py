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
