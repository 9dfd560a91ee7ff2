"""Reconcile one KafkaTopic with Kafka: the single path taken by create, update, resume and resync.

``reconcile_topic`` reads the topic from ZooKeeper, plans with ``domain.topic_planning``, applies
the plan through the versioned ``ZkStore`` and builds the status with ``domain.topic_status``.
An in-sync topic produces an empty plan: no ZooKeeper write. ``delete_topic`` drives Kafka's
deletion (marker znode) and reports when it is complete.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kafka_zk_operator.adapters.zk.store import TopicSnapshot, ZkStore
from kafka_zk_operator.adapters.zk.znodes_config import ConfigEntityType
from kafka_zk_operator.domain import errors, topic_config
from kafka_zk_operator.domain.kafkatopic_resource import KafkaTopicResource, desired_topic
from kafka_zk_operator.domain.topic_placement import Placement
from kafka_zk_operator.domain.topic_planning import (
    DesiredTopic,
    DriftPolicy,
    ObservedTopic,
    TopicPlan,
    plan_topic,
)
from kafka_zk_operator.domain.topic_status import (
    MAX_MESSAGE_LENGTH,
    ReconcileMode,
    TopicObservation,
    build_topic_status,
    min_insync_replicas,
)
from kafka_zk_operator.domain.wording import counted
from kafka_zk_operator.service import cluster_views
from kafka_zk_operator.service.deletion import DeletionProgress as DeletionProgress
from kafka_zk_operator.service.deletion import delete_topic as delete_topic
from kafka_zk_operator.service.events import Event as Event

#: Delay before retrying a reconcile that failed for a transient reason.
RETRY_DELAY_S = 5.0


@dataclass
class TopicResult:
    """What a reconcile did: the status to write, events to post and whether to retry."""

    status: dict[str, Any]
    events: list[Event] = field(default_factory=list)
    retry_after: float | None = None
    retry_message: str = ""
    outcome: errors.Reason | errors.KzoError | None = None
    writes: int = 0
    #: (current, wanted) replication factor when a PartitionReassignment must carry it out.
    rf_change: tuple[int, int] | None = None


@dataclass(frozen=True)
class TopicPolicies:
    config_drift: DriftPolicy = DriftPolicy.REVERT
    recreate_deleted: bool = True
    create_wait_seconds: float = 10.0


def observation_of(store: ZkStore, snapshot: TopicSnapshot | None) -> TopicObservation:
    """What the status is built from: the topic as read (or None), the live brokers, and the
    topic's own ``min.insync.replicas``. Reconciles and watch-driven refreshes both use it."""
    if snapshot is None:
        return TopicObservation(assignment=None, live_brokers=frozenset(store.broker_ids()))
    return TopicObservation(
        assignment=snapshot.assignment.value,
        partition_states=snapshot.states,
        live_brokers=frozenset(store.broker_ids()),
        min_insync_replicas=min_insync_replicas(snapshot.config.value if snapshot.config else None),
    )


def _observed(snapshot: TopicSnapshot | None, store: ZkStore, topic: str) -> ObservedTopic | None:
    if snapshot is not None:
        return ObservedTopic(
            assignment=snapshot.assignment.value,
            config=snapshot.config.value if snapshot.config is not None else {},
            marked_for_deletion=snapshot.marked_for_deletion,
            in_reassignment=snapshot.in_reassignment_znode,
            reassignment_note=snapshot.reassignment_znode_problem,
        )
    config = store.read_topic_config(topic)
    marked = store.is_marked_for_deletion(topic)
    if config is None and not marked:
        return None
    return ObservedTopic(assignment=None, config=config.value if config else {}, marked_for_deletion=marked)


def _apply(store: ZkStore, plan: TopicPlan, snapshot: TopicSnapshot | None) -> None:
    """Carry out the plan's writes in order (config before partitions)."""
    topic = plan.topic
    if plan.create is not None:
        store.create_topic(topic, plan.create.assignment, plan.create.config)
        return
    if plan.alter_config is not None:
        expected = snapshot.config.version if snapshot and snapshot.config else None
        store.write_entity_config(ConfigEntityType.TOPICS, topic, plan.alter_config.config, expected_version=expected)
    if plan.grow is not None:
        current = store.read_assignment(topic)  # re-read: the config write did not touch it
        if current is None:
            raise errors.VersionConflict(f"topic {topic!r} disappeared while adding partitions")
        store.add_partitions(topic, plan.grow.new_assignment, expected=current)


