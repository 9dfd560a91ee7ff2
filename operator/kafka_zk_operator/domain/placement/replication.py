"""Pre-steps that change which replica slots exist: replication-factor changes and rack repair.

GOALS
    * RF decrease: drop replicas where they hurt balance most - on removed brokers first, then on
      the brokers furthest above target - so dropping does the balancing work for free.
    * RF increase: add the new replicas as UNPLACED slots; the normal stages place them (each
      placement counts as one move, as the data must be copied).
    * Rack repair: a movable partition that breaks its rack limits (e.g. created without rack
      awareness) has replicas freed into UNPLACED slots so the stages re-place them legally.

CONSTRAINTS
    After dropping, a partition keeps (or can still reach) ``min(RF', K)`` racks: a replica is
    dropped from a rack above its maximum first, never from a rack at its minimum. Leaders are
    dropped or freed only when nothing else fits (slot 0 costs a small penalty).

ALGORITHM
    Proposal rounds as in :mod:`match`: every row that still has to drop proposes its best slot;
    brokers accept drops up to their remaining excess in row-hash order; rows turned down propose
    again; when no drop is accepted, the rest drop their best slot regardless.
"""

from __future__ import annotations

import numpy as np

from kafka_zk_operator.domain.placement.arrays import EMPTY, BoolArray, IntArray
from kafka_zk_operator.domain.placement.racks import rack_counts, rack_hi, rack_limits
from kafka_zk_operator.domain.placement.state import BrokerContext, segment_positions

_NEG = -(1 << 50)


def drop_replicas(
    replicas: IntArray,
    rf_new: IntArray,
    *,
    ctx: BrokerContext,
    excess: IntArray,
    row_rank: IntArray,
) -> tuple[IntArray, int]:
    """Drop replicas until each row has at most ``rf_new`` (module docstring). Rows are compacted.

    :param excess: ``(N,)`` replicas each broker should shed (``load - target``; any sign).
    :param row_rank: ``(P,)`` priority of each row (lower first).
    :returns: the new matrix and the number of replicas dropped.
    """
    rep = replicas.copy()
    k = ctx.n_racks
    lo_new, hi_new_row = rack_limits(rf_new, k)
    hi_new = rack_hi(hi_new_row, ctx.rack_sizes)
    room = excess.astype(np.int64).copy()
    dropped = 0
    forced_round = False
    while True:
        rf = (rep >= 0).sum(axis=1)
        rows = np.flatnonzero(rf > rf_new)
        if len(rows) == 0:
            break
        sub = rep[rows]
        cnt = rack_counts(sub, ctx.rack_ext, k)
        score = _drop_scores(sub, cnt, lo_new[rows], hi_new[rows], ctx, room)
        best = np.argmax(score, axis=1)
        valid = score[np.arange(len(rows)), best] > _NEG
        rows, best, sub = rows[valid], best[valid], sub[valid]
        if len(rows) == 0:
            break
        broker = sub[np.arange(len(rows)), best]
        if forced_round:
            accept = np.arange(len(rows))
        else:
            order = np.lexsort((row_rank[rows], broker))
            pos = segment_positions(broker[order])
            unlimited = ~np.r_[ctx.eligible, False][broker[order]]
            accept = order[unlimited | (pos < room[broker[order]])]
            if len(accept) == 0:
                forced_round = True
                continue
        rep[rows[accept], best[accept]] = EMPTY
        np.subtract.at(room, broker[accept], 1)
        dropped += len(accept)
    return _compact(rep), dropped


def _drop_scores(
    sub: IntArray, cnt: IntArray, lo: IntArray, hi: IntArray, ctx: BrokerContext, room: IntArray
) -> IntArray:
    k = ctx.n_racks
    n = ctx.n_brokers
    present = sub >= 0
    b = np.maximum(sub, 0)
    rack = ctx.rack_ext[b]
    real = rack < k
    rc = np.minimum(rack, k - 1)
    c = np.take_along_axis(cnt, rc, axis=1)
    h = np.take_along_axis(hi, rc, axis=1)
    allowed = ~real | (c - 1 >= lo[:, None])
    over_rack = np.where(real, np.maximum(0, c - h), 1)
    removed = ~np.r_[ctx.eligible, False][np.minimum(b, n)]
    score = (
        (removed.astype(np.int64) << 40)
        + (over_rack << 32)
        + np.clip(room[np.minimum(b, n - 1)], -(1 << 20), 1 << 20) * 4
    )
    score -= (np.arange(sub.shape[1]) == 0)[None, :].astype(np.int64) * 2
    return np.where(present & allowed, score, _NEG)


def free_rack_violations(
    replicas: IntArray, movable: BoolArray, *, ctx: BrokerContext, excess: IntArray
) -> tuple[IntArray, int]:
    """Turn replicas of rows breaking their rack limits into UNPLACED slots (module docstring).

    :returns: the new matrix and the number of slots freed.
    """
    rep = replicas.copy()
    k = ctx.n_racks
    unplaced = ctx.unplaced
    freed = 0
    rf = (rep >= 0).sum(axis=1)
    lo, hi_row = rack_limits(rf, k)
    hi = rack_hi(hi_row, ctx.rack_sizes)
    for _ in range(rep.shape[1] + 1):
        cnt = rack_counts(rep, ctx.rack_ext, k)
        above = np.maximum(0, cnt - hi).sum(axis=1)
        missing = np.maximum(0, lo[:, None] - cnt).sum(axis=1)
        pending = (rep == unplaced).sum(axis=1)
        todo = movable & ((above > 0) | (missing > pending))
        rows = np.flatnonzero(todo)
        if len(rows) == 0:
            break
        sub = rep[rows]
        b = np.clip(sub, 0, ctx.n_brokers - 1)
        rack = ctx.rack_ext[b]
        real = (sub >= 0) & (sub != unplaced) & (rack < k)
        rc = np.minimum(rack, k - 1)
        c = np.take_along_axis(cnt[rows], rc, axis=1)
        h = np.take_along_axis(hi[rows], rc, axis=1)
        over = c > h
        spare = c > lo[rows, None]
        score = (over.astype(np.int64) << 40) + (spare.astype(np.int64) << 38) + c * (1 << 20)
        score += np.clip(excess[b], -(1 << 18), 1 << 18) * 2
        score -= (np.arange(sub.shape[1]) == 0)[None, :].astype(np.int64)
        score = np.where(real & (over | spare), score, _NEG)
        best = np.argmax(score, axis=1)
        ok = score[np.arange(len(rows)), best] > _NEG
        rep[rows[ok], best[ok]] = unplaced
        freed += int(ok.sum())
        if not ok.any():
            break
    return rep, freed


def add_unplaced(replicas: IntArray, rf_new: IntArray, unplaced: int) -> tuple[IntArray, int]:
    """Append UNPLACED slots to rows below ``rf_new``; widens the matrix when needed."""
    rf = (replicas >= 0).sum(axis=1)
    width = max(replicas.shape[1], int(rf_new.max(initial=0)))
    rep = np.full((replicas.shape[0], width), EMPTY, dtype=np.int64)
    rep[:, : replicas.shape[1]] = replicas
    missing = np.maximum(0, rf_new - rf)
    for j in range(width):
        fill = (j >= rf) & (j < rf + missing)
        rep[fill, j] = unplaced
    return rep, int(missing.sum())


def _compact(rep: IntArray) -> IntArray:
    """Shift each row's present slots to the front, keeping their order."""
    order = np.argsort(rep < 0, axis=1, kind="stable")
    out: IntArray = np.take_along_axis(rep, order, axis=1)
    return out
