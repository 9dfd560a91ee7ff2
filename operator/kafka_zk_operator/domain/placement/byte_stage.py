"""The byte stage of ``balance=bytes`` and ``balance=both`` plans: byte targets, the moves (the
greedy, or the count-keeping swaps), the inputs of the lower bound, and the report's notes.

Runs on the driver in :func:`~kafka_zk_operator.domain.placement.planner.finish_plan`: with
``bytes`` the broker stage leaves every replica in place and this stage moves them all; with
``both`` it follows the count plan (stage 2 and repair). Either way the Spark job and the core run
the same code on the same matrix, so they make the same plan. The notes say which brokers the plan
could not bring into their band and why.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain.byte_sizes import format_size
from kafka_zk_operator.domain.placement.arrays import BoolArray, ClusterArrays, IntArray
from kafka_zk_operator.domain.placement.byte_balance import balance_bytes, bytes_lower_bound, swap_bytes
from kafka_zk_operator.domain.placement.byte_targets import ByteTargets, byte_targets
from kafka_zk_operator.domain.placement.plan_types import PlanRequest
from kafka_zk_operator.domain.placement.report import broker_bytes
from kafka_zk_operator.domain.placement.setup import Setup


@dataclass(frozen=True, eq=False)
class ByteStage:
    """The replicas after the byte moves, what the lower bound needs (bytes per broker in the
    cluster as it is, the targets, bytes of replicas added and dropped), and the report's notes."""

    replicas: IntArray
    start_bytes: IntArray
    targets: ByteTargets
    eligible: BoolArray
    sizes: IntArray
    placed: int
    dropped: int
    notes: tuple[str, ...]

    def lower_bound(self, after: IntArray) -> int:
        """:func:`byte_balance.bytes_lower_bound` for the final matrix ``after``."""
        n = len(self.eligible)
        return bytes_lower_bound(
            self.start_bytes,
            broker_bytes(after, self.sizes, n + 1)[:n],
            target=self.targets.target,
            eligible=self.eligible,
            placed=self.placed,
            dropped=self.dropped,
        )


def byte_stage(
    cluster: ClusterArrays,
    request: PlanRequest,
    stage: Setup,
    replicas: IntArray,
    *,
    count_target: IntArray,
    swaps_only: bool = False,
) -> ByteStage:
    """Balance bytes on ``replicas``: the rows after the pre-steps with nothing moved yet, or with
    ``swaps_only`` (``balance=both``) the count-balanced plan, whose replica counts stay."""
    sizes = cluster.sizes
    capacity: np.ndarray | None = None
    if request.broker_capacity:
        capacity = np.full(cluster.n_brokers, np.inf)
        for broker_id, size in request.broker_capacity:
            capacity[cluster.broker_index(broker_id)] = float(size)
    targets = byte_targets(
        replicas,
        sizes=sizes,
        movable=stage.movable,
        rf_new=stage.rf_new,
        ctx=stage.ctx,
        tolerance=request.byte_tolerance,
        capacity=capacity,
    )
    if swaps_only:
        result = swap_bytes(
            replicas, sizes=sizes, movable=stage.movable, ctx=stage.ctx, targets=targets, capacity=capacity
        )
    else:
        result = balance_bytes(
            replicas,
            sizes=sizes,
            movable=stage.movable,
            ctx=stage.ctx,
            targets=targets,
            count_target=count_target,
            capacity=capacity,
        )
    n = cluster.n_brokers
    start = broker_bytes(cluster.replicas, sizes, n + 1)[:n]
    change = np.where(stage.movable, stage.rf_new - cluster.replication_factors(), 0)
    placed = int((sizes * np.maximum(0, change)).sum())
    dropped = int((sizes * np.maximum(0, -change)).sum())
    notes = _notes(cluster, targets, result.givers_left, result.takers_left, stage.movable, swaps_only)
    return ByteStage(result.replicas, start, targets, stage.eligible, sizes, placed, dropped, notes)


def byte_excess_in_replicas(cluster: ClusterArrays, rf_new: IntArray, eligible: BoolArray) -> IntArray:
    """``(N,)`` bytes each broker holds above the mean of the eligible brokers (after the new
    replication factors), in replicas of average size: what the replication-factor pre-steps read
    as a broker's excess, so a ``balance=bytes`` plan drops replicas where the bytes are."""
    n = cluster.n_brokers
    held = broker_bytes(cluster.replicas, cluster.sizes, n + 1)[:n].astype(np.float64)
    total = float((cluster.sizes.astype(np.float64) * rf_new).sum())
    replicas = max(1, int(rf_new.sum()))
    mean = total / max(1, int(eligible.sum()))
    average_size = max(1.0, total / replicas)
    out: IntArray = np.round((held - mean) / average_size).astype(np.int64)
    return out


def _notes(
    cluster: ClusterArrays,
    targets: ByteTargets,
    givers: IntArray,
    takers: IntArray,
    movable: BoolArray,
    swaps_only: bool,
) -> tuple[str, ...]:
    how = "by swaps that keep every replica count" if swaps_only else ""
    notes = [
        f"bytes per broker balanced {how}{' ' if how else ''}to within ±{format_size(int(targets.band))} "
        f"of each broker's target (mean {format_size(int(targets.mean))})"
    ]
    ids = cluster.broker_ids
    if targets.short > 0:
        notes.append(
            f"the brokers' capacities leave {format_size(int(targets.short))} without room: they are "
            "filled to their capacity and the rest stays where it is"
        )
    if targets.pinned.any():
        top = float(targets.target.max())
        notes.append(
            f"broker(s) {_ids(ids[np.flatnonzero(targets.pinned)])} cannot come down to the mean: the rack "
            f"limits of their partitions, the capacity of other brokers, or replicas of topics that may "
            f"not move keep them at up to "
            f"{format_size(int(top))} ({top / targets.mean:.1%} of the mean) whatever the plan does"
        )
    real_givers = givers[givers < cluster.n_brokers]
    if len(real_givers):
        largest = int(cluster.sizes[movable].max()) if movable.any() else 0
        why = (
            "no swap of replicas with a lighter broker fits under the rack rules"
            if swaps_only
            else "no replica they still hold fits a broker with room under the rack rules"
        )
        notes.append(
            f"broker(s) {_ids(ids[real_givers])} stay above their byte band: {why} (the largest movable "
            f"partition is {format_size(largest)})"
        )
    if len(givers) > len(real_givers):
        notes.append("some replicas to be placed found no broker with room under the rack rules")
    if len(takers):
        notes.append(
            f"broker(s) {_ids(ids[takers])} stay below their byte band: no broker with bytes to spare holds a "
            "replica they may take under the rack rules"
        )
    return tuple(notes)


def _ids(values: IntArray) -> str:
    shown = [str(int(v)) for v in values[:10]]
    more = f" and {len(values) - 10} more" if len(values) > 10 else ""
    return ", ".join(shown) + more
