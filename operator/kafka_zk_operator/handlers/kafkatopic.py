"""kopf handlers for KafkaTopic: create, update, resume and the periodic resync (its passes are in
``handlers.kafkatopic_resync``) all run the same level-based reconcile
(``service.topics.reconcile_topic``); delete drives Kafka's deletion. A settled resource's resume
at start-up runs the same reconcile without kopf (``handlers.kafkatopic_adoption``).

Name conflicts (two resources for one Kafka topic in one cluster) are decided with an index
(:data:`OWNERS`, fed by ``handlers.indexes``): the oldest resource wins, the others report
``ResourceConflict`` and never write.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Hashable, Mapping
from typing import Any, cast

import kopf
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator import config, metrics
from kafka_zk_operator.adapters.k8s import rf_reassignments
from kafka_zk_operator.adapters.zk.read_stamps import ReadStamps
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.config import OperatorSettings
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import GROUP, VERSION
from kafka_zk_operator.domain.timestamps import format_timestamp, parse_timestamp
from kafka_zk_operator.domain.topic.planning import DriftPolicy
from kafka_zk_operator.domain.topic.resource import PLURAL, KafkaTopicResource, parse_resource
from kafka_zk_operator.domain.topic.status import (
    PARTITION_FIELDS,
    ReconcileMode,
    build_topic_status,
    status_changes,
)
from kafka_zk_operator.handlers.waiting import StillWaiting
from kafka_zk_operator.runtime import unchanged
from kafka_zk_operator.runtime.clusters import ClusterPool
from kafka_zk_operator.runtime.condition_tally import ConditionTally, ready_labels
from kafka_zk_operator.runtime.health import HandlerWrite
from kafka_zk_operator.runtime.keyed_locks import KeyedLocks
from kafka_zk_operator.runtime.pending_status import PendingStatus
from kafka_zk_operator.runtime.resource_index import ResourceIndex
from kafka_zk_operator.runtime.resync_gate import ResyncGate
from kafka_zk_operator.service import migration_report, topics

#: Period of the level-based resync (``handlers.kafkatopic_resync``).
RESYNC_SECONDS = float(os.environ.get("KZO_RESYNC_SECONDS", "60") or 60)
KIND = "kafkatopic"


def _cluster_key(memo: Any, resource: KafkaTopicResource) -> str | None:
    settings: OperatorSettings = memo.settings
    try:
        return settings.cluster(resource.cluster).name
    except errors.InvalidSpec:
        return None


def kafkatopic_owners(body: Mapping[str, Any], memo: Any) -> dict[Any, Any]:
    """(cluster, topic name) → the resources claiming it, to settle conflicts by seniority."""
    resource = parse_resource(body)
    cluster = _cluster_key(memo, resource)
    if cluster is None or resource.mode is ReconcileMode.UNMANAGED:
        return {}
    return {
        (cluster, resource.topic_name): (
            resource.seniority,
            resource.uid,
            f"{resource.namespace}/{resource.name}",
        )
    }


#: (cluster, topic name) → the claims of the resources naming that topic (:func:`kafkatopic_owners`).
OWNERS = ResourceIndex("kafkatopic_owners", kafkatopic_owners)


def _conflict_with(index: ResourceIndex, memo: Any, resource: KafkaTopicResource) -> str | None:
    cluster = _cluster_key(memo, resource)
    claims = sorted(index.get((cluster, resource.topic_name)))
    if not claims or claims[0][1] == resource.uid:
        return None
    owner: str = claims[0][2]
    return owner


def _post(body: kopf.Body, events: list[topics.Event]) -> None:
    for event in events:
        kopf.event(body, type=event.type, reason=event.reason, message=event.message)
        metrics.EVENTS_POSTED.labels(KIND, event.type, event.reason).inc()


#: The Ready state of every KafkaTopic, for the ``kzo_kafkatopics`` gauge.
_tally = ConditionTally(metrics.TOPICS_BY_CONDITION)

#: One reconcile at a time per resource: the resync passes run in parallel with the
#: create/update/resume handlers, and two reconciles of one topic would race (both create, or both
#: add the same partitions).
_locks = KeyedLocks()

#: Which resyncs have something to add (none right after another reconcile of the resource).
_resyncs = ResyncGate(RESYNC_SECONDS)

#: What each resource's last clean resync read, to see that the next one has nothing to do.
_last_reads = unchanged.LastReads()

#: Each resource's last status patch until the watch brings it back (``runtime.pending_status``).
_pending = PendingStatus(shared=frozenset(PARTITION_FIELDS) | {"lastSyncTime"})


#: A finished reconcile: its result and the status changes kopf patches (None: it ended early).
_Reconciled = tuple[topics.TopicResult, dict[str, Any]] | None


def _reconcile(
    body: kopf.Body,
    patch: kopf.Patch,
    memo: Any,
    index: ResourceIndex,
    status: Mapping[str, Any],
    *,
    resync: bool = False,
    still_wanted: Callable[[], bool] | None = None,
) -> _Reconciled:
    """``resync``: the periodic resync, which never asks for an early retry - its next pass is
    the retry. With thousands of topics and ZooKeeper down, per-topic retries every few seconds
    (each one a kopf state patch) flooded the API server and starved the events of new resources
    (found by the quorum-loss fault test). ``still_wanted``: checked once the lock is held (the
    resource may have been deleted while the resync waited for it)."""
    for key in config.legacy_kopf_annotations(body.get("metadata", {}).get("annotations")):
        patch.metadata.annotations[key] = None
    uid = str(body.get("metadata", {}).get("uid", ""))
    with _locks.held(uid):
        if resync and not _resyncs.due(uid):
            # Another reconcile finished while this one waited for the lock: nothing to add (and
            # the status in hand may predate that reconcile's patch).
            return None
        if still_wanted is not None and not still_wanted():
            return None  # deleted meanwhile: its delete handler ran, nothing must bring it back
        try:
            # A plain copy once: kopf's ``status`` is a view that resolves its path again on each
            # look-up, and a reconcile looks up its fields dozens of times.
            plain = status if type(status) is dict else dict(status)
            reconciled = _reconcile_now(body, patch, memo, index, _pending.current(uid, plain), uid)
        except kopf.TemporaryError:
            if not resync:
                raise
            return None
    _resyncs.reconciled(uid)
    return reconciled


def _reconcile_now(
    body: kopf.Body,
    patch: kopf.Patch,
    memo: Any,
    index: ResourceIndex,
    status: Mapping[str, Any],
    uid: str,
) -> _Reconciled:
    """``status``: the resource's status with this process's own pending patch applied."""
    started = time.monotonic()
    resource = parse_resource(body)
    settings: OperatorSettings = memo.settings
    pool: ClusterPool = memo.clusters
    runtime = None
    try:
        runtime = pool.get(resource.cluster)
        backend = runtime.backend()
    except errors.KzoError as error:
        new_status = build_topic_status(
            topic_name=resource.topic_name,
            generation=resource.generation,
            now=_now(),
            outcome=error,
            previous=status,
        )
        if runtime is not None:  # e.g. the initial metadata copy: the phase is known
            migration_report.add_phase(
                new_status, runtime.phase, status, generation=resource.generation, now=_now()
            )
        _patch_status(patch, uid, new_status)
        _tally.record(resource.ref, ready_labels(resource.cluster or "", new_status))
        _post(
            body,
            topics.unreported(
                [topics.Event("Warning", error.reason.value, error.message)], status, resource.generation
            ),
        )
        metrics.RECONCILIATIONS.labels(KIND, error.reason.value).inc()
        if error.retryable:
            raise kopf.TemporaryError(error.message, delay=topics.RETRY_DELAY_S) from error
        return None
    policies = topics.TopicPolicies(
        config_drift=DriftPolicy(settings.config_drift),
        recreate_deleted=settings.deleted_topic_drift == "recreate",
        create_wait_seconds=settings.create_wait_seconds,
    )
    # The ZooKeeper store watches partition state znodes and records what a pass read (a resync
    # of an unchanged topic reads nothing); the Admin API backend has neither: its resyncs poll.
    store = (
        cast(ZkStore, backend) if hasattr(backend, "recording_stamps") else None
    )  # ZooKeeper's, or a test's
    health = runtime.health if store is not None else None
    if store is None and runtime.health is not None:
        runtime.health.untrack(resource.topic_name, resource.ref)  # frozen znodes after the takeover
    conflict_with = _conflict_with(index, memo, resource)
    # Watch-driven refreshes write the live partition fields too; kopf's patch lands after this
    # handler returns, so the reporter is told what it carries (see runtime.health).
    with (
        (
            health.reconciling(resource.topic_name, resource.ref)
            if health is not None
            else contextlib.nullcontext(HandlerWrite(read_since=backend.last_zxid()))
        ) as written,
        store.recording_stamps() if store is not None else contextlib.nullcontext(ReadStamps()) as read,
    ):
        read_from = written.read_since  # the session's last zxid before this reconcile's read
        result = topics.reconcile_topic(
            resource,
            backend,
            previous_status=status,
            policies=policies,
            conflict_with=conflict_with,
        )
        migration_report.add_phase(
            result.status, runtime.phase, status, generation=resource.generation, now=_now()
        )
        result.events.extend(migration_report.phase_events(runtime.phase, status))
        changes = status_changes(
            status, result.status, now=_now(), heartbeat_seconds=settings.status_heartbeat_seconds
        )
        if changes:  # an in-sync resync patches nothing
            _patch_status(patch, uid, changes)
        if store is not None and result.read_only and not changes and read_from is not None:
            key = unchanged.resync_key(body.get("metadata", {}).get("annotations"), resource, conflict_with)
            clean = _clean_read(store, resource.topic_name, key, read_from, result, status, settings, read)
            if clean is not None:
                _last_reads.record(uid, clean)
        _tally.record(resource.ref, ready_labels(runtime.name, {**status, **changes}))
        if result.read_since is not None:  # read again after its writes: current as of then
            written.read_since = result.read_since
        written.fields = {key: value for key, value in changes.items() if key in PARTITION_FIELDS}
        written.status = {key: result.status.get(key) for key in PARTITION_FIELDS}
        if health is not None:
            if resource.mode is ReconcileMode.UNMANAGED or isinstance(
                result.outcome, errors.ResourceConflict
            ):
                health.untrack(resource.topic_name, resource.ref)
            else:
                health.track(
                    resource.topic_name, resource.ref, read_since=written.read_since, priming=written.priming
                )
    _post(body, topics.unreported(result.events, status, resource.generation))
    outcome = result.outcome
    label = (
        outcome.value
        if isinstance(outcome, errors.Reason)
        else (outcome.reason.value if outcome else resource.mode.value)
    )
    metrics.RECONCILIATIONS.labels(KIND, label).inc()
    metrics.RECONCILE_SECONDS.labels(KIND).observe(time.monotonic() - started)
    if result.rf_change is not None:
        _hand_over_replication_factor(body, resource, result.rf_change)
    if result.retry_after is not None:
        raise kopf.TemporaryError(result.retry_message, delay=result.retry_after)
    return result, changes


def _clean_read(
    store: ZkStore,
    topic: str,
    key: Hashable,
    read_from: int,
    result: topics.TopicResult,
    status: Mapping[str, Any],
    settings: OperatorSettings,
    read: ReadStamps,
) -> unchanged.LastRead | None:
    """A reconcile that wrote nothing and left ``status`` as it was, as the baseline of the
    resource's next resync (``runtime.unchanged``): while ZooKeeper applies no transaction after
    ``read_from`` (the session's last zxid before the reconcile's read), or the znodes it read
    still carry the stamps its read found (``read``), a resync would read what it read and, from
    the same status, find the same: it ends without a read. Without it, an adopting operator's
    first resync of each topic read it all again, and after any write anywhere in ZooKeeper, every
    topic was read in full once. Only a reconcile that changed no status field: one that did (a
    first ``Adopted``, say) is not its own fixed point, since the next reconcile moves the reason
    on to ``InSync``. ``None`` for a topic too large to probe."""
    partitions = result.observed_partitions
    if partitions is None or not unchanged.probed(partitions):
        return None
    paths = store.topic_read_paths(topic, partitions, read)
    return unchanged.LastRead(
        key=key,
        paths=paths,
        stamps=read.of(paths),
        status_digest=unchanged.status_digest(status),
        heartbeat_due=unchanged.heartbeat_due(status, settings.status_heartbeat_seconds),
        zxid=read_from,
        reassignment=result.reassignment_place,
    )


def _patch_status(patch: kopf.Patch, uid: str, changes: Mapping[str, Any]) -> None:
    """Add ``changes`` to kopf's status patch and remember them until the watch shows them."""
    patch.status.update(changes)
    _pending.record(uid, changes)
    for key in changes:
        metrics.STATUS_FIELDS_PATCHED.labels(KIND, key).inc()


