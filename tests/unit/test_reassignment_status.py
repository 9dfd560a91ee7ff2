"""Plan summaries, plan ids, stored plans and status fields (``domain.reassignment.plan`` / ``_status``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.reassignment.plan import (
    ClusterView,
    PartitionMove,
    ReassignmentPlan,
    plan_entries,
    plan_from_entries,
    plan_id,
    summarize,
    summary_fields,
)
from kafka_zk_operator.domain.reassignment.progress import Stuck
from kafka_zk_operator.domain.reassignment.request import BatchLimits
from kafka_zk_operator.domain.reassignment.status import (
    Phase,
    Verdict,
    Why,
    estimated_completion,
    is_terminal,
    timestamp,
    verdict_fields,
)
from kafka_zk_operator.domain.timestamps import parse_timestamp

NOW = datetime(2025, 3, 1, 8, 30, tzinfo=UTC)
CLUSTER = ClusterView(
    brokers={1: "a", 2: "b", 3: "c", 4: "a"},
    assignments={"t": {0: (1, 2), 1: (2, 3), 2: (3, 1)}},
)
PLAN = ReassignmentPlan(
    moves=(PartitionMove("t", 0, (1, 2), (4, 2)), PartitionMove("t", 2, (3, 1), (1, 3))),
)


def test_move_counts_new_memberships_and_leader_changes() -> None:
    assert PLAN.replica_moves == 1
    assert PLAN.leader_changes == 2
    rf_up = PartitionMove("t", 1, (2, 3), (2, 3, 1))
    assert (rf_up.moves, rf_up.added, rf_up.removed, rf_up.leader_changes) == (1, (1,), (), False)


def test_summary_counts_replicas_and_leaders_per_broker_and_rack_before_and_after() -> None:
    summary = summarize(PLAN, CLUSTER)
    lines = {b.broker: b for b in summary.brokers}
    assert (lines[1].replicas_before, lines[1].replicas_after) == (2, 1)
    assert (lines[1].leaders_before, lines[1].leaders_after) == (1, 1)
    assert (lines[4].replicas_before, lines[4].replicas_after, lines[4].leaders_after) == (0, 1, 1)
    assert (lines[3].leaders_before, lines[3].leaders_after) == (1, 0)
    racks = {r.rack: r for r in summary.racks}
    assert (racks["a"].brokers, racks["a"].replicas_before, racks["a"].replicas_after) == (2, 2, 2)
    assert summary.moves == 1 and summary.lower_bound == 1 and summary.provably_optimal
    fields = summary_fields(summary)
    assert fields["brokers"][3] == {
        "id": 4, "rack": "a", "replicasBefore": 0, "replicasAfter": 1, "leadersBefore": 0, "leadersAfter": 1,
    }  # fmt: skip


def test_engine_bound_is_reported_as_given() -> None:
    plan = ReassignmentPlan(moves=PLAN.moves, lower_bound=0, provably_optimal=False)
    summary = summarize(plan, CLUSTER)
    assert (summary.lower_bound, summary.provably_optimal) == (0, False)


def test_plan_id_changes_with_targets_or_batch_limits_only() -> None:
    same = ReassignmentPlan(moves=PLAN.moves, notes=("different notes",))
    assert plan_id(PLAN, BatchLimits()) == plan_id(same, BatchLimits())
    assert plan_id(PLAN, BatchLimits()) != plan_id(PLAN, BatchLimits(max_partitions=1))
    other = ReassignmentPlan(moves=(PartitionMove("t", 0, (1, 2), (2, 4)),))
    assert plan_id(PLAN, BatchLimits()) != plan_id(other, BatchLimits())
    assert len(plan_id(PLAN, BatchLimits())) == 10


def test_stored_plan_round_trips_and_damage_is_reported() -> None:
    entries = plan_entries(PLAN.moves)
    assert entries[0] == {"topic": "t", "partition": 0, "from": [1, 2], "to": [4, 2]}
    assert plan_from_entries(entries) == PLAN.moves
    with pytest.raises(errors.InvalidSpec, match="stored plan entry 0 is malformed"):
        plan_from_entries([{"topic": "t"}])


def test_verdict_fields_set_phase_generation_and_a_ready_condition() -> None:
    fields = verdict_fields(
        Verdict(Phase.RUNNING, Why.RUNNING, "Batch 1 of 2 in flight."), generation=3, now=NOW, previous={}
    )
    assert fields["phase"] == "Running" and fields["observedGeneration"] == 3
    ready, *others = fields["conditions"]
    assert [c["type"] for c in others] == ["ProposalReady", "Running", "Reconciling"]
    assert ready == {
        "type": "Ready", "status": "False", "reason": "Running", "message": "Batch 1 of 2 in flight.",
        "observedGeneration": 3, "lastTransitionTime": "2025-03-01T08:30:00Z",
    }  # fmt: skip
    assert fields["stuck"] is None


def test_transition_time_moves_only_when_the_condition_flips() -> None:
    first = verdict_fields(Verdict(Phase.RUNNING, Why.RUNNING, "x"), generation=1, now=NOW, previous={})
    later = NOW + timedelta(minutes=5)
    still = verdict_fields(Verdict(Phase.QUEUED, Why.QUEUED, "y"), generation=1, now=later, previous=first)
    assert still["conditions"][0]["lastTransitionTime"] == "2025-03-01T08:30:00Z"
    done = verdict_fields(
        Verdict(Phase.COMPLETED, Why.COMPLETED, "z"), generation=1, now=later, previous=still
    )
    assert done["conditions"][0]["status"] == "True"
    assert done["conditions"][0]["lastTransitionTime"] == "2025-03-01T08:35:00Z"


def test_stuck_partitions_raise_a_condition_that_clears_later_and_foreign_conditions_stay() -> None:
    stuck = [Stuck("t", 0, "target broker 9 is not registered")]
    first = verdict_fields(
        Verdict(Phase.RUNNING, Why.RUNNING, "m", stuck=stuck, warnings=("rack spread",)),
        generation=1,
        now=NOW,
        previous={"conditions": [{"type": "Other", "status": "True"}]},
    )
    kinds = {c["type"]: c for c in first["conditions"]}
    assert kinds["Stuck"]["status"] == "True" and "t-0: target broker 9" in kinds["Stuck"]["message"]
    assert kinds["Warning"]["message"] == "rack spread"
    assert kinds["Other"] == {"type": "Other", "status": "True"}
    assert first["stuck"] == [{"topic": "t", "partition": 0, "reason": "target broker 9 is not registered"}]
    cleared = verdict_fields(Verdict(Phase.RUNNING, Why.RUNNING, "m"), generation=1, now=NOW, previous=first)
    kinds = {c["type"]: c for c in cleared["conditions"]}
    assert kinds["Stuck"]["status"] == "False" and "Warning" not in kinds
    assert cleared["stuck"] is None


def test_timestamps_and_terminal_phases() -> None:
    assert parse_timestamp(timestamp(NOW)) == NOW
    assert parse_timestamp("yesterday") is None and parse_timestamp(None) is None
    with pytest.raises(ValueError, match="timezone-aware"):
        timestamp(datetime(2025, 1, 1))
    assert is_terminal("Completed") and is_terminal("Stopped") and is_terminal("Failed")
    assert not is_terminal("Running") and not is_terminal(None)


def test_estimated_completion_extrapolates_the_pace_so_far() -> None:
    start = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
    later = start + timedelta(minutes=10)
    # 10 of 40 partitions in 10 min: 30 more need 30 min.
    assert estimated_completion(start, later, 10, 40) == later + timedelta(minutes=30)
    assert estimated_completion(start, later, 39, 40) == later + timedelta(seconds=15)
    # No estimate before the first partition, once all are done, without a start, or no time yet.
    assert estimated_completion(start, later, 0, 40) is None
    assert estimated_completion(start, later, 40, 40) is None
    assert estimated_completion(None, later, 10, 40) is None
    assert estimated_completion(start, start, 10, 40) is None


def test_plan_warnings_are_separated_in_the_warning_condition() -> None:
    warnings = (
        "partition orders-1 has 2 replicas in rack a although 3 are possible",
        "partition orders-3 has 2 replicas in rack b although 3 are possible",
    )
    fields = verdict_fields(
        Verdict(Phase.PROPOSAL_READY, Why.PENDING, "ready", warnings=warnings),
        generation=1,
        now=NOW,
        previous={},
    )
    (warning,) = [c for c in fields["conditions"] if c["type"] == "Warning"]
    assert warning["message"] == f"{warnings[0]}; {warnings[1]}"
