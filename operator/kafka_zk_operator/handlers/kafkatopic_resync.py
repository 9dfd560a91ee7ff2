"""The periodic KafkaTopic resync: one pass over every resource per period, not a kopf timer each.

A kopf timer per resource kept, for each KafkaTopic, an asyncio task, a daemon record, a copy of
the handler's keyword arguments, loggers, and kopf's live copy of the whole resource (its
``managedFields`` included): about 45 % of the objects the operator held at 3,000 topics; at
10,000, a third of its peak memory and two thirds of a no-op period's CPU (issue #16). Instead:

- an index (``VIEWS`` in ``handlers.kafkatopic_resync_views``, fed by ``handlers.indexes``) keeps
  what a resync reads of each resource: its identity, generation, the annotations that steer it,
  spec and status (``resync_view``, kept as compact JSON: ``packed_view``); every event updates it
  and the resource's deletion drops it;
- one task (started from the first event kopf delivers, so that it posts Events the way handlers do)
  walks the index once per period; each resource comes at a fixed point of the period derived
  from its uid (``slot``), so resyncs stay spread evenly and no resource waits longer than one
  period, however many arrive at once. At most ``MAX_IN_FLIGHT`` resyncs run at a time;
- each resync is what the timer did: skipped when another reconcile of the resource finished
  in the last half period (``runtime.resync_gate``); ended on the event loop when ZooKeeper
  applied no transaction since the last clean resync, or the znodes it read are unchanged (but
  for a reassignment the topic's place in is the same: ``runtime.unchanged``); else the full
  reconcile runs in the handlers' thread pool, and its status changes are merge-patched. Only
  resources with the operator's finalizer, not being deleted and reported on once by a handler
  are resynced (``resyncable``); the check is repeated under the resource's lock, so a
  resync that waited behind the delete handler cannot bring the deleted topic back.

The passes also find resources kopf left unhandled (``awaiting_handler``, :meth:`ResyncPasses.
forgotten`): they carry the finalizer, no handler has reported on them, kopf has not seen them
for a whole period and no handler is queued or running. kopf adds its finalizer with a JSON patch conditional on the
resource version; when the API server applied that patch but the connection broke before the
answer (a link cut, kube-apiserver killed), kopf's retry is refused (the version moved), kopf
applies the same patch again on the next event, finds nothing left to change, and handles that
event no further; with no later event the create handler never runs (found by the API-server
fault tests: one topic in 120 never created). Such a resource is touched the way kopf touches
one itself (``diffbase.touch_fields``): the watch event that follows has kopf handle it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
import zlib
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import Executor
from datetime import UTC, datetime
from typing import Any, cast

import kopf

from kafka_zk_operator import metrics
from kafka_zk_operator.adapters.k8s.api import KubernetesApiError, reachable
from kafka_zk_operator.adapters.k8s.status_patcher import StatusPatcher
from kafka_zk_operator.adapters.zk.read_stamps import ReadStamps
from kafka_zk_operator.adapters.zk.stat_probe import Stamp
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import FINALIZER, KAFKA_TOPIC
from kafka_zk_operator.domain.topic.resource import KafkaTopicResource, parse_resource
from kafka_zk_operator.handlers import diffbase, in_pool, kafkatopic
from kafka_zk_operator.handlers.kafkatopic_resync_views import (
    VIEWS,
    View,
    awaiting_handler,
    resyncable,
    unpacked_view,
)
from kafka_zk_operator.runtime import unchanged
from kafka_zk_operator.runtime.clusters import ClusterPool
from kafka_zk_operator.runtime.resource_index import ResourceIndex

KIND = kafkatopic.KIND
#: Resyncs running at once (probes on the event loop, full reconciles in the thread pool).
MAX_IN_FLIGHT = 64
log = logging.getLogger(__name__)


def kopf_saw(uid: str) -> None:
    """kopf delivered an event of ``uid`` (``handlers.indexes`` calls it before any handler of
    the event). The first call also starts the passes: it runs where kopf posts an object's
    Events from, and the pass task inherits that (kopf's event queue is in a context variable it
    sets there)."""
    _passes.ensure_started()
    _passes.seen(uid)


def pool_backlog(executor: Executor | None) -> int:
    """Calls waiting for a thread of the handlers' pool (kopf queues sync handlers there); 0 when
    the pool does not say (it is not a ``ThreadPoolExecutor``)."""
    queue = getattr(executor, "_work_queue", None)
    return int(queue.qsize()) if queue is not None else 0


def slot(uid: str) -> float:
    """Where in each period ``uid``'s resync comes, as a fraction in [0, 1): spread evenly over
    the resources and the same in every period (so each is resynced once a period)."""
    return zlib.crc32(uid.encode()) / 2**32


class ResyncPasses:
    """The task that resyncs every KafkaTopic once per period (see the module docstring)."""

    def __init__(self) -> None:
        self.memo: Any = None
        self.views: ResourceIndex | None = None
        self.owners: ResourceIndex | None = None
        self.task: asyncio.Task[None] | None = None
        self.stopping = asyncio.Event()
        #: uid → when kopf last processed an event of the resource (it indexes each one first).
        self.last_seen: dict[str, float] = {}

    def seen(self, uid: str) -> None:
        self.last_seen[uid] = time.monotonic()

    def configure(self, memo: Any, views: ResourceIndex, owners: ResourceIndex) -> None:
        self.memo, self.views, self.owners = memo, views, owners
        self.stopping = asyncio.Event()

    def ensure_started(self) -> None:
        if self.task is None and self.memo is not None:
            self.task = asyncio.create_task(self._run(), name="kafkatopic resync passes")

    async def stop(self) -> None:
        self.stopping.set()
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def indexed(self, uid: str) -> View | None:
        """``uid``'s view as last indexed (None: gone)."""
        assert self.views is not None
        packed = self.views.first(uid)
        return unpacked_view(packed) if packed is not None else None

    def current(self, uid: str) -> View | None:
        """``uid``'s view as last indexed, if it is to be resynced (:func:`resyncable`)."""
        view = self.indexed(uid)
        return view if view is not None and resyncable(view) else None

    def forgotten(self, uid: str, view: View, period: float) -> bool:
        """Whether kopf left this resource unhandled (see the module docstring): it has the
        finalizer, no handler has reported on it (nor has a report on its way:
        ``kafkatopic._pending``), kopf processed no event of it for ``period``, no handler call
        waits for the pool and none of its reconciles runs. A create merely queued behind a burst
        waits in the pool, a finalizer or status patch queued for a connection has no finalizer or
        a pending report: neither is ever taken for one."""
        seen = self.last_seen.get(uid)
        reported = {**view, "status": kafkatopic._pending.current(uid, view["status"])}
        return (
            FINALIZER in view["metadata"].get("finalizers", ())
            and awaiting_handler(reported)
            and seen is not None
            and time.monotonic() - seen >= period
            and pool_backlog(getattr(self.memo, "executor", None)) == 0
            and not kafkatopic._locks.busy(uid)
        )

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        period = kafkatopic.RESYNC_SECONDS
        in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)
        running: set[asyncio.Task[None]] = set()
        started = loop.time() + period  # the first resyncs come one to two periods after the start
        try:
            await asyncio.sleep(period)
            while True:
                assert self.views is not None
                uids = list(self.views.keys())
                self._forget_gone(uids)
                for offset, uid in sorted((slot(uid), uid) for uid in uids):
                    await asyncio.sleep(max(0.0, started + offset * period - loop.time()))
                    await in_flight.acquire()
                    task = asyncio.create_task(self._resync(uid))
                    running.add(task)
                    task.add_done_callback(running.discard)
                    task.add_done_callback(lambda _: in_flight.release())
                await asyncio.sleep(max(0.0, started + period - loop.time()))
                started = max(started + period, loop.time())  # a pass that ran late: no catching up
        finally:
            self.stopping.set()
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    def _forget_gone(self, uids: list[str]) -> None:
        for uid in self.last_seen.keys() - set(uids):
            del self.last_seen[uid]

    async def _resync(self, uid: str) -> None:
        view = self.indexed(uid)
        if view is None:
            return
        if not resyncable(view):
            if self.forgotten(uid, view, kafkatopic.RESYNC_SECONDS):
                await self._touch(uid, view)
            return
        try:
            await resync(view, self.memo, self.owners, self.stopping, lambda: self.current(uid) is not None)
        except Exception as error:  # one resource's failure must not end the passes
            meta = view["metadata"]
            log.warning(
                "resync of KafkaTopic %s/%s failed: %s", meta.get("namespace"), meta.get("name"), error
            )

    async def _touch(self, uid: str, view: View) -> None:
        """Have kopf handle a resource it left unhandled: patch the field kopf touches itself."""
        meta = view["metadata"]
        ref = (str(meta.get("namespace", "")), str(meta.get("name", "")))
        log.warning(
            "KafkaTopic %s/%s: no handler has reported on it %.0f s after kopf last saw it; "
            "touching it so that kopf handles it",
            *ref,
            time.monotonic() - self.last_seen.get(uid, time.monotonic()),
        )
        self.seen(uid)  # touched once a period at most, whatever the touch leads to
        fields = diffbase.touch_fields(datetime.now(UTC).isoformat())
        loop = asyncio.get_running_loop()
        if await loop.run_in_executor(getattr(self.memo, "executor", None), patch_status, view, fields):
            metrics.HANDLER_NUDGES.labels(KIND).inc()