def _wait_for_leaders(store: ZkStore, topic: str, partitions: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = store.partition_states(topic, range(partitions))
        if len(states) == partitions and all(s.leader >= 0 for s in states.values()):
            return
        time.sleep(0.2)


def reconcile_topic(
    resource: KafkaTopicResource,
    store: ZkStore,
    *,
    previous_status: Mapping[str, Any],
    policies: TopicPolicies,
    conflict_with: str | None = None,
    now: datetime | None = None,
    rng: random.Random | None = None,
) -> TopicResult:
    """Make Kafka match one KafkaTopic and describe the result. Never raises ``KzoError``."""
    moment = now or datetime.now(UTC)
    topic = resource.topic_name
    common: dict[str, Any] = {
        "topic_name": topic,
        "generation": resource.generation,
        "now": moment,
        "previous": previous_status,
    }
    if resource.mode is not ReconcileMode.MANAGED:
        # Paused / unmanaged: observe (read-only) and report, write nothing.
        try:
            observation = observation_of(store, store.read_topic(topic))
        except errors.KzoError:
            observation = None
        status = build_topic_status(mode=resource.mode, observation=observation, **common)
        return TopicResult(status=status)
    if conflict_with is not None:
        error = errors.ResourceConflict(
            f"Kafka topic '{topic}' is already managed by KafkaTopic {conflict_with}; "
            "this resource is ignored until that one is deleted or the topicName is changed"
        )
        status = build_topic_status(outcome=error, observation=None, **common)
        return TopicResult(
            status=status, outcome=error, events=[Event("Warning", error.reason.value, error.message)]
        )

    writes_before = store.writes
    snapshot: TopicSnapshot | None = None
    owned_config: list[str] | None = None  # set once this reconcile's writes are in ZooKeeper
    try:
        desired = desired_topic(resource)
        snapshot = store.read_topic(topic)
        observed = _observed(snapshot, store, topic)
        # Durable ownership: appliedConfig stays through error statuses (topicId and Ready do not).
        existed_before = (
            ever_reconciled(previous_status)
            or bool(previous_status.get("topicId"))
            or _was_ready(previous_status)
        )
        if snapshot is None and existed_before and not policies.recreate_deleted:
            raise errors.TopicDeletedInKafka(
                f"Kafka topic '{topic}' was deleted outside the operator; it is not recreated because "
                "the deleted-topic drift policy is 'report' (delete and re-apply the resource to recreate it)"
            )
        applied = applied_config_from_status(previous_status)
        rf_change = _replication_factor_change(desired, snapshot)
        if rf_change is not None:
            # Everything else in the spec is applied now; the replication factor is carried out
            # by a PartitionReassignment (mode ReplicationFactor) that the handler makes sure exists.
            desired = dataclasses.replace(desired, replication_factor=rf_change[0])
        views = _balanced_views(desired, snapshot, store)
        if views is not None:
            views.view()  # the slow read, before taking the per-cluster placing lock
        with views.placing() if views is not None else contextlib.nullcontext():
            brokers = store.live_brokers()
            plan = plan_topic(
                desired,
                observed,
                brokers,
                drift_policy=policies.config_drift,
                applied_config=applied,
                existing_topics=store.topic_names() if snapshot is None else (),
                rng=rng,
                placer=views.placer(topic, brokers) if views is not None else None,
                cluster_line=store.cluster_line(),
            )
            _apply(store, plan, snapshot)
            if views is not None:
                _record_placement(views, plan, snapshot)
        desired_config = topic_config.without_operator_owned(desired.config)
        owned_config = [f"{key}={value}" for key, value in sorted(desired_config.items())]
        if plan.create is not None:
            _wait_for_leaders(store, topic, desired.partitions, policies.create_wait_seconds)
        after = store.read_topic(topic) if plan.actions else snapshot
        outcome: errors.Reason | errors.KzoError = plan.reason
        if plan.create is None and not ever_reconciled(previous_status):
            outcome = errors.Reason.ADOPTED
        status = build_topic_status(
            outcome=outcome,
            observation=observation_of(store, after),
            warnings=plan.warnings,
            drift=plan.drift,
            **common,
        )
        status["appliedConfig"] = owned_config
        events = _events_for(plan, outcome, snapshot is None and existed_before)
        result = TopicResult(
            status=status, events=events, outcome=outcome, writes=store.writes - writes_before
        )
        if rf_change is not None:
            changing = errors.ReplicationFactorChanging(
                f"Replication factor {rf_change[0]} -> {rf_change[1]} is carried out by a "
                "PartitionReassignment (mode ReplicationFactor) owned by this resource"
            )
            result.status = build_topic_status(
                outcome=changing, observation=observation_of(store, after), drift=plan.drift, **common
            )
            result.status["appliedConfig"] = status["appliedConfig"]
            result.outcome, result.rf_change = changing, rf_change
            result.retry_after, result.retry_message = RETRY_DELAY_S * 2, changing.message
        return result
    except errors.KzoError as error:
        observation = None
        if not isinstance(error, errors.ClusterUnavailable):
            try:
                observation = observation_of(store, store.read_topic(topic))
            except errors.KzoError:
                observation = None
        status = build_topic_status(outcome=error, observation=observation, **common)
        if owned_config is not None:
            # The writes landed (e.g. the topic was created) and a later read failed: the
            # resource owns the topic now, so deleting it must delete the topic.
            status["appliedConfig"] = owned_config
        result = TopicResult(
            status=status,
            outcome=error,
            events=[Event("Warning", error.reason.value, error.message)],
            writes=store.writes - writes_before,
        )
        if error.retryable:
            result.retry_after = RETRY_DELAY_S
            result.retry_message = error.message
        return result


def _balanced_views(
    desired: DesiredTopic, snapshot: TopicSnapshot | None, store: ZkStore
) -> cluster_views.ClusterViewCache | None:
    """The cluster view cache when this reconcile may place partitions by load, else None."""
    if desired.placement is not Placement.BALANCED or desired.assignment is not None:
        return None
    if snapshot is not None and snapshot.assignment.value.partition_count >= desired.partitions:
        return None
    return cluster_views.cache_for(store)


def _record_placement(
    views: cluster_views.ClusterViewCache, plan: TopicPlan, snapshot: TopicSnapshot | None
) -> None:
    if plan.create is not None:
        views.record(plan.topic, plan.create.assignment)
    elif plan.grow is not None and snapshot is not None:
        views.record(plan.topic, {**snapshot.assignment.value.partitions, **plan.grow.new_assignment})


def applied_config_from_status(status: Mapping[str, Any]) -> dict[str, str] | None:
    """``status.appliedConfig`` ("name=value" list) as a map; None if never reconciled."""
    entries = status.get("appliedConfig")
    if not isinstance(entries, list):
        return None
    return dict(str(entry).split("=", 1) for entry in entries if "=" in str(entry))


def ever_reconciled(status: Mapping[str, Any]) -> bool:
    """True once a reconcile succeeded: only such a resource owns (and may delete) its topic."""
    return isinstance(status.get("appliedConfig"), list)


def _replication_factor_change(
    desired: DesiredTopic, snapshot: TopicSnapshot | None
) -> tuple[int, int] | None:
    """(current, wanted) when only a reassignment can reach the spec's replication factor.

    Not while the topic is already being reassigned (the planner then reports
    ``ReassignmentInProgress``), and not with an explicit assignment (its replica lists say
    exactly what the user wants: a reassignment in Explicit mode is the tool for that).
    """
    if snapshot is None or desired.assignment is not None:
        return None
    current = snapshot.assignment.value
    if current.is_reassigning or snapshot.in_reassignment_znode or not current.partitions:
        return None
    actual = current.replication_factor
    return (actual, desired.replication_factor) if actual != desired.replication_factor else None


def _was_ready(status: Mapping[str, Any]) -> bool:
    for condition in status.get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def unreported(events: list[Event], previous: Mapping[str, Any], generation: int) -> list[Event]:
    """``events`` without the Warnings the previous status already reports for this generation.

    A resync of a resource in the same error (``InvalidSpec``, ``ClusterUnavailable``, ...) or
    with the same drift would otherwise post the same Warning every minute: Kubernetes does not
    merge Events created through the API. Normal events (something was done) always go out.
    """
    ready = next(
        (c for c in previous.get("conditions") or [] if isinstance(c, Mapping) and c.get("type") == "Ready"),
        None,
    )
    same_generation = previous.get("observedGeneration") == generation
    drift = {str(line)[:1000] for line in previous.get("drift") or []}
    kept = []
    for event in events:
        if event.type == "Warning" and same_generation:
            if event.reason == "Drift" and event.message in drift:
                continue
            if (
                ready is not None
                and ready.get("status") == "False"
                and ready.get("reason") == event.reason
                and ready.get("message") == _condition_text(event.message)
            ):
                continue
        kept.append(event)
    return kept


def _condition_text(message: str) -> str:
    """A message as the Ready condition stores it (``topic_status`` shortens long ones)."""
    limit = MAX_MESSAGE_LENGTH
    return message if len(message) <= limit else message[: limit - 1] + "…"


def _events_for(plan: TopicPlan, outcome: errors.Reason | errors.KzoError, recreated: bool) -> list[Event]:
    events: list[Event] = []
    if plan.create is not None:
        verb = "Recreated (it had been deleted in Kafka)" if recreated else "Created"
        events.append(
            Event(
                "Normal",
                "TopicCreated",
                f"{verb} Kafka topic '{plan.topic}' with {counted(len(plan.create.assignment), 'partition')}",
            )
        )
    if plan.alter_config is not None:
        changes = "; ".join(plan.alter_config.changes) or "config rewritten"
        events.append(Event("Normal", "ConfigChanged", f"Topic config changed: {changes}"[:1000]))
    if plan.grow is not None:
        events.append(
            Event(
                "Normal",
                "PartitionsAdded",
                f"Partitions grown from {plan.grow.existing_partition_count} to {plan.grow.total_partitions}",
            )
        )
    if outcome == errors.Reason.ADOPTED:
        events.append(Event("Normal", "TopicAdopted", f"Adopted existing Kafka topic '{plan.topic}'"))
    for line in plan.drift:
        events.append(Event("Warning", "Drift", line[:1000]))
    return events