def _hand_over_replication_factor(
    body: kopf.Body, resource: KafkaTopicResource, change: tuple[int, int]
) -> None:
    """Make sure a PartitionReassignment (mode ReplicationFactor) carries the change out."""
    current, wanted = change
    name = rf_reassignments.reassignment_name(resource.name, wanted)
    try:
        created = rf_reassignments.ensure(resource, wanted)
    except ApiException as exc:
        _post(
            body,
            [topics.Event("Warning", "ReassignmentNotCreated", f"could not create {name}: {exc.reason}")],
        )
        return
    if created:
        message = f"Replication factor {current} -> {wanted}: created PartitionReassignment {name}"
        _post(body, [topics.Event("Normal", "ReplicationFactorChangeRequested", message)])


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


@kopf.on.resume(GROUP, VERSION, PLURAL)
def kafkatopic_resume(body: kopf.Body, patch: kopf.Patch, memo: Any, status: kopf.Status, **_: Any) -> None:
    _reconcile(body, patch, memo, OWNERS, status)


@kopf.on.create(GROUP, VERSION, PLURAL)
def kafkatopic_create(body: kopf.Body, patch: kopf.Patch, memo: Any, status: kopf.Status, **_: Any) -> None:
    _reconcile(body, patch, memo, OWNERS, status)


