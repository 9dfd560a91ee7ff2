"""The migration-phase probe and write guard on the real stack's ZooKeeper (issue #54, first step).

A throw-away chroot, which no broker watches, is walked through a ZooKeeper → KRaft migration the
way Kafka 3.9 writes its znodes in each phase (the bytes are Kafka's own: ``/migration`` and
``/controller`` as ``MigrationZNode.encode`` / ``ControllerZNode.encode`` of the 3.9.2 jars return
them, broker registrations as a 3.9 broker writes them, the KRaft claim as the one multi of
``KafkaZkClient.tryRegisterKRaftControllerAsActiveController``). At each phase the store's guard
detects it, and a topic create lands or is refused, as the phase says. What landed is read back
with kazoo and ``json`` only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.migration.phase import Phase, PhaseDecision
from tests.conftest import KafkaCluster
from tests.integration.helpers import empty_chroot
from tests.unit.test_znodes_cluster import MIGRATION as MIGRATION_COPIED
from tests.unit.test_znodes_cluster import MIGRATION_CLAIMED, MIGRATION_CREATED

KRAFT_CONTROLLER = b'{"version":2,"brokerid":3000,"timestamp":"1700000000100","kraftControllerEpoch":1}'


def _zk_controller(broker_id: int) -> bytes:
    return (
        f'{{"version":2,"brokerid":{broker_id},"timestamp":"1700000000000","kraftControllerEpoch":-1}}'
    ).encode()


def _registration(broker_id: int) -> bytes:
    """``/brokers/ids/<id>`` of a 3.9 ZooKeeper-mode broker, with or without the migration flag."""
    return (
        '{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        f'"endpoints":["PLAINTEXT://127.0.0.1:{9090 + broker_id}"],"rack":"rack-{broker_id}",'
        f'"jmx_port":-1,"port":{9090 + broker_id},"host":"127.0.0.1","version":5,'
        '"timestamp":"1700000000000"}'
    ).encode()


@pytest.fixture
def chroot(kafka_cluster: KafkaCluster) -> Iterator[KazooClient]:
    """A chroot as three ZooKeeper-mode 3.9 brokers leave it: Kafka's persistent paths, broker 1
    elected (ephemeral ``/controller``, epoch 1), all three registered (ephemeral)."""
    client = empty_chroot(kafka_cluster.zk_hosts, "migration-probe")
    for path in ("/brokers/topics", "/config/topics", "/config/changes", "/admin/delete_topics"):
        client.ensure_path(path)
    client.create("/brokers/ids", b"")
    for broker_id in (1, 2, 3):
        client.create(f"/brokers/ids/{broker_id}", _registration(broker_id), ephemeral=True)
    client.create("/controller_epoch", b"1")
    client.create("/controller", _zk_controller(1), ephemeral=True)
    try:
        yield client
    finally:
        client.stop()
        client.close()


def _claim(client: KazooClient) -> None:
    """The KRaft leader's claim: one multi, epoch bumped at its version, ``/controller`` persistent."""
    epoch, epoch_stat = client.get("/controller_epoch")
    _, controller_stat = client.get("/controller")
    tx = client.transaction()
    tx.set_data("/controller_epoch", str(int(epoch) + 1).encode(), version=epoch_stat.version)
    tx.delete("/controller", version=controller_stat.version)
    tx.create("/controller", KRAFT_CONTROLLER)
    assert not [result for result in tx.commit() if isinstance(result, Exception)]


class _Phases:
    def __init__(self, store: ZkStore) -> None:
        self.seen: list[PhaseDecision] = []
        store.on_phase = self.seen.append


def _create(store: ZkStore, client: KazooClient, topic: str) -> dict[str, object]:
    writes = store.writes
    store.create_topic(topic, {0: [1, 2], 1: [2, 3]}, {"retention.ms": "60000"})
    assert store.writes == writes + 1
    document: dict[str, object] = json.loads(client.get(f"/brokers/topics/{topic}")[0])
    return document


def _phase(store: ZkStore) -> Phase:
    assert store.migration_phase is not None
    return store.migration_phase.phase


def _refused(store: ZkStore, client: KazooClient, topic: str, expected: Phase) -> str:
    writes = store.writes
    with pytest.raises(errors.KRaftMigrationDetected) as refused:
        store.create_topic(topic, {0: [1]}, {})
    assert refused.value.retryable
    assert refused.value.phase == expected.value
    assert store.writes == writes
    assert client.exists(f"/brokers/topics/{topic}") is None
    assert client.exists(f"/config/topics/{topic}") is None
    return refused.value.message


