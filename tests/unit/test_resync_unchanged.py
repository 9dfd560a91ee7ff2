"""runtime.unchanged: when a resync may conclude that nothing changed since the last one."""

from __future__ import annotations

import math
from typing import Any

import pytest

from kafka_zk_operator.runtime.unchanged import (
    MAX_PROBED_PARTITIONS,
    LastRead,
    LastReads,
    merge_patched,
    probed,
    status_digest,
)

STAMPS = ((10, 0), None, (12, 3))


def _last(**overrides: object) -> LastRead:
    fields: dict[str, object] = {
        "key": (3, "managed", None, ()),
        "paths": ("/a", "/b", "/c"),
        "stamps": STAMPS,
        "status_digest": status_digest({"observedGeneration": 3}),
        "heartbeat_due": math.inf,
    }
    fields.update(overrides)
    return LastRead(**fields)  # type: ignore[arg-type]


def test_it_holds_only_when_key_stamps_status_and_heartbeat_all_agree() -> None:
    last = _last(heartbeat_due=1000.0)
    digest = status_digest({"observedGeneration": 3})
    assert last.still_holds((3, "managed", None, ()), STAMPS, digest, now=999.0)
    assert not last.still_holds((4, "managed", None, ()), STAMPS, digest, now=999.0), "a new generation"
    assert not last.still_holds((3, "managed", "ns/older", ()), STAMPS, digest, now=999.0), "a conflict"
    assert not last.still_holds((3, "managed", None, ()), ((11, 0), None, (12, 3)), digest, now=999.0), (
        "a write"
    )
    assert not last.still_holds((3, "managed", None, ()), ((10, 0), (13, 0), (12, 3)), digest, now=999.0), (
        "a znode that appeared (e.g. a deletion marker)"
    )
    assert not last.still_holds((3, "managed", None, ()), STAMPS, status_digest({"x": 1}), now=999.0), (
        "status"
    )
    assert not last.still_holds((3, "managed", None, ()), STAMPS, digest, now=1000.0), "heartbeat due"


def test_the_status_digest_ignores_kopfs_field_and_key_order_only() -> None:
    status = {"observedGeneration": 3, "conditions": [{"type": "Ready", "status": "True"}]}
    same = {"conditions": [{"status": "True", "type": "Ready"}], "observedGeneration": 3, "kopf": {"x": 1}}
    assert status_digest(status) == status_digest(same)
    assert status_digest(status) != status_digest({**status, "observedGeneration": 4})
    assert status_digest(None) == status_digest({})


def test_merge_patched_follows_json_merge_patch() -> None:
    status = {"a": 1, "b": {"x": 1, "y": 2}, "c": [1, 2], "kopf": {"p": 1}}
    patched = merge_patched(status, {"a": None, "b": {"y": None, "z": 3}, "c": [3], "d": {"e": None, "f": 1}})
    assert patched == {"b": {"x": 1, "z": 3}, "c": [3], "kopf": {"p": 1}, "d": {"f": 1}}
    assert status == {"a": 1, "b": {"x": 1, "y": 2}, "c": [1, 2], "kopf": {"p": 1}}, (
        "the input is not changed"
    )


def test_records_are_kept_per_uid_and_forgotten() -> None:
    reads = LastReads()
    reads.record("u1", _last())
    assert reads.get("u1") == _last() and reads.get("u2") is None and len(reads) == 1
    reads.forget("u1")
    reads.forget("u1")
    assert reads.get("u1") is None and len(reads) == 0


def test_only_topics_of_a_bounded_partition_count_are_probed() -> None:
    assert probed(0) and probed(100) and probed(MAX_PROBED_PARTITIONS)
    assert not probed(MAX_PROBED_PARTITIONS + 1) and not probed(1_000_000), "a spec may ask for a million"


def test_a_resync_never_builds_the_probe_of_a_huge_topic(monkeypatch: pytest.MonkeyPatch) -> None:
    """A spec of 1,000,000 partitions (the schema allows it) once held the event loop for minutes
    while its resync probed a million state znodes; other resources' handlers stalled. Now a
    resync probes only the paths of a clean read's record, and a read of a topic that large
    records nothing: not even its paths are built."""
    from kafka_zk_operator.adapters.zk.read_stamps import ReadStamps
    from kafka_zk_operator.handlers import in_pool, kafkatopic, kafkatopic_resync
    from kafka_zk_operator.service import topics
    from tests.unit.resync_support import run_resync

    asked: list[str] = []

    class Store:
        async def recent_zxid(self) -> int:
            return 100

        async def stamps(self, paths: tuple[str, ...]) -> None:
            asked.append("probe")

        def topic_read_paths(self, topic: str, partitions: int, read: Any = None) -> tuple[str, ...]:
            asked.append(f"paths of {partitions}")
            return tuple(f"/{topic}/{p}" for p in range(partitions))

    async def huge_read(*args: Any, **kwargs: Any) -> Any:
        return (topics.TopicResult(status={}, observed_partitions=1_000_000), {}), ReadStamps()

    monkeypatch.setattr(kafkatopic_resync, "_open_store", lambda memo, resource: Store())
    monkeypatch.setattr(kafkatopic_resync, "_resync_key", lambda view, resource, memo, owners: "key")
    monkeypatch.setattr(in_pool, "run_in_pool_unless_stopped", huge_read)
    try:
        run_resync("huge-1", "t", {"partitions": 1_000_000})
        assert asked == [] and kafkatopic._last_reads.get("huge-1") is None
    finally:
        kafkatopic._resyncs.forget("huge-1")


def test_no_transaction_since_holds_only_with_a_known_equal_zxid_and_the_rest() -> None:
    digest = status_digest({"observedGeneration": 3})
    key = (3, "managed", None, ())
    last = _last(zxid=500, heartbeat_due=1000.0)
    assert last.holds_with_no_transaction_since(key, 500, digest, now=999.0)
    assert not last.holds_with_no_transaction_since(key, 501, digest, now=999.0), "a transaction since"
    assert not last.holds_with_no_transaction_since((4, "managed", None, ()), 500, digest, now=999.0)
    assert not last.holds_with_no_transaction_since(key, 500, status_digest({"x": 1}), now=999.0)
    assert not last.holds_with_no_transaction_since(key, 500, digest, now=1000.0), "heartbeat due"
    assert not _last().holds_with_no_transaction_since(key, 500, digest, now=0.0), "no zxid recorded"
