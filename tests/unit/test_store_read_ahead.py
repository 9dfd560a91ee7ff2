"""Reads sent ahead (``StoreBase.reading_ahead``): a reconcile's reads go out together, one round
trip for all, and each is taken where it was read alone before (issue #16: a burst's worker
threads spent most of their time waiting for a dozen small reads one after the other). A fake
kazoo client tells requests sent ahead from requests sent one at a time; the real ZooKeeper
paths are covered by ``tests/integration`` (every store and reconcile test goes through them)."""

from __future__ import annotations

from typing import Any

import pytest
from kazoo.exceptions import NoAuthError, NoNodeError
from kazoo.protocol.states import KazooState, ZnodeStat

from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain import errors


def _stat(version: int = 0) -> ZnodeStat:
    return ZnodeStat(0, 0, 0, 0, version, 3, 0, 0, 0, 0, 0)


class _Answer:
    """A kazoo IAsyncResult that is already answered."""

    def __init__(self, value: Any = None, error: Exception | None = None, on_taken: Any = None) -> None:
        self.value, self.error, self.on_taken = value, error, on_taken

    def get(self) -> Any:
        if self.on_taken is not None:
            self.on_taken()
        if self.error is not None:
            raise self.error
        return self.value


class FakeZk:
    """A few znodes; ``sent`` lists each request as ``(how, kind, path)``, ``how`` being
    ``ahead`` (async: sent without waiting) or ``alone`` (sync: one round trip each)."""

    state = KazooState.CONNECTED

    def __init__(self, znodes: dict[str, bytes], refused: frozenset[str] = frozenset()) -> None:
        self.znodes = dict(znodes)
        self.refused = refused
        self.sent: list[tuple[str, str, str]] = []
        #: Sends and waits in the order they happened: a wait between two sends is a round trip.
        self.timeline: list[str] = []

    def _get(self, path: str) -> tuple[bytes, ZnodeStat]:
        if path in self.refused:
            raise NoAuthError()
        if path not in self.znodes:
            raise NoNodeError()
        return self.znodes[path], _stat(1)

    def _exists(self, path: str) -> ZnodeStat | None:
        return _stat() if path in self.znodes else None

    def get(self, path: str) -> tuple[bytes, ZnodeStat]:
        self.sent.append(("alone", "get", path))
        return self._get(path)

    def exists(self, path: str, watch: Any = None) -> ZnodeStat | None:
        self.sent.append(("alone", "exists", path))
        return self._exists(path)

    def get_async(self, path: str, watch: Any = None) -> _Answer:
        self.sent.append(("ahead", "get", path))
        self.timeline.append(f"send {path}")
        taken = lambda: self.timeline.append(f"wait {path}")  # noqa: E731
        try:
            return _Answer(self._get(path), on_taken=taken)
        except Exception as error:  # delivered where the answer is taken
            return _Answer(error=error, on_taken=taken)

    def exists_async(self, path: str, watch: Any = None) -> _Answer:
        self.sent.append(("ahead", "exists", path))
        self.timeline.append(f"send {path}")
        return _Answer(self._exists(path), on_taken=lambda: self.timeline.append(f"wait {path}"))


_BROKER = (
    b'{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://b1:9092"],'
    b'"rack":"a","jmx_port":-1,"host":"b1","timestamp":"1700000000000","port":9092,"version":4}'
)


def test_a_topic_that_does_not_exist_is_read_in_one_round_trip() -> None:
    zk = FakeZk({"/brokers/ids": b""})
    observed = ZkStore(zk).read_topic("orders")
    assert observed.assignment is None and observed.config == {} and not observed.marked_for_deletion
    assert [how for how, _, _ in zk.sent] == ["ahead", "ahead", "ahead"]
    assert [path for _, _, path in zk.sent] == [
        "/brokers/topics/orders",
        "/config/topics/orders",
        "/admin/delete_topics/orders",
    ]


