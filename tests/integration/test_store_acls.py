"""Kafka-style ACLs and ZooKeeper digest identity, against the real ZooKeeper server.

With ``secure_acls`` (the cluster runs with ``zookeeper.set.acl=true``) every znode the store
creates gets Kafka's ACL: creator-all + world-read, and no world-read under the sensitive roots
(``/config/brokers``...). Another identity can read but not change them, and gets a clear error.
"""

from __future__ import annotations

import uuid

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import Permissions

from kafka_zk_operator.adapters.zk.session import connect
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.adapters.zk.znodes_config import ConfigEntityType
from kafka_zk_operator.config.zookeeper import ZkConnectionSettings
from kafka_zk_operator.domain import errors
from tests.conftest import KafkaCluster


@pytest.fixture
def secured_chroot(kafka_cluster: KafkaCluster) -> str:
    chroot = f"/acl-test-{uuid.uuid4().hex[:8]}"
    root = KazooClient(hosts=kafka_cluster.zk_hosts)
    root.start()
    try:
        for path in (
            "/brokers/topics",
            "/config/topics",
            "/config/brokers",
            "/config/changes",
            "/admin/delete_topics",
        ):
            root.ensure_path(chroot + path)
    finally:
        root.stop()
        root.close()
    return chroot


def test_created_znodes_carry_kafkas_acls_and_resist_other_identities(
    kafka_cluster: KafkaCluster, secured_chroot: str
) -> None:
    connect_string = f"{kafka_cluster.zk_hosts}{secured_chroot}"
    owner = connect(
        ZkConnectionSettings(connect=connect_string, digest_auth=("kafka:kafka-secret",), secure_acls=True)
    )
    intruder = connect(ZkConnectionSettings(connect=connect_string, digest_auth=("mallory:guess",)))
    try:
        store = ZkStore(owner, secure_acls=True, kafka_version=(3, 9, 0))  # no broker registered here
        store.create_topic("payments", {0: (1, 2)}, {"retention.ms": "1000"}, znode_version=1)
        store.update_entity_config(
            ConfigEntityType.BROKERS, "1", lambda cfg: {**cfg, "leader.replication.throttled.rate": "1000"}
        )

        acl, _ = owner.get_acls("/brokers/topics/payments")
        schemes = {(a.id.scheme, a.perms) for a in acl}
        assert ("digest", Permissions.ALL) in schemes
        assert ("world", Permissions.READ) in schemes
        broker_acl, _ = owner.get_acls("/config/brokers/1")
        assert all(a.id.scheme != "world" for a in broker_acl), "no world-read under /config/brokers"

        assert intruder.get("/brokers/topics/payments")[0], "world-readable, like Kafka's"
        with pytest.raises(NoAuthError):
            intruder.set("/brokers/topics/payments", b"{}")
        with pytest.raises(NoAuthError):
            intruder.get("/config/brokers/1")

        foreign = ZkStore(intruder)
        current = foreign.read_topic_config("payments")
        assert current is not None
        with pytest.raises(errors.ZooKeeperError) as raised:
            foreign.write_entity_config(
                ConfigEntityType.TOPICS, "payments", {"retention.ms": "1"}, expected_version=current.version
            )
        assert "not authorised" in str(raised.value)
        assert owner.get("/config/topics/payments")[0] == b'{"version":1,"config":{"retention.ms":"1000"}}'
    finally:
        for client in (owner, intruder):
            client.stop()
            client.close()


def test_an_unreachable_zookeeper_is_a_clear_error() -> None:
    with pytest.raises(errors.ClusterUnavailable) as raised:
        connect(ZkConnectionSettings(connect="127.0.0.1:1/kafka", connection_timeout_s=2))
    assert "127.0.0.1:1/kafka" in str(raised.value)