_passes = ResyncPasses()


@kopf.on.startup()
async def kafkatopic_resync_configure(memo: Any, **_: Any) -> None:
    _passes.configure(memo, VIEWS, kafkatopic.OWNERS)


@kopf.on.cleanup()
async def kafkatopic_resync_stop(**_: Any) -> None:
    await _passes.stop()


async def resync(
    view: View,
    memo: Any,
    owners: Any,
    stopping: asyncio.Event,
    still_wanted: Callable[[], bool],
) -> None:
    """One resource's resync: skipped (nothing read, nothing written) when another reconcile of
    the resource finished less than half a period ago (``runtime.resync_gate``). Otherwise, when
    ZooKeeper applied no transaction at all since the last clean resync, or the znodes that
    resync read (probed on the event loop) are as they were (``/admin/reassign_partitions`` may
    have changed if the topic's place in it did not), and the resource and its status too,
    nothing else is read (``runtime.unchanged``); else the full reconcile runs in the handlers'
    thread pool."""
    uid = str(view["metadata"].get("uid", ""))
    if not kafkatopic._resyncs.due(uid):
        return
    resource = parse_resource(view)
    key = _resync_key(view, resource, memo, owners)
    store = _open_store(memo, resource)
    last = kafkatopic._last_reads.get(uid)
    digest = unchanged.status_digest(kafkatopic._pending.current(uid, view.get("status")))
    zxid = await store.recent_zxid() if store is not None else None  # seen before any stamp below
    if (
        last is not None
        and zxid is not None
        and last.holds_with_no_transaction_since(key, zxid, digest, time.time())
    ):
        metrics.RESYNCS_UNCHANGED.labels(KIND).inc()
        return
    # Probed only when there are stamps of the same key to compare with: else the full read
    # follows, and its own answers give the stamps of the next record.
    before = (
        await store.stamps(last.paths)
        if store is not None and last is not None and last.stamps is not None and last.key == key
        else None
    )
    if last is not None and before is not None and last.still_holds(key, before, digest, time.time()):
        if zxid is not None and zxid != last.zxid:  # nothing it read changed up to zxid
            kafkatopic._last_reads.record(uid, dataclasses.replace(last, zxid=zxid))
        metrics.RESYNCS_UNCHANGED.labels(KIND).inc()
        return
    if (
        last is not None
        and before is not None
        and store is not None
        and await _holds_but_for_reassignment(
            store, memo, stopping, resource.topic_name, last, key, before, digest
        )
    ):
        kafkatopic._last_reads.record(uid, dataclasses.replace(last, stamps=before, zxid=zxid))
        metrics.RESYNCS_UNCHANGED.labels(KIND).inc()
        return
    done = await in_pool.run_in_pool_unless_stopped(
        memo, stopping, _full_resync, view, memo, owners, still_wanted, store
    )
    record = _record_of(done, store, resource, key, uid, view, memo, zxid)
    if record is None:
        kafkatopic._last_reads.forget(uid)
    else:
        kafkatopic._last_reads.record(uid, record)


