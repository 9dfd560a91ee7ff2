"""Topic planning: what to write to ZooKeeper so a Kafka topic matches its KafkaTopic spec.

:func:`plan_topic` compares the desired topic (from the custom resource) with what ZooKeeper
holds and returns a :class:`TopicPlan` (these values live in ``domain.topic.plan``): the ordered
writes to make (create the topic, write its config, add partitions) plus warnings and drift sentences for the status. It raises a domain error
for requests that cannot or must not be carried out. Called by the topic reconciler on every
create, update, resume and resync (observe → plan → apply → report); a resync of an in-sync topic
yields an empty plan, so nothing is written.

Rules it enforces (reference §5, §13): configs are validated before any write; partitions only
grow, with new ids ``count .. newCount-1`` placed by Kafka's own algorithm or by the explicit
assignment; existing replica lists are never rewritten (a difference is reported); no partitions
are added while the topic is being reassigned or deleted; a topic is not recreated while its
deletion is pending; the operator-owned throttle configs are carried over on every config write.

No side effects: no I/O, no clock; the only randomness is Kafka's random start index on create,
drawn from the injected ``rng``.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import assignment as kafka_assignment
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.kafka import topic_names, znode_bounds
from kafka_zk_operator.domain.kafka.lines import ClusterLine
from kafka_zk_operator.domain.model import Broker, BrokerId, PartitionId, TopicAssignment
from kafka_zk_operator.domain.topic import config as topic_config
from kafka_zk_operator.domain.topic.plan import AlterTopicConfig as AlterTopicConfig
from kafka_zk_operator.domain.topic.plan import CreateTopic as CreateTopic
from kafka_zk_operator.domain.topic.plan import DesiredTopic as DesiredTopic
from kafka_zk_operator.domain.topic.plan import DriftPolicy as DriftPolicy
from kafka_zk_operator.domain.topic.plan import GrowPartitions as GrowPartitions
from kafka_zk_operator.domain.topic.plan import ObservedTopic as ObservedTopic
from kafka_zk_operator.domain.topic.plan import Placer as Placer
from kafka_zk_operator.domain.topic.plan import PlanKind as PlanKind
from kafka_zk_operator.domain.topic.plan import ReplicaMap as ReplicaMap
from kafka_zk_operator.domain.topic.plan import TopicAction as TopicAction
from kafka_zk_operator.domain.topic.plan import TopicPlan as TopicPlan

#: Partitions listed by name in one drift sentence; the rest are counted.
MAX_PARTITIONS_NAMED = 10


def plan_topic(
    desired: DesiredTopic,
    observed: ObservedTopic | None,
    brokers: Sequence[Broker],
    *,
    drift_policy: DriftPolicy = DriftPolicy.REVERT,
    applied_config: Mapping[str, str] | None = None,
    existing_topics: Collection[str] = (),
    rack_aware_mode: kafka_assignment.RackAwareMode = kafka_assignment.RackAwareMode.ENFORCED,
    rng: random.Random | None = None,
    placer: Placer | None = None,
    cluster_line: ClusterLine = kafka_lines.NEWEST_ZK,
) -> TopicPlan:
    """Plan the writes that make ``observed`` match ``desired``. No side effects.

    :param brokers: the live brokers (children of ``/brokers/ids``) with their racks.
    :param applied_config: the config the operator last wrote for this resource, if known; with
        ``DriftPolicy.REPORT`` it tells spec edits (applied) from out-of-band changes (reported).
        Without it, ``REPORT`` applies the spec like ``REVERT`` (first contact: the spec wins).
    :param existing_topics: every topic name in the cluster, for Kafka's ``.``/``_`` collision
        check before a create.
    :param rack_aware_mode: how Kafka's placement treats ``broker.rack`` (default: Kafka's).
    :param rng: source of Kafka's random start index when creating a topic without an explicit
        assignment.
    :param placer: places new partitions instead of Kafka's algorithm (``spec.placement:
        Balanced``); it may answer ``None``, and then Kafka's algorithm is used.
    :param cluster_line: the Kafka line whose rules ``spec.config`` must follow (the oldest line a
        live broker runs, ``ZkStore.cluster_line``); Kafka 3.9's by default.
    :raises InvalidTopicName: illegal, reserved, or colliding with an existing topic.
    :raises InvalidPartitions: fewer than one partition.
    :raises InvalidReplicationFactor: below one, or above the number of live brokers.
    :raises InvalidConfig: a config the cluster's Kafka line would refuse.
    :raises InvalidSpec: an explicit assignment with wrong partition ids, wrong replica counts,
        duplicate or unregistered brokers; only some brokers have a rack (enforced mode).
    :raises NotSupported: fewer partitions than Kafka has (with ``REVERT``), or a different
        replication factor (use a PartitionReassignment).
    :raises ReassignmentInProgress: partitions to add, or a replication factor that differs, while
        the topic is being reassigned.
    :raises TopicBeingDeleted: the topic is queued for deletion.
    :raises RequestTooLarge: a topic znode too long for ZooKeeper at any placement, to create or
        grow (refused before any placement is computed).
    :raises MalformedZnode: the topic znode's partition ids are not ``0 .. N-1``.
    """
    _validate_desired(desired, cluster_line)
    warnings = tuple(topic_config.config_warnings(desired.config, line=cluster_line.line))
    if observed is not None and observed.marked_for_deletion:
        raise errors.TopicBeingDeleted(
            f"Topic '{desired.name}' is queued for deletion (/admin/delete_topics/{desired.name} exists); "
            "it is recreated once Kafka has finished deleting it."
        )
    if observed is None or observed.assignment is None:
        leftover = observed is not None and bool(observed.config)
        create = _plan_create(desired, brokers, existing_topics, rack_aware_mode, rng, placer)
        if leftover:
            warnings += (
                f"/config/topics/{desired.name} existed without /brokers/topics/{desired.name} "
                "(an interrupted create?); it is overwritten.",
            )
        return TopicPlan(desired.name, (create,), warnings)
    return _plan_update(
        desired,
        observed,
        observed.assignment,
        brokers,
        drift_policy,
        applied_config,
        rack_aware_mode,
        warnings,
        placer,
    )


# --- validation of the spec alone ---------------------------------------------------------------


def _validate_desired(desired: DesiredTopic, cluster_line: ClusterLine) -> None:
    topic_names.validate_topic_name(desired.name)
    if desired.partitions < 1:
        raise errors.InvalidPartitions(
            f"Topic '{desired.name}' needs at least 1 partition (got {desired.partitions})."
        )
    if desired.replication_factor < 1:
        raise errors.InvalidReplicationFactor(
            f"Topic '{desired.name}' needs a replication factor of at least 1 "
            f"(got {desired.replication_factor})."
        )
    topic_config.validate_topic_config(desired.config, desired.replication_factor, line=cluster_line)
    if desired.assignment is not None:
        _validate_assignment_shape(desired)


def _validate_assignment_shape(desired: DesiredTopic) -> None:
    assert desired.assignment is not None
    ids = sorted(desired.assignment)
    if ids != list(range(desired.partitions)):
        raise errors.InvalidSpec(
            f"spec.assignment must list partitions 0 to {desired.partitions - 1}, each once "
            f"(got {_describe_ids(ids)})."
        )
    for partition in ids:
        replicas = desired.assignment[partition]
        if len(replicas) != desired.replication_factor:
            raise errors.InvalidSpec(
                f"spec.assignment partition {partition} lists {len(replicas)} brokers, "
                f"but replicationFactor is {desired.replication_factor}."
            )
        if len(set(replicas)) != len(replicas):
            raise errors.InvalidSpec(
                f"spec.assignment partition {partition} names a broker more than once: {list(replicas)}."
            )


def _check_brokers_registered(assignment: ReplicaMap, brokers: Sequence[Broker]) -> None:
    live = {broker.id for broker in brokers}
    unknown = sorted({b for replicas in assignment.values() for b in replicas} - live)
    if unknown:
        raise errors.InvalidSpec(
            f"spec.assignment names brokers that are not registered: {unknown} "
            f"(live brokers: {sorted(live)})."
        )


# --- create ----------------------------------------------------------------------------------------


def _plan_create(
    desired: DesiredTopic,
    brokers: Sequence[Broker],
    existing_topics: Collection[str],
    rack_aware_mode: kafka_assignment.RackAwareMode,
    rng: random.Random | None,
    placer: Placer | None,
) -> CreateTopic:
    collision = topic_names.find_collision(desired.name, existing_topics)
    if collision is not None:
        raise errors.InvalidTopicName(
            f"Topic '{desired.name}' collides with existing topic '{collision}': Kafka treats '.' and '_' "
            "alike in metric names. Choose another name."
        )
    znode_bounds.check_topic_znode_fits(desired.name, desired.partitions, desired.replication_factor)
    if desired.assignment is not None:
        _check_brokers_registered(desired.assignment, brokers)
        placement = {p: tuple(desired.assignment[p]) for p in sorted(desired.assignment)}
    elif (placed := _place(placer, {}, desired, brokers)) is not None:
        placement = placed
    else:
        candidates = kafka_assignment.brokers_for_assignment(brokers, rack_aware_mode)
        computed = kafka_assignment.assign_replicas_to_brokers(
            candidates, desired.partitions, desired.replication_factor, rng=rng
        )
        placement = {p: tuple(replicas) for p, replicas in computed.items()}
    return CreateTopic(placement, dict(desired.config))


# --- update ----------------------------------------------------------------------------------------


def _plan_update(
    desired: DesiredTopic,
    observed: ObservedTopic,
    current: TopicAssignment,
    brokers: Sequence[Broker],
    drift_policy: DriftPolicy,
    applied_config: Mapping[str, str] | None,
    rack_aware_mode: kafka_assignment.RackAwareMode,
    warnings: tuple[str, ...],
    placer: Placer | None,
) -> TopicPlan:
    name = desired.name
    _check_partition_ids(name, current)
    drift: list[str] = []
    _check_replication_factor(desired, observed, current, drift)
    actions: list[TopicAction] = []
    alter = _plan_config(desired, observed.config, drift_policy, applied_config, drift)
    if alter is not None:
        actions.append(alter)
    observed_count = current.partition_count
    if desired.partitions < observed_count:
        message = (
            f"Topic '{name}' has {observed_count} partitions in Kafka but spec.partitions is "
            f"{desired.partitions}: partitions were added outside the operator"
        )
        if drift_policy is DriftPolicy.REVERT:
            raise errors.NotSupported(
                f"Decreasing partitions not supported. {message}; set spec.partitions to {observed_count}."
            )
        drift.append(f"{message}; Kafka cannot remove them.")
    elif desired.partitions > observed_count:
        actions.append(_plan_grow(desired, observed, current, brokers, rack_aware_mode, placer))
    if desired.assignment is not None:
        drift.extend(_replica_drift(desired.assignment, current))
    return TopicPlan(name, tuple(actions), warnings, tuple(drift))


def _check_partition_ids(name: str, current: TopicAssignment) -> None:
    ids = sorted(current.partitions)
    if not ids:
        raise errors.MalformedZnode(f"/brokers/topics/{name}", "the topic has no partitions")
    if ids != list(range(len(ids))):
        raise errors.MalformedZnode(
            f"/brokers/topics/{name}", f"partition ids must be 0..{len(ids) - 1}, found {_describe_ids(ids)}"
        )


def _check_replication_factor(
    desired: DesiredTopic, observed: ObservedTopic, current: TopicAssignment, drift: list[str]
) -> None:
    actual = current.replication_factor
    if actual != desired.replication_factor:
        if observed.is_reassigning:
            raise errors.ReassignmentInProgress(
                f"Topic '{desired.name}' has replication factor {actual} in Kafka and "
                f"{desired.replication_factor} in spec.replicationFactor while a reassignment is in "
                "progress; waiting for it to finish."
            )
        raise errors.NotSupported(
            f"Topic '{desired.name}' has replication factor {actual} in Kafka and "
            f"{desired.replication_factor} in spec.replicationFactor, and spec.assignment is set: the "
            "operator changes the replication factor by itself only without an explicit assignment. "
            "Remove spec.assignment, or move the replicas with a PartitionReassignment in Explicit "
            "mode and then update the spec."
        )
    odd = sorted(p for p, replicas in _targets(current).items() if len(replicas) != actual)
    if odd:
        drift.append(
            f"Partition(s) {_describe_ids(odd)} do not have {actual} replicas like partition "
            f"{min(current.partitions)}; a PartitionReassignment can even them out."
        )


def _plan_grow(
    desired: DesiredTopic,
    observed: ObservedTopic,
    current: TopicAssignment,
    brokers: Sequence[Broker],
    rack_aware_mode: kafka_assignment.RackAwareMode,
    placer: Placer | None,
) -> GrowPartitions:
    count = current.partition_count
    if observed.reassignment_note is not None:
        raise errors.ReassignmentInProgress(
            f"Topic '{desired.name}' can grow from {count} to {desired.partitions} partitions only once "
            f"/admin/reassign_partitions can be read ({observed.reassignment_note}); if no reassignment is "
            "running, whoever wrote it should delete it."
        )
    if observed.is_reassigning:
        raise errors.ReassignmentInProgress(
            f"Topic '{desired.name}' is being reassigned; its partitions can only be increased from {count} "
            f"to {desired.partitions} once the reassignment has finished."
        )
    znode_bounds.check_topic_znode_fits(desired.name, desired.partitions, desired.replication_factor)
    if desired.assignment is not None:
        new = {p: tuple(desired.assignment[p]) for p in range(count, desired.partitions)}
        _check_brokers_registered(new, brokers)
    elif (placed := _place(placer, current.partitions, desired, brokers)) is not None:
        new = placed
    else:
        candidates = kafka_assignment.brokers_for_assignment(brokers, rack_aware_mode)
        existing = {p: list(replicas) for p, replicas in current.partitions.items()}
        computed = kafka_assignment.assign_new_partitions(existing, candidates, desired.partitions)
        new = {p: tuple(replicas) for p, replicas in computed.items()}
    return GrowPartitions(count, new)


def _place(
    placer: Placer | None,
    existing: Mapping[PartitionId, Sequence[BrokerId]],
    desired: DesiredTopic,
    brokers: Sequence[Broker],
) -> dict[PartitionId, tuple[BrokerId, ...]] | None:
    if placer is None:
        return None
    placed = placer(existing, desired.partitions, desired.replication_factor)
    if placed is None:
        return None
    wanted = set(range(len(existing), desired.partitions))
    live = {broker.id for broker in brokers}
    if (
        set(placed) != wanted
        or any(len(set(r)) != desired.replication_factor for r in placed.values())
        or any(b not in live for r in placed.values() for b in r)
    ):
        raise errors.NotSupported(
            f"the balanced placement of topic '{desired.name}' returned an invalid assignment {dict(placed)} "
            f"for partitions {sorted(wanted)} (a bug: please report it); spec.placement: Kafka avoids it"
        )
    return placed


def _targets(current: TopicAssignment) -> dict[PartitionId, tuple[BrokerId, ...]]:
    """Each partition's replicas once any reassignment completes (``replicas`` minus ``removing``)."""
    targets: dict[PartitionId, tuple[BrokerId, ...]] = {}
    for partition, replicas in current.partitions.items():
        removing = set(current.removing_replicas.get(partition, ()))
        targets[partition] = tuple(b for b in replicas if b not in removing)
    return targets


