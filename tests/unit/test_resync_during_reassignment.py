"""The KafkaTopic resync while a reassignment runs: Kafka's controller rewrites
``/admin/reassign_partitions`` as partitions finish, and that znode is in every topic's read. When
its stamp alone moved, the resync compares the topic's place in the new state with the place the
last read decided from (``runtime.unchanged``): the same place ends the resync without a read, a
different one (or an older decode that must be read first, or another znode moved) does not.

The real resync (``kafkatopic_resync.resync``) and the store's real comparison of stamps
(``ZkStore.reassignment_moved_alone``) run; ZooKeeper and the full reconcile are fakes.
"""

from __future__ import annotations

from typing import Any

import pytest

from kafka_zk_operator.adapters.zk import znodes_admin
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.handlers import in_pool, kafkatopic, kafkatopic_resync
from kafka_zk_operator.service import topics
from tests.unit.resync_support import clean_record, read_stamps_of, run_resync, unchanged_count

UID = "moving-1"
KEY = ("key",)
PATHS = ("/brokers/topics/orders", znodes_admin.REASSIGN_PARTITIONS_PATH, "/brokers/ids")
STAMPS = ((10, 0), (50, 0), (3, 7))
NOT_IN_IT = (False, None)


class FakeStore:
    """ZooKeeper's last zxid, a probe's stamps and the reassignment decode the store keeps."""

    reassignment_moved_alone = staticmethod(ZkStore.reassignment_moved_alone)

    def __init__(self) -> None:
        self.zxid = 200
        self.stamp_answer: tuple[Any, ...] = STAMPS
        #: mzxid of the kept decode, and the topics in it.
        self.kept: tuple[int, frozenset[str]] | None = None
        #: What the znode holds when read: mzxid, topics.
        self.znode: tuple[int, frozenset[str]] = (0, frozenset())
        self.decodes = 0

    async def recent_zxid(self) -> int:
        return self.zxid

    async def stamps(self, paths: tuple[str, ...]) -> tuple[Any, ...]:
        return self.stamp_answer

    def topic_read_paths(self, topic: str, partitions: int, read: Any = None) -> tuple[str, ...]:
        return PATHS

    def kept_reassignment_place(self, topic: str, mzxid: int) -> tuple[bool, str | None] | None:
        if mzxid == 0:
            return NOT_IN_IT
        if self.kept is None or self.kept[0] < mzxid:
            return None
        return topic in self.kept[1], None

    def reassignment_place(self, topic: str, mzxid: int) -> tuple[bool, str | None]:
        self.decodes += 1
        self.kept = self.znode
        place = self.kept_reassignment_place(topic, mzxid)
        assert place is not None
        return place


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Any:
    fake = FakeStore()
    monkeypatch.setattr(kafkatopic_resync, "_open_store", lambda memo, resource: fake)
    monkeypatch.setattr(kafkatopic_resync, "_resync_key", lambda view, resource, memo, owners: KEY)
    full: list[str] = []

    async def in_the_pool(memo: Any, stopping: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if fn == fake.reassignment_place:
            return fn(*args, **kwargs)
        full.append("full")
        return fake.full_result  # type: ignore[attr-defined]

    monkeypatch.setattr(in_pool, "run_in_pool_unless_stopped", in_the_pool)
    fake.full = full  # type: ignore[attr-defined]
    fake.full_result = None  # type: ignore[attr-defined]
    yield fake
    for forget in (kafkatopic._last_reads.forget, kafkatopic._resyncs.forget, kafkatopic._pending.forget):
        forget(UID)


def _record(reassignment: tuple[bool, str | None] | None = NOT_IN_IT) -> None:
    kafkatopic._last_reads.record(UID, clean_record(KEY, PATHS, STAMPS, reassignment=reassignment))


def _resync(status: dict[str, Any] | None = None) -> None:
    kafkatopic._resyncs.forget(UID)  # due again
    run_resync(UID, "orders", status)


def _rewritten(mzxid: int) -> tuple[Any, ...]:
    return (STAMPS[0], (mzxid, 0), STAMPS[2])


def test_a_rewritten_reassignment_the_topic_is_not_in_ends_the_resync_without_a_read(store: Any) -> None:
    _record()
    store.stamp_answer = _rewritten(60)
    store.kept = (60, frozenset({"payments"}))  # another resync decoded it already
    before = unchanged_count()
    _resync()
    assert store.full == [] and store.decodes == 0
    assert unchanged_count() == before + 1
    record = kafkatopic._last_reads.get(UID)
    assert record is not None and record.stamps == _rewritten(60) and record.zxid == 200
    assert record.reassignment == NOT_IN_IT

    store.zxid = 205  # rewritten once more
    store.stamp_answer = _rewritten(70)
    store.znode = (70, frozenset({"payments"}))
    _resync()
    assert store.full == [] and store.decodes == 1, "the newer state decoded in the pool"
    record = kafkatopic._last_reads.get(UID)
    assert record is not None and record.stamps == _rewritten(70)


def test_a_finished_reassignment_needs_no_decode(store: Any) -> None:
    _record()
    store.stamp_answer = (STAMPS[0], None, STAMPS[2])
    _resync()
    assert store.full == [] and store.decodes == 0


def test_a_topic_that_entered_or_left_the_reassignment_is_read_in_full(store: Any) -> None:
    _record()
    store.stamp_answer = _rewritten(60)
    store.kept = (60, frozenset({"orders"}))
    _resync()
    assert store.full == ["full"]
    assert kafkatopic._last_reads.get(UID) is None

    _record(reassignment=(True, None))
    store.stamp_answer = (STAMPS[0], None, STAMPS[2])  # it finished: the topic may grow now
    _resync()
    assert store.full == ["full", "full"]


def test_an_unreadable_reassignment_is_a_different_place(store: Any) -> None:
    _record(reassignment=(True, "znode /admin/reassign_partitions is malformed: x"))
    store.stamp_answer = _rewritten(60)
    store.kept = (60, frozenset())
    _resync()
    assert store.full == ["full"]


def test_another_moved_znode_or_a_record_without_a_place_is_read_in_full(store: Any) -> None:
    _record()
    store.stamp_answer = ((11, 0), (60, 0), STAMPS[2])  # the topic znode changed too
    store.kept = (60, frozenset())
    _resync()
    assert store.full == ["full"]

    _record(reassignment=None)
    store.stamp_answer = _rewritten(60)
    _resync()
    assert store.full == ["full", "full"]


def test_a_changed_status_is_not_settled_by_the_reassignment_s_place(store: Any) -> None:
    _record()
    store.stamp_answer = _rewritten(60)
    store.kept = (60, frozenset())
    _resync(status={"x": 1})
    assert store.full == ["full"] and store.decodes == 0


def test_a_full_resync_records_the_place_its_read_decided_from(store: Any) -> None:
    store.stamp_answer = _rewritten(60)
    store.full_result = (
        (topics.TopicResult(status={}, observed_partitions=1, reassignment_place=(True, None)), {}),
        read_stamps_of(PATHS, _rewritten(60)),
    )
    _record(reassignment=None)
    _resync()
    record = kafkatopic._last_reads.get(UID)
    assert store.full == ["full"]
    assert record is not None and record.reassignment == (True, None) and record.stamps == _rewritten(60)
