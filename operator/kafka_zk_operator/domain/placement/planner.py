"""Plan a reassignment: the modes (add/remove brokers, rebalance, replication factor) end to end.

GOALS (in priority order)
    1. Constraints hold: one replica per broker per partition, every moved partition spans
       ``min(RF, racks)`` racks (broken partitions are repaired), removed brokers end empty,
       excluded topics do not change.
    2. Replica counts balanced within ±1 per broker (per rack where the rack rules forbid better;
       within ``±tolerance`` of that when a tolerance is given).
    3. The fewest replica moves; the plan reports the bound M_LB and whether it is met or the
       exact min-cost flow confirms the count.
    4. Preferred leaders balanced within ±1 with the fewest leader changes (reordering only).

ALGORITHM
    setup (eligible brokers, movable rows, new RF) -> drops / rack repair / UNPLACED slots
    (:mod:`replication`) -> targets and M_LB (:mod:`targets`) -> flows and group quotas
    (:mod:`transport`) -> per-group selection (:mod:`select`) -> global repair (:mod:`repair`) ->
    exact polish on small instances when M_LB is missed (:mod:`exact`) -> leaders
    (:mod:`leaders`) -> report recomputed from the matrices (:mod:`report`).

    With ``balance=bytes`` goals 2 and 3 become bytes per broker within a band and few bytes
    copied (counts second): stage 1 hands out no quota and :mod:`byte_stage` makes every move
    before the leaders. With ``balance=both`` the count plan is made as above and
    :mod:`byte_stage` then swaps replicas to even the bytes, keeping every count.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain.placement.arrays import EMPTY, BoolArray, ClusterArrays, IntArray, loads
from kafka_zk_operator.domain.placement.byte_stage import ByteStage, byte_excess_in_replicas, byte_stage
from kafka_zk_operator.domain.placement.exact import exact_placement
from kafka_zk_operator.domain.placement.keys import (
    default_group_count,
    group_of,
    partition_hash,
    topic_hashes,
)
from kafka_zk_operator.domain.placement.leaders import balance_leaders
from kafka_zk_operator.domain.placement.plan_types import EXACT_LIMIT as EXACT_LIMIT
from kafka_zk_operator.domain.placement.plan_types import Balance as Balance
from kafka_zk_operator.domain.placement.plan_types import DataMovement as DataMovement
from kafka_zk_operator.domain.placement.plan_types import Plan as Plan
from kafka_zk_operator.domain.placement.plan_types import PlanRequest as PlanRequest
from kafka_zk_operator.domain.placement.racks import rack_counts, rack_hi, rack_limits
from kafka_zk_operator.domain.placement.repair import repair
from kafka_zk_operator.domain.placement.replication import add_unplaced, drop_replicas, free_rack_violations
from kafka_zk_operator.domain.placement.report import SkewedRack, build_report, count_moves
from kafka_zk_operator.domain.placement.select import Selection, select_moves
from kafka_zk_operator.domain.placement.setup import Setup, make_setup
from kafka_zk_operator.domain.placement.state import BrokerContext
from kafka_zk_operator.domain.placement.targets import Targets, balance_targets, count_lower_bound, widen
from kafka_zk_operator.domain.placement.transport import GroupQuotas, broker_flows, group_quotas

Progress = Callable[[str, float], None]


@dataclass(frozen=True, eq=False)
class BrokerStage(Setup):
    """Everything stage 1 (broker level) computes, on top of the request's :class:`Setup`; the
    input of the partition-level stage.

    :ivar replicas: rows after the pre-steps (drops; UNPLACED slots for new and repaired replicas).
    :ivar group: ``(P,)`` group of each row; :ivar quotas: per-group flows for :func:`select_moves`.
    :ivar row_hash: seeded per-row hash (tie-breaks); :ivar targets: per-broker targets.
    :ivar m_lb: the count lower bound for these targets.
    """

    cluster: ClusterArrays
    request: PlanRequest
    row_hash: np.ndarray
    replicas: IntArray
    targets: Targets
    m_lb: int
    replicas_added: int
    replicas_removed: int
    group: IntArray
    quotas: GroupQuotas

    @functools.cached_property
    def rank_sizes(self) -> IntArray:
        """The partition sizes that rank movers (all equal for ``DataMovement.PROPORTIONAL``)."""
        if self.request.data_movement == DataMovement.PROPORTIONAL:
            return np.zeros_like(self.cluster.sizes)
        return self.cluster.sizes

    def select(self) -> Selection:
        """Stage 2 for every group at once (what one process does)."""
        return select_moves(
            self.replicas,
            group=self.group,
            movable=self.movable,
            sizes=self.rank_sizes,
            row_hash=self.row_hash,
            quotas=self.quotas,
            ctx=self.ctx,
        )


def plan(cluster: ClusterArrays, request: PlanRequest, *, progress: Progress | None = None) -> Plan:
    """Compute a plan (module docstring). Pure and deterministic for a given input and seed.

    Equivalent to ``finish_plan(stage, stage.select())`` with ``stage = broker_stage(...)``.

    :raises InvalidSpec: unknown brokers, bad regular expressions, impossible parameters.
    """
    say: Progress = progress or (lambda _stage, _fraction: None)
    stage = broker_stage(cluster, request, progress=say)
    say("select", 0.2)
    selection = stage.select()
    return finish_plan(stage, selection, progress=say)


def broker_stage(
    cluster: ClusterArrays, request: PlanRequest, *, progress: Progress | None = None
) -> BrokerStage:
    """Stage 1: setup, pre-steps, targets and M_LB, flows, per-group quotas."""
    say: Progress = progress or (lambda _stage, _fraction: None)
    say("setup", 0.0)
    setup = make_setup(cluster, request)
    ctx, movable, eligible = setup.ctx, setup.movable, setup.eligible
    n = cluster.n_brokers
    k = ctx.n_racks
    topic_crc = topic_hashes(cluster.topics)[cluster.topic_of]
    row_hash = partition_hash(topic_crc, cluster.partition_of, request.seed)
    row_rank = np.empty(cluster.n_partitions, dtype=np.int64)
    row_rank[np.argsort(row_hash, kind="stable")] = np.arange(cluster.n_partitions)
    load0 = loads(cluster.replicas, n)[:n]

    say("targets", 0.05)
    rack_lo, rack_hi_ = _rack_bounds(setup)
    total = int(setup.fixed_load.sum() + setup.rf_new[movable].sum())

    def targets_for(prefer: IntArray) -> Targets:
        return balance_targets(
            eligible=eligible,
            floor=setup.fixed_load,
            ceil=setup.fixed_load + int(movable.sum()),  # one replica per partition per broker
            rack=np.minimum(ctx.rack_ext[:n], k - 1),
            rack_lo=rack_lo,
            rack_hi=rack_hi_,
            total=total,
            prefer=prefer,
        )

    prelim = targets_for(load0)
    excess0 = np.where(eligible, load0 - prelim.target, load0 + (1 << 30))
    rep = cluster.replicas
    rf_now = cluster.replication_factors()
    if request.balance is Balance.BYTES:  # drop and free where the bytes are, in replica units
        excess0 = np.where(eligible, byte_excess_in_replicas(cluster, setup.rf_new, eligible), excess0)
    rf_goal = np.where(movable, setup.rf_new, rf_now)
    dropped = 0
    if bool(np.any(rf_goal < rf_now)):
        rep, dropped = drop_replicas(rep, rf_goal, ctx=ctx, excess=excess0, row_rank=row_rank)
    rep, _freed = free_rack_violations(rep, movable, ctx=ctx, excess=excess0)
    rep, added_replicas = add_unplaced(rep, rf_goal, ctx.unplaced)

    load1 = loads(rep, n + 1)
    unplaced = int(load1[n])
    load1 = load1[:n]
    targets = targets_for(load1)
    if request.tolerance > 0:
        targets = widen(
            targets,
            load=load1,
            eligible=eligible,
            floor=setup.fixed_load,
            rack=np.minimum(ctx.rack_ext[:n], k - 1),
            rack_lo=rack_lo,
            rack_hi=rack_hi_,
            total=total,
            tolerance=request.tolerance,
        )
    t = targets.target
    excess = np.zeros(n + 1, dtype=np.int64)
    excess[:n] = np.where(eligible, np.maximum(0, load1 - t), load1)
    excess[n] = unplaced
    deficit = np.where(eligible, np.maximum(0, t - load1), 0).astype(np.int64)
    if int(excess.sum()) != int(deficit.sum()):
        raise AssertionError("plan: excess and deficit disagree")

    say("transport", 0.1)
    n_groups = request.n_groups or default_group_count(cluster.n_partitions)
    group = group_of(topic_crc, cluster.partition_of, n_groups)
    if request.balance is Balance.BYTES:  # the byte stage of finish_plan moves every replica
        none = np.zeros(0, dtype=np.int64)
        quotas = GroupQuotas(none, none, none, none, n_groups)
    else:
        crossing, needs = _crossing(rep, movable, excess, deficit, ctx)
        flows = broker_flows(
            excess=excess, deficit=deficit, rack_ext=ctx.rack_ext, n_racks=k, crossing=crossing, needs=needs
        )
        quotas = group_quotas(flows, _movable_per_group(rep, movable, group, n_groups, n + 1), ctx.rack_ext)
    return BrokerStage(
        **{f.name: getattr(setup, f.name) for f in dataclasses.fields(Setup)},
        cluster=cluster,
        request=request,
        row_hash=row_hash,
        replicas=rep,
        targets=targets,
        m_lb=count_lower_bound(load0, t),
        replicas_added=added_replicas,
        replicas_removed=dropped,
        group=group,
        quotas=quotas,
    )


def finish_plan(stage: BrokerStage, sel: Selection, *, progress: Progress | None = None) -> Plan:
    """Stage 3: global repair, exact check on small instances, leaders, report."""
    say: Progress = progress or (lambda _stage, _fraction: None)
    cluster, request = stage.cluster, stage.request
    ctx, movable, eligible = stage.ctx, stage.movable, stage.eligible
    targets = stage.targets
    t = targets.target
    say("repair", 0.7)
    left = sel.leftover
    fixed = repair(
        sel.replicas,
        sel.moved,
        src=left.src,
        dst=left.dst,
        count=left.count,
        movable=movable,
        sizes=stage.rank_sizes,
        row_hash=stage.row_hash,
        ctx=ctx,
        target=t,
    )
    after = fixed.replicas
    m_lb = stage.m_lb
    moves = int(count_moves(cluster.replicas, after).sum())
    exact_moves: int | None = None
    unresolved, two_hop = fixed.unresolved, fixed.two_hop
    n_mov = int(movable.sum())
    by_bytes: ByteStage | None = None
    if request.balance is Balance.BYTES:
        say("bytes", 0.75)
        by_bytes = byte_stage(cluster, request, stage, after, count_target=stage.targets.target)
        after = by_bytes.replicas
    elif (moves > m_lb or unresolved) and 0 < n_mov * int(eligible.sum()) <= request.exact_limit:
        say("exact", 0.75)
        rows = np.flatnonzero(movable)
        res = exact_placement(
            np.where(np.r_[eligible, False, False][cluster.replicas[rows]], cluster.replicas[rows], EMPTY),
            stage.rf_new[rows],
            ctx=ctx,
            targets=targets,
            fixed_load=stage.fixed_load,
        )
        if res is not None:
            exact_moves = res.moves
            if res.moves < moves or unresolved:
                width = max(after.shape[1], res.replicas.shape[1])
                merged = np.full((len(after), width), EMPTY, dtype=np.int64)
                merged[:, : after.shape[1]] = after
                merged[rows] = EMPTY
                merged[rows, : res.replicas.shape[1]] = res.replicas
                after = merged
                unresolved, two_hop = 0, 0
    if request.balance is Balance.BOTH:
        say("bytes", 0.8)
        by_bytes = byte_stage(
            cluster, request, stage, after, count_target=stage.targets.target, swaps_only=True
        )
        after = by_bytes.replicas

    say("leaders", 0.85)
    if cluster.replicas.shape[1]:
        orig_leader = cluster.replicas[:, 0].copy()
    else:
        orig_leader = np.full(cluster.n_partitions, EMPTY, dtype=np.int64)
    fresh = count_moves_mask(cluster.replicas, after)
    lead = balance_leaders(
        after, orig_leader, movable=movable, eligible=eligible, moved=fresh, row_hash=stage.row_hash
    )
    after = lead.replicas

    say("report", 0.95)
    skewed = tuple(
        SkewedRack(
            rack=stage.rack_names[s.rack],
            brokers=s.brokers,
            replicas_per_broker_min=s.per_broker_min,
            replicas_per_broker_max=s.per_broker_max,
            cluster_level=s.cluster_level,
            reason=(
                "the rack must hold at least one replica of every partition (RF >= racks)"
                if s.bound == "min"
                else "the rack may hold at most its share of each partition (RF <= racks)"
            ),
        )
        for s in targets.skewed
    )
    notes = _notes(request, unresolved, two_hop, lead.unresolved, skewed)
    if by_bytes is not None:
        notes = (*notes, *by_bytes.notes)
    report = build_report(
        mode=request.mode.cli_name,
        cluster=cluster,
        after=after,
        selected=movable,
        eligible=eligible,
        added=stage.added,
        replica_target=t,
        leader_target=lead.target,
        m_lb=m_lb,
        exact_moves=exact_moves,
        leader_changes=lead.changes,
        leader_lb=lead.lower_bound,
        replicas_added=stage.replicas_added,
        replicas_removed=stage.replicas_removed,
        unresolved_units=unresolved,
        two_hop_moves=two_hop,
        replica_band=(targets.lo, targets.hi),
        skewed=skewed,
        notes=notes,
        balance=str(request.balance),
        bytes_lower_bound=None if by_bytes is None else by_bytes.lower_bound(after),
    )
    say("done", 1.0)
    return Plan(cluster, after, report, targets, eligible, movable)


def count_moves_mask(before: IntArray, after: IntArray) -> BoolArray:
    """Slots of ``after`` holding a broker that was not in the row before (replicas moved in)."""
    member = np.zeros(after.shape, dtype=np.bool_)
    for j in range(before.shape[1]):
        member |= after == before[:, j : j + 1]
    return np.asarray((after >= 0) & ~member, dtype=np.bool_)


def _notes(
    request: PlanRequest, unresolved: int, two_hop: int, leader_left: int, skewed: tuple[SkewedRack, ...]
) -> tuple[str, ...]:
    notes: list[str] = []
    if request.tolerance > 0:
        notes.append(f"tolerance band of ±{request.tolerance} replicas per broker")
    if unresolved:
        notes.append(
            f"{unresolved} replica move(s) could not be placed under the constraints: balance not reached"
        )
    if two_hop:
        notes.append(f"{two_hop} unit(s) needed a two-hop exchange (2 moves each)")
    if leader_left:
        notes.append(f"{leader_left} preferred leader(s) above target could not be handed over")
    for s in skewed:
        notes.append(
            f"rack {s.rack!r} is skewed and cannot be fixed by moving replicas: {s.brokers} brokers hold "
            f"{s.replicas_per_broker_min}..{s.replicas_per_broker_max} replicas each vs about "
            f"{s.cluster_level:.1f} across the cluster ({s.reason}); only evening the racks fixes it"
        )
    return tuple(notes)


def _rack_bounds(setup: Setup) -> tuple[IntArray, IntArray]:
    """Per rack: fixed replicas plus the sum over movable rows of the rack minimum / maximum."""
    ctx = setup.ctx
    k = ctx.n_racks
    n = ctx.n_brokers
    rf = setup.rf_new[setup.movable]
    lo_row, hi_row = rack_limits(rf, k)
    fixed_r = np.bincount(
        np.minimum(ctx.rack_ext[:n], k - 1)[setup.eligible],
        weights=setup.fixed_load[setup.eligible],
        minlength=k,
    )
    lo = fixed_r.round().astype(np.int64) + int(lo_row.sum())
    hi_sum = np.array([int(np.minimum(hi_row, ctx.rack_sizes[r]).sum()) for r in range(k)], dtype=np.int64)
    return lo, fixed_r.round().astype(np.int64) + hi_sum


def _crossing(
    rep: IntArray, movable: BoolArray, excess: IntArray, deficit: IntArray, ctx: BrokerContext
) -> tuple[IntArray, IntArray]:
    """Legal-crossing estimates and UNPLACED needs for :func:`transport.broker_flows`."""
    k, n = ctx.n_racks, ctx.n_brokers
    crossing = np.zeros((k + 1, k), dtype=np.int64)
    needs = np.zeros(k, dtype=np.int64)
    out = np.bincount(ctx.rack_ext, weights=excess, minlength=k + 1)
    inn = np.bincount(ctx.rack_ext[:n], weights=deficit, minlength=k + 1)
    if not bool(np.any(out[:k] > inn[:k])) and out[k] == 0:
        return crossing, needs
    rf = (rep >= 0).sum(axis=1)
    lo, hi_row = rack_limits(rf, k)
    hi = rack_hi(hi_row, ctx.rack_sizes)
    cnt = rack_counts(rep, ctx.rack_ext, k)
    room_in = np.maximum(0, hi - cnt)
    over = np.r_[excess[:n] > 0, False]
    for j in range(rep.shape[1]):
        col = rep[:, j]
        present = movable & (col >= 0) & (col < n)
        src = np.where(present, col, 0)
        on_over = present & over[src]
        r_src = ctx.rack_ext[src]
        real = on_over & (r_src < k)
        r_c = np.minimum(r_src, k - 1)
        can_leave = real & (cnt[np.arange(len(rep)), r_c] - 1 >= lo)
        for dst_rack in range(k):
            ok = can_leave & (room_in[:, dst_rack] > 0) & (r_c != dst_rack)
            crossing[:k, dst_rack] += np.bincount(r_c[ok], minlength=k)
        removed_rack = on_over & (r_src >= k)
        for dst_rack in range(k):
            crossing[k, dst_rack] += int((removed_rack & (room_in[:, dst_rack] > 0)).sum())
    pending = (rep == ctx.unplaced).sum(axis=1)
    if pending.any():
        rows = pending > 0
        crossing[k] += np.minimum(pending[rows, None], room_in[rows]).sum(axis=0)
        needs += (np.maximum(0, lo[rows, None] - cnt[rows]) * 1).sum(axis=0)
    return crossing, needs


def _movable_per_group(
    rep: IntArray, movable: BoolArray, group: IntArray, n_groups: int, width: int
) -> IntArray:
    rows, cols = np.nonzero((rep >= 0) & movable[:, None])
    codes = group[rows] * width + rep[rows, cols]
    return np.bincount(codes, minlength=n_groups * width).reshape(n_groups, width).astype(np.int64)


__all__ = [
    "EXACT_LIMIT",
    "Balance",
    "BrokerStage",
    "GroupQuotas",
    "Plan",
    "PlanRequest",
    "broker_stage",
    "finish_plan",
    "plan",
]