def _replica_drift(wanted: ReplicaMap, current: TopicAssignment) -> list[str]:
    targets = _targets(current)
    differing = sorted(p for p in targets if p in wanted and tuple(wanted[p]) != targets[p])
    if not differing:
        return []
    shown = ", ".join(
        f"{p}: {list(targets[p])} (spec {list(wanted[p])})" for p in differing[:MAX_PARTITIONS_NAMED]
    )
    more = (
        f" and {len(differing) - MAX_PARTITIONS_NAMED} more" if len(differing) > MAX_PARTITIONS_NAMED else ""
    )
    return [
        f"Replicas of {len(differing)} existing partition(s) differ from spec.assignment — {shown}{more}; "
        "existing replicas are never rewritten, use a PartitionReassignment to move them."
    ]


# --- config ----------------------------------------------------------------------------------------


def _plan_config(
    desired: DesiredTopic,
    observed_config: Mapping[str, str],
    drift_policy: DriftPolicy,
    applied_config: Mapping[str, str] | None,
    drift: list[str],
) -> AlterTopicConfig | None:
    current = topic_config.without_operator_owned(observed_config)
    wanted = dict(desired.config)
    if drift_policy is DriftPolicy.REPORT and applied_config is not None:
        wanted = _keep_out_of_band_changes(wanted, current, applied_config, drift)
    if wanted == current:
        return None
    owned = {k: v for k, v in observed_config.items() if topic_config.is_operator_owned(k)}
    changed_keys = sorted(key for key in set(current) | set(wanted) if current.get(key) != wanted.get(key))
    changes = tuple(_describe_change(key, current.get(key), wanted.get(key)) for key in changed_keys)
    return AlterTopicConfig({**wanted, **owned}, changes)


