"""A handler's reconcile that wrote nothing is the baseline of the resource's next resync.

A restarted operator adopts every topic with one read each; each topic's first resync then read
it all again (a full reconcile per topic in the first period after a restart, issue #16). The
handler now records what its read depended on, with the session's zxid from before the read
and the stamps its read found (``runtime.unchanged``, ``adapters.zk.read_stamps``). These tests
run the real handler body (``kafkatopic._reconcile_now``) and the real resync
(``kafkatopic_resync.resync``) with fakes only for ZooKeeper and the pure reconcile, so the key
and status digest the handler records are the ones the resync computes.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, cast

import kopf
import pytest

from kafka_zk_operator.adapters.zk.read_stamps import ReadStamps
from kafka_zk_operator.handlers import in_pool, kafkatopic, kafkatopic_resync
from kafka_zk_operator.service import topics

UID = "adopted-1"
PATHS = ("/brokers/topics/orders", "/brokers/ids")
READ_STAMPS = ((10, 0), (3, 7))
IN_SYNC = {"observedGeneration": 1, "partitions": 1, "topicName": "orders"}
#: The owners index: no other resource claims the topic.
NO_CLAIMS: Any = SimpleNamespace(get=lambda key: [])


class FakeStore:
    """ZooKeeper as the handler and the resync see it: the session's last zxid, ZooKeeper's
    last transaction id, the stamps the handler's read found and the stamps of a probe."""

    def __init__(self) -> None:
        self.session_zxid: int | None = 100
        self.zookeeper_zxid: int | None = 100
        #: path -> stamp, as the handler's read found them.
        self.found: dict[str, Any] = dict(zip(PATHS, READ_STAMPS, strict=True))
        self.probe_answer: tuple[Any, ...] = READ_STAMPS
        self.probes = 0

    def last_zxid(self) -> int | None:
        return self.session_zxid

    def topic_read_paths(self, topic: str, partitions: int, read: Any = None) -> tuple[str, ...]:
        return PATHS

    @contextlib.contextmanager
    def recording_stamps(self) -> Iterator[ReadStamps]:
        read = ReadStamps()
        for path, stamp in self.found.items():  # what the (faked) reconcile's read finds
            read.note(path, stamp)
        yield read

    async def recent_zxid(self) -> int | None:
        return self.zookeeper_zxid

    async def stamps(self, paths: tuple[str, ...]) -> tuple[Any, ...]:
        self.probes += 1
        return self.probe_answer


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
    runtime = SimpleNamespace(
        name="local", health=None, store=lambda: store, backend=lambda: store, phase=None
    )
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
    kafkatopic._reconcile_now(
        kopf.Body(cast(kopf.RawBody, body)), kopf.Patch(), cluster.memo, NO_CLAIMS, body["status"], UID
    )


def _resync(cluster: Any) -> None:
    asyncio.run(kafkatopic_resync.resync(_body(), cluster.memo, NO_CLAIMS, asyncio.Event(), lambda: True))


def test_an_adopted_topic_is_not_read_again_while_zookeeper_is_quiet(cluster: Any) -> None:
    cluster.set_result()
    _handle(cluster)
    record = kafkatopic._last_reads.get(UID)
    assert (
        record is not None and record.zxid == 100 and record.stamps == READ_STAMPS and record.paths == PATHS
    )
    _resync(cluster)
    assert cluster.store.probes == 0 and cluster.full == [], "ended on the zxid: nothing read"


def test_a_transaction_elsewhere_after_the_handlers_read_is_settled_by_its_stamps(cluster: Any) -> None:
    """After a restart, the first write anywhere in ZooKeeper used to make every topic's next
    resync a full read (the handler's record had no stamps): now the stamps its read found
    settle it, and the record's zxid moves on."""
    cluster.set_result()
    _handle(cluster)
    cluster.store.zookeeper_zxid = 101
    _resync(cluster)
    assert cluster.store.probes == 1 and cluster.full == []
    record = kafkatopic._last_reads.get(UID)
    assert record is not None and record.zxid == 101


def test_a_znode_changed_since_the_handlers_read_is_a_full_reconcile(cluster: Any) -> None:
    cluster.set_result()
    _handle(cluster)
    cluster.store.zookeeper_zxid = 101
    cluster.store.probe_answer = ((11, 0), (3, 7))  # the topic znode was written
    _resync(cluster)
    assert cluster.store.probes == 1 and cluster.full == ["full"]


@pytest.mark.parametrize("missing", ["not read", "read in two states"])
def test_a_read_without_every_stamp_leaves_only_the_zxid(cluster: Any, missing: str) -> None:
    """A znode whose stamp the read did not find (or found twice, different) cannot be compared:
    the record has no stamps, a transaction since is a full reconcile, and nothing is probed."""
    cluster.set_result()
    if missing == "not read":
        del cluster.store.found["/brokers/ids"]
    else:
        original = cluster.store.recording_stamps

        @contextlib.contextmanager
        def twice() -> Iterator[ReadStamps]:
            with original() as read:
                read.note("/brokers/ids", (3, 8))
                yield read

        cluster.store.recording_stamps = twice
    _handle(cluster)
    record = kafkatopic._last_reads.get(UID)
    assert record is not None and record.stamps is None
    cluster.store.zookeeper_zxid = 101
    _resync(cluster)
    assert cluster.store.probes == 0 and cluster.full == ["full"]


def test_the_zxid_is_the_one_from_before_the_read(cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A transaction seen during the read (the session's zxid moved while it read) is not taken
    for 'seen before': the record keeps the older zxid, and the resync does not end on it."""

    def reading(*args: Any, **kwargs: Any) -> topics.TopicResult:
        cluster.store.session_zxid = 101
        return topics.TopicResult(status=dict(IN_SYNC), observed_partitions=1)

    monkeypatch.setattr(topics, "reconcile_topic", reading)
    _handle(cluster)
    record = kafkatopic._last_reads.get(UID)
    assert record is not None and record.zxid == 100
    cluster.store.zookeeper_zxid = 101
    _resync(cluster)
    assert cluster.store.probes == 1, "it compared the stamps"


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


def test_a_reconcile_that_changed_the_status_is_no_baseline(
    cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first reconcile of an existing topic reports it ``Adopted``; the next one, from that
    status, moves the reason on to ``InSync`` (found by ``tests/e2e/test_import.py``). So the
    status a handler changed is no fixed point, and the next resync must read in full."""
    adopted = {**IN_SYNC, "conditions": [{"type": "Ready", "status": "True", "reason": "Adopted"}]}
    result = topics.TopicResult(status=adopted, observed_partitions=1)
    monkeypatch.setattr(topics, "reconcile_topic", lambda *args, **kwargs: result)
    _handle(cluster)
    assert kafkatopic._last_reads.get(UID) is None
    _resync(cluster)
    assert cluster.full == ["full"] and cluster.store.probes == 0, "no record: nothing to probe"


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
