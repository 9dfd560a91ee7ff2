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
    In waves of one drop per row: proposal rounds as in :mod:`match` (every row proposes a legal
    slot - a hashed choice among brokers with room, so proposals spread - and brokers accept up to
    their remaining excess in row-hash order), then augmenting paths (:mod:`augment`) for rows
    whose brokers are all full, then the few rows left drop their best legal slot regardless.
"""

from __future__ import annotations

import numpy as np

from kafka_zk_operator.domain.placement.arrays import EMPTY, BoolArray, IntArray
from kafka_zk_operator.domain.placement.augment import augment
from kafka_zk_operator.domain.placement.keys import mix64
from kafka_zk_operator.domain.placement.racks import rack_counts, rack_hi, rack_limits
from kafka_zk_operator.domain.placement.state import BrokerContext, segment_positions

_NEG = -(1 << 60)


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
    while True:  # one wave = one more drop for every row still above its RF
        rf = (rep >= 0).sum(axis=1)
        rows = np.flatnonzero(rf > rf_new)
        if len(rows) == 0:
            break
        sub = rep[rows]
        cnt = rack_counts(sub, ctx.rack_ext, k)
        limited = np.r_[ctx.eligible, False][np.clip(sub, 0, ctx.n_brokers)]
        slot = np.full(len(rows), -1, dtype=np.int64)
        left = room.copy()
        while True:  # proposal rounds
            pending = np.flatnonzero(slot < 0)
            if len(pending) == 0:
                break
            score = _drop_scores(
                sub[pending],
                cnt[pending],
                lo_new[rows[pending]],
                hi_new[rows[pending]],
                ctx,
                left,
                row_rank[rows[pending]],
            )
            best = np.argmax(score, axis=1)
            ok = score[np.arange(len(pending)), best] > _NEG
            b = sub[pending, best]
            fits = ok & (~limited[pending, best] | (left[np.maximum(b, 0)] > 0))
            cand = pending[fits]
            if len(cand) == 0:
                break
            cb = b[fits]
            order = np.lexsort((row_rank[rows[cand]], cb))
            pos = segment_positions(cb[order])
            unlimited = ~limited[cand[order], best[fits][order]]
            take = order[unlimited | (pos < left[cb[order]])]
            if len(take) == 0:
                break
            slot[cand[take]] = best[fits][take]
            np.subtract.at(left, cb[take], 1)
        _augment_drops(sub, slot, left, cnt, lo_new[rows], hi_new[rows], ctx, row_rank[rows])
        stuck = np.flatnonzero(slot < 0)
        if len(stuck):  # nothing legal with room: drop the best legal slot anyway
            score = _drop_scores(
                sub[stuck],
                cnt[stuck],
                lo_new[rows[stuck]],
                hi_new[rows[stuck]],
                ctx,
                left,
                row_rank[rows[stuck]],
            )
            best = np.argmax(score, axis=1)
            ok = score[np.arange(len(stuck)), best] > _NEG
            slot[stuck[ok]] = best[ok]
        done = slot >= 0
        if not done.any():
            break
        gone = sub[done, slot[done]]
        rep[rows[done], slot[done]] = EMPTY
        np.subtract.at(room, gone[gone < ctx.n_brokers], 1)
        dropped += int(done.sum())
    return _compact(rep), dropped


def _augment_drops(
    sub: IntArray,
    slot: IntArray,
    left: IntArray,
    cnt: IntArray,
    lo: IntArray,
    hi: IntArray,
    ctx: BrokerContext,
    rank: IntArray,
) -> None:
    """Augmenting paths for rows whose legal drops all hit brokers without room left."""
    if not (slot < 0).any():
        return
    score = _drop_scores(sub, cnt, lo, hi, ctx, np.ones_like(left), rank)
    n = ctx.n_brokers
    legal = score > _NEG

    def cands(i: int) -> list[int]:
        return [int(sub[i, j]) for j in np.argsort(-score[i], kind="stable") if legal[i, j] and sub[i, j] < n]

    assigned = [int(sub[i, slot[i]]) if slot[i] >= 0 else -1 for i in range(len(sub))]
    room = [max(0, int(x)) for x in left[:n].tolist()]
    before = list(assigned)
    changed = augment(cands, assigned, room)
    for i in changed:
        if before[i] >= 0:
            left[before[i]] += 1
        left[assigned[i]] -= 1
        slot[i] = int(np.flatnonzero(sub[i] == assigned[i])[0])


def _drop_scores(
    sub: IntArray,
    cnt: IntArray,
    lo: IntArray,
    hi: IntArray,
    ctx: BrokerContext,
    room: IntArray,
    rank: IntArray,
) -> IntArray:
    """Per slot: removed broker, then rack above its maximum, then broker with room left, then
    follower, then a hash of (row, slot) - so rows spread their proposals over the brokers with
    room instead of all picking the one with the most (which would overload it)."""
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
    has_room = room[np.minimum(b, n - 1)] > 0
    follower = np.arange(sub.shape[1])[None, :] > 0
    width = sub.shape[1]
    spread = (mix64(rank[:, None] * width + np.arange(width)[None, :]) >> np.uint64(44)).astype(np.int64)
    score = (
        (removed.astype(np.int64) << 48)
        + (np.minimum(over_rack, 255) << 40)
        + (has_room.astype(np.int64) << 39)
        + (follower.astype(np.int64) << 38)
        + np.where(has_room, spread, np.clip(room[np.minimum(b, n - 1)], -(1 << 19), 0) + (1 << 19))
    )
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
