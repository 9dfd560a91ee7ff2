"""Batches that balance bytes per broker (``domain.reassignment.batches.make_byte_batches``): the
limits hold, every move runs once, and the copy time at a throttle comes close to its floor, the
busiest broker's bytes over the rate, where batching by counts does not."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.reassignment.batches import (
    _polished,
    batch_loads,
    copy_bound_seconds,
    copy_loads,
    copy_seconds,
    make_batches,
)
from kafka_zk_operator.domain.reassignment.plan import (
    PartitionMove,
    ReassignmentPlan,
    plan_entries,
    plan_from_entries,
    with_sizes,
)
from kafka_zk_operator.domain.reassignment.request import BatchLimits


def add_brokers_plan(seed: int, partitions: int, old: list[int], new: list[int]) -> list[PartitionMove]:
    """An add-brokers-like plan: RF 2 on ``old``, one replica of some partitions moved to ``new``,
    heavy-tailed sizes (Pareto, shape 1.2)."""
    rng = random.Random(seed)
    moves = []
    for p in range(partitions):
        source = tuple(rng.sample(old, 2))
        if rng.random() < 0.6:
            target = list(source)
            target[rng.randrange(2)] = rng.choice(new)
            moves.append(PartitionMove("t", p, source, tuple(target), int(rng.paretovariate(1.2) * 1e6)))
    return moves


def unsized(moves: list[PartitionMove]) -> list[PartitionMove]:
    return [replace(m, replica_bytes=None) for m in moves]


def sized_like(
    batches: tuple[tuple[PartitionMove, ...], ...], moves: list[PartitionMove]
) -> list[tuple[PartitionMove, ...]]:
    size = {(m.topic, m.partition): m.replica_bytes for m in moves}
    return [tuple(replace(m, replica_bytes=size[(m.topic, m.partition)]) for m in b) for b in batches]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("limits", [BatchLimits(), BatchLimits(10, 3), BatchLimits(1000, 50)])
def test_limits_hold_and_every_move_runs_once(seed: int, limits: BatchLimits) -> None:
    moves = add_brokers_plan(seed, 300, [1, 2, 3, 4], [5, 6])
    batches = make_batches(moves, limits)
    assert Counter(m for b in batches for m in b) == Counter(moves)
    for batch in batches:
        assert len(batch) <= limits.max_partitions
        assert max(batch_loads(batch).values()) <= limits.max_moves_per_broker
        order = [moves.index(m) for m in batch]
        assert order == sorted(order)  # plan order inside a batch
    assert batches == make_batches(list(moves), limits)  # deterministic


def test_byte_batches_copy_close_to_the_floor_where_count_batches_do_not() -> None:
    by_count_ratios = []
    for seed in range(6):
        moves = add_brokers_plan(seed, 400, [1, 2, 3, 4], [5, 6])
        limits = BatchLimits()
        floor = copy_bound_seconds(moves, 1.0)
        by_bytes = copy_seconds(make_batches(moves, limits), 1.0)
        by_counts = copy_seconds(sized_like(make_batches(unsized(moves), limits), moves), 1.0)
        assert floor <= by_bytes <= 1.05 * floor, seed
        assert by_bytes <= by_counts, seed
        assert len(make_batches(moves, limits)) <= len(make_batches(unsized(moves), limits)) + 1
        by_count_ratios.append(by_counts / floor)
    assert sum(by_count_ratios) / len(by_count_ratios) > 1.2  # what the byte batches win


def test_a_broker_that_only_receives_is_busy_in_every_batch() -> None:
    # Two new brokers receive the same bytes in many sizes: each batch gives both the same amount.
    moves = [PartitionMove("t", p, (1 + p % 4,), (5 + p % 2,), (p // 2 + 1) * 1000) for p in range(40)]
    batches = make_batches(moves, BatchLimits(max_partitions=50, max_moves_per_broker=5))
    assert copy_seconds(batches, 1.0) == copy_bound_seconds(moves, 1.0)


def test_moves_without_sizes_are_batched_by_counts_as_before() -> None:
    moves = unsized(add_brokers_plan(1, 100, [1, 2, 3], [4]))
    assert make_batches(moves, BatchLimits(10, 3)) == make_batches(moves[:], BatchLimits(10, 3))
    first = make_batches(moves, BatchLimits(10, 100))
    assert [m for b in first for m in b] == moves  # first fit in plan order: the plan order


def test_copy_loads_count_the_leader_once_per_added_replica() -> None:
    move = PartitionMove("t", 0, (1, 2), (3, 4, 1), 500)
    assert copy_loads(move) == {3: 500, 4: 500, ~1: 1000}
    assert copy_loads(PartitionMove("t", 0, (1, 2), (2, 1), 500)) == {}  # a reorder copies nothing


def test_sizes_travel_with_the_stored_plan() -> None:
    plan = with_sizes(
        ReassignmentPlan(moves=(PartitionMove("t", 0, (1,), (2,)), PartitionMove("u", 1, (1,), (3,)))),
        {("t", 0): 1234},
    )
    assert [m.replica_bytes for m in plan.moves] == [1234, 0]  # not reported: 0 bytes
    entries = plan_entries(plan.moves)
    assert entries[0]["bytes"] == 1234
    assert plan_from_entries(entries) == plan.moves
    assert "bytes" not in plan_entries([PartitionMove("t", 0, (1,), (2,))])[0]
    assert with_sizes(plan, {}) is plan


@pytest.mark.parametrize("bad", [-1, "12", 1.5, True])
def test_a_damaged_stored_size_is_refused_saying_how_to_recover(bad: object) -> None:
    with pytest.raises(errors.InvalidSpec, match=r"entry 0 is malformed.*refresh"):
        plan_from_entries([{"topic": "t", "partition": 0, "from": [1], "to": [2], "bytes": bad}])


def test_full_batches_are_polished_by_swaps() -> None:
    """One move per broker per batch: every batch is full, so only a swap can help. Pairing each
    big copy with a small one (2 x 10) is what a first fit in plan order gives; the polish pairs the
    two big ones and the two small ones (10 + 1)."""
    big_5, small_6 = PartitionMove("t", 0, (1,), (5,), 10), PartitionMove("t", 1, (2,), (6,), 1)
    small_5, big_6 = PartitionMove("t", 2, (3,), (5,), 1), PartitionMove("t", 3, (4,), (6,), 10)
    limits = BatchLimits(max_partitions=2, max_moves_per_broker=1)
    rank = {m: i for i, m in enumerate((big_5, small_6, small_5, big_6))}
    polished = _polished([(big_5, small_6), (small_5, big_6)], limits, rank)
    assert copy_seconds(polished, 1.0) == 11 == copy_bound_seconds(list(rank), 1.0)
    assert {frozenset(batch) for batch in polished} == {
        frozenset({big_5, big_6}),
        frozenset({small_6, small_5}),
    }
    for batch in polished:
        assert max(batch_loads(batch).values()) <= 1