@kopf.on.update(GROUP, VERSION, PLURAL)
def kafkatopic_update(body: kopf.Body, patch: kopf.Patch, memo: Any, status: kopf.Status, **_: Any) -> None:
    _reconcile(body, patch, memo, OWNERS, status)


@kopf.on.delete(GROUP, VERSION, PLURAL)
def kafkatopic_delete(body: kopf.Body, patch: kopf.Patch, memo: Any, **_: Any) -> None:
    resource = parse_resource(body)
    with _locks.held(resource.uid):
        _delete(body, resource, patch, memo, OWNERS)
    _locks.forget(resource.uid)  # done (a retry raises above and keeps it)
    _resyncs.forget(resource.uid)
    _last_reads.forget(resource.uid)
    _pending.forget(resource.uid)
    _tally.forget(resource.ref)


def _delete(
    body: kopf.Body,
    resource: KafkaTopicResource,
    patch: kopf.Patch,
    memo: Any,
    kafkatopic_owners: ResourceIndex,
) -> None:
    pool: ClusterPool = memo.clusters
    try:
        runtime = pool.get(resource.cluster)
    except errors.InvalidSpec:
        return  # it never named a cluster we serve: nothing in Kafka belongs to it
    if runtime.health is not None:
        runtime.health.untrack(resource.topic_name, resource.ref)
    if resource.mode is ReconcileMode.UNMANAGED or resource.deletion_policy == "Retain":
        # kopf.info would be dropped: settings.posting.level is WARNING (main.py).
        _post(body, [topics.Event("Normal", "TopicRetained", f"Kafka topic '{resource.topic_name}' is kept")])
        return
    if _conflict_with(kafkatopic_owners, memo, resource) is not None:
        return  # it never owned the topic
    status = _pending.current(resource.uid, body.get("status"))  # a create's patch may be on its way
    if not topics.ever_reconciled(status):
        return  # never reconciled successfully: it neither created nor adopted the topic
    # Only a marker this resource is known to have written counts: a failed first attempt (say,
    # ZooKeeper unreachable) must not be mistaken for Kafka refusing the deletion.
    requested = status.get("deletionRequestedAt")
    marker_written_before = bool(requested)
    try:
        progress = topics.delete_topic(
            resource,
            runtime.backend(),
            marker_written_before=marker_written_before,
            requested_at=parse_timestamp(requested),
            now=_now(),
        )
    except errors.KzoError as error:
        raise kopf.TemporaryError(error.message, delay=topics.RETRY_DELAY_S) from error
    if progress.marker_written:
        _patch_status(patch, resource.uid, {"deletionRequestedAt": format_timestamp(_now())})
    if progress.event is not None:
        _post(body, [progress.event])
    if not progress.done:
        raise StillWaiting(progress.message, delay=2)
