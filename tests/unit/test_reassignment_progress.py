"""Judging a batch from ZooKeeper observations (``domain.reassignment.progress``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import TypedDict

from kafka_zk_operator.domain.model import PartitionState, TopicAssignment
from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.reassignment.progress import ZnodeOwner, classify_znode, evaluate_batch

NOW = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)


def topic(
    partitions: dict[int, tuple[int, ...]], adding: dict[int, tuple[int, ...]] | None = None
) -> TopicAssignment:
    removing = {
        p: tuple(b for b in reps if b not in (adding or {}).get(p, ())) for p, reps in (adding or {}).items()
    }
    return TopicAssignment(
        partitions=partitions,
        adding_replicas=MappingProxyType(adding or {}),
        removing_replicas=MappingProxyType({p: r for p, r in removing.items() if r}),
    )


def state(leader: int, *isr: int) -> PartitionState:
    return PartitionState(leader=leader, isr=tuple(isr), leader_epoch=1, controller_epoch=1)


class _Timing(TypedDict):
    now: datetime
    stuck_after_seconds: float


BATCH = [PartitionMove("t", 0, (1, 2), (3, 1)), PartitionMove("t", 1, (2, 1), (2, 3))]


def test_done_needs_the_exact_target_order_and_no_reassignment_bookkeeping() -> None:
    topics = {"t": topic({0: (3, 1), 1: (3, 2)})}
    progress = evaluate_batch(BATCH, topics, {}, {1, 2, 3})
    assert progress.done == (("t", 0),)
    assert progress.pending == (("t", 1),), "same set, other order: not done"
    assert not progress.complete


def test_partitions_in_adding_replicas_are_moving_and_count_isr_progress() -> None:
    topics = {"t": topic({0: (3, 1, 2), 1: (2, 3)}, adding={0: (3,)})}
    states = {("t", 0): state(1, 1, 2)}
    progress = evaluate_batch(BATCH, topics, states, {1, 2, 3})
    assert progress.moving == (("t", 0),)
    assert progress.done == (("t", 1),)
    assert (progress.in_sync, progress.wanted) == (1, 2)
    assert progress.in_flight and not progress.complete and not progress.stuck


def test_an_entry_still_in_the_znode_is_moving_even_when_the_topic_looks_done() -> None:
    topics = {"t": topic({0: (3, 1), 1: (2, 3)})}
    progress = evaluate_batch(BATCH, topics, {}, {1, 2, 3}, znode_partitions=[("t", 0)])
    assert progress.moving == (("t", 0),) and progress.done == (("t", 1),)


def test_complete_batch() -> None:
    topics = {"t": topic({0: (3, 1), 1: (2, 3)})}
    assert evaluate_batch(BATCH, topics, {}, {1, 2, 3}).complete


def test_vanished_topic_or_partition_is_missing() -> None:
    progress = evaluate_batch(BATCH, {"t": topic({0: (3, 1)})}, {}, {1, 2, 3})
    assert progress.missing == (("t", 1),)
    assert evaluate_batch(BATCH, {"t": None}, {}, {1}).missing == (("t", 0), ("t", 1))


def test_a_dead_target_broker_makes_the_partition_stuck_with_guidance() -> None:
    topics = {"t": topic({0: (3, 1, 2), 1: (2, 1)}, adding={0: (3,)})}
    progress = evaluate_batch(BATCH, topics, {("t", 0): state(1, 1, 2)}, {1, 2})
    assert progress.dead_targets == (3,)
    (stuck,) = progress.stuck
    assert (stuck.topic, stuck.partition) == ("t", 0)
    assert "target broker 3 is not registered" in stuck.reason and "cannot cancel" in stuck.reason


def test_a_slow_batch_is_stuck_only_after_the_threshold() -> None:
    topics = {"t": topic({0: (3, 1, 2), 1: (2, 3)}, adding={0: (3,)})}
    states = {("t", 0): state(1, 1, 2)}
    kwargs: _Timing = {"now": NOW, "stuck_after_seconds": 600.0}
    early = evaluate_batch(BATCH, topics, states, {1, 2, 3}, started_at=NOW - timedelta(seconds=60), **kwargs)
    assert early.stuck == ()
    late = evaluate_batch(BATCH, topics, states, {1, 2, 3}, started_at=NOW - timedelta(seconds=601), **kwargs)
    assert "broker 3 are not in the ISR after 600 s" in late.stuck[0].reason


def test_a_leaderless_moving_partition_is_stuck() -> None:
    topics = {"t": topic({0: (3, 1, 2), 1: (2, 3)}, adding={0: (3,)})}
    progress = evaluate_batch(BATCH, topics, {("t", 0): state(-1)}, {1, 2, 3})
    assert "no leader" in progress.stuck[0].reason


def test_znode_classification() -> None:
    targets = {("t", 0): (3, 1), ("t", 1): (2, 3)}
    assert classify_znode(None, targets) is ZnodeOwner.NONE
    assert classify_znode([("t", 0, (3, 1))], targets) is ZnodeOwner.OURS
    assert classify_znode([("t", 0, (3, 1)), ("u", 0, (1,))], targets) is ZnodeOwner.FOREIGN
    assert classify_znode([("t", 0, (1, 3))], targets) is ZnodeOwner.FOREIGN, "other target: not ours"
    assert classify_znode([], targets) is ZnodeOwner.FOREIGN
    assert classify_znode(None, targets, invalid=True) is ZnodeOwner.INVALID


def test_a_batch_the_controller_never_picked_up_is_stuck_after_a_minute() -> None:
    # In our znode, but the topic znode still shows the old replicas and nothing being added.
    untouched = {"t": topic({0: (1, 2), 1: (2, 1)})}
    states = {("t", 0): state(1, 1, 2), ("t", 1): state(2, 2, 1)}
    znode = [("t", 0), ("t", 1)]

    def at(seconds: float, topics: dict[str, TopicAssignment]) -> tuple[str, ...]:
        progress = evaluate_batch(
            BATCH, topics, states, {1, 2, 3}, znode, now=NOW,
            started_at=NOW - timedelta(seconds=seconds), stuck_after_seconds=1800.0,
        )  # fmt: skip
        return tuple(s.reason for s in progress.stuck)

    assert at(59, untouched) == ()
    reasons = at(61, untouched)
    assert len(reasons) == 2 and all("has not acted on /admin/reassign_partitions" in r for r in reasons)
    assert "/controller" in reasons[0]
    # Once the controller works on it (adding_replicas, or the old+new union before 2.4): not this.
    working = {"t": topic({0: (3, 1, 2), 1: (2, 3, 1)}, adding={0: (3,), 1: (3,)})}
    assert at(61, working) == ()
    union_pre_24 = {"t": topic({0: (3, 1, 2), 1: (2, 1, 3)})}
    assert at(61, union_pre_24) == ()