def _record_of(
    done: tuple[kafkatopic._Reconciled, ReadStamps] | None,
    store: ZkStore | None,
    resource: KafkaTopicResource,
    key: Hashable,
    uid: str,
    view: View,
    memo: Any,
    zxid: int | None,
) -> unchanged.LastRead | None:
    """What a full resync that wrote nothing to ZooKeeper depended on (``runtime.unchanged``):
    the znodes it read with the stamps its read found, the status once its patch lands, the zxid
    seen before the read. None when it wrote, failed, or the stamps of its read are not all known
    (a topic too large to probe, a znode that changed while it was read)."""
    reconciled, read = done if done is not None else (None, None)
    if reconciled is None or read is None or not reconciled[0].read_only or store is None:
        return None
    result, changes = reconciled
    observed = result.observed_partitions or 0
    if not unchanged.probed(observed):
        return None
    paths = store.topic_read_paths(resource.topic_name, observed, read)
    stamps = read.of(paths)
    if stamps is None:
        return None
    # The status once this reconcile's patch lands (pending_status leaves out the live fields).
    after = unchanged.merge_patched(kafkatopic._pending.current(uid, view.get("status")), changes)
    return unchanged.LastRead(
        key=key,
        paths=paths,
        stamps=stamps,
        status_digest=unchanged.status_digest(after),
        heartbeat_due=unchanged.heartbeat_due(after, memo.settings.status_heartbeat_seconds),
        zxid=zxid,
        reassignment=result.reassignment_place,
    )


