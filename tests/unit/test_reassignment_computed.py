"""Computed modes through the placement engine (``domain.reassignment.computed``)."""

from __future__ import annotations

from collections import Counter

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.reassignment.plan import ClusterView, ReassignmentPlan
from kafka_zk_operator.domain.reassignment.request import ReassignmentRequest, plan_request

RACKS3 = {1: "rack-a", 2: "rack-b", 3: "rack-c"}
RACKS6 = {**RACKS3, 4: "rack-a", 5: "rack-b", 6: "rack-c"}


def three_broker_topics() -> dict[str, dict[int, tuple[int, ...]]]:
    """RF 3 and RF 2 topics spread by Kafka-like round robin over brokers 1..3."""
    topics: dict[str, dict[int, tuple[int, ...]]] = {}
    for index, (name, partitions, rf) in enumerate([("orders", 12, 3), ("events", 9, 2), ("logs", 6, 3)]):
        topics[name] = {p: tuple(((p + index + j) % 3) + 1 for j in range(rf)) for p in range(partitions)}
    return topics


def loads(plan: ReassignmentPlan, view: ClusterView) -> Counter[int]:
    after = {(t, p): reps for t, parts in view.assignments.items() for p, reps in parts.items()}
    after.update(plan.targets())
    return Counter(b for reps in after.values() for b in reps)


def spread_ok(plan: ReassignmentPlan, racks: dict[int, str]) -> bool:
    return all(len({racks[b] for b in m.target}) == min(len(m.target), 3) for m in plan.moves)


def test_add_brokers_in_a_rack_balanced_cluster_moves_exactly_the_lower_bound() -> None:
    view = ClusterView(brokers=RACKS6, assignments=three_broker_topics())
    plan = plan_request(ReassignmentRequest(mode=Mode.ADD_BROKERS, brokers=(4, 5, 6)), view)
    before = Counter(b for parts in view.assignments.values() for reps in parts.values() for b in reps)
    total = sum(before.values())
    # Reference §5.1 with targets floor/ceil(R / N): every replica a new broker receives is one move.
    m_lb = sum(max(0, len(RACKS6) and total // 6 - before[b]) for b in RACKS6)
    assert plan.replica_moves == plan.lower_bound == m_lb
    assert plan.provably_optimal
    after = loads(plan, view)
    assert max(after.values()) - min(after.values()) <= 1
    assert all(set(m.removed) <= {1, 2, 3} and set(m.added) <= {4, 5, 6} for m in plan.moves)
    assert spread_ok(plan, RACKS6)


def test_remove_brokers_drains_them_and_moves_only_their_replicas() -> None:
    moved = plan_request(
        ReassignmentRequest(mode=Mode.ADD_BROKERS, brokers=(4, 5, 6)),
        ClusterView(brokers=RACKS6, assignments=three_broker_topics()),
    )
    assignments = three_broker_topics()
    for move in moved.moves:
        assignments[move.topic][move.partition] = move.target
    view = ClusterView(brokers=RACKS6, assignments=assignments)
    plan = plan_request(ReassignmentRequest(mode=Mode.REMOVE_BROKERS, brokers=(4, 5, 6)), view)
    on_removed = sum(
        1 for parts in assignments.values() for reps in parts.values() for b in reps if b in (4, 5, 6)
    )
    assert plan.replica_moves == plan.lower_bound == on_removed
    after = loads(plan, view)
    assert all(after[b] == 0 for b in (4, 5, 6))
    assert spread_ok(plan, RACKS6)


def test_replication_factor_increase_spreads_the_new_replica_over_the_missing_rack() -> None:
    view = ClusterView(
        brokers=RACKS6, assignments={"events": {p: ((p % 3) + 1, ((p + 1) % 3) + 1) for p in range(6)}}
    )
    plan = plan_request(
        ReassignmentRequest(mode=Mode.REPLICATION_FACTOR, replication_factors={"events": 3}), view
    )
    # One new replica per partition, plus what evening out the empty brokers 4..6 takes; all counted
    # in the engine's bound, which the plan meets.
    assert plan.lower_bound is not None  # narrows the Optional for the chained comparison below
    assert len(plan.moves) == 6 and plan.replica_moves == plan.lower_bound >= 6
    for move in plan.moves:
        assert len(move.target) == 3
        assert len({RACKS6[b] for b in move.target}) == 3


def test_rebalance_leaves_internal_topics_alone_unless_named() -> None:
    skewed: dict[str, dict[int, tuple[int, ...]]] = {
        "__consumer_offsets": {p: (1, 2, 3) for p in range(3)},
        "data": {p: (1, 2) for p in range(8)},
    }
    brokers = {1: "a", 2: "a", 3: "b", 4: "b"}
    view = ClusterView(brokers=brokers, assignments=skewed)
    plan = plan_request(ReassignmentRequest(mode=Mode.REBALANCE), view)
    assert plan.moves and all(m.topic == "data" for m in plan.moves)
    named = plan_request(ReassignmentRequest(mode=Mode.REBALANCE, topics=("__consumer_offsets",)), view)
    assert all(m.topic == "__consumer_offsets" for m in named.moves)


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (ReassignmentRequest(mode=Mode.ADD_BROKERS, brokers=(9,)), "broker 9 is not registered"),
        (
            ReassignmentRequest(mode=Mode.REPLICATION_FACTOR, replication_factors={"nope": 2}),
            "do not exist: nope",
        ),
        (ReassignmentRequest(mode=Mode.REPLICATION_FACTOR, replication_factors={"orders": 7}), "orders=7"),
        (ReassignmentRequest(mode=Mode.REBALANCE, topics=("nope",)), "do not exist: nope"),
        (ReassignmentRequest(mode=Mode.REBALANCE, topics_regex="zzz.*"), "select no existing topic"),
    ],
)
def test_impossible_requests_are_invalid(request_: ReassignmentRequest, message: str) -> None:
    view = ClusterView(brokers=RACKS6, assignments=three_broker_topics())
    with pytest.raises(errors.InvalidSpec, match=message):
        plan_request(request_, view)


def test_replicas_on_unregistered_brokers_are_not_supported() -> None:
    view = ClusterView(brokers=RACKS3, assignments={"t": {0: (1, 7)}})
    with pytest.raises(errors.NotSupported, match="broker 7 holds replicas but is not registered"):
        plan_request(ReassignmentRequest(mode=Mode.REBALANCE), view)
