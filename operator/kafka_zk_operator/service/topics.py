"""Reconcile one KafkaTopic with Kafka: the single path taken by create, update, resume and resync.

``reconcile_topic`` runs observe → plan → apply → report. Observe: the topic as
the backend's ``read_topic`` returns it (one :class:`~kafka_zk_operator.domain.topic.plan.ObservedTopic`)
and the live brokers, each read once and shared by planning and the status. Plan:
``domain.topic.planning.plan_topic`` against the spec parsed once by ``parse_resource``. Apply:
the plan's writes through the cluster backend (``service.backend``; ZooKeeper: the versioned ``ZkStore``) (a config write conditional on the config
version observed, added partitions on the topic znode's version read right before), then one
re-read of the topic when something was written. Report: ``_report`` builds
the status (``domain.topic.status``), events and retry in one place, for every path - paused or
unmanaged, name conflict, error, replication-factor hand-over and success. An in-sync topic
produces an empty plan: no ZooKeeper write. ``delete_topic`` drives Kafka's deletion (marker
znode) and reports when it is complete.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import topic_names
from kafka_zk_operator.domain.model import BrokerId, Versioned
from kafka_zk_operator.domain.topic import config as topic_config
from kafka_zk_operator.domain.topic.new_partitions import Placement
from kafka_zk_operator.domain.topic.planning import (
    DesiredTopic,
    DriftPolicy,
    ObservedTopic,
    TopicPlan,
    plan_topic,
)
from kafka_zk_operator.domain.topic.resource import KafkaTopicResource
from kafka_zk_operator.domain.topic.status import MAX_MESSAGE_LENGTH, ReconcileMode, build_topic_status
from kafka_zk_operator.domain.wording import counted
from kafka_zk_operator.service import cluster_views
from kafka_zk_operator.service.backend import TopicBackend
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
    #: Partitions of the topic as last read (0: no topic znode; ``None``: nothing was read).
    observed_partitions: int | None = None
    #: The session's last zxid before the topic was read again after this reconcile's writes
    #: (``None``: no such read): the watches of ``runtime.health`` start from it.
    read_since: int | None = None
    #: The topic's place in ``/admin/reassign_partitions`` as last read: (in it, why that znode
    #: could not be read); ``None`` when nothing was read. A resync compares it with the place
    #: in a later state of the znode (``runtime.unchanged``).
    reassignment_place: tuple[bool, str | None] | None = None

    @property
    def read_only(self) -> bool:
        """Whether the outcome follows from what was read alone: nothing written, no retry, no
        replication factor to hand over, and the topic read."""
        return (
            not self.writes
            and self.retry_after is None
            and self.rf_change is None
            and self.observed_partitions is not None
        )


@dataclass(frozen=True)
class TopicPolicies:
    config_drift: DriftPolicy = DriftPolicy.REVERT
    recreate_deleted: bool = True
    create_wait_seconds: float = 10.0


@dataclass
class _Pass:
    """What one reconcile learned and did: everything its report is built from."""

    #: The success reason or the error; ``None`` when paused or unmanaged.
    outcome: errors.Reason | errors.KzoError | None = None
    #: The topic as last read; ``None`` when it was not read (the previous partition fields stay).
    observed: ObservedTopic | None = None
    #: The children of ``/brokers/ids`` read with ``observed``.
    live_brokers: frozenset[BrokerId] = frozenset()
    warnings: tuple[str, ...] = ()
    drift: tuple[str, ...] = ()
    #: ``status.appliedConfig`` once this pass's writes are in ZooKeeper; ``None`` leaves it as it is.
    applied_config: list[str] | None = None
    events: list[Event] = field(default_factory=list)
    writes: int = 0
    rf_change: tuple[int, int] | None = None
    #: The session's last zxid before ``observed`` was read again after the writes.
    read_since: int | None = None


def reconcile_topic(
    resource: KafkaTopicResource,
    store: TopicBackend,
    *,
    previous_status: Mapping[str, Any],
    policies: TopicPolicies,
    conflict_with: str | None = None,
    now: datetime | None = None,
    rng: random.Random | None = None,
) -> TopicResult:
    """Make Kafka match one KafkaTopic and describe the result. Never raises ``KzoError``."""
    moment = now or datetime.now(UTC)
    if resource.mode is not ReconcileMode.MANAGED:
        # Paused / unmanaged: observe (read-only) and report, write nothing.
        done = _Pass()
        done.observed, done.live_brokers = _observe_for_status(store, resource.topic_name)
    elif conflict_with is not None:
        error = errors.ResourceConflict(
            f"Kafka topic '{resource.topic_name}' is already managed by KafkaTopic {conflict_with}; "
            "this resource is ignored until that one is deleted or the topicName is changed"
        )
        done = _Pass(outcome=error, events=[_warning(error)])
    else:
        done = _managed_pass(resource, store, previous_status, policies, rng)
    return _report(resource, done, previous_status, moment)


def _managed_pass(
    resource: KafkaTopicResource,
    store: TopicBackend,
    previous_status: Mapping[str, Any],
    policies: TopicPolicies,
    rng: random.Random | None,
) -> _Pass:
    """Observe → plan → apply for a managed resource; what happened, for :func:`_report`."""
    topic = resource.topic_name
    done = _Pass()
    writes_before = store.writes
    applying = False
    try:
        if resource.desired is None:  # parse_resource kept why the spec is unusable
            raise resource.spec_error or errors.InvalidSpec(f"the spec of topic '{topic}' could not be read")
        desired = resource.desired
        # Observe: each znode once; the live brokers serve planning and the status alike.
        # The partition count last reported: right, the topic's reads take one round trip.
        last_count = previous_status.get("partitions")
        observed, registrations = store.read_topic_and_brokers(
            topic, expected_partitions=last_count if isinstance(last_count, int) else 0
        )
        brokers = [registration.broker for registration in registrations]
        done.observed, done.live_brokers = observed, frozenset(b.id for b in brokers)
        # Plan.
        # Durable ownership: appliedConfig stays through error statuses (topicId and Ready do not).
        existed_before = (
            ever_reconciled(previous_status)
            or bool(previous_status.get("topicId"))
            or _was_ready(previous_status)
        )
        if observed.assignment is None and existed_before and not policies.recreate_deleted:
            raise errors.TopicDeletedInKafka(
                f"Kafka topic '{topic}' was deleted outside the operator; it is not recreated because "
                "the deleted-topic drift policy is 'report' (delete and re-apply the resource to recreate it)"
            )
        rf_change = _replication_factor_change(desired, observed)
        if rf_change is not None:
            # Everything else in the spec is applied now; the replication factor is carried out
            # by a PartitionReassignment (mode ReplicationFactor) that the handler makes sure exists.
            desired = dataclasses.replace(desired, replication_factor=rf_change[0])
        views = _balanced_views(desired, observed, store)
        if views is not None:
            views.view()  # the slow read, before taking the per-cluster placing lock
        with views.placing() if views is not None else contextlib.nullcontext():
            plan = plan_topic(
                desired,
                observed,
                brokers,
                drift_policy=policies.config_drift,
                applied_config=applied_config_from_status(previous_status),
                # The collision check reads the names right before the create it guards; a name
                # without '.' or '_' can only collide with itself, which the create refuses anyway
                # (no list of every topic per create: it grows with the cluster).
                existing_topics=store.topic_names()
                if observed.assignment is None and topic_names.has_collision_chars(topic)
                else (),
                rng=rng,
                placer=views.placer(topic, brokers) if views is not None else None,
                cluster_line=store.cluster_line(registrations),
            )
            # Apply.
            applying = True
            _apply(store, plan, observed)
            if views is not None:
                _record_placement(views, plan, observed)
        desired_config = topic_config.without_operator_owned(desired.config)
        done.applied_config = [f"{key}={value}" for key, value in sorted(desired_config.items())]
        if plan.create is not None:
            store.wait_for_leaders(topic, desired.partitions, policies.create_wait_seconds)
        if plan.actions:  # the writes changed it; its partition count is now the desired one
            # The brokers again too: the status is built from this read alone, and what it
            # read is current as of ``read_since`` (the health reporter need not read it again).
            done.read_since = store.last_zxid()
            done.observed, registrations = store.read_topic_and_brokers(
                topic, expected_partitions=desired.partitions
            )
            done.live_brokers = frozenset(registration.broker.id for registration in registrations)
    except errors.KzoError as error:
        done.outcome, done.events, done.read_since = error, [_warning(error)], None
        if isinstance(error, errors.ClusterUnavailable):
            done.observed = None  # nothing to trust: the previous partition fields stay
        elif applying or done.observed is None:
            # Writes may have landed (or nothing was observed yet): read what is there now.
            done.observed, done.live_brokers = _observe_for_status(store, topic)
        done.writes = store.writes - writes_before
        return done
    outcome: errors.Reason = plan.reason
    if plan.create is None and not ever_reconciled(previous_status):
        outcome = errors.Reason.ADOPTED
    done.events = _events_for(plan, outcome, observed.assignment is None and existed_before)
    done.drift, done.writes = plan.drift, store.writes - writes_before
    if rf_change is None:
        done.outcome, done.warnings = outcome, plan.warnings
    else:
        done.outcome = errors.ReplicationFactorChanging(
            f"Replication factor {rf_change[0]} -> {rf_change[1]} is carried out by a "
            "PartitionReassignment (mode ReplicationFactor) owned by this resource"
        )
        done.rf_change = rf_change
    return done


def _observe_for_status(store: TopicBackend, topic: str) -> tuple[ObservedTopic | None, frozenset[BrokerId]]:
    """The topic and the live broker ids, only to report them; nothing when they cannot be read."""
    try:
        return store.read_topic(topic), frozenset(store.broker_ids())
    except errors.KzoError:
        return None, frozenset()


def _report(
    resource: KafkaTopicResource, done: _Pass, previous_status: Mapping[str, Any], now: datetime
) -> TopicResult:
    """The one exit of a reconcile: the status from the outcome, the observation, the plan's
    warnings and drift and ``appliedConfig``, with the events to post and when to retry."""
    status = build_topic_status(
        topic_name=resource.topic_name,
        generation=resource.generation,
        now=now,
        outcome=done.outcome,
        mode=resource.mode,
        observation=done.observed,
        live_brokers=done.live_brokers,
        previous=previous_status,
        warnings=done.warnings,
        drift=done.drift,
    )
    if done.applied_config is not None:
        # The writes landed (the topic may have been created, even if a later step failed): the
        # resource owns the topic now, so deleting it must delete the topic.
        status["appliedConfig"] = done.applied_config
    observed = done.observed
    result = TopicResult(
        status=status,
        events=done.events,
        outcome=done.outcome,
        writes=done.writes,
        rf_change=done.rf_change,
        read_since=done.read_since,
        observed_partitions=None
        if observed is None
        else (0 if observed.assignment is None else observed.assignment.partition_count),
        reassignment_place=None
        if observed is None
        else (observed.in_reassignment, observed.reassignment_note),
    )
    if isinstance(done.outcome, errors.KzoError) and done.outcome.retryable:
        result.retry_message = done.outcome.message
        result.retry_after = RETRY_DELAY_S * 2 if done.rf_change is not None else RETRY_DELAY_S
    return result


def _warning(error: errors.KzoError) -> Event:
    return Event("Warning", error.reason.value, error.message)


def _apply(store: TopicBackend, plan: TopicPlan, observed: ObservedTopic) -> None:
    """Carry out the plan's writes in order (config before partitions)."""
    topic = plan.topic
    if plan.create is not None:
        store.create_topic(topic, plan.create.assignment, plan.create.config, observed=observed)
        return
    if plan.alter_config is not None:
        store.write_topic_config(topic, plan.alter_config.config, expected_version=observed.config_version)
    if plan.grow is not None:
        # Conditional on the topic znode as observed, which the new partitions were planned from
        # (the config write does not touch it): a change since fails the write, and the next pass
        # plans again.
        if observed.assignment is None or observed.assignment_version is None:
            raise errors.VersionConflict(f"topic {topic!r} disappeared while adding partitions")
        expected = Versioned(observed.assignment, observed.assignment_version)
        store.add_partitions(topic, plan.grow.new_assignment, expected=expected)


