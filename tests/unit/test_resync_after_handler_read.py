"""A handler's reconcile that wrote nothing is the baseline of the resource's next resync.

A restarted operator adopts every topic with one read each; each topic's first resync then read
it all again (a full reconcile per topic in the first period after a restart, issue #16). The
handler now records what its read depended on, with the session's zxid from before the read
and no stamps (``runtime.unchanged``). These tests run the real handler body
(``kafkatopic._reconcile_now``) and the real resync (``kafkatopic_resync.resync``) with fakes
only for ZooKeeper and the pure reconcile, so the key and status digest the handler records are
the ones the resync computes.
"""

from __future__ import annotations

import asyncio
import math
from types import SimpleNamespace
from typing import Any, cast

import kopf
import pytest

from kafka_zk_operator.handlers import in_pool, kafkatopic, kafkatopic_resync
from kafka_zk_operator.service import topics

UID = "adopted-1"
PATHS = ("/brokers/topics/orders", "/brokers/ids")
IN_SYNC = {"observedGeneration": 1, "partitions": 1, "topicName": "orders"}
#: The owners index: no other resource claims the topic.
NO_CLAIMS: Any = SimpleNamespace(get=lambda key: [])


class FakeStore:
    """ZooKeeper as the handler and the resync see it: the session's last zxid, ZooKeeper's
    last transaction id and the stamps of a probe."""

    def __init__(self) -> None:
        self.session_zxid: int | None = 100
        self.zookeeper_zxid: int | None = 100
        self.probes = 0

    def last_zxid(self) -> int | None:
        return self.session_zxid

    def topic_read_paths(self, topic: str, partitions: int) -> tuple[str, ...]:
        return PATHS

    async def recent_zxid(self) -> int | None:
        return self.zookeeper_zxid

    async def stamps(self, paths: tuple[str, ...]) -> tuple[Any, ...]:
        self.probes += 1
        return ((10, 0), (3, 7))


class FakeSettings:
    config_drift = "revert"
    deleted_topic_drift = "recreate"
    create_wait_seconds = 10.0
    status_heartbeat_seconds = math.inf

    def cluster(self, name: str | None) -> Any:
        return SimpleNamespace(name="local")


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Any:
    store = FakeStore()
    runtime = SimpleNamespace(name="local", health=None, store=lambda: store)
    memo = SimpleNamespace(settings=FakeSettings(), clusters=SimpleNamespace(get=lambda name: runtime))
    monkeypatch.setattr(kafkatopic_resync, "_open_store", lambda memo, resource: store)
    full: list[str] = []

    async def full_reconcile(*args: Any, **kwargs: Any) -> None:
        full.append("full")

    monkeypatch.setattr(in_pool, "run_in_pool_unless_stopped", full_reconcile)
    yield SimpleNamespace(store=store, memo=memo, full=full, set_result=_result_setter(monkeypatch))
    for forget in (kafkatopic._last_reads.forget, kafkatopic._resyncs.forget, kafkatopic._pending.forget):
        forget(UID)


def _result_setter(monkeypatch: pytest.MonkeyPatch) -> Any:
    def set_result(**fields: Any) -> None:
        result = topics.TopicResult(status=dict(IN_SYNC), observed_partitions=1, **fields)
        monkeypatch.setattr(topics, "reconcile_topic", lambda *args, **kwargs: result)

    return set_result


def _body() -> dict[str, Any]:
    return {
        "metadata": {"uid": UID, "name": "orders", "namespace": "ns", "generation": 1},
        "spec": {"partitions": 1, "replicationFactor": 3},
        "status": dict(IN_SYNC),
    }


def _handle(cluster: Any) -> None:
    body = _body()
    kafkatopic._reconcile_now(kopf.Body(cast(kopf.RawBody, body)), kopf.Patch(), cluster.memo, NO_CLAIMS, body["status"], UID)


def _resync(cluster: Any) -> None:
    asyncio.run(kafkatopic_resync.resync(_body(), cluster.memo, NO_CLAIMS, asyncio.Event(), lambda: True))


def test_an_adopted_topic_is_not_read_again_while_zookeeper_is_quiet(cluster: Any) -> None:
    cluster.set_result()
    _handle(cluster)
    record = kafkatopic._last_reads.get(UID)
    assert record is not None and record.zxid == 100 and record.stamps is None and record.paths == PATHS
    _resync(cluster)
    assert cluster.store.probes == 0 and cluster.full == [], "ended on the zxid: nothing read"


def test_a_transaction_after_the_handlers_read_is_a_full_reconcile(cluster: Any) -> None:
    """The handler took no stamps: the probe has nothing to agree with, so the resync reads."""
    cluster.set_result()
    _handle(cluster)
    cluster.store.zookeeper_zxid = 101
    _resync(cluster)
    assert cluster.store.probes == 1 and cluster.full == ["full"]


def test_the_zxid_is_the_one_from_before_the_read(cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A transaction seen during the read (the session's zxid moved while it read) is not taken
    for 'seen before': the record keeps the older zxid, and the resync reads in full."""

    def reading(*args: Any, **kwargs: Any) -> topics.TopicResult:
        cluster.store.session_zxid = 101
        return topics.TopicResult(status=dict(IN_SYNC), observed_partitions=1)

    monkeypatch.setattr(topics, "reconcile_topic", reading)
    _handle(cluster)
    record = kafkatopic._last_reads.get(UID)
    assert record is not None and record.zxid == 100
    cluster.store.zookeeper_zxid = 101
    _resync(cluster)
    assert cluster.full == ["full"]


@pytest.mark.parametrize(
    "outcome",
    [{"writes": 1}, {"retry_after": 5.0}, {"rf_change": (3, 2)}],
    ids=["wrote", "asked-for-a-retry", "hands-over-an-rf-change"],
)
def test_a_reconcile_that_did_more_than_read_is_no_baseline(
    cluster: Any, monkeypatch: pytest.MonkeyPatch, outcome: dict[str, Any]
) -> None:
    cluster.set_result(**outcome)
    monkeypatch.setattr(kafkatopic, "_hand_over_replication_factor", lambda *args: None)
    with pytest.raises(kopf.TemporaryError) if "retry_after" in outcome else _nothing():
        _handle(cluster)
    assert kafkatopic._last_reads.get(UID) is None


def test_no_known_zxid_is_no_baseline(cluster: Any) -> None:
    cluster.set_result()
    cluster.store.session_zxid = None
    _handle(cluster)
    assert kafkatopic._last_reads.get(UID) is None


def test_a_reconcile_that_changed_the_status_is_no_baseline(cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first reconcile of an existing topic reports it ``Adopted``; the next one, from that
    status, moves the reason on to ``InSync`` (found by ``tests/e2e/test_import.py``). So the
    status a handler changed is no fixed point, and the next resync must read in full."""
    adopted = {**IN_SYNC, "conditions": [{"type": "Ready", "status": "True", "reason": "Adopted"}]}
    result = topics.TopicResult(status=adopted, observed_partitions=1)
    monkeypatch.setattr(topics, "reconcile_topic", lambda *args, **kwargs: result)
    _handle(cluster)
    assert kafkatopic._last_reads.get(UID) is None
    _resync(cluster)
    assert cluster.full == ["full"]


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
