"""handlers.kafkatopic_resync(_views): the view it keeps of each resource, where each resource's resync
falls in the period, and the pass task (each resource once per period, never one being deleted,
one failure does not end it), and the resources kopf left unhandled, which it touches."""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest

from kafka_zk_operator import metrics
from kafka_zk_operator.domain.crd_identity import MANAGED_ANNOTATION, PAUSED_ANNOTATION
from kafka_zk_operator.handlers import kafkatopic, kafkatopic_resync, kafkatopic_resync_views
from kafka_zk_operator.runtime.resource_index import ResourceIndex


def _body(uid: str = "u-1", **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kafka.zk-operator.io/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {
            "name": "orders",
            "namespace": "team-a",
            "uid": uid,
            "generation": 3,
            "creationTimestamp": "2026-11-28T10:00:00Z",
            "resourceVersion": "77",
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
            "finalizers": ["kafka.zk-operator.io/finalizer", "someone.else/finalizer"],
            "annotations": {
                MANAGED_ANNOTATION: "true",
                PAUSED_ANNOTATION: "false",
                "kubectl.kubernetes.io/last-applied-configuration": "{...a whole copy...}",
            },
            **metadata,
        },
        "spec": {"partitions": 3, "replicationFactor": 3},
        "status": {"observedGeneration": 3, "kopf": {"progress": {}}, "partitions": 3},
    }


def test_the_view_keeps_what_a_resync_reads_and_drops_the_rest() -> None:
    view = kafkatopic_resync_views.resync_view(_body())
    assert view == {
        "apiVersion": "kafka.zk-operator.io/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {
            "name": "orders",
            "namespace": "team-a",
            "uid": "u-1",
            "generation": 3,
            "creationTimestamp": "2026-11-28T10:00:00Z",
            "annotations": {MANAGED_ANNOTATION: "true", PAUSED_ANNOTATION: "false"},
            "finalizers": ["kafka.zk-operator.io/finalizer"],
        },
        "spec": {"partitions": 3, "replicationFactor": 3},
        "status": {"observedGeneration": 3, "partitions": 3},
    }


def test_the_index_keeps_the_view_as_compact_json_and_gives_it_back_whole() -> None:
    packed = kafkatopic_resync_views.packed_view(_body())
    assert isinstance(packed, bytes) and b" " not in packed
    assert kafkatopic_resync_views.unpacked_view(packed) == kafkatopic_resync_views.resync_view(_body())


def test_only_finalized_resources_not_being_deleted_and_reported_on_once_are_resynced() -> None:
    assert kafkatopic_resync_views.resyncable(kafkatopic_resync_views.resync_view(_body()))
    deleting = kafkatopic_resync_views.resync_view(_body(deletionTimestamp="2026-11-28T11:00:00Z"))
    assert deleting["metadata"]["deletionTimestamp"] == "2026-11-28T11:00:00Z"
    assert not kafkatopic_resync_views.resyncable(deleting)
    assert not kafkatopic_resync_views.resyncable(kafkatopic_resync_views.resync_view(_body(finalizers=[])))
    never_reported = _body()
    never_reported["status"] = {}  # just created: its create handler may still be queued
    assert not kafkatopic_resync_views.resyncable(kafkatopic_resync_views.resync_view(never_reported))


def test_slots_are_stable_and_spread_evenly_over_the_period() -> None:
    uids = [str(uuid.uuid4()) for _ in range(10_000)]
    slots = [kafkatopic_resync.slot(uid) for uid in uids]
    assert slots == [kafkatopic_resync.slot(uid) for uid in uids]
    assert all(0.0 <= s < 1.0 for s in slots)
    deciles = [sum(1 for s in slots if d / 10 <= s < (d + 1) / 10) for d in range(10)]
    assert min(deciles) > 850 and max(deciles) < 1150, deciles
    assert 0.45 < statistics.mean(slots) < 0.55


