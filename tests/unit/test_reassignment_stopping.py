"""domain.reassignment.stopping: what a stop or a deletion does with the batch in flight, per backend."""

from __future__ import annotations

from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.reassignment.progress import BatchProgress
from kafka_zk_operator.domain.reassignment.stopping import StopAction, decide_stop, stopped_message

BATCH = [
    PartitionMove("t", 0, (1, 2), (3, 1)),
    PartitionMove("t", 1, (1, 2), (3, 2)),
    PartitionMove("t", 2, (2, 1), (3, 1)),
]
#: Partition 0 moved; 1 and 2 still move to this plan's targets.
MOVING = BatchProgress(done=(("t", 0),), moving=(("t", 1), ("t", 2)))
LISTED = {("t", 1): (3, 2), ("t", 2): (3, 1), ("other", 0): (1, 2)}


def test_zookeeper_waits_for_the_batch_in_flight() -> None:
    decision = decide_stop(BATCH, MOVING, LISTED, in_flight=True, can_cancel=False)
    assert decision.action is StopAction.WAIT and decision.cancel == ()


def test_the_admin_api_cancels_exactly_the_partitions_of_the_batch_still_moving() -> None:
    decision = decide_stop(BATCH, MOVING, LISTED, in_flight=True, can_cancel=True)
    assert decision.action is StopAction.CANCEL
    assert decision.cancel == (("t", 1), ("t", 2)), "not the moved partition, not another topic's move"
    assert (decision.moved, decision.reverted) == (1, 2)


def test_a_partition_listed_with_another_target_is_someone_elses_and_left_alone() -> None:
    listed = {("t", 1): (3, 2), ("t", 2): (2, 3)}
    decision = decide_stop(BATCH, MOVING, listed, in_flight=True, can_cancel=True)
    assert decision.cancel == (("t", 1),)


def test_nothing_of_ours_listed_ends_at_once() -> None:
    """Every partition finished between the observation and the stop, or someone else's moves only."""
    decision = decide_stop(BATCH, MOVING, {("t", 2): (2, 3)}, in_flight=True, can_cancel=True)
    assert decision.action is StopAction.END and decision.cancel == ()


def test_after_a_restart_between_cancel_and_the_end_the_same_counts_come_out() -> None:
    """The cancel went through, the verdict did not: Kafka shows 1 and 2 back on their replicas."""
    reverted = BatchProgress(done=(("t", 0),), pending=(("t", 1), ("t", 2)))
    decision = decide_stop(BATCH, reverted, {}, in_flight=False, can_cancel=True)
    first = decide_stop(BATCH, MOVING, LISTED, in_flight=True, can_cancel=True)
    assert decision.action is StopAction.END
    assert (decision.moved, decision.reverted) == (first.moved, first.reverted) == (1, 2)
    assert stopped_message(decision, 2, 3, 4, 10) == stopped_message(first, 2, 3, 4, 10)


def test_the_verdict_says_how_many_were_cancelled_and_how_many_had_moved() -> None:
    decision = decide_stop(BATCH, MOVING, LISTED, in_flight=True, can_cancel=True)
    assert stopped_message(decision, 2, 3, 4, 10) == (
        "Stopped on request during batch 2 of 3: the move of 2 partitions of the batch was cancelled "
        "(Kafka put back their replicas), 1 had already moved; 5 of 10 partitions moved, the rest keep "
        "their replicas."
    )
