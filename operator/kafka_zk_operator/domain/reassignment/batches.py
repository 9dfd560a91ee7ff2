"""Split a plan into batches: one ``/admin/reassign_partitions`` znode each, run one at a time.

Limits (``spec.batch``): at most ``max_partitions`` partitions per batch, and at most
``max_moves_per_broker`` replica moves into or out of any single broker per batch (a partition
moving a replica from broker 1 to 4 counts one for broker 1 and one for broker 4). A partition
touches a broker at most once, so any single partition fits an empty batch: every plan is
batchable and batching never reorders the execution of a batch's partitions.

Two ways to fill them, both deterministic (the same plan and limits always give the same
batches, which is what lets a restarted operator find its place from
``status.progress.currentBatch`` alone):

* **by counts** (no move carries a size): first fit in plan order, below;
* **by bytes** (the plan's moves carry ``replica_bytes``, read from the brokers): a batch takes as
  long as its busiest broker needs to copy its bytes at the throttle (a receiving broker fetches
  at most ``follower.replication.throttled.rate``, a leader sends at most
  ``leader.replication.throttled.rate``), and one batch runs at a time, so the run takes the sum
  of those maxima. That sum reaches its floor, the busiest broker's total over the throttle,
  only when every batch gives the brokers bytes in the same proportion as their totals: the
  busiest broker then never waits for another. :func:`make_byte_batches` places the largest
  moves first, each into the batch whose duration it lengthens least (ties: the batch where its
  brokers hold the least, then the earliest), opening a batch only when none has room under the
  limits, then (small plans) swaps partitions between batches while that shortens the run. The
  sender of a move is its current first replica (the leader Kafka keeps while it
  adds the new replicas, when leadership is preferred).

First fit in plan order. Each move goes to the earliest batch that still has room for
it; per broker and for the partition count a pointer remembers the first batch with room, so the
pass is close to linear even for plans of millions of partitions.

Pure: no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import znode_bounds
from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.reassignment.spec import BatchLimits

Batch = tuple[PartitionMove, ...]

#: Batches a move of a byte-sized plan is weighed against, at most (see make_byte_batches).
SCAN_LIMIT = 64
#: Plans with more moves keep the first pass only (the second costs several times as much there,
#: where every batch it weighs has room).
SECOND_PASS_LIMIT = 50_000
#: Plans of at most this many moves are polished by swaps between batches (``_polished``), with
#: at most ``POLISH_ROUNDS`` changes.
POLISH_LIMIT = 150
POLISH_ROUNDS = 200


def brokers_touched(move: PartitionMove) -> tuple[int, ...]:
    """Brokers a move counts against: those gaining and those losing a replica."""
    return (*move.added, *move.removed)


def make_batches(moves: Sequence[PartitionMove], limits: BatchLimits) -> tuple[Batch, ...]:
    """The batches of a plan, in execution order (every move in exactly one batch): by bytes
    when the moves carry sizes, else by counts."""
    if limits.max_partitions < 1 or limits.max_moves_per_broker < 1:
        raise ValueError("batch limits must be positive")
    if any(move.replica_bytes for move in moves):
        return make_byte_batches(moves, limits)
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


def check_batches_fit(batches: Sequence[Batch], limits: BatchLimits) -> None:
    """Refuse a plan with a batch whose ``/admin/reassign_partitions`` znode (or the preferred
    election after it, which may list every partition of the batch) could never be written.

    :raises RequestTooLarge: with the batch, its size and a ``maxPartitions`` that fits.
    """
    limit = znode_bounds.MAX_ADMIN_DATA_BYTES
    for number, batch in enumerate(batches, 1):
        size = znode_bounds.admin_znode_bytes((m.topic, m.partition, m.target) for m in batch)
        if size <= limit:  # the election lists the same partitions without replicas: shorter
            continue
        # n entries of at most `entry` bytes take envelope + n * entry + (n - 1) commas
        envelope = znode_bounds.admin_znode_bytes([])
        widest = max(znode_bounds.admin_znode_bytes([(m.topic, m.partition, m.target)]) for m in batch)
        entry = widest - envelope
        fits = max(1, (limit - envelope + 1) // (entry + 1))
        raise errors.RequestTooLarge(
            f"batch {number} of {len(batches)} ({len(batch):,} partitions) would write an "
            f"/admin/reassign_partitions znode of {size:,} bytes, more than the {limit:,} a ZooKeeper "
            "request can carry (jute.maxbuffer); set spec.batch.maxPartitions to at most "
            f"{min(fits, limits.max_partitions):,} (nothing was written)"
        )


def batch_loads(batch: Sequence[PartitionMove]) -> dict[int, int]:
    """Replica moves into or out of each broker in one batch."""
    counts: defaultdict[int, int] = defaultdict(int)
    for move in batch:
        for b in brokers_touched(move):
            counts[b] += 1
    return dict(counts)


def copy_loads(move: PartitionMove) -> dict[int, int]:
    """Bytes a move makes each broker fetch (an added replica) or send (the leader, once per
    added replica). A broker that both sends and receives is limited by the larger of the two
    throttles' work, so the two are kept apart by sign of the key: receivers ``b``, senders ``~b``."""
    size = move.replica_bytes or 0
    added = move.added
    if not size or not added:
        return {}
    loads: dict[int, int] = {b: size for b in added}
    if move.source:
        loads[~move.source[0]] = size * len(added)
    return loads


