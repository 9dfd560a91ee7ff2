"""plan_topic: create, grow, config changes, drift, and every refusal, without any I/O."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import assignment as kafka_assignment
from kafka_zk_operator.domain.model import Broker, TopicAssignment
from kafka_zk_operator.domain.topic.planning import (
    AlterTopicConfig,
    CreateTopic,
    DesiredTopic,
    DriftPolicy,
    GrowPartitions,
    ObservedTopic,
    PlanKind,
    TopicPlan,
    plan_topic,
)

THROTTLES = {
    "leader.replication.throttled.replicas": "0:1,0:2",
    "follower.replication.throttled.replicas": "0:3",
}


def brokers(*ids: int, racks: Sequence[str | None] | None = None) -> list[Broker]:
    ids = ids or (1, 2, 3)
    rack_list = list(racks) if racks is not None else [None] * len(ids)
    return [Broker(broker_id, rack) for broker_id, rack in zip(ids, rack_list, strict=True)]


def desired(
    partitions: int = 3,
    replication_factor: int = 2,
    config: Mapping[str, str] | None = None,
    assignment: Mapping[int, tuple[int, ...]] | None = None,
    name: str = "orders",
) -> DesiredTopic:
    return DesiredTopic(name, partitions, replication_factor, dict(config or {}), assignment)


def observed(
    partitions: Mapping[int, tuple[int, ...]],
    config: Mapping[str, str] | None = None,
    *,
    adding: Mapping[int, tuple[int, ...]] | None = None,
    removing: Mapping[int, tuple[int, ...]] | None = None,
    marked_for_deletion: bool = False,
    in_reassignment: bool = False,
) -> ObservedTopic:
    topic = TopicAssignment(
        partitions=dict(partitions),
        topic_id="fuxffnL_TWKJE99B8vHPmQ",
        adding_replicas=dict(adding or {}),
        removing_replicas=dict(removing or {}),
    )
    return ObservedTopic(topic, dict(config or {}), marked_for_deletion, in_reassignment)


EXISTING = {0: (1, 2), 1: (2, 3), 2: (3, 1)}


def plan(
    want: DesiredTopic, have: ObservedTopic | None, live: Sequence[Broker] | None = None, **options: object
) -> TopicPlan:
    return plan_topic(want, have, live if live is not None else brokers(), **options)  # type: ignore[arg-type]


# --- create ------------------------------------------------------------------------------------------


def test_missing_topic_is_created_with_kafkas_default_assignment() -> None:
    result = plan(desired(partitions=6, replication_factor=3), None, rng=random.Random(7))
    expected = kafka_assignment.assign_replicas_to_brokers(brokers(), 6, 3, rng=random.Random(7))
    assert result.kind is PlanKind.CREATE
    assert result.reason is errors.Reason.CREATED
    assert result.create == CreateTopic({p: tuple(r) for p, r in expected.items()}, {})
    assert result.actions == (result.create,)


def test_create_writes_the_spec_config() -> None:
    config = {"retention.ms": "86400000", "cleanup.policy": "compact"}
    result = plan(desired(config=config), None, rng=random.Random(1))
    assert result.create is not None
    assert result.create.config == config


def test_create_uses_the_explicit_assignment_verbatim() -> None:
    explicit = {0: (3, 1), 1: (1, 2)}
    result = plan(desired(partitions=2, assignment=explicit), None)
    assert result.create == CreateTopic(explicit, {})


def test_create_is_rack_aware_when_every_broker_has_a_rack() -> None:
    live = brokers(1, 2, 3, 4, racks=["a", "a", "b", "b"])
    result = plan(desired(partitions=8, replication_factor=2), None, live, rng=random.Random(3))
    assert result.create is not None
    rack = {b.id: b.rack for b in live}
    for replicas in result.create.assignment.values():
        assert {rack[b] for b in replicas} == {"a", "b"}


def test_create_refuses_mixed_rack_information_by_default() -> None:
    live = brokers(1, 2, 3, racks=["a", None, "b"])
    with pytest.raises(errors.InvalidSpec, match="Not all brokers have rack information"):
        plan(desired(), None, live, rng=random.Random(1))


def test_create_ignores_partial_racks_in_safe_mode() -> None:
    live = brokers(1, 2, 3, racks=["a", None, "b"])
    result = plan(
        desired(), None, live, rng=random.Random(1), rack_aware_mode=kafka_assignment.RackAwareMode.SAFE
    )
    assert result.kind is PlanKind.CREATE


def test_replication_factor_above_live_brokers_is_refused() -> None:
    with pytest.raises(errors.InvalidReplicationFactor, match="larger than available brokers: 3"):
        plan(desired(replication_factor=4), None, rng=random.Random(1))


def test_explicit_assignment_with_unregistered_broker_is_refused_on_create() -> None:
    with pytest.raises(errors.InvalidSpec, match=r"not registered: \[9\] \(live brokers: \[1, 2, 3\]\)"):
        plan(desired(partitions=2, assignment={0: (1, 9), 1: (2, 3)}), None)


def test_colliding_name_is_refused_on_create() -> None:
    with pytest.raises(errors.InvalidTopicName, match="collides with existing topic 'orders_v1'"):
        plan(desired(name="orders.v1"), None, existing_topics=["orders_v1", "other"], rng=random.Random(1))


def test_same_name_in_existing_topics_is_not_a_collision() -> None:
    result = plan(desired(name="orders.v1"), None, existing_topics=["orders.v1"], rng=random.Random(1))
    assert result.kind is PlanKind.CREATE


def test_leftover_config_without_topic_znode_is_overwritten_with_a_warning() -> None:
    leftover = ObservedTopic(None, {"retention.ms": "1"})
    result = plan(desired(config={"retention.ms": "2"}), leftover, rng=random.Random(1))
    assert result.kind is PlanKind.CREATE
    assert result.create is not None and result.create.config == {"retention.ms": "2"}
    assert any("interrupted create" in w for w in result.warnings)


def test_topic_still_being_deleted_is_not_recreated() -> None:
    deleting = ObservedTopic(None, {}, marked_for_deletion=True)
    with pytest.raises(errors.TopicBeingDeleted, match="queued for deletion"):
        plan(desired(), deleting, rng=random.Random(1))


# --- spec validation (before looking at Kafka) -----------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["", "..", "bad name", "__consumer_offsets", "__cluster_metadata", "x" * 250]
)
def test_illegal_or_reserved_names_are_refused(name: str) -> None:
    with pytest.raises(errors.InvalidTopicName):
        plan(desired(name=name), None, rng=random.Random(1))


def test_zero_partitions_is_refused() -> None:
    with pytest.raises(errors.InvalidPartitions):
        plan(desired(partitions=0), None)


def test_zero_replication_factor_is_refused() -> None:
    with pytest.raises(errors.InvalidReplicationFactor):
        plan(desired(replication_factor=0), None)


def test_invalid_config_is_refused_before_any_write_is_planned() -> None:
    with pytest.raises(errors.InvalidConfig, match=r"did you mean retention\.ms"):
        plan(desired(config={"retention.msec": "1"}), observed(EXISTING))


def test_min_insync_replicas_above_replication_factor_is_refused() -> None:
    with pytest.raises(errors.InvalidConfig, match=r"min\.insync\.replicas"):
        plan(desired(config={"min.insync.replicas": "3"}), None)


@pytest.mark.parametrize(
    ("explicit", "why"),
    [
        ({0: (1, 2), 1: (2, 3)}, "must list partitions 0 to 2"),
        ({0: (1, 2), 1: (2, 3), 3: (3, 1)}, "must list partitions 0 to 2"),
        ({0: (1, 2), 1: (2,), 2: (3, 1)}, "partition 1 lists 1 brokers, but replicationFactor is 2"),
        ({0: (1, 2), 1: (2, 2), 2: (3, 1)}, r"partition 1 names a broker more than once: \[2, 2\]"),
    ],
)
def test_malformed_explicit_assignment_is_refused(explicit: dict[int, tuple[int, ...]], why: str) -> None:
    with pytest.raises(errors.InvalidSpec, match=why):
        plan(desired(assignment=explicit), None)


# --- existing topic: no change, config --------------------------------------------------------------------


def test_topic_matching_the_spec_needs_no_change() -> None:
    result = plan(desired(config={"retention.ms": "1"}), observed(EXISTING, {"retention.ms": "1"}))
    assert result.kind is PlanKind.NO_CHANGE
    assert result.actions == ()
    assert result.reason is errors.Reason.IN_SYNC
    assert result.drift == ()


def test_config_difference_rewrites_the_full_config() -> None:
    have = observed(EXISTING, {"retention.ms": "1", "segment.ms": "5"})
    result = plan(desired(config={"retention.ms": "2", "cleanup.policy": "compact"}), have)
    assert result.kind is PlanKind.ALTER_CONFIG
    assert result.reason is errors.Reason.UPDATED
    assert result.alter_config == AlterTopicConfig(
        {"retention.ms": "2", "cleanup.policy": "compact"},
        ("cleanup.policy: set to 'compact'", "retention.ms: '1' -> '2'", "segment.ms: '5' removed"),
    )


def test_operator_owned_throttles_are_not_drift() -> None:
    have = observed(EXISTING, {"retention.ms": "1", **THROTTLES})
    assert plan(desired(config={"retention.ms": "1"}), have).kind is PlanKind.NO_CHANGE


def test_operator_owned_throttles_are_carried_over_when_config_is_written() -> None:
    have = observed(EXISTING, {"retention.ms": "1", **THROTTLES})
    result = plan(desired(config={"retention.ms": "2"}), have)
    assert result.alter_config is not None
    assert result.alter_config.config == {"retention.ms": "2", **THROTTLES}
    assert result.alter_config.changes == ("retention.ms: '1' -> '2'",)


def test_config_can_change_while_the_topic_is_reassigned() -> None:
    have = observed(EXISTING, {}, in_reassignment=True)
    assert plan(desired(config={"retention.ms": "2"}), have).kind is PlanKind.ALTER_CONFIG


def test_deprecated_config_keys_are_warned_about() -> None:
    have = observed(EXISTING, {"message.format.version": "2.8"})
    result = plan(desired(config={"message.format.version": "2.8"}), have)
    assert result.kind is PlanKind.NO_CHANGE
    assert len(result.warnings) == 1
    assert "message.format.version is deprecated" in result.warnings[0]


# --- drift policy --------------------------------------------------------------------------------------


def test_revert_policy_overwrites_out_of_band_config_changes() -> None:
    have = observed(EXISTING, {"retention.ms": "999"})
    applied = {"retention.ms": "1"}
    result = plan(desired(config={"retention.ms": "1"}), have, applied_config=applied)
    assert result.alter_config is not None
    assert result.alter_config.config == {"retention.ms": "1"}
    assert result.drift == ()


def test_report_policy_keeps_and_reports_out_of_band_config_changes() -> None:
    have = observed(EXISTING, {"retention.ms": "999", "segment.ms": "7"})
    applied = {"retention.ms": "1"}
    result = plan(
        desired(config={"retention.ms": "1"}), have, drift_policy=DriftPolicy.REPORT, applied_config=applied
    )
    assert result.kind is PlanKind.NO_CHANGE
    assert result.drift == (
        "Config retention.ms is '999' in Kafka but '1' in the spec "
        "(changed outside the operator; kept because the drift policy is report).",
        "Config segment.ms is '7' in Kafka but unset in the spec "
        "(changed outside the operator; kept because the drift policy is report).",
    )


def test_report_policy_still_applies_spec_edits() -> None:
    have = observed(EXISTING, {"retention.ms": "999", "segment.ms": "7"})
    applied = {"retention.ms": "1", "segment.ms": "7"}
    result = plan(
        desired(config={"retention.ms": "1", "cleanup.policy": "compact"}),
        have,
        drift_policy=DriftPolicy.REPORT,
        applied_config=applied,
    )
    assert result.alter_config is not None
    # segment.ms was removed from the spec (applied), retention.ms drifted in Kafka (kept).
    assert result.alter_config.config == {"retention.ms": "999", "cleanup.policy": "compact"}
    assert len(result.drift) == 1 and "retention.ms" in result.drift[0]


def test_report_policy_without_applied_config_applies_the_spec() -> None:
    have = observed(EXISTING, {"retention.ms": "999"})
    result = plan(desired(config={"retention.ms": "1"}), have, drift_policy=DriftPolicy.REPORT)
    assert result.alter_config is not None
    assert result.alter_config.config == {"retention.ms": "1"}


# --- existing topic: partitions ------------------------------------------------------------------------


def test_more_partitions_are_added_with_kafkas_add_partitions_assignment() -> None:
    result = plan(desired(partitions=5), observed(EXISTING))
    expected = kafka_assignment.assign_new_partitions(dict(EXISTING), brokers(), 5)
    assert result.kind is PlanKind.GROW
    assert result.reason is errors.Reason.UPDATED
    assert result.grow == GrowPartitions(3, {p: tuple(r) for p, r in expected.items()})
    assert result.grow is not None
    assert sorted(result.grow.new_assignment) == [3, 4]
    assert result.grow.total_partitions == 5


def test_grow_and_config_change_write_the_config_first() -> None:
    result = plan(desired(partitions=4, config={"retention.ms": "5"}), observed(EXISTING))
    assert result.kind is PlanKind.GROW_AND_ALTER_CONFIG
    assert [type(action) for action in result.actions] == [AlterTopicConfig, GrowPartitions]


def test_grow_uses_the_explicit_assignment_for_new_partitions_only() -> None:
    explicit = {0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (3, 2), 4: (1, 3)}
    result = plan(desired(partitions=5, assignment=explicit), observed(EXISTING))
    assert result.grow == GrowPartitions(3, {3: (3, 2), 4: (1, 3)})
    assert result.drift == ()


def test_explicit_assignment_differing_from_existing_replicas_is_reported_not_rewritten() -> None:
    explicit = {0: (2, 1), 1: (2, 3), 2: (1, 3)}
    result = plan(desired(assignment=explicit), observed(EXISTING))
    assert result.kind is PlanKind.NO_CHANGE
    assert result.drift == (
        "Replicas of 2 existing partition(s) differ from spec.assignment — 0: [1, 2] (spec [2, 1]), "
        "2: [3, 1] (spec [1, 3]); existing replicas are never rewritten, use a PartitionReassignment "
        "to move them.",
    )


def test_replica_drift_names_at_most_ten_partitions() -> None:
    existing = {p: (1, 2) for p in range(12)}
    explicit = {p: (2, 1) for p in range(12)}
    result = plan(desired(partitions=12, assignment=explicit), observed(existing))
    assert result.drift[0].startswith("Replicas of 12 existing partition(s)")
    assert "9: [1, 2] (spec [2, 1]) and 2 more;" in result.drift[0]


def test_replica_drift_compares_with_the_reassignment_target() -> None:
    moving = observed(
        {0: (3, 1, 2), 1: (2, 3), 2: (3, 1)}, adding={0: (3,)}, removing={0: (2,)}
    )  # partition 0 moving from [1, 2] to [3, 1]
    explicit = {0: (3, 1), 1: (2, 3), 2: (3, 1)}
    assert plan(desired(assignment=explicit), moving).drift == ()


def test_new_partitions_on_an_unregistered_broker_are_refused() -> None:
    explicit = {0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (3, 7)}
    with pytest.raises(errors.InvalidSpec, match=r"not registered: \[7\]"):
        plan(desired(partitions=4, assignment=explicit), observed(EXISTING))


def test_unregistered_broker_in_existing_partitions_is_only_drift() -> None:
    explicit = {0: (1, 9), 1: (2, 3), 2: (3, 1)}  # broker 9 is down or gone: nothing is written
    result = plan(desired(assignment=explicit), observed(EXISTING))
    assert result.kind is PlanKind.NO_CHANGE
    assert "0: [1, 2] (spec [1, 9])" in result.drift[0]


def test_adding_partitions_needs_enough_live_brokers() -> None:
    with pytest.raises(errors.InvalidReplicationFactor):
        plan(desired(partitions=4), observed(EXISTING), brokers(1))


def test_fewer_partitions_than_kafka_is_not_supported_with_revert_policy() -> None:
    with pytest.raises(errors.NotSupported) as caught:
        plan(desired(partitions=2), observed(EXISTING))
    assert str(caught.value) == (
        "Decreasing partitions not supported. Topic 'orders' has 3 partitions in Kafka but spec.partitions "
        "is 2: partitions were added outside the operator; set spec.partitions to 3."
    )
    assert caught.value.reason is errors.Reason.NOT_SUPPORTED


def test_fewer_partitions_than_kafka_is_reported_with_report_policy() -> None:
    have = observed(EXISTING, {"retention.ms": "1"})
    result = plan(desired(partitions=2, config={"retention.ms": "2"}), have, drift_policy=DriftPolicy.REPORT)
    assert result.kind is PlanKind.ALTER_CONFIG  # the rest of the spec is still applied
    assert result.drift == (
        "Topic 'orders' has 3 partitions in Kafka but spec.partitions is 2: partitions were added outside "
        "the operator; Kafka cannot remove them.",
    )


@pytest.mark.parametrize(
    "have",
    [
        observed(EXISTING, in_reassignment=True),
        observed({0: (1, 2, 3), 1: (2, 3), 2: (3, 1)}, adding={0: (3,)}, removing={0: (2,)}),
    ],
    ids=["listed-in-reassign-znode", "adding-replicas-in-topic-znode"],
)
def test_partitions_are_not_added_during_a_reassignment(have: ObservedTopic) -> None:
    with pytest.raises(errors.ReassignmentInProgress, match="from 3 to 4 once the reassignment has finished"):
        plan(desired(partitions=4), have)


def test_topic_queued_for_deletion_is_left_alone() -> None:
    with pytest.raises(errors.TopicBeingDeleted):
        plan(desired(partitions=4), observed(EXISTING, marked_for_deletion=True))
    with pytest.raises(errors.TopicBeingDeleted):
        plan(desired(), observed(EXISTING, marked_for_deletion=True))


# --- existing topic: replication factor ----------------------------------------------------------------


def test_replication_factor_change_is_not_planned_here_and_the_message_says_what_to_do() -> None:
    # The service hands RF changes without spec.assignment to a PartitionReassignment before
    # planning; what reaches the planner is an RF change with an explicit assignment.
    with pytest.raises(errors.NotSupported, match="PartitionReassignment in Explicit mode") as caught:
        plan(desired(replication_factor=3), observed(EXISTING))
    assert "Remove spec.assignment" in caught.value.message


def test_replication_factor_difference_during_a_reassignment_waits() -> None:
    with pytest.raises(errors.ReassignmentInProgress, match="replication factor 2 in Kafka and 3"):
        plan(desired(replication_factor=3), observed(EXISTING, in_reassignment=True))


def test_uneven_replica_counts_are_reported() -> None:
    uneven = {0: (1, 2), 1: (2, 3, 1), 2: (3, 1)}
    result = plan(desired(), observed(uneven))
    assert result.drift == (
        "Partition(s) 1 do not have 2 replicas like partition 0; a PartitionReassignment can even them out.",
    )


# --- malformed topic znodes --------------------------------------------------------------------------------


def test_gap_in_partition_ids_is_a_malformed_znode() -> None:
    with pytest.raises(errors.MalformedZnode, match=r"/brokers/topics/orders is malformed: partition ids"):
        plan(desired(partitions=4), observed({0: (1, 2), 2: (2, 3)}))


def test_topic_znode_without_partitions_is_malformed() -> None:
    with pytest.raises(errors.MalformedZnode, match="has no partitions"):
        plan(desired(), observed({}))
