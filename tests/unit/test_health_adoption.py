"""A reconcile that changes nothing (an operator adopting its topics) gives the health reporter
what the status holds, so its first refresh of unchanged leaders and ISR writes nothing.

Found by ``benchmarks/topics_bench.py``: a restarted operator sent 86 status patches while adopting
1,000 in-sync topics.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_zk_operator.runtime import health
from kafka_zk_operator.runtime.health import HealthReporter

REF = ("ns", "orders")
LIVE = {
    "partitions": 1,
    "partitionStates": [{"partition": 0, "leader": 1, "isr": [1, 2, 3]}],
    "offlinePartitions": 0,
}


class FakeStore:
    zxid: int | None = 100

    def read_topic(self, topic: str) -> object:
        return object()

    def broker_ids(self) -> set[int]:
        return {1, 2, 3}

    def last_zxid(self) -> int | None:
        return self.zxid

    def znode_watches(self, on_change: Any, on_unchanged: Any = None) -> FakeWatches:
        return FakeWatches()

    @contextlib.contextmanager
    def priming_watches(self, priming: Any) -> Iterator[Any]:
        yield priming


class FakeWatches:
    def __init__(self) -> None:
        self.added: list[tuple[str, bool, int | None]] = []

    def add(self, path: str, *, read: bool, since: int | None = None) -> None:
        self.added.append((path, read, since))

    def priming(self, wanted: Any) -> None:
        return None  # no read sets a watch here: track arms them

    def release(self, priming: Any) -> None:
        pass

    def discard(self, path: str) -> None:
        pass

    def stop(self) -> None:
        pass


@pytest.fixture
def reporter(monkeypatch: pytest.MonkeyPatch) -> tuple[HealthReporter, list[dict[str, Any]]]:
    truth = dict(LIVE)
    monkeypatch.setattr(health, "partition_fields", lambda observed, brokers: dict(truth))
    patches: list[dict[str, Any]] = []
    reporter = HealthReporter(FakeStore(), lambda ref, fields: patches.append(dict(fields)), "c")  # type: ignore[arg-type]
    return reporter, patches


def _reconcile(reporter: HealthReporter, changed: dict[str, Any]) -> None:
    with reporter.reconciling("orders", REF) as written:
        reporter.track("orders", REF, read_since=written.read_since)
        written.fields = dict(changed)
        written.status = dict(LIVE)


def test_adopting_an_in_sync_topic_writes_nothing(
    reporter: tuple[HealthReporter, list[dict[str, Any]]],
) -> None:
    health_reporter, patches = reporter
    _reconcile(health_reporter, changed={})
    health_reporter._refresh_one("orders")
    assert patches == []


def test_a_change_after_adoption_is_still_written(
    reporter: tuple[HealthReporter, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    health_reporter, patches = reporter
    _reconcile(health_reporter, changed={})
    moved = {**LIVE, "partitionStates": [{"partition": 0, "leader": 2, "isr": [2, 3]}]}
    monkeypatch.setattr(health, "partition_fields", lambda observed, brokers: dict(moved))
    before = _refreshes()
    health_reporter._refresh_one("orders")
    assert len(patches) == 1 and patches[0]["partitionStates"] == moved["partitionStates"]
    assert _refreshes() == before + 1, "kzo_status_refreshes_total counts what Kafka's changes cost"
    health_reporter._refresh_one("orders")
    assert len(patches) == 1 and _refreshes() == before + 1, "the same fields again: no patch, no count"


def _refreshes() -> float:
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value("kzo_status_refreshes_total", {"cluster": "c"}) or 0.0


TOPIC_PATH = "/brokers/topics/orders"
TWO_PARTITIONS = b'{"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]}}'


def _added(reporter: HealthReporter) -> list[tuple[str, bool, int | None]]:
    return reporter._watches.added  # type: ignore[attr-defined, no-any-return]


def test_an_adopted_topic_unchanged_since_its_read_is_watched_without_a_refresh(
    reporter: tuple[HealthReporter, list[dict[str, Any]]],
) -> None:
    """The reconcile read the topic after zxid 100 (``FakeStore.zxid``): its watches are set
    since then, and the unchanged topic znode only arms its partitions, with the same zxid."""
    health_reporter, _ = reporter
    _reconcile(health_reporter, changed={})
    assert _added(health_reporter) == [(TOPIC_PATH, True, 100)]
    health_reporter._on_znode_unchanged(TOPIC_PATH, TWO_PARTITIONS)
    assert _added(health_reporter)[1:] == [
        ("/brokers/topics/orders/partitions/0/state", False, 100),
        ("/brokers/topics/orders/partitions/1/state", False, 100),
    ]
    assert health_reporter._dirty == set(), "nothing to read again"
    assert health_reporter._gauge_samples() == [("c", "orders", 0, 0)], "gauges from the reconcile's read"


def test_a_topic_changed_since_its_read_is_refreshed(
    reporter: tuple[HealthReporter, list[dict[str, Any]]],
) -> None:
    health_reporter, _ = reporter
    _reconcile(health_reporter, changed={})
    health_reporter._on_znode(TOPIC_PATH, TWO_PARTITIONS)  # its arm found it modified after 100
    assert health_reporter._dirty == {"orders"}
    assert [since for _, _, since in _added(health_reporter)[1:]] == [None, None], "read by the refresh"


def test_a_broker_change_after_the_read_makes_the_first_report_a_refresh(
    reporter: tuple[HealthReporter, list[dict[str, Any]]],
) -> None:
    """The live brokers are in the fields the reconcile read; a change of them reported before
    the topic was tracked did not mark it dirty, so its first report must."""
    health_reporter, _ = reporter
    store: FakeStore = health_reporter.store  # type: ignore[assignment]
    store.zxid = 120
    health_reporter._on_brokers(["1", "2"])  # seen at zxid 120, after...
    store.zxid = 100
    _reconcile(health_reporter, changed={})  # ... the reconcile's read since 100
    assert _added(health_reporter) == [(TOPIC_PATH, True, None)], "reported as a change: refreshed"


def test_without_a_known_zxid_the_topic_is_refreshed(
    reporter: tuple[HealthReporter, list[dict[str, Any]]],
) -> None:
    health_reporter, _ = reporter
    health_reporter.store.zxid = None  # type: ignore[attr-defined]
    _reconcile(health_reporter, changed={})
    assert _added(health_reporter) == [(TOPIC_PATH, True, None)]