async def _holds_but_for_reassignment(
    store: ZkStore,
    memo: Any,
    stopping: asyncio.Event,
    topic: str,
    last: unchanged.LastRead,
    key: Hashable,
    stamps: tuple[Stamp, ...],
    digest: str,
) -> bool:
    """Whether ``last`` still holds although ``/admin/reassign_partitions`` changed: its stamp
    alone moved and the topic's place in it is the one the read decided from (``runtime.
    unchanged``). The place comes from the decode the store keeps, or, when that is older, from
    the znode read and decoded once in the thread pool (the other resyncs then find it kept)."""
    if last.reassignment is None or last.stamps is None:
        return False
    if not last.still_holds(key, last.stamps, digest, time.time()):
        return False
    mzxid = store.reassignment_moved_alone(last.paths, last.stamps, stamps)
    if mzxid is None:
        return False
    place = store.kept_reassignment_place(topic, mzxid)
    if place is None:
        try:
            place = await in_pool.run_in_pool_unless_stopped(
                memo, stopping, store.reassignment_place, topic, mzxid
            )
        except errors.KzoError:
            return False  # the full reconcile reports it
    return place == last.reassignment


def _full_resync(
    view: View, memo: Any, owners: Any, still_wanted: Callable[[], bool], store: ZkStore | None
) -> tuple[kafkatopic._Reconciled, ReadStamps] | None:
    """The full reconcile (in a pool thread), then its status patch; None when it did not land.
    With the stamps its read found in ``store`` (none recorded without a store)."""
    patch = kopf.Patch()
    with store.recording_stamps() if store is not None else contextlib.nullcontext(ReadStamps()) as read:
        reconciled = kafkatopic._reconcile(
            kopf.Body(cast(kopf.RawBody, view)),
            patch,
            memo,
            owners,
            view.get("status") or {},
            resync=True,
            still_wanted=still_wanted,
        )
    return (reconciled, read) if land_status(view, patch) else None


def land_status(body: Mapping[str, Any], patch: kopf.Patch) -> bool:
    """Merge-patch the status changes a reconcile left in ``patch`` (if any) outside kopf; True
    when they landed or there were none. When they did not, the resource's pending record
    (``kafkatopic._pending``) is dropped: the next reconcile starts from the status the API holds."""
    if not patch.status:
        return True
    if patch_status(body, dict(patch.status)):
        return True
    kafkatopic._pending.forget(str((body.get("metadata") or {}).get("uid", "")))
    return False


def patch_status(body: Mapping[str, Any], fields: dict[str, Any]) -> bool:
    """Merge-patch ``fields`` into the status of the KafkaTopic ``body`` names (a view or a
    body); False when it did not land (logged)."""
    meta = body["metadata"]
    ref = (str(meta.get("namespace", "")), str(meta.get("name", "")))
    try:
        with reachable("patching a KafkaTopic's status"):
            return _status_patcher(ref, fields)
    except KubernetesApiError as error:
        log.warning("patching the status of KafkaTopic %s/%s failed: %s", *ref, error)
        return False


_status_patcher = StatusPatcher(KAFKA_TOPIC)


def _resync_key(view: Mapping[str, Any], resource: KafkaTopicResource, memo: Any, owners: Any) -> Hashable:
    """What a resync's result depends on besides ZooKeeper and the status (``runtime.unchanged``)."""
    conflict_with = kafkatopic._conflict_with(owners, memo, resource)
    return unchanged.resync_key(view.get("metadata", {}).get("annotations"), resource, conflict_with)


def _open_store(memo: Any, resource: KafkaTopicResource) -> ZkStore | None:
    """The cluster's store if it is open already (a probe never connects: that blocks)."""
    pool: ClusterPool = memo.clusters
    try:
        return pool.get(resource.cluster).open_store()
    except errors.KzoError:
        return None
