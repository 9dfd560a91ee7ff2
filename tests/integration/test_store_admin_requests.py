"""ZkStore on a real ZooKeeper, in an empty chroot no controller watches: admin requests stay
pending exactly as they do between their creation and the controller acting on them, and broker
registrations are whatever the test writes."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from kazoo.client import KazooClient
from kazoo.protocol.states import ZnodeStat

from kafka_zk_operator.adapters.zk import stat_probe, znodes_admin
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.adapters.zk.znodes_config import ConfigEntityType
from kafka_zk_operator.domain import errors
from tests.conftest import KafkaCluster
from tests.integration.helpers import sent_exists


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


def _registration(version: int) -> bytes:
    endpoints = '"endpoints":["PLAINTEXT://h:9092"],"rack":"r",' if version >= 3 else ""
    return f'{{{endpoints}"jmx_port":-1,"host":"h","timestamp":"1","port":9092,"version":{version}}}'.encode()


def _data_reads(store: ZkStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths whose data ``store`` reads from now on, in order (its ``_get``)."""
    reads: list[str] = []
    real_get = store._get

    def recording_get(path: str) -> tuple[bytes, ZnodeStat] | None:
        reads.append(path)
        return real_get(path)

    monkeypatch.setattr(store, "_get", recording_get)
    return reads