def test_a_migration_walked_through_its_phases_is_detected_and_guards_every_write(
    chroot: KazooClient,
) -> None:
    store = ZkStore(chroot)
    phases = _Phases(store)

    # ZooKeeper mode: created as before, the topic id left to Kafka's controller.
    assert "topic_id" not in _create(store, chroot, "in-zk-mode")
    assert _phase(store) is Phase.ZOOKEEPER

    # The first migration-enabled controller starts: /migration with every field -1.
    chroot.create("/migration", MIGRATION_CREATED)
    pending = _create(store, chroot, "while-pending")
    assert pending["version"] == 3
    assert isinstance(pending["topic_id"], str) and len(pending["topic_id"]) == 22
    assert _phase(store) is Phase.MIGRATION_PENDING

    # The KRaft leader claims /controller, then writes its id and epoch to /migration.
    _claim(chroot)
    assert "copying the metadata" in _refused(store, chroot, "during-copy", Phase.INITIAL_COPY)
    chroot.set("/migration", MIGRATION_CLAIMED)
    _refused(store, chroot, "during-copy", Phase.INITIAL_COPY)

    # Copy done (offset set): hybrid while ZooKeeper-mode brokers remain registered.
    chroot.set("/migration", MIGRATION_COPIED)
    message = _refused(store, chroot, "in-hybrid", Phase.HYBRID)
    assert "3 brokers (1, 2, 3) still run in ZooKeeper mode" in message
    assert "no Kafka Admin API backend yet" in message

    # Brokers rolled to KRaft one by one (KRaft brokers never register in ZooKeeper).
    chroot.delete("/brokers/ids/3")
    assert "2 brokers (1, 2)" in _refused(store, chroot, "in-hybrid", Phase.HYBRID)
    chroot.delete("/brokers/ids/1")
    chroot.delete("/brokers/ids/2")
    _refused(store, chroot, "in-dual-write", Phase.DUAL_WRITE)

    # Rollback: brokers back in ZooKeeper mode, rmr /controller, a broker elected; /migration left.
    for broker_id in (1, 2, 3):
        chroot.create(f"/brokers/ids/{broker_id}", _registration(broker_id), ephemeral=True)
    chroot.delete("/controller")
    assert "rollback" in _refused(store, chroot, "no-controller", Phase.NO_CONTROLLER)
    epoch, stat = chroot.get("/controller_epoch")
    tx = chroot.transaction()
    tx.create("/controller", _zk_controller(2), ephemeral=True)
    tx.set_data("/controller_epoch", str(int(epoch) + 1).encode(), version=stat.version)
    assert not [result for result in tx.commit() if isinstance(result, Exception)]
    rolled_back = _create(store, chroot, "after-rollback")
    assert isinstance(rolled_back["topic_id"], str)
    assert _phase(store) is Phase.ROLLED_BACK

    assert [d.phase for d in phases.seen] == [
        Phase.ZOOKEEPER,
        Phase.MIGRATION_PENDING,
        Phase.INITIAL_COPY,
        Phase.HYBRID,
        Phase.DUAL_WRITE,
        Phase.NO_CONTROLLER,
        Phase.ROLLED_BACK,
    ]
    warning = phases.seen[-1].warning
    assert warning is not None and "deleteall /migration" in warning

    # The user deletes the stale znode: ZooKeeper mode again.
    chroot.delete("/migration")
    assert "topic_id" not in _create(store, chroot, "after-cleanup")
    assert phases.seen[-1].phase is Phase.ZOOKEEPER


def test_a_kraft_claim_between_probe_and_write_fails_the_write(chroot: KazooClient) -> None:
    """The probe found the migration pending; the claim that follows bumps the epoch the write checks."""
    chroot.create("/migration", MIGRATION_CREATED)

    class ClaimedAfterTheProbe(ZkStore):
        def ensure_writable(self) -> int | None:
            version = super().ensure_writable()
            _claim(self.client)
            return version

    store = ClaimedAfterTheProbe(chroot)
    with pytest.raises(errors.VersionConflict):
        store.create_topic("raced", {0: [1]}, {})
    assert chroot.exists("/brokers/topics/raced") is None
    assert store.writes == 0
