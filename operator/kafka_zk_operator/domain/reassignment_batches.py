"""Split a plan into batches: one ``/admin/reassign_partitions`` znode each, run one at a time.

Limits (``spec.batch``): at most ``max_partitions`` partitions per batch, and at most
``max_moves_per_broker`` replica moves into or out of any single broker per batch (a partition
moving a replica from broker 1 to 4 counts one for broker 1 and one for broker 4). A partition
touches a broker at most once, so any single partition fits an empty batch: every plan is
batchable and batching never reorders the execution of a batch's partitions.

Algorithm: first fit in plan order. Each move goes to the earliest batch that still has room for
it; per broker and for the partition count a pointer remembers the first batch with room, so the
pass is close to linear even for plans of millions of partitions. Deterministic: the same plan
and limits always give the same batches, which is what lets a restarted operator find its place
from ``status.progress.currentBatch`` alone.

Pure: no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from kafka_zk_operator.domain.reassignment_plan import PartitionMove
from kafka_zk_operator.domain.reassignment_spec import BatchLimits

Batch = tuple[PartitionMove, ...]


def brokers_touched(move: PartitionMove) -> tuple[int, ...]:
    """Brokers a move counts against: those gaining and those losing a replica."""
    return (*move.added, *move.removed)


def make_batches(moves: Sequence[PartitionMove], limits: BatchLimits) -> tuple[Batch, ...]:
    """The batches of a plan, in execution order (every move in exactly one batch)."""
    if limits.max_partitions < 1 or limits.max_moves_per_broker < 1:
        raise ValueError("batch limits must be positive")
    sizes: list[int] = []
    members: list[list[PartitionMove]] = []
    load: defaultdict[tuple[int, int], int] = defaultdict(int)  # (batch, broker) -> moves
    first_open = 0
    first_open_for: defaultdict[int, int] = defaultdict(int)
    for move in moves:
        touched = brokers_touched(move)
        candidate = max([first_open, *(first_open_for[b] for b in touched)])
        while True:
            if candidate == len(sizes):
                sizes.append(0)
                members.append([])
            if sizes[candidate] < limits.max_partitions and all(
                load[(candidate, b)] < limits.max_moves_per_broker for b in touched
            ):
                break
            candidate += 1
        members[candidate].append(move)
        sizes[candidate] += 1
        for b in touched:
            load[(candidate, b)] += 1
        while first_open < len(sizes) and sizes[first_open] >= limits.max_partitions:
            first_open += 1
        for b in touched:
            while (
                first_open_for[b] < len(sizes) and load[(first_open_for[b], b)] >= limits.max_moves_per_broker
            ):
                first_open_for[b] += 1
    return tuple(tuple(batch) for batch in members)


def batch_loads(batch: Sequence[PartitionMove]) -> dict[int, int]:
    """Replica moves into or out of each broker in one batch."""
    counts: defaultdict[int, int] = defaultdict(int)
    for move in batch:
        for b in brokers_touched(move):
            counts[b] += 1
    return dict(counts)
