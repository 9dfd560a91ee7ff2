"""The store keeps the live brokers' registrations, and the topic-znode version it mirrors, while
``/brokers/ids``'s cversion is unchanged (issue #16: every reconcile listed the brokers and read
each registration, and every create listed every topic of the cluster). A fake kazoo client
counts the requests; the real ZooKeeper paths are covered in ``tests/integration``."""

from __future__ import annotations

from collections import Counter
from typing import Any

from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import KazooState, ZnodeStat

from kafka_zk_operator.adapters.zk.store import ZkStore


def _registration(broker_id: int, rack: str, version: int = 5) -> bytes:
    return (
        '{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        f'"endpoints":["PLAINTEXT://b{broker_id}:9092"],"rack":"{rack}","jmx_port":-1,"features":{{}},'
        f'"host":"b{broker_id}","timestamp":"1700000000000","port":9092,"version":{version}}}'
    ).encode()


def _topic(version: int) -> bytes:
    return f'{{"version":{version},"partitions":{{"0":[1]}}}}'.encode()


def _stat(cversion: int) -> ZnodeStat:
    return ZnodeStat(0, 0, 0, 0, 0, cversion, 0, 0, 0, 0, 0)


class FakeZk:
    """``/brokers/ids`` with registrations and ``/brokers/topics`` with topic znodes."""

    state = KazooState.CONNECTED

    def __init__(self) -> None:
        self.brokers = {1: _registration(1, "a"), 2: _registration(2, "b")}
        self.topics = {"t1": _topic(2)}
        self.cversion = 7
        self.requests: Counter[str] = Counter()

    def exists(self, path: str) -> ZnodeStat | None:
        self.requests[f"exists {path}"] += 1
        return _stat(self.cversion) if path == "/brokers/ids" else None

    def get_children(self, path: str) -> list[str]:
        self.requests[f"children {path}"] += 1
        if path == "/brokers/ids":
            return [str(b) for b in self.brokers]
        if path == "/brokers/topics":
            return list(self.topics)
        raise NoNodeError

    def get(self, path: str) -> tuple[bytes, ZnodeStat]:
        self.requests["get"] += 1
        kind, _, name = path.rpartition("/")
        if kind == "/brokers/ids" and int(name) in self.brokers:
            return self.brokers[int(name)], _stat(0)
        if kind == "/brokers/topics" and name in self.topics:
            return self.topics[name], _stat(0)
        raise NoNodeError

    def register(self, broker_id: int, rack: str) -> None:
        """A broker registers (again): the ephemeral child is created, the cversion moves."""
        self.brokers[broker_id] = _registration(broker_id, rack)
        self.cversion += 1


def _store(zk: FakeZk) -> ZkStore:
    return ZkStore(zk)


def _racks(store: ZkStore) -> dict[int, Any]:
    return {b.id: b.rack for b in store.live_brokers()}


def test_the_registrations_are_read_once_while_no_broker_comes_or_goes() -> None:
    zk = FakeZk()
    store = _store(zk)
    assert _racks(store) == {1: "a", 2: "b"}
    zk.requests.clear()
    for _ in range(5):
        assert _racks(store) == {1: "a", 2: "b"}
        store.cluster_line()
    assert zk.requests == Counter({"exists /brokers/ids": 10}), zk.requests


def test_a_broker_that_registers_is_seen_at_the_next_call() -> None:
    zk = FakeZk()
    store = _store(zk)
    assert _racks(store) == {1: "a", 2: "b"}
    zk.register(3, "c")
    assert _racks(store) == {1: "a", 2: "b", 3: "c"}
    del zk.brokers[1]
    zk.cversion += 1  # its session ended: the ephemeral child is gone
    assert _racks(store) == {2: "b", 3: "c"}


def test_the_topic_znode_version_is_mirrored_once_per_broker_generation() -> None:
    zk = FakeZk()
    store = _store(zk)
    assert store.topic_znode_version() == 2
    zk.requests.clear()
    assert store.topic_znode_version() == 2
    assert zk.requests["children /brokers/topics"] == 0 and zk.requests["get"] == 0
    # The brokers are upgraded (each restarts, so registers again) and write v3 from now on.
    zk.topics["t2"] = _topic(3)
    zk.register(1, "a")
    assert store.topic_znode_version() == 3


def test_a_cluster_without_topics_is_asked_again_at_each_create() -> None:
    zk = FakeZk()
    zk.topics.clear()
    store = _store(zk)
    assert store.topic_znode_version() == 1
    zk.topics["t1"] = _topic(3)  # the cluster's own first topic, written by a 2.8+ broker
    assert store.topic_znode_version() == 3


def test_the_line_from_registrations_in_hand_costs_no_request() -> None:
    """A reconcile reads the registrations once and derives the Kafka line from them."""
    zk = FakeZk()
    store = _store(zk)
    registrations = store.broker_registrations()
    before = sum(zk.requests.values())
    assert store.cluster_line(registrations) == store.cluster_line()
    assert sum(zk.requests.values()) == before + 1, "only the call without them checks /brokers/ids"
