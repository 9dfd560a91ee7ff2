"""``HealthReporter.track`` with the watches its reconcile's reads set (issue #16): what is
handed over costs nothing, a partition whose watch cannot be is armed since the read, and a topic
znode whose watch cannot be is armed and compared as before. Fake watches say what each path got;
``tests/unit/test_watch_handover.py`` covers the hand-over itself."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from kafka_zk_operator.adapters.zk import znodes_topics
from kafka_zk_operator.adapters.zk.watches import Priming
from kafka_zk_operator.runtime.health import HealthReporter

REF = ("ns", "orders")
TOPIC_PATH = znodes_topics.topic_path("orders")
TWO_PARTITIONS = b'{"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]}}'


class FakeWatches:
    """Hands over the paths in ``handed``; records every other arm."""

    def __init__(self, handed: set[str]) -> None:
        self.handed = handed
        self.adopted: list[str] = []
        self.added: list[tuple[str, bool, int | None]] = []

    def priming(self, wanted: Callable[[str], bool]) -> Priming:
        return Priming(lambda event: None, wanted, 0)

    def adopt(self, path: str, priming: Priming, *, read: bool) -> bool:
        if path in self.handed and path in priming.armed:
            self.adopted.append(path)
            return True
        return False

    def add(self, path: str, *, read: bool, since: int | None = None) -> None:
        self.added.append((path, read, since))

    def release(self, priming: Priming) -> None:
        pass

    def discard(self, path: str) -> None:
        pass


class FakeStore:
    def __init__(self, watches: FakeWatches) -> None:
        self.watches = watches

    def last_zxid(self) -> int:
        return 100

    def znode_watches(self, on_change: Any, on_unchanged: Any = None) -> FakeWatches:
        return self.watches

    @contextlib.contextmanager
    def priming_watches(self, priming: Priming) -> Iterator[Priming]:
        # What the store's reads of the topic would note: its znode and both partitions found.
        priming.armed[TOPIC_PATH] = TWO_PARTITIONS
        for partition in (0, 1):
            priming.armed[znodes_topics.partition_state_path("orders", partition)] = b"{}"
        yield priming


def _track(handed: set[str]) -> tuple[HealthReporter, FakeWatches]:
    watches = FakeWatches(handed)
    reporter = HealthReporter(FakeStore(watches), lambda ref, fields: None, "c")  # type: ignore[arg-type]
    with reporter.reconciling("orders", REF) as written:
        reporter.track("orders", REF, read_since=written.read_since, priming=written.priming)
    return reporter, watches


def test_everything_handed_over_arms_nothing() -> None:
    state_0 = znodes_topics.partition_state_path("orders", 0)
    state_1 = znodes_topics.partition_state_path("orders", 1)
    reporter, watches = _track({TOPIC_PATH, state_0, state_1})
    assert watches.adopted == [TOPIC_PATH, state_0, state_1]
    assert watches.added == []
    assert reporter._watched_partitions["orders"] == 2
    assert reporter._read_since == {}, "nothing left to compare: no read to come"


def test_a_partition_not_handed_over_is_armed_since_the_read() -> None:
    state_0 = znodes_topics.partition_state_path("orders", 0)
    state_1 = znodes_topics.partition_state_path("orders", 1)
    reporter, watches = _track({TOPIC_PATH, state_0})
    assert watches.added == [(state_1, False, 100)]
    assert reporter._watched_partitions["orders"] == 2


def test_a_topic_znode_not_handed_over_is_armed_and_compared_as_before() -> None:
    reporter, watches = _track(set())
    assert watches.adopted == []
    assert watches.added == [(TOPIC_PATH, True, 100)], "its answer then watches the partitions"
    assert reporter._read_since == {"orders": 100}


def test_a_topic_already_tracked_is_not_primed_again() -> None:
    reporter, _ = _track(set())
    with reporter.reconciling("orders", REF) as written:
        assert written.priming is None
