"""The leader's fence on a real ZooKeeper and real brokers (issue #16, high availability).

Two stores stand for two operator replicas. Once the second has claimed the fence, every write
transaction of the first fails as a whole in ZooKeeper - even when its own lease guard would have
let it through (a replica paused between the guard and the send) - and nothing of it lands: read
with a plain kazoo client and with a Kafka client, not through the project's store.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk import fence
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.adapters.zk.znodes_config import ConfigEntityType
from kafka_zk_operator.domain import errors
from tests.conftest import KafkaCluster
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for


@pytest.fixture
def two_clients(kafka_cluster: KafkaCluster) -> Iterator[tuple[KazooClient, KazooClient]]:
    first, second = kafka_cluster.zk_client(), kafka_cluster.zk_client()
    try:
        yield first, second
    finally:
        for client in (first, second):
            client.stop()
            client.close()


def _claimed(client: KazooClient, path: str, holder: str, lost: list[str]) -> ZkStore:
    store = ZkStore(client)
    store.fence = (path, fence.claim(client, path, holder, secure_acls=False))
    store.on_fenced = lost.append
    return store


def test_a_fenced_replica_writes_nothing(
    kafka_cluster: KafkaCluster, two_clients: tuple[KazooClient, KazooClient]
) -> None:
    old_client, new_client = two_clients
    path = fence.fence_path("kzo-test", f"lease-{uuid.uuid4().hex[:6]}")
    lost: list[str] = []
    old = _claimed(old_client, path, "old", lost)
    first = f"fence-{uuid.uuid4().hex[:6]}"
    old.create_topic(first, {0: [1, 2]}, {"retention.ms": "3600000"})

    new = _claimed(new_client, path, "new", lost)
    assert new.fence is not None and old.fence is not None and new.fence[1] == old.fence[1] + 1

    late = f"fence-late-{uuid.uuid4().hex[:6]}"
    with pytest.raises(errors.LeadershipLost, match="another operator replica claimed the leader's fence"):
        old.create_topic(late, {0: [1, 2]}, {})
    config = old.read_topic_config(first)
    assert config is not None
    with pytest.raises(errors.LeadershipLost):
        old.write_entity_config(
            ConfigEntityType.TOPICS, first, {"retention.ms": "1000"}, expected_version=config.version
        )
    assert len(lost) == 2

    plain = kafka_cluster.zk_client()
    try:
        assert plain.exists(f"/brokers/topics/{late}") is None
        assert plain.exists(f"/config/topics/{late}") is None
        assert plain.exists(f"/config/topics/{first}").version == 0
    finally:
        plain.stop()
        plain.close()

    new.write_entity_config(
        ConfigEntityType.TOPICS, first, {"retention.ms": "7200000"}, expected_version=config.version
    )
    view = KafkaView(kafka_cluster.bootstrap_servers)
    try:
        wait_for(lambda: view.describe(first) or None, timeout=60, what=f"Kafka to serve {first}")
        assert late not in view.topic_names()
        wait_for(
            lambda: view.configs(first).get("retention.ms") == "7200000" or None,
            timeout=60,
            what="the new leader's config change in Kafka",
        )
    finally:
        view.close()


def test_claiming_needs_no_earlier_znode_and_moves_the_version_every_time(
    two_clients: tuple[KazooClient, KazooClient],
) -> None:
    client, _ = two_clients
    path = fence.fence_path("kzo-test", f"lease-{uuid.uuid4().hex[:6]}")
    versions = [fence.claim(client, path, f"holder-{i}", secure_acls=False) for i in range(3)]
    assert versions == [0, 1, 2]
    assert b'"holder-2"' in client.get(path)[0]