def copy_totals(moves: Sequence[PartitionMove]) -> dict[int, int]:
    """:func:`copy_loads` summed over ``moves`` (same keys: receivers ``b``, senders ``~b``)."""
    totals: defaultdict[int, int] = defaultdict(int)
    for move in moves:
        for key, amount in copy_loads(move).items():
            totals[key] += amount
    return dict(totals)


def busiest_broker_bytes(moves: Sequence[PartitionMove]) -> int:
    """``B_max``: the bytes of the busiest broker in one direction (fetching or sending)."""
    return max(copy_totals(moves).values(), default=0)


def copy_seconds(batches: Sequence[Batch], rate: float) -> float:
    """How long copying the batches takes at ``rate`` bytes/s per broker and direction, one batch
    after another: the sum over batches of the busiest broker's bytes (no overhead counted)."""
    return sum(busiest_broker_bytes(batch) for batch in batches) / rate


def copy_bound_seconds(moves: Sequence[PartitionMove], rate: float) -> float:
    """The floor for any batching: the busiest broker's bytes in one direction over ``rate``."""
    return busiest_broker_bytes(moves) / rate


def make_byte_batches(moves: Sequence[PartitionMove], limits: BatchLimits) -> tuple[Batch, ...]:
    """Batches whose busiest broker's bytes add up to as little as the limits allow (module doc).

    Two greedy passes, largest moves first (plan order among equals): each move goes to the batch
    with room that it lengthens least, then where its brokers' share of their own totals stays
    smallest, then the earliest. The first pass opens a batch only when none has room and so
    finds how many batches the limits need; the second starts with that many open, so the
    largest moves spread over all of them instead of piling into the first. The better of the two
    (copy time, then fewer batches) is kept; plans of more than :data:`SECOND_PASS_LIMIT` moves
    make the first pass only. Moves that copy nothing (reorders, replica removals)
    go to the earliest batch with room. Plans of up to :data:`POLISH_LIMIT` moves are then polished
    by swaps between batches (``_polished``). A move is weighed against at most :data:`SCAN_LIMIT`
    batches from the first with room for it (all of them on plans of up to that many batches; the
    pass stays linear on larger ones, as first fit). Within a batch, moves keep plan order.
    """
    totals = copy_totals(moves)
    order = sorted(range(len(moves)), key=lambda i: (-(moves[i].replica_bytes or 0) * moves[i].moves, i))
    first = _greedy_batches(moves, order, limits, totals, opened=0)
    if len(moves) > SECOND_PASS_LIMIT:
        return first
    second = _greedy_batches(moves, order, limits, totals, opened=len(first))
    best = min((second, first), key=lambda batches: (copy_seconds(batches, 1.0), len(batches)))
    if len(moves) > POLISH_LIMIT:
        return best
    return _polished(list(best), limits, {move: index for index, move in enumerate(moves)})