def _views() -> ResourceIndex:
    return ResourceIndex("views", kafkatopic_resync_views.kafkatopic_resync_views)


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(kafkatopic, "RESYNC_SECONDS", 0.2)
    runs: list[str] = []

    async def resync(view: dict[str, Any], memo: Any, owners: Any, stopping: Any, still_wanted: Any) -> None:
        uid = view["metadata"]["uid"]
        runs.append(uid)
        if uid == "fails":
            raise RuntimeError("ZooKeeper went away")

    monkeypatch.setattr(kafkatopic_resync, "resync", resync)
    index = _views()
    passes: Any = kafkatopic_resync.ResyncPasses()
    passes.configure(object(), index, ResourceIndex("owners", kafkatopic.kafkatopic_owners))
    passes.runs = runs
    passes.index = index
    return passes


def _add(index: ResourceIndex, uid: str, **metadata: Any) -> None:
    index.update(_body(uid, **metadata), None)


def test_each_resource_is_resynced_once_per_period_none_being_deleted_and_a_failure_ends_nothing(
    passes: Any,
) -> None:
    for uid in ("a", "b", "fails"):
        _add(passes.index, uid)
    _add(passes.index, "going", deletionTimestamp="2026-11-28T11:00:00Z")

    async def scenario() -> None:
        passes.ensure_started()
        passes.ensure_started()  # started once
        await asyncio.sleep(0.2 + 0.2 * 2.5)  # the first pass starts one period in: 2 passes, half a third
        await passes.stop()

    asyncio.run(scenario())
    assert "going" not in passes.runs
    counts = {uid: passes.runs.count(uid) for uid in ("a", "b", "fails")}
    assert all(2 <= n <= 3 for n in counts.values()), (counts, passes.runs)
    assert passes.task is None


def test_a_resource_gone_between_listing_and_its_slot_is_skipped(passes: Any) -> None:
    _add(passes.index, "a")
    assert passes.current("a") is not None
    passes.index.remove("a")
    assert passes.current("a") is None
    _add(passes.index, "a", deletionTimestamp="2026-11-28T11:00:00Z")
    assert passes.current("a") is None


def test_the_passes_start_only_once_configured() -> None:
    passes = kafkatopic_resync.ResyncPasses()
    passes.ensure_started()  # no memo yet (no running loop either): nothing starts
    assert passes.task is None


