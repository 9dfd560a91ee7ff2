"""Validating explicit reassignments against the cluster (``domain.reassignment.validation``)."""

from __future__ import annotations

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.reassignment.plan import ClusterView, PartitionMove
from kafka_zk_operator.domain.reassignment.request import RackPolicy, RequestedPartition
from kafka_zk_operator.domain.reassignment.validation import (
    plan_explicit,
    rack_problem,
    submission_problems,
    unregistered_targets,
)

RACKS = {1: "a", 2: "b", 3: "c", 4: "a"}


def cluster(**overrides: object) -> ClusterView:
    values: dict[str, object] = {
        "brokers": RACKS,
        "assignments": {"orders": {0: (1, 2), 1: (2, 3), 2: (3, 1)}, "logs": {0: (1,)}},
    }
    values.update(overrides)
    return ClusterView(**values)  # type: ignore[arg-type]


def req(topic: str, partition: int, *replicas: int) -> RequestedPartition:
    return RequestedPartition(topic, partition, tuple(replicas))


def test_a_valid_request_becomes_a_plan_with_current_replicas_as_sources() -> None:
    plan = plan_explicit([req("orders", 1, 4, 3), req("orders", 0, 3, 1)], cluster(), RackPolicy.ENFORCE)
    assert plan.moves == (
        PartitionMove("orders", 0, (1, 2), (3, 1)),
        PartitionMove("orders", 1, (2, 3), (4, 3)),
    )
    assert plan.replica_moves == 2 and plan.lower_bound == 2 and plan.provably_optimal
    assert plan.leader_changes == 2


def test_partitions_already_at_their_target_are_skipped_with_a_note() -> None:
    plan = plan_explicit([req("orders", 0, 1, 2), req("orders", 1, 3, 2)], cluster(), RackPolicy.ENFORCE)
    assert [m.partition for m in plan.moves] == [1]
    assert plan.moves[0].moves == 0 and plan.moves[0].leader_changes
    assert "1 partition(s) already have the requested replicas" in plan.notes[0]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (req("nope", 0, 1, 2), "topic 'nope' does not exist"),
        (req("orders", 9, 1, 2), "partition orders-9 does not exist (topic 'orders' has 3 partitions)"),
        (req("orders", 0, 1, 7), "broker 7 is not a registered broker (registered: 1, 2, 3, 4)"),
        (req("orders", 0), "empty replica list"),
        (req("orders", 0, 2, 2), "lists broker 2 more than once"),
        (req("orders", 0, 1, 2, 3), "would mix replication factors [2, 3]"),
        (req("orders", 0, 1, 4), "span 1 rack(s) (a) although 2 are possible"),
    ],
)
def test_each_problem_is_refused_with_a_clear_message(entry: RequestedPartition, message: str) -> None:
    with pytest.raises(errors.InvalidSpec) as caught:
        plan_explicit([entry], cluster(), RackPolicy.ENFORCE)
    assert message in caught.value.message


def test_all_problems_are_reported_together() -> None:
    with pytest.raises(errors.InvalidSpec) as caught:
        plan_explicit([req("nope", 0, 1), req("orders", 0, 9, 1)], cluster(), RackPolicy.ENFORCE)
    assert caught.value.message.startswith("2 problem(s)")


def test_topic_being_deleted_is_refused() -> None:
    with pytest.raises(errors.InvalidSpec, match="'orders' is being deleted"):
        plan_explicit([req("orders", 0, 3, 1)], cluster(deleting=frozenset({"orders"})), RackPolicy.ENFORCE)


def test_changing_the_rf_of_every_partition_consistently_is_allowed() -> None:
    plan = plan_explicit(
        [req("orders", 0, 1, 2, 3), req("orders", 1, 2, 3, 1), req("orders", 2, 3, 1, 2)],
        cluster(),
        RackPolicy.ENFORCE,
    )
    assert plan.replica_moves == 3


def test_rack_warn_policy_keeps_the_plan_and_warns() -> None:
    plan = plan_explicit([req("orders", 0, 1, 4)], cluster(), RackPolicy.WARN)
    assert plan.moves == (PartitionMove("orders", 0, (1, 2), (1, 4)),)
    assert "span 1 rack(s)" in plan.warnings[0]


def test_rack_rule_does_not_apply_without_racks() -> None:
    assert rack_problem("t-0", (1, 4), cluster(brokers=dict.fromkeys(RACKS))) is None


def test_rack_rule_asks_only_for_as_many_racks_as_replicas() -> None:
    assert rack_problem("t-0", (1,), cluster()) is None
    assert rack_problem("t-0", (1, 2, 3, 4), cluster()) is None


def test_submission_problems_catch_topics_that_vanished_or_are_being_deleted() -> None:
    moves = [PartitionMove("orders", 0, (1, 2), (3, 1)), PartitionMove("gone", 0, (1,), (2,))]
    view = cluster(deleting=frozenset({"orders"}))
    assert submission_problems(moves, view) == [
        "topic 'orders' is being deleted",
        "topic 'gone' no longer exists",
    ]
    assert unregistered_targets([PartitionMove("orders", 0, (1, 2), (5, 1))], view) == [5]