def _polished(
    batches: list[Batch], limits: BatchLimits, rank: Mapping[PartitionMove, int]
) -> tuple[Batch, ...]:
    """Swap or move single partitions between batches while that shortens the copy time (the sum
    of the batches' busiest-broker bytes) and the limits hold; at most :data:`POLISH_ROUNDS`
    changes. The greedy passes place each move once and never look back; with full batches (the
    per-broker limit reached everywhere) only a swap can still move bytes between batches."""
    members = [list(batch) for batch in batches]
    loads = [copy_totals(batch) for batch in members]
    counts = [batch_loads(batch) for batch in members]

    def longest(load: Mapping[int, int]) -> int:
        return max(load.values(), default=0)

    def fits(b: int, adding: PartitionMove, removing: PartitionMove | None) -> bool:
        size = len(members[b]) + 1 - (removing is not None)
        if size > limits.max_partitions:
            return False
        freed = set(brokers_touched(removing)) if removing is not None else set()
        return all(
            counts[b].get(x, 0) + 1 - (x in freed) <= limits.max_moves_per_broker
            for x in brokers_touched(adding)
        )

    copies = {move: copy_loads(move) for batch in members for move in batch}
    none: dict[int, int] = {}

    def longest_after(load: Mapping[int, int], out: PartitionMove | None, into: PartitionMove | None) -> int:
        leaving = copies[out] if out is not None else none
        coming = copies[into] if into is not None else none
        top = max((v - leaving.get(k, 0) + coming.get(k, 0) for k, v in load.items()), default=0)
        return max([top, *(v for k, v in coming.items() if k not in load)])

    for _ in range(POLISH_ROUNDS):
        found = None
        for b1, b2 in ((b1, b2) for b1 in range(len(members)) for b2 in range(len(members)) if b1 != b2):
            before = longest(loads[b1]) + longest(loads[b2])
            for m1 in members[b1]:
                if not copies[m1]:
                    continue
                for m2 in [None, *members[b2]]:
                    if not fits(b2, m1, m2) or (m2 is not None and not fits(b1, m2, m1)):
                        continue
                    after = longest_after(loads[b1], m1, m2) + longest_after(loads[b2], m2, m1)
                    if after < before:
                        found = (b1, b2, m1, m2)
                        break
                if found:
                    break
            if found:
                break
        if found is None:
            break
        b1, b2, m1, m2 = found
        members[b1].remove(m1)
        members[b2].append(m1)
        if m2 is not None:
            members[b2].remove(m2)
            members[b1].append(m2)
        for b in (b1, b2):
            loads[b] = copy_totals(members[b])
            counts[b] = batch_loads(members[b])
    return tuple(tuple(sorted(batch, key=rank.__getitem__)) for batch in members if batch)


def _greedy_batches(
    moves: Sequence[PartitionMove],
    order: Sequence[int],
    limits: BatchLimits,
    totals: Mapping[int, int],
    *,
    opened: int,
) -> tuple[Batch, ...]:
    sizes: list[int] = []
    counts: list[defaultdict[int, int]] = []  # batch -> broker -> replica moves in or out
    loads: list[defaultdict[int, int]] = []  # batch -> copy_loads key -> bytes
    longest: list[int] = []
    members: list[list[int]] = []

    def open_batch() -> None:
        sizes.append(0)
        counts.append(defaultdict(int))
        loads.append(defaultdict(int))
        longest.append(0)
        members.append([])

    for _ in range(opened):
        open_batch()
    max_partitions, max_moves = limits.max_partitions, limits.max_moves_per_broker
    first_open = 0
    first_open_for: defaultdict[int, int] = defaultdict(int)
    for index in order:
        move = moves[index]
        touched = brokers_touched(move)
        copies = copy_loads(move)
        weighted = [(k, v, 1.0 / totals[k]) for k, v in copies.items()]
        best: tuple[int, float, int] | None = None
        candidate = max([first_open, *(first_open_for[x] for x in touched)])
        end = min(len(sizes), candidate + SCAN_LIMIT)
        while candidate < end:
            if sizes[candidate] < max_partitions and all(counts[candidate][x] < max_moves for x in touched):
                if not weighted:
                    best = (0, 0.0, candidate)
                    break  # copies nothing: the earliest batch with room
                held = loads[candidate]
                grown, share = 0, 0.0
                for k, v, inverse in weighted:
                    amount = held[k] + v
                    grown = max(grown, amount)
                    share = max(share, amount * inverse)
                key = (max(0, grown - longest[candidate]), share, candidate)
                if best is None or key < best:
                    best = key
            candidate += 1
        if best is None:
            open_batch()
            chosen = len(sizes) - 1
        else:
            chosen = best[2]
        sizes[chosen] += 1
        for x in touched:
            counts[chosen][x] += 1
        for k, v in copies.items():
            loads[chosen][k] += v
            longest[chosen] = max(longest[chosen], loads[chosen][k])
        members[chosen].append(index)
        while first_open < len(sizes) and sizes[first_open] >= limits.max_partitions:
            first_open += 1
        for x in touched:
            while (
                first_open_for[x] < len(sizes) and counts[first_open_for[x]][x] >= limits.max_moves_per_broker
            ):
                first_open_for[x] += 1
    return tuple(tuple(moves[i] for i in sorted(batch)) for batch in members if batch)