def _balanced_views(
    desired: DesiredTopic, observed: ObservedTopic, store: TopicBackend
) -> cluster_views.ClusterViewCache | None:
    """The cluster view cache when this reconcile may place partitions by load, else None."""
    if desired.placement is not Placement.BALANCED or desired.assignment is not None:
        return None
    if observed.assignment is not None and observed.assignment.partition_count >= desired.partitions:
        return None
    return cluster_views.cache_for(store)


def _record_placement(
    views: cluster_views.ClusterViewCache, plan: TopicPlan, observed: ObservedTopic
) -> None:
    if plan.create is not None:
        views.record(plan.topic, plan.create.assignment)
    elif plan.grow is not None and observed.assignment is not None:
        views.record(plan.topic, {**observed.assignment.partitions, **plan.grow.new_assignment})


def applied_config_from_status(status: Mapping[str, Any]) -> dict[str, str] | None:
    """``status.appliedConfig`` ("name=value" list) as a map; None if never reconciled."""
    entries = status.get("appliedConfig")
    if not isinstance(entries, list):
        return None
    return dict(str(entry).split("=", 1) for entry in entries if "=" in str(entry))


def ever_reconciled(status: Mapping[str, Any]) -> bool:
    """True once a reconcile succeeded: only such a resource owns (and may delete) its topic."""
    return isinstance(status.get("appliedConfig"), list)


def _replication_factor_change(desired: DesiredTopic, observed: ObservedTopic) -> tuple[int, int] | None:
    """(current, wanted) when only a reassignment can reach the spec's replication factor.

    Not while the topic is already being reassigned (the planner then reports
    ``ReassignmentInProgress``), and not with an explicit assignment (its replica lists say
    exactly what the user wants: a reassignment in Explicit mode is the tool for that).
    """
    current = observed.assignment
    if current is None or desired.assignment is not None:
        return None
    if observed.is_reassigning or not current.partitions:
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
    """A message as the Ready condition stores it (``domain.topic.status`` shortens long ones)."""
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
