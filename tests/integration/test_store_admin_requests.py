"""ZkStore's admin requests on a real ZooKeeper, in an empty chroot no controller watches, so a
request stays pending exactly as it does between its creation and the controller acting on it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk import znodes_admin
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain import errors
from tests.conftest import KafkaCluster


@pytest.fixture
def idle_chroot(kafka_cluster: KafkaCluster) -> Iterator[KazooClient]:
    chroot = f"/admin-requests-{uuid.uuid4().hex[:8]}"
    root = KazooClient(hosts=kafka_cluster.zk_hosts)
    root.start()
    root.ensure_path(f"{chroot}/admin")
    root.stop()
    root.close()
    client = KazooClient(hosts=f"{kafka_cluster.zk_hosts}{chroot}")
    client.start()
    try:
        yield client
    finally:
        client.stop()
        client.close()


def test_a_pending_preferred_election_is_read_back_and_a_second_one_is_not_written(
    idle_chroot: KazooClient,
) -> None:
    store = ZkStore(idle_chroot)
    first = [znodes_admin.TopicPartition("orders", 0), znodes_admin.TopicPartition("orders", 2)]
    assert store.pending_preferred_election() is None
    assert store.create_preferred_election(first) is True
    assert store.create_preferred_election([znodes_admin.TopicPartition("other", 0)]) is False
    assert store.pending_preferred_election() == tuple(first), "the second request changed nothing"
    assert store.writes == 1


def test_a_corrupt_pending_election_is_reported_not_decoded(idle_chroot: KazooClient) -> None:
    idle_chroot.create(znodes_admin.PREFERRED_REPLICA_ELECTION_PATH, b'{"version":1,"partitions":"all"}')
    with pytest.raises(errors.MalformedZnode, match="preferred_replica_election"):
        ZkStore(idle_chroot).pending_preferred_election()
