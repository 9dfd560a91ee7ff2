"""Watches set by a reader's own reads and handed over (``ZnodeWatches.priming``/``adopt``,
``StoreBase.priming_watches``): a reconcile's read of a topic is also the health reporter's watch
of it, with no request of its own (issue #16). A hand-over is refused whenever the watch may be
gone; a fake kazoo client shows what is sent and what kazoo would have registered. The real
ZooKeeper side is in ``tests/integration/test_health_watches.py``. The last test: a watch
discarded while its read is still on its way (the fake kazoo holding answers back)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import EventType, KazooState, WatchedEvent, ZnodeStat

from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.adapters.zk.watches import ZnodeWatches

TOPIC = "/brokers/topics/orders"
STATE = "/brokers/topics/orders/partitions/0/state"
CONFIG = "/config/topics/orders"


def _stat() -> ZnodeStat:
    return ZnodeStat(0, 5, 0, 0, 1, 0, 0, 0, 0, 0, 0)


class _Answer:
    def __init__(self, value: Any = None, error: Exception | None = None) -> None:
        self.value, self.error = value, error

    def get(self, block: bool = True) -> Any:
        if self.error is not None:
            raise self.error
        return self.value

    def rawlink(self, callback: Any) -> None:
        callback(self)


class FakeKazoo:
    """Answers at once; like kazoo, registers a request's watcher when the answer is a success."""

    state = KazooState.CONNECTED
    chroot = ""

    def __init__(self, znodes: dict[str, bytes]) -> None:
        self.znodes = dict(znodes)
        self.sent: list[tuple[str, str, bool]] = []
        self._data_watchers: defaultdict[str, set[Any]] = defaultdict(set)
        self.listeners: list[Any] = []

    def add_listener(self, listener: Any) -> None:
        self.listeners.append(listener)

    def remove_listener(self, listener: Any) -> None:
        self.listeners.remove(listener)

    def _answer(self, kind: str, path: str, watch: Any) -> _Answer:
        self.sent.append((kind, path, watch is not None))
        if path not in self.znodes:
            return _Answer(error=None if kind == "exists" else NoNodeError())
        if watch is not None:
            self._data_watchers[path].add(watch)
        return _Answer(_stat() if kind == "exists" else (self.znodes[path], _stat()))

    def get_async(self, path: str, watch: Any = None) -> _Answer:
        return self._answer("get", path, watch)

    def exists_async(self, path: str, watch: Any = None) -> _Answer:
        return self._answer("exists", path, watch)

    def get(self, path: str, watch: Any = None) -> tuple[bytes, ZnodeStat]:
        answer: tuple[bytes, ZnodeStat] = self._answer("get", path, watch).get()
        return answer

    def exists(self, path: str, watch: Any = None) -> ZnodeStat | None:
        answer: ZnodeStat | None = self._answer("exists", path, watch).get()
        return answer

    def fire(self, path: str) -> None:
        """ZooKeeper reports a change: kazoo pops the path's watchers and calls each."""
        for watcher in self._data_watchers.pop(path, set()):
            watcher(WatchedEvent(EventType.CHANGED, KazooState.CONNECTED, path))


def _setup() -> tuple[FakeKazoo, ZkStore, ZnodeWatches, list[str]]:
    client = FakeKazoo({TOPIC: b"{}", STATE: b"{}", CONFIG: b"{}"})
    store = ZkStore(client)
    changed: list[str] = []
    watches = ZnodeWatches(client, lambda path, data: changed.append(path))
    return client, store, watches, changed


def _wanted(path: str) -> bool:
    return path.startswith(TOPIC)


def test_reads_of_wanted_znodes_carry_the_watch_and_note_what_they_found() -> None:
    client, store, watches, _ = _setup()
    missing = "/brokers/topics/orders/partitions/1/state"
    with store.priming_watches(watches.priming(_wanted)) as priming:
        with store.reading_ahead(("get", TOPIC), ("get", CONFIG)):
            assert store._get(TOPIC) is not None
            assert store._get(CONFIG) is not None
        assert store._get(STATE) is not None
        assert store._get(missing) is None
    assert client.sent == [
        ("get", TOPIC, True),
        ("get", CONFIG, False),
        ("get", STATE, True),
        ("get", missing, True),
    ]
    assert priming.armed == {TOPIC: b"{}", STATE: b"{}"}, "a missing znode sets no watch"
    assert store._get(TOPIC) is not None and client.sent[-1] == ("get", TOPIC, False), "none after the block"


