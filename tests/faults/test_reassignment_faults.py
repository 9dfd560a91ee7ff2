"""The ZooKeeper leader killed (kill -9) while a throttled reassignment batch is in flight."""

from __future__ import annotations

import time

from kazoo.client import KazooClient
from kubernetes import client

from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import fill, reassignment, wait_phase
from tests.faults.conftest import assert_converged_despite_controller_defect

#: Slow enough that a batch (one partition of ~1.5 MB) is still moving when the leader dies.
RATE = 100_000


def _event_reasons(api: client.ApiClient, namespace: str, name: str) -> list[str]:
    events = client.CoreV1Api(api).list_namespaced_event(
        namespace, field_selector=f"involvedObject.name={name}"
    )
    return [str(event.reason) for event in events.items for _ in range(max(1, int(event.count or 1)))]


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
    topic = f"{ns}-moving"
    topics.create(ns, kafkatopic(topic, partitions=3, rf=2))
    topics.wait_ready(ns, topic)
    for partition in range(3):
        fill(kafka_view, topic, count=1500, size=1000, partition=partition)
    described = kafka_view.describe(topic) or {}
    racks = {broker.broker_id: broker.rack for broker in ensemble.stack.brokers.values()}
    wanted = {}
    for partition, data in described.items():
        replicas = list(data["replicas"])
        kept_racks = {racks[b] for b in replicas[1:]}
        # The preferred leader's replica moves to a broker it does not use, on another rack
        # (the default rackPolicy Enforce refuses a plan that puts both replicas on one rack).
        spare = min(b for b in racks if b not in replicas and racks[b] not in kept_racks)
        wanted[partition] = [spare, *replicas[1:]]
    reassignments.create(
        ns,
        reassignment(
            "leader-loss",
            mode="Explicit",
            throttle=RATE,
            batch={"maxPartitions": 1},
            partitions=[{"topic": topic, "partition": p, "replicas": r} for p, r in wanted.items()],
        ),
    )
    running = wait_phase(reassignments, ns, "leader-loss", ("Running", "Failed", "Completed"), timeout=120)
    assert running["status"]["phase"] == "Running", running["status"].get("message")
    leader = ensemble.stack.zookeeper_leader()
    ensemble.stack.kill_zookeeper(leader)
    time.sleep(5)
    ensemble.stack.restart_zookeeper(leader)
    done = wait_phase(reassignments, ns, "leader-loss", ("Completed", "Failed"), timeout=420)
    assert done["status"]["phase"] == "Completed", done["status"].get("message")
    assert {p: d["replicas"] for p, d in (kafka_view.describe(topic) or {}).items()} == wanted
    reasons = _event_reasons(api, ns, "leader-loss")
    assert reasons.count("BatchStarted") == 3, reasons
    assert reasons.count("BatchCompleted") == 3, reasons
    assert_converged_despite_controller_defect(ensemble, api, ns, kafka_view, zk)
