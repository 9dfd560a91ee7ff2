"""The health reporter while ZooKeeper is unreachable: a batch of refreshes stops at the first
topic that cannot be read, says so once for all of them, and tries them again after a wait that
doubles while the outage lasts.

Found in the fault suite's operator log: a ZooKeeper outage gave one warning per topic of each
batch ("could not refresh the status of topic ...": 204 lines in one test's burst, 56 in
another's; a batch of 10,000 topics would give 10,000), and the topics left were not tried again
until their next event or resync.
"""

from __future__ import annotations

import logging

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.runtime import health
from kafka_zk_operator.runtime.health import UNAVAILABLE_MAX_WAIT_S, UNAVAILABLE_WAIT_S, HealthReporter
from tests.unit import test_health_adoption
from tests.unit.clock_support import ManualClock

LIVE = {"partitions": 1, "partitionStates": [{"partition": 0, "leader": 1, "isr": [1, 2, 3]}]}
TOPICS = ["a", "b", "c"]


class FakeStore(test_health_adoption.FakeStore):
    """ZooKeeper as the reporter reads it: unreachable while ``down``; ``malformed`` topics
    cannot be decoded."""

    def __init__(self) -> None:
        self.down = False
        self.malformed: set[str] = set()
        self.reads: list[str] = []

    def read_topic(self, topic: str) -> object:
        self.reads.append(topic)
        if self.down:
            raise errors.ClusterUnavailable(
                "ZooKeeper is unreachable (the session is connecting: reconnecting)"
            )
        if topic in self.malformed:
            raise errors.MalformedZnode(f"/brokers/topics/{topic}", "not JSON")
        return object()


@pytest.fixture
def setup(monkeypatch: pytest.MonkeyPatch) -> tuple[HealthReporter, FakeStore, ManualClock, list[str]]:
    monkeypatch.setattr(health, "partition_fields", lambda observed, brokers: dict(LIVE))
    store = FakeStore()
    patched: list[str] = []
    reporter = HealthReporter(store, lambda ref, fields: patched.append(ref[1]), "c")  # type: ignore[arg-type]
    clock = ManualClock(1000.0)
    reporter.clock = clock
    for topic in TOPICS:
        reporter.track(topic, ("ns", topic))
    return reporter, store, clock, patched


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_an_outage_stops_the_batch_says_so_once_and_keeps_every_topic_for_later(
    setup: tuple[HealthReporter, FakeStore, ManualClock, list[str]], caplog: pytest.LogCaptureFixture
) -> None:
    reporter, store, clock, patched = setup
    store.down = True
    with caplog.at_level(logging.WARNING, logger=health.__name__):
        reporter._refresh_batch(TOPICS)
    assert store.reads == ["a"], "the first failure stops the batch"
    assert patched == []
    assert _warnings(caplog) == [
        "could not refresh the status of 3 topics (a, b, c): ZooKeeper is unreachable (the session is "
        "connecting: reconnecting); trying again in 5 s"
    ]
    assert reporter._dirty == set(TOPICS)
    with reporter._lock:
        assert reporter._next_refresh() == (False, UNAVAILABLE_WAIT_S), "not before the wait"
    clock.now += UNAVAILABLE_WAIT_S
    with reporter._lock:
        assert reporter._next_refresh() == (True, None)

    store.down = False
    reporter._refresh_batch(sorted(reporter._dirty))
    assert patched == TOPICS, "every topic refreshed once ZooKeeper answers"


def test_the_wait_doubles_while_the_outage_lasts_and_starts_again_once_zookeeper_answers(
    setup: tuple[HealthReporter, FakeStore, ManualClock, list[str]], caplog: pytest.LogCaptureFixture
) -> None:
    reporter, store, clock, _ = setup
    store.down = True
    waits = []
    for _ in range(6):
        reporter._refresh_batch(TOPICS)
        waits.append(reporter._retry_at - clock.now)
    assert waits == [5.0, 10.0, 20.0, 40.0, UNAVAILABLE_MAX_WAIT_S, UNAVAILABLE_MAX_WAIT_S]
    store.down = False
    reporter._refresh_batch(TOPICS)
    store.down = True
    reporter._refresh_batch(TOPICS)
    assert reporter._retry_at - clock.now == UNAVAILABLE_WAIT_S


def test_a_topic_that_cannot_be_decoded_is_reported_alone_and_the_batch_goes_on(
    setup: tuple[HealthReporter, FakeStore, ManualClock, list[str]], caplog: pytest.LogCaptureFixture
) -> None:
    reporter, store, _, patched = setup
    store.malformed = {"b"}
    with caplog.at_level(logging.WARNING, logger=health.__name__):
        reporter._refresh_batch(TOPICS)
    assert patched == ["a", "c"]
    assert _warnings(caplog) == [
        "could not refresh the status of topic b: znode /brokers/topics/b is malformed: not JSON"
    ]
    assert reporter._dirty == set()
    with reporter._lock:
        assert reporter._next_refresh() == (False, None), "nothing to wait for"


def test_an_untracked_topic_is_not_kept_for_later(
    setup: tuple[HealthReporter, FakeStore, ManualClock, list[str]],
) -> None:
    reporter, store, _, _ = setup
    reporter.untrack("c", ("ns", "c"))
    store.down = True
    reporter._refresh_batch(TOPICS)
    assert reporter._dirty == {"a", "b"}


def test_an_answer_from_zookeeper_ends_the_wait(
    setup: tuple[HealthReporter, FakeStore, ManualClock, list[str]],
) -> None:
    """After a reconnection every watch is armed and reported again: its answers show ZooKeeper
    reachable, and the topics kept by the outage are refreshed without waiting out the pause."""
    reporter, store, _, _ = setup
    store.down = True
    reporter._refresh_batch(TOPICS)
    with reporter._lock:
        assert reporter._next_refresh()[0] is False
    reporter._on_znode("/brokers/topics/a/partitions/0/state", None)
    with reporter._lock:
        assert reporter._next_refresh() == (True, None)
    reporter._refresh_batch(TOPICS)  # still down: waiting again
    reporter._on_brokers(["1", "2", "3"])
    with reporter._lock:
        assert reporter._next_refresh() == (True, None)