def test_a_read_sent_ahead_without_the_watch_is_not_noted_as_armed() -> None:
    client, store, watches, _ = _setup()
    with store.reading_ahead(("get", TOPIC)), store.priming_watches(watches.priming(_wanted)) as priming:
        assert store._get(TOPIC) is not None  # the answer of a read sent before the block
    assert client.sent == [("get", TOPIC, False)]
    assert priming.armed == {}


def test_a_handed_over_watch_costs_no_request_and_reports_changes() -> None:
    client, store, watches, changed = _setup()
    with store.priming_watches(watches.priming(_wanted)) as priming:
        store._get(TOPIC)
    sent = len(client.sent)
    assert watches.adopt(TOPIC, priming, read=True)
    assert len(client.sent) == sent and watches.watched() == 1
    client.fire(TOPIC)
    assert changed == [TOPIC], "reported, and armed again"
    assert client.sent[-1] == ("get", TOPIC, True)


def test_no_hand_over_after_a_watch_of_it_fired() -> None:
    client, store, watches, changed = _setup()
    with store.priming_watches(watches.priming(_wanted)) as priming:
        store._get(TOPIC)
        store._get(STATE)
    client.fire(STATE)  # changed between the read and the hand-over
    with store.priming_watches(watches.priming(_wanted)):
        store._get(STATE)  # read again by another reader: kazoo holds the watch again
    assert watches._watcher in client._data_watchers[STATE]
    assert not watches.adopt(TOPIC, priming, read=True), "any watch firing first refuses them all"
    assert not watches.adopt(STATE, priming, read=False)
    assert changed == []


def test_no_hand_over_after_the_connection_went() -> None:
    client, store, watches, _ = _setup()
    with store.priming_watches(watches.priming(_wanted)) as priming:
        store._get(TOPIC)
    for listener in client.listeners:
        listener(KazooState.SUSPENDED)  # kazoo does not set its watches again on a new connection
    assert not watches.adopt(TOPIC, priming, read=True)


def test_no_hand_over_of_what_kazoo_holds_no_watch_for_or_the_reads_did_not_find() -> None:
    client, store, watches, _ = _setup()
    with store.priming_watches(watches.priming(_wanted)) as priming:
        store._get(TOPIC)
    assert not watches.adopt(STATE, priming, read=False), "not read by this reader"
    client._data_watchers.clear()
    assert not watches.adopt(TOPIC, priming, read=True), "kazoo holds none"


def test_a_znode_already_watched_is_handed_over_as_is_and_a_stopped_set_takes_nothing() -> None:
    _, store, watches, _ = _setup()
    watches.add(TOPIC, read=True)
    assert watches.adopt(TOPIC, watches.priming(_wanted), read=True)
    watches.stop()
    with store.priming_watches(watches.priming(_wanted)) as priming:
        store._get(STATE)
    assert not watches.adopt(STATE, priming, read=False)


def test_watches_not_taken_over_are_dropped_from_kazoo_and_those_taken_over_kept() -> None:
    client, store, watches, _ = _setup()
    with store.priming_watches(watches.priming(_wanted)) as priming:
        store._get(TOPIC)
        store._get(STATE)
    assert watches.adopt(TOPIC, priming, read=True)
    watches.release(priming)
    assert watches._watcher in client._data_watchers[TOPIC]
    assert STATE not in client._data_watchers, "a watch nobody follows no longer held by the client"


class _DeferredKazoo(FakeKazoo):
    """Holds each answer until :meth:`deliver`: a request still on its way."""

    def __init__(self, znodes: dict[str, bytes]) -> None:
        super().__init__(znodes)
        self.pending: list[tuple[_Answer, Any]] = []

    def _answer(self, kind: str, path: str, watch: Any) -> _Answer:
        answer = super()._answer(kind, path, watch)
        deferred = _Answer(answer.value, answer.error)
        deferred.rawlink = lambda callback: self.pending.append((deferred, callback))  # type: ignore[method-assign]
        return deferred

    def deliver(self) -> None:
        while self.pending:
            answer, callback = self.pending.pop(0)
            callback(answer)


def test_a_znode_discarded_while_its_read_was_on_the_way_gets_no_exists_watch() -> None:
    """Issue #17's leak by another road: a missing znode's read is followed by an ``exists`` that
    sets a watch until the znode appears - for a deleted topic, for the session's lifetime."""
    client = _DeferredKazoo({})
    watches = ZnodeWatches(client, lambda path, data: None)
    watches.add(TOPIC, read=True)
    watches.discard(TOPIC)
    client.deliver()
    assert client.sent == [("get", TOPIC, True)], "no exists after the read of a discarded znode"
    assert TOPIC not in client._data_watchers

    watches.add(STATE, read=True)
    client.deliver()
    assert client.sent[-1] == ("exists", STATE, True), "a znode still watched waits for it to appear"