def test_a_resync_that_waited_for_the_lock_of_a_deleted_resource_does_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The delete handler held the lock; once it ran, the resync must not read or write."""
    called: list[str] = []
    monkeypatch.setattr(kafkatopic, "_reconcile_now", lambda *a, **k: called.append("reconcile"))
    body: Any = _body("deleted-1")
    result = kafkatopic._reconcile(body, None, None, {}, {}, resync=True, still_wanted=lambda: False)  # type: ignore[arg-type]
    assert result is None and called == []


def _unreported(uid: str, **metadata: Any) -> dict[str, Any]:
    """A resource no handler has reported on (kopf's own status field only)."""
    body = _body(uid, **metadata)
    body["status"] = {"kopf": {"progress": {}}}
    return kafkatopic_resync_views.resync_view(body)


def test_a_resource_awaits_its_handler_until_a_report_even_a_paused_one() -> None:
    assert kafkatopic_resync_views.awaiting_handler(_unreported("new"))
    assert not kafkatopic_resync_views.awaiting_handler(
        _unreported("going", deletionTimestamp="2026-11-28T11:00:00Z")
    )
    assert not kafkatopic_resync_views.awaiting_handler(kafkatopic_resync_views.resync_view(_body()))
    paused = _body()
    paused["status"] = {"conditions": [{"type": "ReconciliationPaused", "status": "True"}]}
    assert not kafkatopic_resync_views.awaiting_handler(kafkatopic_resync_views.resync_view(paused))


def test_only_a_resource_unseen_for_a_period_with_no_handler_queued_or_running_is_forgotten(
    passes: Any,
) -> None:
    view = _unreported("u-9")
    assert not passes.forgotten("u-9", view, 60.0)  # never seen by kopf: not known here
    passes.last_seen["u-9"] = time.monotonic() - 61
    assert passes.forgotten("u-9", view, 60.0)
    assert not passes.forgotten("u-9", kafkatopic_resync_views.resync_view(_body("u-9")), 60.0)  # reported
    passes.seen("u-9")
    assert not passes.forgotten("u-9", view, 60.0)  # kopf just saw it
    passes.last_seen["u-9"] = time.monotonic() - 61
    with kafkatopic._locks.held("u-9"):  # its reconcile runs
        assert not passes.forgotten("u-9", view, 60.0)
    kafkatopic._locks.forget("u-9")
    no_finalizer = _unreported("u-9", finalizers=[])  # kopf's finalizer patch has not landed yet
    assert not passes.forgotten("u-9", no_finalizer, 60.0)
    kafkatopic._pending.record("u-9", {"observedGeneration": 3, "conditions": [{"type": "Ready"}]})
    try:  # its create handler ran; the status patch waits for a connection
        assert not passes.forgotten("u-9", view, 60.0)
    finally:
        kafkatopic._pending.forget("u-9")
    assert passes.forgotten("u-9", view, 60.0)


def test_a_create_queued_in_the_pool_is_never_taken_for_a_forgotten_one(passes: Any) -> None:
    release = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(release.wait)
        queued = pool.submit(lambda: None)  # a create handler waiting for a thread
        passes.memo = SimpleNamespace(executor=pool)
        passes.last_seen["u-9"] = time.monotonic() - 61
        assert kafkatopic_resync.pool_backlog(pool) == 1
        assert not passes.forgotten("u-9", _unreported("u-9"), 60.0)
        release.set()
        queued.result()
        assert kafkatopic_resync.pool_backlog(pool) == 0
        assert passes.forgotten("u-9", _unreported("u-9"), 60.0)


def test_the_passes_touch_a_forgotten_resource_once_a_period_and_resync_it_never(
    passes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    touched: list[tuple[str, dict[str, Any]]] = []

    def patch_status(view: dict[str, Any], fields: dict[str, Any]) -> bool:
        touched.append((view["metadata"]["uid"], fields))
        return True

    monkeypatch.setattr(kafkatopic_resync, "patch_status", patch_status)
    before = _nudges()
    passes.index.update(_unreported("lost"), None)
    passes.last_seen["lost"] = time.monotonic() - 10  # kopf saw it long before the first pass
    passes.index.update(_unreported("queued"), None)
    passes.seen("queued")  # ... and this one just now (then it is seen again: a touch is an event)
    _add(passes.index, "a")

    async def scenario() -> None:
        passes.ensure_started()
        for _ in range(6):  # a period, then two passes and a half
            await asyncio.sleep(0.1)
            passes.seen("queued")
        await passes.stop()

    asyncio.run(scenario())
    assert {uid for uid, _ in touched} == {"lost"}, touched
    assert 1 <= len(touched) <= 2, touched  # at most once a period: a touch restarts its wait
    stamps = [fields["kopf"]["dummy"] for _, fields in touched]
    assert all(set(fields) == {"kopf"} for _, fields in touched) and len(set(stamps)) == len(stamps)
    assert "lost" not in passes.runs and "queued" not in passes.runs and "a" in passes.runs
    assert _nudges() == before + len(touched)


def test_the_passes_forget_when_kopf_saw_resources_that_are_gone(passes: Any) -> None:
    _add(passes.index, "a")
    passes.seen("a")
    passes.seen("gone")
    passes._forget_gone(passes.index.keys())
    assert set(passes.last_seen) == {"a"}


def _nudges() -> float:
    return metrics.HANDLER_NUDGES.labels(kafkatopic.KIND)._value.get()  # type: ignore[no-any-return]
