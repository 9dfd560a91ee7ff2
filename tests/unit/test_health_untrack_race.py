"""A topic untracked by one thread while another is adding its watches (the health reporter adds
them outside its lock) leaves no watch behind: the untrack could discard them before they were
added, and a watch of a deleted topic's znode is otherwise armed again for the session's lifetime
(issue #17). And a topic tracked again while its untrack is discarding keeps the watches the new
track adds. The real ZooKeeper side of untracking is in ``tests/integration/test_health_watches.py``."""

from __future__ import annotations

import threading
from collections.abc import Callable

from kafka_zk_operator.adapters.zk import znodes_topics
from kafka_zk_operator.runtime.health import HealthReporter

from .test_health_adoption import FakeStore, FakeWatches

REF = ("ns", "orders")


class WatchSet(FakeWatches):
    """What is watched now; ``during_add`` runs inside the next :meth:`add`, before it records the
    path (another thread's untrack coming between the reporter's lock and the request)."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: set[str] = set()
        self.during_add: Callable[[], None] | None = None

    def add(self, path: str, *, read: bool, since: int | None = None) -> None:
        hook, self.during_add = self.during_add, None
        if hook is not None:
            hook()
        super().add(path, read=read, since=since)
        self.paths.add(path)

    def discard(self, path: str) -> None:
        self.paths.discard(path)


class Store(FakeStore):
    def __init__(self) -> None:
        self.watches = WatchSet()

    def znode_watches(self, on_change: object, on_unchanged: object = None) -> WatchSet:
        return self.watches


def _reporter() -> tuple[HealthReporter, WatchSet]:
    store = Store()
    return HealthReporter(store, lambda ref, fields: None, "c"), store.watches  # type: ignore[arg-type]


def test_untracked_while_its_topic_watch_is_added() -> None:
    reporter, watches = _reporter()
    watches.during_add = lambda: reporter.untrack("orders", REF)
    reporter.track("orders", REF)
    assert watches.added, "the watch was added"
    assert watches.paths == set(), "and discarded: the topic is no longer tracked"


def test_untracked_while_its_partition_watches_are_added() -> None:
    reporter, watches = _reporter()
    reporter.track("orders", REF)
    watches.during_add = lambda: reporter.untrack("orders", REF)
    reporter._watch_partitions("orders", 2)  # what a refresh does once it knows the partitions
    assert {path for path, _, _ in watches.added} >= {znodes_topics.partition_state_path("orders", 0)}
    assert watches.paths == set()


def test_watches_of_a_topic_still_tracked_stay() -> None:
    reporter, watches = _reporter()
    reporter.track("orders", REF)
    reporter._watch_partitions("orders", 2)
    assert watches.paths == {
        znodes_topics.topic_path("orders"),
        znodes_topics.partition_state_path("orders", 0),
        znodes_topics.partition_state_path("orders", 1),
    }


class SlowDiscards(WatchSet):
    """``during_discard`` runs inside the next :meth:`discard`, before it drops the path."""

    during_discard: Callable[[], None] | None = None

    def discard(self, path: str) -> None:
        hook, self.during_discard = self.during_discard, None
        if hook is not None:
            hook()
        super().discard(path)


def test_a_topic_tracked_again_while_its_untrack_discards_keeps_its_watch() -> None:
    store = Store()
    store.watches = SlowDiscards()
    reporter = HealthReporter(store, lambda ref, fields: None, "c")  # type: ignore[arg-type]
    watches = store.watches
    reporter.track("orders", REF)
    other = ("ns", "orders-again")
    again = threading.Thread(target=reporter.track, args=("orders", other))

    def track_from_another_thread() -> None:
        again.start()
        again.join(timeout=0.3)  # it waits for the untrack to end, or (unlocked) is done by now

    watches.during_discard = track_from_another_thread
    reporter.untrack("orders", REF)
    again.join(timeout=5)
    assert reporter.tracked("orders")
    assert znodes_topics.topic_path("orders") in watches.paths, "the second track's watch was not discarded"
