"""A real ZooKeeper → KRaft migration while the operator runs: the resources stay Ready throughout.

A ZooKeeper-mode Kafka 3.9 cluster of its own (ZooKeeper + brokers 1-3 in racks rack-a/b/c; a
migration is one-way, so never the shared stack) is taken through Kafka's documented steps by
``devstack.migration``: the migration controller, the brokers rolled into migration mode (the KRaft
controller takes over), the brokers rolled to KRaft, the controller finalized. The operator serves
it from a clusters file with ``zookeeper`` and ``bootstrapServers``, as docs/kraft-migration.md
says to configure it. In each phase a create, a config change and a partition growth must reach
Kafka, checked with a plain kafka-python client (never the operator's code); a throttled
PartitionReassignment started right before the takeover is carried to completion with no throttle
left on any broker or topic; the operator makes no ZooKeeper write after the takeover (counted in
ZooKeeper's own audit log, by the sessions the operator process holds: ``tests/e2e/zk_audit.py``,
and with the operator's write counter); the topic ids
are unchanged at the end; a stopped broker shows up as under-replicated partitions.

The seconds of each step and how long the initial metadata copy kept writes waiting are printed
as ``[figures]`` (docs/kraft-migration.md, "Measured on the local stack").
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from kafka_zk_operator.devstack.migration import ZkToKRaftMigration
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e import zk_audit
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.e2e.migration_helpers import (
    Migrating,
    migrating_cluster,
    migration_condition,
    ready_in,
    reopened,
    status,
)
from tests.e2e.reassignment_helpers import (
    create_topic,
    explicit_moves,
    fill_slow,
    kafka_broker_throttles,
    kafka_topic_throttles,
    wait_phase,
)
from tests.integration.helpers import wait_for


@pytest.fixture(scope="module")
def migration_operator(
    kafka_cluster: KafkaCluster,
    operator: OperatorProcess,
    crds: None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Migrating]:
    """The cluster to migrate and ``kzo operator`` serving it alone (the session operator stopped)."""
    with migrating_cluster(kafka_cluster, operator, tmp_path_factory, "migration") as migrating:
        yield migrating


class CopyWatch:
    """Polls ``/controller`` and ``/migration`` during step (b): when the KRaft controller claimed
    the cluster and when its copy of the metadata ended (the window in which writes wait)."""

    def __init__(self, steps: ZkToKRaftMigration, audit_log: Path) -> None:
        self.steps = steps
        self.audit_log = audit_log
        self.claimed: float | None = None
        #: The audit log's size when the claim was first seen: writes after it come after the claim.
        self.audit_at_claim: int | None = None
        self.copied: float | None = None
        #: The topic znode of ``moving`` when the claim was first seen (Kafka's own record of a
        #: reassignment in flight: its adding/removing replicas).
        self.moving_at_claim: dict[str, Any] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CopyWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set() and self.copied is None:
            try:
                epoch = (self.steps.znode("/controller") or {}).get("kraftControllerEpoch", -1)
                offset = (self.steps.znode("/migration") or {}).get("kraft_metadata_offset", -1)
            except Exception:  # a ZooKeeper hiccup: ask again
                epoch = offset = -1
            now = time.monotonic()
            if epoch > 0 and self.claimed is None:
                self.claimed = now
                self.audit_at_claim = zk_audit.size(self.audit_log)
                self.moving_at_claim = self.steps.znode("/brokers/topics/moving") or {}
            if epoch > 0 and offset > 0:
                self.copied = now
            time.sleep(0.05)


def _changes_reach_kafka(
    kts: Resources, namespace: str, view: KafkaView, phase: str, *, grow: str, retention: str, create: str
) -> None:
    """A config change of topic a, a growth of ``grow`` by one partition and a new topic, in ``phase``."""
    kts.patch(namespace, "a", {"spec": {"config": {"retention.ms": retention}}})
    partitions = len(view.describe(grow) or {}) + 1
    kts.patch(namespace, grow, {"spec": {"partitions": partitions}})
    kts.create(namespace, kafkatopic(create, partitions=2, rf=2))
    for name in ("a", grow, create):
        ready_in(kts, namespace, name, phase)
    wait_for(lambda: view.configs("a").get("retention.ms") == retention, what=f"a's retention.ms in {phase}")
    wait_for(lambda: len(view.describe(grow) or {}) == partitions, what=f"{grow} grown in {phase}")
    wait_for(lambda: view.describe(create), what=f"{create} created in {phase}")


def _zk_writes(operator: OperatorProcess) -> float:
    return operator.metric_sum("kzo_zookeeper_writes_total")


def test_the_resources_stay_ready_through_a_real_migration(
    migration_operator: Migrating, api_client: client.ApiClient, namespace: str
) -> None:
    m = migration_operator
    kts = Resources(api_client, "kafkatopics")
    kprs = Resources(api_client, "partitionreassignments")
    zookeeper = m.steps.stack.zookeeper
    assert zookeeper is not None and m.operator.pid is not None
    with zk_audit.SessionWatch(zookeeper.port, m.operator.pid) as sessions:
        _walk_through(m, kts, kprs, namespace, zookeeper.audit_log, sessions)


def _walk_through(
    m: Migrating,
    kts: Resources,
    kprs: Resources,
    namespace: str,
    audit_log: Path,
    sessions: zk_audit.SessionWatch,
) -> None:
    view, steps = m.view, m.steps
    started = time.monotonic()

    # ZooKeeper mode.
    kts.create(namespace, kafkatopic("a", partitions=3, rf=3, config={"retention.ms": "3600000"}))
    kts.create(namespace, kafkatopic("b", partitions=2, rf=2))
    ids = {name: ready_in(kts, namespace, name, "ZooKeeper")["topicId"] for name in ("a", "b")}
    assert "migrationPhase" not in status(kts, namespace, "a")

    # (a) The migration controller: pending. ZooKeeper is authoritative; new topics get an id.
    m.figures["controller"] = steps.start_controller()
    _changes_reach_kafka(kts, namespace, view, "MigrationPending", grow="b", retention="1800000", create="c")
    assert status(kts, namespace, "c")["backend"] == "ZooKeeper"
    topic_znode = steps.znode("/brokers/topics/c") or {}
    assert status(kts, namespace, "c")["topicId"] == topic_znode.get("topic_id"), (
        "a topic id Kafka's copy needs"
    )
    ids["c"] = topic_znode["topic_id"]

    # (b) The brokers into migration mode; a throttled reassignment in flight at the takeover.
    create_topic(view, "moving", {0: [1]})
    fill_slow(view, "moving", 0)

    def start_reassignment() -> None:
        # Slow enough to outlast the last broker's restart: past the first MiB (which Kafka lets a
        # throttled replica fetch at once) 0.3 MB at 8 KB/s.
        kprs.create(namespace, explicit_moves("across", "moving", {0: [2]}, throttle=8192))
        wait_for(
            lambda: kafka_topic_throttles(view, "moving").get("follower.replication.throttled.replicas"),
            timeout=60,
            interval=0.2,
            what="the reassignment's throttle before the takeover",
        )

    with CopyWatch(steps, audit_log) as copy:
        m.figures["migration mode"] = steps.enter_migration_mode(before_last_broker=start_reassignment)
    view = reopened(m)
    assert copy.claimed is not None and copy.copied is not None
    assert copy.moving_at_claim.get("adding_replicas"), f"in flight at the takeover: {copy.moving_at_claim}"
    m.figures["writes waiting (initial copy)"] = copy.copied - copy.claimed
    zk_writes_at_takeover = _zk_writes(m.operator)
    done = wait_phase(kprs, namespace, "across", "Completed", timeout=240)
    assert done["status"]["progress"]["partitionsDone"] == 1
    # Its passes saw the migration: the Admin API from the pending phase on (bootstrapServers set).
    assert done["status"].get("backend") == "AdminAPI", done["status"]
    condition = migration_condition(done["status"])
    assert condition is not None and condition["status"] == "True", done["status"].get("conditions")
    assert condition["reason"] == done["status"]["migrationPhase"]
    assert {p: v["replicas"] for p, v in (view.describe("moving") or {}).items()} == {0: [2]}
    wait_for(lambda: kafka_topic_throttles(view, "moving") == {}, what="the topic's throttle removed")
    assert all(kafka_broker_throttles(view, broker) == {} for broker in (1, 2, 3))

    # Hybrid: the Admin API.
    _changes_reach_kafka(kts, namespace, view, "Hybrid", grow="b", retention="900000", create="d")
    assert status(kts, namespace, "d")["backend"] == "AdminAPI"

    # (c) The brokers to KRaft: dual-write.
    m.figures["brokers to KRaft"] = steps.migrate_brokers_to_kraft()
    view = reopened(m)
    _changes_reach_kafka(kts, namespace, view, "DualWrite", grow="c", retention="600000", create="e")
    broker = steps.kraft_brokers[3]
    broker.stop()
    try:
        wait_for(
            lambda: status(kts, namespace, "a").get("underReplicatedPartitions") == 3,
            timeout=60,
            what="a's partitions under-replicated with broker 3 stopped",
        )
    finally:
        broker.start()
    wait_for(lambda: status(kts, namespace, "a").get("underReplicatedPartitions") == 0, timeout=120)

    # (d) Finalized: still the Admin API; a deletion.
    m.figures["finalize"] = steps.finalize()
    view = reopened(m)
    _changes_reach_kafka(kts, namespace, view, "DualWrite", grow="d", retention="300000", create="f")
    kts.delete(namespace, "b")
    wait_for(lambda: "b" not in view.topic_names(), timeout=90, what="Kafka to delete b")

    assert _zk_writes(m.operator) == zk_writes_at_takeover, "no ZooKeeper write after the takeover"
    # ZooKeeper's own account: the operator's sessions wrote before the claim, and nothing after it.
    assert sessions.sessions, "the operator's ZooKeeper sessions, from ZooKeeper's cons"
    assert copy.audit_at_claim is not None
    before = zk_audit.writes(audit_log, sessions=sessions.sessions)
    after = zk_audit.writes(audit_log, since=copy.audit_at_claim, sessions=sessions.sessions)
    assert len(before) > len(after), "the audit log shows the operator's writes before the takeover"
    assert after == [], "ZooKeeper audited writes by the operator after the claim:\n" + "\n".join(
        w.line for w in after[:20]
    )
    m.figures["operator's audited ZooKeeper writes before the claim"] = len(before)
    assert m.operator.metric_sum("kzo_admin_api_writes_total") > 0
    for name, topic_id in ids.items():
        if name != "b":
            assert status(kts, namespace, name)["topicId"] == topic_id, f"{name} kept its topic id"
    m.figures["whole walk-through"] = time.monotonic() - started
    print("[figures] " + json.dumps({k: round(v, 1) for k, v in m.figures.items()}))
