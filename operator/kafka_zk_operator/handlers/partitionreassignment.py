"""kopf handlers for PartitionReassignment: create, update, resume and a poll timer all run the same
level-based step (``service.reassignment.reconcile``); delete waits for the batch in flight
(ZooKeeper) or cancels it (the Admin API), and removes the throttles
(``service.reassignment.delete``). While a batch runs, the timer's handler stays on and takes the
next step as soon as the controller deletes ``/admin/reassign_partitions`` (a ZooKeeper watch,
``runtime.znode_signal``): the next batch starts as soon as the last ends.

The queue (one running reassignment per Kafka cluster, the rest ``Queued`` in creation order)
comes from an index of the resources waiting to run (:data:`QUEUE`, fed by ``handlers.indexes``);
the service confirms it with a fresh list before starting. kopf runs timers next to the other
handlers, so calls for one resource are serialized with a per-resource lock, and the service
always reads the resource afresh.

Environment: ``KZO_REASSIGNMENT_POLL_SECONDS`` (default 5) how often a running reassignment looks
at ZooKeeper; ``KZO_REASSIGNMENT_STUCK_SECONDS`` (default 1800) after how long a batch whose
target replicas are not in sync is reported stuck; ``KZO_DEFAULT_THROTTLE`` (bytes/s, default none)
the throttle of new reassignments without ``spec.throttle`` (``domain.reassignment.defaults``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import kopf

from kafka_zk_operator import config, metrics
from kafka_zk_operator.adapters.k8s import api
from kafka_zk_operator.adapters.k8s.partitionreassignment import PLURAL, KubernetesReassignments
from kafka_zk_operator.config import OperatorSettings
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import GROUP, REFRESH_ANNOTATION, VERSION
from kafka_zk_operator.domain.migration import phase as migration_phase
from kafka_zk_operator.domain.reassignment.resource import is_started, parse_resource, queue_rank
from kafka_zk_operator.domain.reassignment.status import is_terminal
from kafka_zk_operator.domain.reassignment.throttles import record_from_fields
from kafka_zk_operator.domain.timestamps import parse_timestamp
from kafka_zk_operator.handlers.in_pool import run_in_pool_unless_stopped
from kafka_zk_operator.handlers.waiting import StillWaiting
from kafka_zk_operator.runtime.clusters import ClusterPool, ClusterRuntime
from kafka_zk_operator.runtime.keyed_locks import KeyedLocks
from kafka_zk_operator.runtime.resource_index import ResourceIndex
from kafka_zk_operator.runtime.znode_signal import ZnodeSignal
from kafka_zk_operator.service import migration_report
from kafka_zk_operator.service import reassignment as reassignments
from kafka_zk_operator.service.events import Event

POLL_SECONDS = float(os.environ.get("KZO_REASSIGNMENT_POLL_SECONDS", "5") or 5)
STUCK_SECONDS = float(os.environ.get("KZO_REASSIGNMENT_STUCK_SECONDS", "1800") or 1800)
#: ``spec.throttle`` (bytes/s) of new reassignments that leave it out; unset or 0: none.
DEFAULT_THROTTLE = int(os.environ.get("KZO_DEFAULT_THROTTLE", "0") or 0) or None
KIND = "partitionreassignment"
log = logging.getLogger(__name__)

_apis: dict[tuple[str, ...], KubernetesReassignments] = {}
_apis_guard = threading.Lock()
_locks = KeyedLocks()
#: Kafka cluster -> the signal of its ``/admin/reassign_partitions`` watch (one per cluster).
_signals: dict[str, ZnodeSignal] = {}
#: Shortest time between two passes of the poll loop (a guard: passes follow the znode's deletion).
MIN_PASS_SECONDS = 0.25


def _api(memo: Any) -> KubernetesReassignments:
    """The API port, scoped to the namespaces the operator serves."""
    settings: OperatorSettings = memo.settings
    namespaces = tuple(settings.namespaces)
    with _apis_guard:
        return _apis.setdefault(namespaces, KubernetesReassignments(namespaces))


def _cluster_name(memo: Any, body: Mapping[str, Any]) -> str | None:
    settings: OperatorSettings = memo.settings
    try:
        return settings.cluster((body.get("spec") or {}).get("cluster") or None).name
    except errors.InvalidSpec:
        return None


def partitionreassignment_queue(body: Mapping[str, Any], memo: Any) -> dict[Any, Any]:
    """Kafka cluster → the reassignments waiting to run or running there, with their queue rank."""
    cluster = _cluster_name(memo, body)
    rank = queue_rank(parse_resource(body))
    if cluster is None or rank is None:
        return {}
    return {cluster: rank}


#: Kafka cluster → the queue ranks of its reassignments (:func:`partitionreassignment_queue`).
QUEUE = ResourceIndex("partitionreassignment_queue", partitionreassignment_queue)


def _post(body: kopf.Body, events: list[Event]) -> None:
    for event in events:
        kopf.event(body, type=event.type, reason=event.reason, message=event.message)
        metrics.EVENTS_POSTED.labels(KIND, event.type, event.reason).inc()


def _drop_legacy_annotations(body: kopf.Body, patch: kopf.Patch) -> None:
    for key in config.legacy_kopf_annotations(body.get("metadata", {}).get("annotations")):
        patch.metadata.annotations[key] = None


def _settings() -> reassignments.Settings:
    return reassignments.Settings(stuck_after_seconds=STUCK_SECONDS, default_throttle=DEFAULT_THROTTLE)


def _reconcile(body: kopf.Body, memo: Any, index: ResourceIndex, *, poll: bool = False) -> bool:
    """One pass; True when it left a batch of this resource in ``/admin/reassign_partitions``.

    ``poll``: the timer, whose next tick (``POLL_SECONDS``) is the retry of a pass that could not
    reach ZooKeeper or the API server; it logs one warning line instead of an error with a
    traceback. The event handlers ask kopf to retry after ``POLL_SECONDS``."""
    ref = (body.metadata.namespace or "", body.metadata.name or "")
    try:
        with api.reachable("reconcile {}/{}".format(*ref)):
            return _reconcile_now(body, memo, index)
    except errors.KzoError as error:
        if poll:
            log.warning("%s/%s: will retry in %.0f s: %s", *ref, POLL_SECONDS, error.message)
            return False
        raise kopf.TemporaryError(error.message, delay=POLL_SECONDS) from error


def _reconcile_now(body: kopf.Body, memo: Any, index: ResourceIndex) -> bool:
    started = time.monotonic()
    resource = parse_resource(body)
    pool: ClusterPool = memo.clusters
    cluster = _cluster_name(memo, body) or ""
    entries = index.get(cluster) if cluster else []
    # One reconcile at a time per resource, and per Kafka cluster: the queue check ("is another
    # reassignment of this cluster ahead or running?") and saving this one's start must not
    # interleave with another resource doing the same (two could otherwise both start).
    with _locks.held(resource.uid), _locks.held(f"cluster/{cluster}"):
        result = reassignments.reconcile(
            resource.ref,
            _api(memo),
            lambda: pool.get(resource.cluster_name).backend(reassignments=True),
            cluster=cluster,
            queue=entries,
            cluster_of=lambda other: _cluster_name(memo, other),
            settings=_settings(),
            now=datetime.now(UTC),
            sizes_for=lambda: pool.get(resource.cluster_name).partition_sizes(),
        )
    _post(body, result.events)
    _report_phase(body, memo, resource.ref, resource.generation, pool, resource.cluster_name, result.status)
    status = result.status
    progress = status.get("progress") or {}
    if "partitionsTotal" in progress:
        metrics.REASSIGNMENT_PROGRESS.labels(*resource.ref).set(int(progress.get("partitionsDone") or 0))
        metrics.REASSIGNMENT_TOTAL.labels(*resource.ref).set(int(progress["partitionsTotal"]))
        eta = parse_timestamp(progress.get("estimatedCompletionAt"))
        if eta is not None:
            metrics.REASSIGNMENT_ETA.labels(*resource.ref).set(eta.timestamp())
        else:
            with contextlib.suppress(KeyError):
                metrics.REASSIGNMENT_ETA.remove(*resource.ref)
    if cluster:
        if result.replicas_moved:
            metrics.REPLICAS_MOVED.labels(cluster).inc(result.replicas_moved)
        metrics.QUEUED_REASSIGNMENTS.labels(cluster).set(max(0, len(entries) - 1))
    metrics.RECONCILIATIONS.labels(KIND, str(status.get("phase") or "Unknown")).inc()
    metrics.RECONCILE_SECONDS.labels(KIND).observe(time.monotonic() - started)
    return result.batch_in_flight


def _report_phase(
    body: kopf.Body,
    memo: Any,
    ref: tuple[str, str],
    generation: int,
    pool: ClusterPool,
    cluster_name: str | None,
    status: dict[str, Any],
) -> None:
    """The migration phase the pass saw, in the status and as an Event when it changed (a pass
    in plain ZooKeeper mode, or one that saw no change, writes nothing)."""
    if not status:  # the resource is gone or being deleted: nothing was reconciled
        return
    try:
        runtime = pool.get(cluster_name)
    except errors.KzoError:
        return  # an unknown cluster: the pass said so already
    decision = runtime.phase
    if decision is not None:  # the phase the pass lived, as runtime.clusters chose its backend
        decision = migration_phase.for_reassignments(decision, bool(runtime.settings.bootstrap_servers))
    fields: dict[str, Any] = {}
    migration_report.add_phase(fields, decision, status, generation=generation, now=datetime.now(UTC))
    changes = {key: value for key, value in fields.items() if status.get(key) != value}
    if not changes:
        return
    events = migration_report.phase_events(decision, status)
    _api(memo).patch_status(ref, changes)
    status.update(changes)
    _post(body, events)


def _active(status: kopf.Status, annotations: Mapping[str, str], **_: Any) -> bool:
    """Poll while something may still happen: not finished, throttles still to remove, or a
    ``refresh`` annotation on a reassignment that failed before it started (it is planned again).

    A throttle record counts whether or not its application completed (``applied: false`` is
    also a write-ahead record whose ZooKeeper changes may be in place). Annotations under the
    operator's prefix never trigger kopf's update handler (kopf leaves its own prefix out of the
    diff), so the timer is what notices them.
    """
    if not is_terminal(status.get("phase")) or record_from_fields(status.get("throttle")) is not None:
        return True
    return (
        status.get("phase") == "Failed"
        and not is_started(status)
        and annotations.get(REFRESH_ANNOTATION) is not None
    )


@kopf.on.resume(GROUP, VERSION, PLURAL)
def partitionreassignment_resume(body: kopf.Body, patch: kopf.Patch, memo: Any, **_: Any) -> None:
    _drop_legacy_annotations(body, patch)
    _reconcile(body, memo, QUEUE)


@kopf.on.create(GROUP, VERSION, PLURAL)
def partitionreassignment_create(body: kopf.Body, patch: kopf.Patch, memo: Any, **_: Any) -> None:
    _drop_legacy_annotations(body, patch)
    _reconcile(body, memo, QUEUE)


@kopf.on.update(GROUP, VERSION, PLURAL)
def partitionreassignment_update(body: kopf.Body, patch: kopf.Patch, memo: Any, **_: Any) -> None:
    _drop_legacy_annotations(body, patch)
    _reconcile(body, memo, QUEUE)


@kopf.timer(GROUP, VERSION, PLURAL, interval=POLL_SECONDS, initial_delay=POLL_SECONDS, when=_active)
async def partitionreassignment_poll(body: kopf.Body, memo: Any, **kwargs: Any) -> None:
    """Reconcile; while a batch of this resource runs, again as soon as the controller deletes
    ``/admin/reassign_partitions`` (the batch is done), and at least every ``POLL_SECONDS``: the next batch starts as soon as the current one ends, so the brokers copy
    without a pause between batches. Waiting holds no thread (an asyncio wait on a ZooKeeper
    watch); each pass runs in kopf's pool like the sync handlers."""
    index, stopped = QUEUE, kwargs["stopped"]
    cluster = _cluster_name(memo, body)
    runtime: ClusterRuntime | None = memo.clusters.get(cluster) if cluster is not None else None
    signal = _signals.setdefault(cluster or "", ZnodeSignal())

    def arm(callback: Callable[[object], None]) -> bool:
        assert runtime is not None
        if not runtime.zookeeper_authoritative():
            # The Admin API backend: no znode to watch (KRaft ignores it); a plain timeout.
            raise errors.NotSupported("no reassignment znode to watch")
        return runtime.store().watch_reassignment(callback)

    while True:
        passed = time.monotonic()
        in_flight = await run_in_pool_unless_stopped(memo, stopped, _reconcile, body, memo, index, poll=True)
        if not in_flight or runtime is None or stopped:
            return
        changed = await signal.wait(arm, POLL_SECONDS)
        if stopped:
            return
        if changed:
            await asyncio.sleep(max(0.0, MIN_PASS_SECONDS - (time.monotonic() - passed)))


@kopf.on.delete(GROUP, VERSION, PLURAL)
def partitionreassignment_delete(body: kopf.Body, memo: Any, **_: Any) -> None:
    resource = parse_resource(body)
    pool: ClusterPool = memo.clusters
    if _cluster_name(memo, body) is None:
        return  # it never named a cluster we serve: nothing in Kafka belongs to it
    try:
        with _locks.held(resource.uid), api.reachable("delete {}/{}".format(*resource.ref)):
            result = reassignments.delete(
                resource.ref,
                _api(memo),
                lambda: pool.get(resource.cluster_name).backend(reassignments=True),
                settings=_settings(),
                now=datetime.now(UTC),
            )
    except errors.KzoError as error:
        raise kopf.TemporaryError(error.message, delay=POLL_SECONDS) from error
    _post(body, result.events)
    if not result.done:
        raise StillWaiting(result.message, delay=POLL_SECONDS)
    for gauge in (metrics.REASSIGNMENT_PROGRESS, metrics.REASSIGNMENT_TOTAL, metrics.REASSIGNMENT_ETA):
        with contextlib.suppress(KeyError):
            gauge.remove(*resource.ref)
    _locks.forget(resource.uid)
