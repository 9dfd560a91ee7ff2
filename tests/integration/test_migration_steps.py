"""A real ZooKeeper → KRaft migration with the devstack's steps (``devstack.migration``), on a fresh
ZooKeeper-mode Kafka 3.9 cluster of its own (ZooKeeper + brokers 1-3 in racks rack-a/b/c; a
migration is one-way, so never the shared stack).

A topic created through Kafka's Admin API with an explicit assignment is taken through the four
steps; after each, the test reads ZooKeeper with kazoo for Kafka's sign of the phase (``/migration``,
``/controller``, ``/brokers/ids``), and at the end checks with a Kafka client that the topic kept its
topic id (the one in its ZooKeeper topic znode before the migration), its assignment, and that the
brokers kept their racks. The seconds each step took are printed as ``[figures]``.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_zk_operator.devstack.migration import ZkToKRaftMigration
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec
from tests.integration.helpers import wait_for

TOPIC = "migrated-orders"
ASSIGNMENT = {0: [1, 2], 1: [2, 3], 2: [3, 1]}


def _kafka_topic_id(value: Any) -> str:
    """A topic id as ZooKeeper's topic znode writes it (Kafka's ``Uuid.toString``: URL-safe base64
    without padding), from kafka-python's answer (``uuid.UUID`` text: 8-4-4-4-12 hex digits)."""
    return base64.urlsafe_b64encode(uuid.UUID(str(value)).bytes).decode().rstrip("=")


@pytest.fixture
def migration(tmp_path: Path) -> Iterator[ZkToKRaftMigration]:
    stack = LocalStack(
        StackSpec(with_kubernetes=False), tmp_path / "stack", progress=lambda m: print(f"[stack] {m}")
    )
    stack.up()
    steps = ZkToKRaftMigration(stack)
    try:
        yield steps
    finally:
        steps.stop()


def _describe(bootstrap: str) -> tuple[dict[str, Any], dict[str, Any]]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)
    try:
        topic = next(t for t in admin.describe_topics([TOPIC]))
        return topic, admin.describe_cluster()
    finally:
        admin.close()


def test_a_topic_keeps_its_id_through_the_four_migration_steps(migration: ZkToKRaftMigration) -> None:
    wall = time.monotonic()
    admin = KafkaAdminClient(bootstrap_servers=migration.bootstrap_servers, request_timeout_ms=20000)
    try:
        admin.create_topics(
            [NewTopic(TOPIC, num_partitions=-1, replication_factor=-1, replica_assignments=ASSIGNMENT)]
        )
    finally:
        admin.close()
    before = wait_for(lambda: migration.znode(f"/brokers/topics/{TOPIC}"), what="the topic znode")
    assert {int(p): r for p, r in before["partitions"].items()} == ASSIGNMENT
    topic_id = before["topic_id"]
    assert migration.znode("/migration") is None
    took: dict[str, float] = {}

    took["a: start the migration controller"] = migration.start_controller()
    assert migration.znode("/migration") == {
        "version": 0,
        "kraft_controller_id": -1,
        "kraft_controller_epoch": -1,
        "kraft_metadata_offset": -1,
        "kraft_metadata_epoch": -1,
    }
    controller = migration.znode("/controller")
    assert controller is not None and controller["kraftControllerEpoch"] == -1  # still a ZK broker
    assert controller["brokerid"] in (1, 2, 3)

    took["b: brokers into migration mode"] = migration.enter_migration_mode()
    controller, state = migration.znode("/controller"), migration.znode("/migration")
    assert (
        controller is not None and controller["brokerid"] == 3000 and controller["kraftControllerEpoch"] > 0
    )
    assert state is not None and state["kraft_controller_id"] == 3000 and state["kraft_metadata_offset"] > 0
    assert migration.registered_brokers() == [1, 2, 3]  # hybrid: the brokers still run in ZooKeeper mode
    copied_at = state["kraft_metadata_offset"]

    took["c: brokers to KRaft"] = migration.migrate_brokers_to_kraft()
    assert migration.registered_brokers() == []  # dual-write: KRaft brokers never register in ZooKeeper
    state = migration.znode("/migration")
    assert state is not None and state["kraft_metadata_offset"] >= copied_at

    took["d: finalize"] = migration.finalize()
    topic, cluster = _describe(migration.bootstrap_servers)
    assert _kafka_topic_id(topic["topic_id"]) == topic_id
    assert {p["partition_index"]: p["replica_nodes"] for p in topic["partitions"]} == ASSIGNMENT
    assert {b["broker_id"]: b["rack"] for b in cluster["brokers"]} == {1: "rack-a", 2: "rack-b", 3: "rack-c"}

    print(f"[figures] ZooKeeper -> KRaft migration of 3 brokers: {time.monotonic() - wall:.1f} s in all")
    for step, seconds in took.items():
        print(f"  {step}: {seconds:.1f} s")
