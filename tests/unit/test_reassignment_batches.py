"""Batching a plan under partition and per-broker limits (``domain.reassignment.batches``)."""

from __future__ import annotations

import random

import pytest

from kafka_zk_operator.domain.reassignment.batches import batch_loads, make_batches
from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.reassignment.request import BatchLimits


def move(partition: int, source: tuple[int, ...], target: tuple[int, ...], topic: str = "t") -> PartitionMove:
    return PartitionMove(topic, partition, source, target)


def test_partition_limit_splits_in_plan_order() -> None:
    moves = [move(p, (1,), (2,)) for p in range(5)]
    batches = make_batches(moves, BatchLimits(max_partitions=2, max_moves_per_broker=100))
    assert [[m.partition for m in b] for b in batches] == [[0, 1], [2, 3], [4]]


def test_per_broker_limit_counts_moves_in_and_out() -> None:
    # Each move takes a replica off broker 1: at most two per batch.
    moves = [move(p, (1, 9), (p + 2, 9)) for p in range(5)]
    batches = make_batches(moves, BatchLimits(max_partitions=50, max_moves_per_broker=2))
    assert [len(b) for b in batches] == [2, 2, 1]
    assert all(batch_loads(b)[1] <= 2 for b in batches)


def test_first_fit_fills_earlier_batches_with_moves_that_fit() -> None:
    moves = [move(0, (1,), (2,)), move(1, (1,), (3,)), move(2, (4,), (5,))]
    batches = make_batches(moves, BatchLimits(max_partitions=10, max_moves_per_broker=1))
    assert [[m.partition for m in b] for b in batches] == [[0, 2], [1]]


def test_reorders_move_nothing_and_only_count_against_the_partition_limit() -> None:
    moves = [move(p, (1, 2), (2, 1)) for p in range(4)]
    batches = make_batches(moves, BatchLimits(max_partitions=3, max_moves_per_broker=1))
    assert [len(b) for b in batches] == [3, 1]


def test_empty_plan_has_no_batches() -> None:
    assert make_batches([], BatchLimits()) == ()


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        make_batches([move(0, (1,), (2,))], BatchLimits(0, 1))


@pytest.mark.parametrize("seed", range(5))
def test_random_plans_respect_both_limits_and_keep_every_move_once(seed: int) -> None:
    rng = random.Random(seed)
    moves = []
    for p in range(300):
        source = tuple(rng.sample(range(1, 13), 3))
        target = tuple(rng.sample(range(1, 13), 3))
        moves.append(move(p, source, target))
    limits = BatchLimits(max_partitions=rng.randint(1, 40), max_moves_per_broker=rng.randint(1, 6))
    batches = make_batches(moves, limits)
    flat = [m for b in batches for m in b]
    assert sorted(flat, key=lambda m: m.partition) == moves
    for batch in batches:
        assert 1 <= len(batch) <= limits.max_partitions
        assert max(batch_loads(batch).values(), default=0) <= limits.max_moves_per_broker
    assert make_batches(moves, limits) == batches, "batching is deterministic"


def test_a_large_plan_batches_quickly() -> None:
    import time

    moves = [move(p, (p % 50, (p + 1) % 50), ((p + 7) % 50, (p + 1) % 50)) for p in range(200_000)]
    started = time.monotonic()
    batches = make_batches(moves, BatchLimits(max_partitions=50, max_moves_per_broker=5))
    assert time.monotonic() - started < 10
    assert sum(len(b) for b in batches) == 200_000
