"""A reconcile that changes nothing (an operator adopting its topics) gives the health reporter
what the status holds, so its first refresh of unchanged leaders and ISR writes nothing.

Found by ``benchmarks/topics_bench.py``: a restarted operator sent 86 status patches while adopting
1,000 in-sync topics.
"""

from __future__ import annotations

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
    def read_topic(self, topic: str) -> object:
        return object()

    def broker_ids(self) -> set[int]:
        return {1, 2, 3}

    def znode_watches(self, on_change: Any) -> FakeWatches:
        return FakeWatches()


class FakeWatches:
    def add(self, path: str, *, read: bool) -> None:
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
        reporter.track("orders", REF)
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
