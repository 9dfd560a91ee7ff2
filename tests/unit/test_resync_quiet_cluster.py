"""The KafkaTopic resync on a quiet cluster: when ZooKeeper applied no transaction since the last
clean resync, nothing is probed; when it did, the stamps decide, and a match moves the record's
zxid forward so that the next quiet period costs nothing again (``stat_probe.RecentZxid``)."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_zk_operator.handlers import in_pool, kafkatopic, kafkatopic_resync
from kafka_zk_operator.runtime import unchanged
from kafka_zk_operator.service import topics
from tests.unit.resync_support import clean_record, read_stamps_of, run_resync, unchanged_count

UID = "quiet-1"
KEY = ("key",)
PATHS = ("/brokers/topics/t", "/brokers/ids")
STAMPS = ((10, 0), (3, 7))


class FakeStore:
    def __init__(self) -> None:
        self.zxid: int | None = 100
        self.stamp_answer: tuple[Any, ...] | None = STAMPS
        self.probes = 0

    async def recent_zxid(self) -> int | None:
        return self.zxid

    async def stamps(self, paths: tuple[str, ...]) -> tuple[Any, ...] | None:
        self.probes += 1
        return self.stamp_answer


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Any:
    fake = FakeStore()
    monkeypatch.setattr(kafkatopic_resync, "_open_store", lambda memo, resource: fake)
    monkeypatch.setattr(kafkatopic_resync, "_resync_key", lambda view, resource, memo, owners: KEY)
    reconciles: list[str] = []

    async def no_reconcile(*args: Any, **kwargs: Any) -> None:
        reconciles.append("full")
        return None

    monkeypatch.setattr(in_pool, "run_in_pool_unless_stopped", no_reconcile)
    fake.reconciles = reconciles  # type: ignore[attr-defined]
    kafkatopic._last_reads.record(UID, clean_record(KEY, PATHS, STAMPS))
    yield fake
    kafkatopic._last_reads.forget(UID)
    kafkatopic._resyncs.forget(UID)


def _resync(status: dict[str, Any] | None = None) -> None:
    run_resync(UID, "t", status)


def test_no_transaction_since_the_record_means_no_probe(store: Any) -> None:
    before = unchanged_count()
    _resync()
    assert store.probes == 0 and store.reconciles == []
    assert unchanged_count() == before + 1


def test_a_transaction_elsewhere_is_settled_by_the_stamps_and_moves_the_zxid(store: Any) -> None:
    store.zxid = 105  # something changed somewhere in ZooKeeper, not what this topic read
    _resync()
    assert store.probes == 1 and store.reconciles == []
    record = kafkatopic._last_reads.get(UID)
    assert record is not None and record.zxid == 105
    _resync()  # quiet since 105: no probe
    assert store.probes == 1


def test_a_changed_stamp_is_a_full_reconcile(store: Any) -> None:
    store.zxid, store.stamp_answer = 110, ((11, 0), (3, 7))
    _resync()
    assert store.probes == 1 and store.reconciles == ["full"]
    assert kafkatopic._last_reads.get(UID) is None


def test_an_unknown_zxid_falls_back_to_the_stamps(store: Any) -> None:
    store.zxid = None
    _resync()
    assert store.probes == 1 and store.reconciles == []
    record = kafkatopic._last_reads.get(UID)
    assert record is not None and record.zxid == 100, "kept: nothing newer is known"


def test_a_changed_status_is_not_settled_by_a_quiet_zookeeper(store: Any) -> None:
    _resync(status={"x": 1})
    assert store.reconciles == ["full"]


def test_a_full_resync_records_the_status_its_patch_makes(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leaders moved: the full read patches the live fields (which pending_status leaves out to
    the health reporter); the record holds the status with that patch, so the next resync of the
    unchanged topic ends without a read."""
    store.zxid, store.stamp_answer = 110, ((11, 0), (3, 7))
    store.topic_read_paths = lambda topic, partitions, read=None: PATHS
    changes = {"partitionStates": [{"partition": 0, "leader": 2, "isr": [2]}], "lastSyncTime": "t1"}

    async def read_only_reconcile(*args: Any, **kwargs: Any) -> Any:
        return (topics.TopicResult(status={}, observed_partitions=1), changes), read_stamps_of(
            PATHS, ((11, 0), (3, 7))
        )

    monkeypatch.setattr(in_pool, "run_in_pool_unless_stopped", read_only_reconcile)
    _resync()
    record = kafkatopic._last_reads.get(UID)
    assert record is not None and record.zxid == 110 and record.stamps == ((11, 0), (3, 7))
    assert record.status_digest == unchanged.status_digest(changes)
    probes = store.probes
    _resync(status=dict(changes))  # the patch landed; ZooKeeper quiet since
    assert store.probes == probes, "ended on the zxid, no probe and no read"
