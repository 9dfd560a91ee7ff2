"""The ZooKeeper leader killed (kill -9) while a throttled reassignment batch is in flight."""

from __future__ import annotations

import time

from kazoo.client import KazooClient
from kubernetes import client

from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import wait_phase
from tests.faults.conftest import assert_converged_despite_controller_defect
from tests.faults.moves import BatchRecorder, event_reasons, start_throttled_moves


def test_zookeeper_leader_killed_during_a_reassignment_batch(
    ensemble: KafkaCluster,
    api: client.ApiClient,
    topics: Resources,
    reassignments: Resources,
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
    fourth_broker: int,
) -> None:
    """Promise: killing the ZooKeeper leader while a throttled batch is in flight starts no batch
    twice and leaves no throttle or reassignment znode behind: the reassignment completes with every
    partition on exactly the replicas asked for."""
    with BatchRecorder(zk) as recorded:
        topic, wanted = start_throttled_moves(
            ensemble, topics, reassignments, kafka_view, zk, ns, "leader-loss"
        )
        leader = ensemble.stack.zookeeper_leader()
        ensemble.stack.kill_zookeeper(leader)
        time.sleep(5)
        ensemble.stack.restart_zookeeper(leader)
        done = wait_phase(reassignments, ns, "leader-loss", ("Completed", "Failed"), timeout=420)
    assert done["status"]["phase"] == "Completed", done["status"].get("message")
    assert {p: d["replicas"] for p, d in (kafka_view.describe(topic) or {}).items()} == wanted
    recorded.check(expected=3)
    reasons = event_reasons(api, ns, "leader-loss")
    assert reasons.count("BatchStarted") == 3, reasons
    assert reasons.count("BatchCompleted") == 3, reasons
    assert_converged_despite_controller_defect(ensemble, api, ns, kafka_view, zk)