def test_an_existing_topic_takes_a_second_round_for_its_reassignment_and_partition_states() -> None:
    zk = FakeZk(
        {
            "/brokers/topics/orders": b'{"version":2,"partitions":{"0":[1,2],"1":[2,1]}}',
            "/config/topics/orders": b'{"version":1,"config":{"retention.ms":"1000"}}',
            "/brokers/topics/orders/partitions/0/state": (
                b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}'
            ),
        }
    )
    observed = ZkStore(zk).read_topic("orders")
    assert observed.config == {"retention.ms": "1000"} and observed.config_version == 1
    assert sorted(observed.partition_states) == [0]  # partition 1 has no state znode yet
    assert all(how == "ahead" for how, _, _ in zk.sent), zk.sent
    second_round = [path for _, _, path in zk.sent[3:]]
    assert second_round == [
        "/admin/reassign_partitions",
        "/brokers/topics/orders/partitions/0/state",
        "/brokers/topics/orders/partitions/1/state",
    ]
    # Two round trips: nothing is waited for between the second round's sends.
    second = zk.timeline.index("send /admin/reassign_partitions")
    assert [step.split()[0] for step in zk.timeline[second : second + 3]] == ["send"] * 3


def test_an_existing_topic_of_the_expected_partition_count_is_read_in_one_round_trip() -> None:
    zk = FakeZk({"/brokers/topics/orders": b'{"version":2,"partitions":{"0":[1,2],"1":[2,1]}}'})
    observed = ZkStore(zk).read_topic("orders", expected_partitions=2)
    assert observed.assignment is not None and observed.assignment.partition_count == 2
    assert [how for how, _, _ in zk.sent] == ["ahead"] * 6  # topic, config, marker, reassign, 2 states
    assert len(set(zk.sent)) == 6  # none sent twice


def test_a_topic_that_grew_past_the_expected_count_reads_only_the_new_states_after() -> None:
    zk = FakeZk({"/brokers/topics/orders": b'{"version":2,"partitions":{"0":[1],"1":[1],"2":[1]}}'})
    ZkStore(zk).read_topic("orders", expected_partitions=1)
    assert [path for _, _, path in zk.sent[5:]] == [
        "/brokers/topics/orders/partitions/1/state",
        "/brokers/topics/orders/partitions/2/state",
    ]
    assert all(how == "ahead" for how, _, _ in zk.sent)


def test_the_topic_and_the_live_brokers_share_their_first_round() -> None:
    zk = FakeZk({"/brokers/ids": b"", "/brokers/ids/1": _BROKER})
    zk.get_children = lambda path: ["1"]  # type: ignore[attr-defined]
    observed, registrations = ZkStore(zk).read_topic_and_brokers("orders")
    assert observed.assignment is None
    assert [r.broker.id for r in registrations] == [1]
    assert zk.sent[0] == ("ahead", "exists", "/brokers/ids")
    assert ("alone", "exists", "/brokers/ids") not in zk.sent


def test_an_answer_is_taken_once_and_a_read_not_sent_ahead_is_asked_alone() -> None:
    zk = FakeZk({"/a": b"1", "/b": b"2"})
    store = ZkStore(zk)
    with store.reading_ahead(("get", "/a")):
        assert store._get("/a") == (b"1", _stat(1))
        store._get("/a")  # asked again: a new read, not the answer already taken
        store._get("/b")
    assert zk.sent == [("ahead", "get", "/a"), ("alone", "get", "/a"), ("alone", "get", "/b")]


def test_an_inner_block_does_not_send_again_and_its_untaken_reads_go_with_it() -> None:
    zk = FakeZk({"/a": b"1", "/b": b"2"})
    store = ZkStore(zk)
    with store.reading_ahead(("get", "/a")):
        with store.reading_ahead(("get", "/a"), ("get", "/b")):
            pass  # neither taken here
        store._get("/a")  # the outer block's answer
        store._get("/b")  # the inner block's answer went with it: asked alone
    assert zk.sent == [("ahead", "get", "/a"), ("ahead", "get", "/b"), ("alone", "get", "/b")]
    store._get("/a")  # after the blocks: alone
    assert zk.sent[-1] == ("alone", "get", "/a")


def test_a_read_that_fails_raises_where_it_is_taken_with_the_usual_error() -> None:
    zk = FakeZk({"/secret": b"x"}, refused=frozenset({"/secret"}))
    store = ZkStore(zk)
    with (
        store.reading_ahead(("get", "/secret")),
        pytest.raises(errors.ZooKeeperError, match="not authorised to change /secret"),
    ):
        store._get("/secret")


def test_nothing_is_sent_ahead_while_disconnected_and_each_read_says_why() -> None:
    zk = FakeZk({"/a": b"1"})
    zk.state = KazooState.SUSPENDED
    store = ZkStore(zk)
    with (
        store.reading_ahead(("get", "/a")),
        pytest.raises(errors.ClusterUnavailable, match="ZooKeeper is unreachable"),
    ):
        store._get("/a")
    assert zk.sent == []