def _keep_out_of_band_changes(
    wanted: dict[str, str], current: Mapping[str, str], applied: Mapping[str, str], drift: list[str]
) -> dict[str, str]:
    """Per key: the spec's value if the spec changed it since the last write, else Kafka's (reported)."""
    result: dict[str, str] = {}
    for key in sorted(set(wanted) | set(current) | set(applied)):
        spec_value, kafka_value, applied_value = wanted.get(key), current.get(key), applied.get(key)
        spec_changed = spec_value != applied_value
        value = spec_value if spec_changed else kafka_value
        if not spec_changed and kafka_value != spec_value:
            drift.append(
                f"Config {key} is {_shown(kafka_value)} in Kafka but {_shown(spec_value)} in the spec "
                "(changed outside the operator; kept because the drift policy is report)."
            )
        if value is not None:
            result[key] = value
    return result


def _describe_change(key: str, before: str | None, after: str | None) -> str:
    if before is None:
        return f"{key}: set to {after!r}"
    if after is None:
        return f"{key}: {before!r} removed"
    return f"{key}: {before!r} -> {after!r}"


def _shown(value: str | None) -> str:
    return "unset" if value is None else repr(value)


def _describe_ids(ids: Sequence[int]) -> str:
    if not ids:
        return "none"
    shown = ", ".join(str(i) for i in ids[:MAX_PARTITIONS_NAMED])
    return shown + (f" and {len(ids) - MAX_PARTITIONS_NAMED} more" if len(ids) > MAX_PARTITIONS_NAMED else "")