def test_the_notification_version_follows_the_live_brokers_reading_them_once_per_change(
    idle_chroot: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ZkStore(idle_chroot)
    assert store.config_change_version(ConfigEntityType.TOPICS) == 1, (
        "no live broker: the line is unknown, v1"
    )
    idle_chroot.create("/brokers/ids/1", _registration(3), makepath=True)  # 0.10.0/0.10.1
    idle_chroot.create("/brokers/ids/2", _registration(4))
    reads = _data_reads(store, monkeypatch)
    assert store.config_change_version(ConfigEntityType.TOPICS) == 1
    with pytest.raises(errors.NotSupported, match=r"0\.10\.1 or later"):
        store.config_change_version(ConfigEntityType.BROKERS)  # a v3 broker may be 0.10.0: no broker configs
    assert store.config_change_version(ConfigEntityType.CLIENTS) == 1
    assert sorted(reads) == ["/brokers/ids/1", "/brokers/ids/2"], "registrations read once"
    idle_chroot.delete("/brokers/ids/1")  # the old broker is upgraded: it leaves ...
    assert store.config_change_version(ConfigEntityType.TOPICS) == 2
    idle_chroot.create("/brokers/ids/1", _registration(4))  # ... and registers again
    assert store.config_change_version(ConfigEntityType.TOPICS) == 2
    assert len(reads) == 2 + 1 + 2


def test_the_pending_reassignment_is_read_and_decoded_again_only_when_its_znode_changed(
    idle_chroot: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every reconcile of a topic asks whether it is being moved; a 10,000-partition znode is
    710 KB and half a second to decode, so its data is read once per state of the znode."""
    store = ZkStore(idle_chroot)
    path = znodes_admin.REASSIGN_PARTITIONS_PATH
    reads = _data_reads(store, monkeypatch)
    assert store.pending_reassignment() is None and store.maybe_in_reassignment("orders") == (False, None)
    orders = [znodes_admin.PartitionReassignment("orders", 0, (1, 2))]
    store.create_reassignment(orders)
    for _ in range(3):
        assert store.maybe_in_reassignment("orders") == (True, None)
        assert store.maybe_in_reassignment("other") == (False, None)
    pending = store.pending_reassignment()
    assert pending is not None and pending.value == orders and pending.version == 0
    pending.value.clear()  # a caller's copy: what the store keeps is not changed
    assert reads.count(path) == 1, "read once while unchanged"

    other = [znodes_admin.PartitionReassignment("other", 1, (2,))]
    encoded = znodes_admin.ReassignPartitionsZNode.encode(other)
    idle_chroot.set(path, encoded)  # as the controller rewrites it when partitions complete
    assert store.maybe_in_reassignment("orders") == (False, None)
    assert store.maybe_in_reassignment("other") == (True, None)
    idle_chroot.set(path, encoded)  # the same bytes again: a new state all the same
    again = store.pending_reassignment()
    assert again is not None and again.version == 2 and [e.topic for e in again.value] == ["other"]
    assert reads.count(path) == 3

    idle_chroot.set(path, b'{"version":1,"partitions":"all"}')
    for _ in range(2):
        moving, problem = store.maybe_in_reassignment("orders")
        assert moving and problem is not None and "reassign_partitions is malformed" in problem
        with pytest.raises(errors.MalformedZnode, match="reassign_partitions"):
            store.pending_reassignment()
    assert reads.count(path) == 4, "a corrupt znode is not read again until it changes"

    idle_chroot.delete(path)
    assert store.maybe_in_reassignment("orders") == (False, None)
    store.create_reassignment(orders)  # the same data, a new znode
    assert store.pending_reassignment() is not None and store.maybe_in_reassignment("orders") == (True, None)
    assert reads.count(path) == 5


def test_a_resync_learns_a_topic_s_place_in_a_rewritten_reassignment_from_one_decode_per_state(
    idle_chroot: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The controller rewrites /admin/reassign_partitions as partitions finish; a resync whose
    probe finds that znode's stamp alone moved asks the topic's place in the new state
    (``runtime.unchanged``): from the decode kept without a request, else read and decoded once
    however many resyncs ask at the same time."""
    store = ZkStore(idle_chroot)
    path = znodes_admin.REASSIGN_PARTITIONS_PATH
    idle_chroot.ensure_path("/brokers/ids")
    paths = store.topic_read_paths("orders", 1)
    recorded = asyncio.run(store.stamps(paths))
    assert recorded is not None
    assert store.reassignment_moved_alone(paths, recorded, recorded) is None, "nothing moved"

    store.create_reassignment(
        [
            znodes_admin.PartitionReassignment("orders", 0, (1, 2)),
            znodes_admin.PartitionReassignment("other", 0, (2,)),
        ]
    )
    created = asyncio.run(store.stamps(paths))
    assert created is not None
    stat = idle_chroot.exists(path)
    assert stat is not None and store.reassignment_moved_alone(paths, recorded, created) == stat.mzxid
    reads = _data_reads(store, monkeypatch)
    assert store.kept_reassignment_place("orders", stat.mzxid) is None, "nothing decoded yet"
    asking = ["orders", "idle"] * 8
    with ThreadPoolExecutor(len(asking)) as pool:
        places = list(pool.map(lambda topic: store.reassignment_place(topic, stat.mzxid), asking))
    assert places == [(True, None), (False, None)] * 8
    assert reads.count(path) == 1, "one decode for every resync that asked at once"
    assert store.kept_reassignment_place("orders", stat.mzxid) == (True, None)
    assert store.kept_reassignment_place("idle", stat.mzxid) == (False, None)

    # The controller finished "orders" and rewrote the znode with the rest.
    idle_chroot.set(
        path,
        znodes_admin.ReassignPartitionsZNode.encode([znodes_admin.PartitionReassignment("other", 0, (2,))]),
    )
    rewritten = asyncio.run(store.stamps(paths))
    assert rewritten is not None
    newer = store.reassignment_moved_alone(paths, created, rewritten)
    assert newer is not None and newer > stat.mzxid
    assert store.kept_reassignment_place("orders", newer) is None, "the decode kept is of an older state"
    assert store.reassignment_place("orders", newer) == (False, None)
    assert store.kept_reassignment_place("orders", stat.mzxid) == (False, None), "a later state answers too"
    assert reads.count(path) == 2

    idle_chroot.set(path, b'{"version":1,"partitions":"all"}')
    corrupt = asyncio.run(store.stamps(paths))
    assert corrupt is not None
    mzxid = store.reassignment_moved_alone(paths, rewritten, corrupt)
    assert mzxid is not None
    moving, problem = store.reassignment_place("idle", mzxid)
    assert moving and problem is not None and "reassign_partitions is malformed" in problem

    idle_chroot.delete(path)
    idle_chroot.create(znodes_admin.delete_topic_path("orders"), b"", makepath=True)  # being deleted too
    both = asyncio.run(store.stamps(paths))
    assert both is not None
    assert store.reassignment_moved_alone(paths, corrupt, both) is None, "another of its znodes moved"
    idle_chroot.delete(znodes_admin.delete_topic_path("orders"))
    finished = asyncio.run(store.stamps(paths))
    assert finished is not None and store.reassignment_moved_alone(paths, corrupt, finished) == 0
    assert store.kept_reassignment_place("orders", 0) == (False, None)
    assert reads.count(path) == 3


def test_a_read_stands_for_its_deletion_marker_by_the_shared_stamp_of_the_markers_parent(
    idle_chroot: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a busy cluster each resync probes the znodes its topic's last read depended on. The
    deletion marker is one of them; when the read found a fresh shared stamp of
    ``/admin/delete_topics`` (taken before the marker was asked), the record names that parent
    instead, whose stamp every probe takes from the shared round: no marker of its own is asked.
    Any marker coming or going moves the parent's stamp; without a fresh round the marker
    stands for itself, as before."""
    idle_chroot.ensure_path("/brokers/ids")
    idle_chroot.ensure_path(znodes_admin.DELETE_TOPICS_PATH)
    now = [0.0]
    store = ZkStore(idle_chroot)
    # The store's own shared paths, on a clock the test moves.
    store._recent_zxid = stat_probe.RecentZxid(
        idle_chroot, shared=store._recent_zxid.shared, clock=lambda: now[0]
    )
    assert znodes_admin.DELETE_TOPICS_PATH in store._recent_zxid.shared
    marker = znodes_admin.delete_topic_path("orders")
    with store.recording_stamps() as without_round:
        store.read_topic("orders")
    assert store.topic_read_paths("orders", 0, without_round) == store.topic_read_paths("orders", 0)
    assert marker in store.topic_read_paths("orders", 0), "no shared round: the marker itself"

    assert asyncio.run(store.recent_zxid()) is not None
    with store.recording_stamps() as read:
        store.read_topic("orders")
    # The topic, its config and what stands for its marker (the rest is read for a topic that
    # exists; "orders" does not).
    paths = store.topic_read_paths("orders", 0, read)[:3]
    assert paths[2] == znodes_admin.DELETE_TOPICS_PATH and marker not in paths
    recorded = read.of(paths)
    assert recorded is not None and recorded == asyncio.run(stat_probe.stamps(idle_chroot, paths))
    sent = sent_exists(idle_chroot, monkeypatch)
    assert asyncio.run(store.stamps(paths)) == recorded
    assert znodes_admin.DELETE_TOPICS_PATH not in sent and marker not in sent, "both from the shared round"

    idle_chroot.create(znodes_admin.delete_topic_path("other"))  # another topic's marker came
    now[0] += stat_probe.ZXID_FRESH_S
    assert asyncio.run(store.recent_zxid()) is not None
    moved = asyncio.run(store.stamps(paths))
    assert moved is not None and moved != recorded, "a marker came: the parent's stamp moved"
    idle_chroot.delete(znodes_admin.delete_topic_path("other"))
    now[0] += stat_probe.ZXID_FRESH_S
    assert asyncio.run(store.recent_zxid()) is not None
    gone = asyncio.run(store.stamps(paths))
    assert gone is not None and gone not in (recorded, moved), "and went: it moved again"

    now[0] += stat_probe.SHARED_FRESH_S + stat_probe.ZXID_FRESH_S  # the round is too old now
    with store.recording_stamps() as stale:
        store.read_topic("orders")
    assert marker in store.topic_read_paths("orders", 0, stale), "no fresh round: the marker itself"
