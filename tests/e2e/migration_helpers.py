"""Helpers for the ZooKeeper → KRaft migration walk-throughs (forward and rollback): a cluster of
their own served by an operator alone, KafkaTopic status reads, and raw reads of Kafka's znodes.

The znode reads use kazoo directly (Kafka's own records, never the operator's code); the cluster's
steps are ``devstack.migration``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator.devstack.migration import ZkToKRaftMigration
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, serving_alone
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for


@dataclass
class Migrating:
    steps: ZkToKRaftMigration
    operator: OperatorProcess
    view: KafkaView
    figures: dict[str, float] = field(default_factory=dict)

    @property
    def zk_connect(self) -> str:
        stack = self.steps.stack
        return f"{stack.zk_hosts}{stack.spec.chroot}"


@contextmanager
def migrating_cluster(
    kafka_cluster: KafkaCluster,
    operator: OperatorProcess,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
) -> Iterator[Migrating]:
    """A ZooKeeper-mode 3.9 cluster of its own (ZooKeeper + brokers 1-3 in racks rack-a/b/c) and
    ``kzo operator`` serving it alone from a clusters file with ``zookeeper`` and
    ``bootstrapServers`` (the session operator stopped meanwhile)."""
    state = tmp_path_factory.mktemp(name)
    stack = LocalStack(
        StackSpec(with_kubernetes=False), state / "stack", progress=lambda m: print(f"[stack] {m}")
    )
    stack.up()
    steps = ZkToKRaftMigration(stack)
    entry = {
        "name": "migrating",
        "zookeeper": f"{stack.zk_hosts}{stack.spec.chroot}",
        "bootstrapServers": steps.bootstrap_servers,
    }
    migrating: Migrating | None = None
    try:
        with serving_alone(kafka_cluster, operator, state, entry) as process:
            migrating = Migrating(steps, process, KafkaView(steps.bootstrap_servers))
            yield migrating
    finally:
        if migrating is not None:
            migrating.view.close()  # the last one: each step's end opens a new one
        steps.stop()


def status(kts: Resources, namespace: str, name: str) -> dict[str, Any]:
    return ((kts.get(namespace, name) or {}).get("status")) or {}


#: The phases of a migration under way, whose ``KRaftMigration`` condition is ``True``
#: (docs/kraft-migration.md); ``RolledBack`` and ``KRaft`` are over (``False``).
UNDER_WAY = ("MigrationPending", "InitialMetadataCopy", "Hybrid", "DualWrite", "NoController")


def migration_condition(found: dict[str, Any]) -> dict[str, Any] | None:
    """The ``KRaftMigration`` condition of a status, if any."""
    conditions: list[dict[str, Any]] = found.get("conditions") or []
    return next((c for c in conditions if c.get("type") == "KRaftMigration"), None)


def ready_in(
    kts: Resources,
    namespace: str,
    name: str,
    phase: str,
    timeout: float = 120,
    *,
    migrated_before: bool = False,
) -> dict[str, Any]:
    """Ready for the current generation, and reconciled in ``phase``, with the ``KRaftMigration``
    condition of that phase, written in the same patch: none in plain ZooKeeper mode, unless the
    cluster was ``migrated_before`` (a rollback): then ``False`` with reason ``ZooKeeper``."""

    def reached() -> dict[str, Any] | None:
        body = kts.wait_ready(namespace, name, timeout=timeout)
        found: dict[str, Any] = body["status"]
        if found.get("migrationPhase", "ZooKeeper") != phase:
            return None
        condition = migration_condition(found)
        if phase == "ZooKeeper" and not migrated_before:
            assert condition is None, f"{name}: no KRaftMigration condition in ZooKeeper mode"
        else:
            expected = ("True" if phase in UNDER_WAY else "False", phase)
            assert condition is not None and (condition["status"], condition["reason"]) == expected, (
                f"{name}: {condition}"
            )
        return found

    return wait_for(reached, timeout=timeout, what=f"{name} Ready in phase {phase}")


def reopened(m: Migrating) -> KafkaView:
    """A new client after a step restarted the brokers (a client kept across the restarts can go
    on asking a controller the cluster no longer has: ``UnknownBrokerIdError``)."""
    m.view.close()
    m.view = KafkaView(m.steps.bootstrap_servers)
    return m.view


def raw_znode(zk_connect: str, path: str) -> dict[str, Any] | None:
    """The JSON of one of Kafka's znodes, read with a plain kazoo client (None: absent)."""
    zk = KazooClient(hosts=zk_connect, timeout=15)
    zk.start(timeout=15)
    try:
        if not zk.exists(path):
            return None
        data, _ = zk.get(path)
        found: dict[str, Any] = json.loads(data.decode())
        return found
    finally:
        zk.stop()
        zk.close()
