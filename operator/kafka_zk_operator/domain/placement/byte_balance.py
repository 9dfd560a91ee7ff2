"""Byte balance: move replicas so every broker holds about the same bytes, copying few bytes.

GOALS (in priority order)
    1. The count planner's constraints: one replica per broker per partition, every partition's
       rack limits kept (``racks``), removed brokers end empty, replicas still to be placed
       (UNPLACED slots of a replication-factor increase or rack repair) get a broker, rows that are
       not movable (excluded topics) never change.
    2. Every eligible broker's bytes within ``target ± band`` (:func:`~kafka_zk_operator.domain.placement.byte_targets.byte_targets`).
    3. Few bytes copied: the byte moves go from a broker above its band (or one that must empty)
       to one with room, each sized to what the two brokers need, so the plan stays close to
       :func:`bytes_lower_bound`.
    4. Replica counts, second: when the giver holds more replicas than its count target and the
       receiver fewer, the bytes are carried by that many replicas of typical size rather than by a
       few large ones; a last pass moves (or trades two for one) small replicas towards the count
       targets inside the byte bands. A plan is an end state: a replica that moves twice while it
       is planned is still copied once.

    The targets and the band are :mod:`~kafka_zk_operator.domain.placement.byte_targets`'s; the
    replica bookkeeping and the legal moves are
    :mod:`~kafka_zk_operator.domain.placement.byte_moves`'s.

ALGORITHM
    Greedy, one replica per step: the broker furthest above its band gives to the one with the
    most room (in the giver's rack when the best one elsewhere cannot take any of its replicas);
    once nobody is above the band, the broker furthest below it takes from the one with the most
    bytes. The mover is the largest replica not above the ideal amount (what the giver must shed,
    capped by what the receiver lacks), else the smallest one that still fits the receiver's band.
    A broker that can neither give nor take any legal replica is left as it is and reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain.placement.arrays import BoolArray, IntArray
from kafka_zk_operator.domain.placement.byte_moves import ByteMover, Candidates
from kafka_zk_operator.domain.placement.byte_targets import ByteTargets, FloatArray
from kafka_zk_operator.domain.placement.report import broker_bytes
from kafka_zk_operator.domain.placement.state import BrokerContext, WorkingState

#: At most this many replicas of typical size move between one pair of brokers per step (when
#: counts as well as bytes call for many); each is at most the pair's bytes over their count.
_BATCH = 32


@dataclass(frozen=True, eq=False)
class ByteBalance:
    """The replica matrix after the byte moves and the brokers left outside their band."""

    replicas: IntArray
    moves: int
    givers_left: IntArray
    takers_left: IntArray


def bytes_lower_bound(
    before: IntArray, after: IntArray, *, target: FloatArray, eligible: BoolArray, placed: int, dropped: int
) -> int:
    """Bytes any plan must copy to leave every eligible broker at least as close to its target as
    ``after`` does.

    ``before``/``after``: ``(N,)`` bytes per broker in the cluster as it is and after the plan;
    ``placed``: bytes of the replicas a replication-factor increase adds (copied whatever the
    plan); ``dropped``: bytes of the replicas a decrease deletes (they leave without a copy). With
    ``up``/``down`` the largest distance of an eligible broker above/below its target after the
    plan, ``over`` is what must leave the brokers above ``target + up`` (all of it from brokers
    that are not eligible) plus ``placed``, less ``dropped``, and ``under`` what must reach the
    brokers below ``target - down``. Each copied byte leaves one broker (or is a new replica) and
    reaches one, so both are bounds and so is their maximum; docs/placement.md has the argument.
    """
    if not eligible.any():
        return 0
    el = eligible
    gap = after[el].astype(np.float64) - target[el]
    up, down = max(0.0, float(gap.max())), max(0.0, float(-gap.min()))
    b = before.astype(np.float64)
    over = float(np.maximum(0.0, b[el] - target[el] - up).sum()) + float(b[~el].sum()) + placed - dropped
    under = float(np.maximum(0.0, target[el] - down - b[el]).sum())
    return max(0, int(max(over, under)))


def balance_bytes(
    replicas: IntArray,
    *,
    sizes: IntArray,
    movable: BoolArray,
    ctx: BrokerContext,
    targets: ByteTargets,
    count_target: IntArray,
    capacity: FloatArray | None = None,
) -> ByteBalance:
    """Run the greedy of the module docstring on ``replicas`` (after the pre-steps); no broker goes
    above its ``capacity`` (``(N,)`` bytes, ``inf`` for none)."""
    n = ctx.n_brokers
    width = n + 1
    state = WorkingState(replicas, ctx)
    held = broker_bytes(state.rep, sizes, width).astype(np.float64)
    count = np.bincount(np.where(state.rep >= 0, state.rep, width).ravel(), minlength=width + 1)[:width]
    count = count.astype(np.int64)
    cand = Candidates(state.rep, movable, sizes, width)
    eligible = np.r_[ctx.eligible, False]
    target = np.r_[targets.target, 0.0]
    limit = np.r_[np.full(n, np.inf) if capacity is None else capacity, 0.0]
    ctarget = np.r_[count_target, 0].astype(np.int64)
    band = targets.band
    rack = ctx.rack_ext
    mover = ByteMover(state, cand, sizes, held, count)
    crossing = _may_cross(state, movable, ctx)
    stuck_giver = np.zeros(width, dtype=np.bool_)
    stuck_taker = np.zeros(width, dtype=np.bool_)
    inf = np.inf

    while True:
        has = cand.left_alive > 0
        key = held - target
        must_empty = ~eligible & has
        over = np.where(eligible & has & ~stuck_giver, key - band, -inf)
        if must_empty.any() and not stuck_giver[must_empty].all():
            g = int(np.flatnonzero(must_empty & ~stuck_giver)[0])
        elif over.max() > 0:
            g = int(over.argmax())
        else:
            g = -1
        if g >= 0:
            room = np.where(eligible, key, inf)
            room[g] = inf
            choices = _best_two(room, rack, int(rack[g]), ctx.n_racks, crossing)
            done = False
            for t in choices:
                need_t = (target[t] - band) - held[t]
                cap_t = min(target[t] + band, limit[t]) - held[t]
                if eligible[g]:
                    need_g = key[g] - band
                    x = min(need_g, need_t) if need_t > 0 else need_g
                    cap = min(cap_t, key[g] + band)
                else:
                    x = need_t if need_t > 0 else cap_t
                    cap = limit[t] - held[t]
                x = min(x, cap)
                share = max(1, min(int(count[g] - ctarget[g]), int(ctarget[t] - count[t])))
                if mover.move(g, t, x / share, cap, many=min(share, _BATCH)):
                    done = True
                    break
            if not done:
                stuck_giver[g] = True
            continue
        under = np.where(eligible & ~stuck_taker, (target - band) - held, -inf)
        if under.max() <= 0:
            break
        t = int(under.argmax())
        surplus = np.where(eligible & has, key, -inf)
        surplus[t] = -inf
        choices = _best_two(-surplus, rack, int(rack[t]), ctx.n_racks, crossing)
        done = False
        for g in choices:
            if surplus[g] == -inf:
                continue
            cap = min(min(target[t] + band, limit[t]) - held[t], key[g] + band)
            share = max(1, int(ctarget[t] - count[t]))
            if mover.move(g, t, min(under[t], cap) / share, cap, many=min(share, _BATCH)):
                done = True
                break
        if not done:
            stuck_taker[t] = True

    not_emptied = ~eligible & (cand.left_alive > 0)
    # The count pass may move replicas this plan placed too (a broker that was empty holds only
    # those): a plan is an end state, so a replica moved twice is still copied once.
    again = ByteMover(state, Candidates(state.rep, movable, sizes, width), sizes, held, count)
    _even_counts(again, eligible, target, limit, ctarget, band, rack, ctx.n_racks, crossing)
    final = held - target
    slack = band * 1.001  # a broker on the edge of its band is in it
    givers_left = np.flatnonzero((eligible & (final > slack)) | not_emptied)
    takers_left = np.flatnonzero(eligible & (final < -slack))
    moves = mover.moves + again.moves
    return ByteBalance(state.rep, moves, givers_left.astype(np.int64), takers_left.astype(np.int64))


def swap_bytes(
    replicas: IntArray,
    *,
    sizes: IntArray,
    movable: BoolArray,
    ctx: BrokerContext,
    targets: ByteTargets,
    capacity: FloatArray | None = None,
) -> ByteBalance:
    """``balance=both``: even out bytes on a count-balanced matrix without changing any broker's
    replica count, by swaps. The heaviest broker ``g`` and the lightest ``t`` (in ``g``'s rack when
    no replica may change racks) exchange a replica each: ``t`` sends its smallest legal one, ``g``
    the largest legal one that shifts no more than both need; the pair is given up when no such
    exchange exists. Every swap copies both replicas."""
    n = ctx.n_brokers
    width = n + 1
    state = WorkingState(replicas, ctx)
    held = broker_bytes(state.rep, sizes, width).astype(np.float64)
    count = np.zeros(width, dtype=np.int64)  # unchanged by swaps; ByteMover keeps it in step anyway
    cand = Candidates(state.rep, movable, sizes, width)
    mover = ByteMover(state, cand, sizes, held, count)
    eligible = np.r_[ctx.eligible, False]
    target = np.r_[targets.target, 0.0]
    limit = np.r_[np.full(n, np.inf) if capacity is None else capacity, 0.0]
    band = targets.band
    crossing = _may_cross(state, movable, ctx)
    stuck = np.zeros(width, dtype=np.bool_)
    inf = np.inf
    while True:
        key = held - target
        top = np.where(eligible & ~stuck, key, -inf)
        g = int(top.argmax())
        if top[g] == -inf:
            break
        room = np.where(eligible, key, inf)
        room[g] = inf
        choices = _best_two(room, ctx.rack_ext, int(ctx.rack_ext[g]), ctx.n_racks, crossing)
        need_g = key[g] - band
        swapped = False
        for t in choices:
            need_t = -key[t] - band
            if need_g <= 0 and need_t <= 0:
                continue
            # t lacks bytes: g may come down to the bottom of its band; else t may go up to the top
            shift = min(need_t, key[g] + band) if need_t > 0 else min(need_g, band - key[t])
            if shift > 0 and mover.swap(g, t, shift, limit[t] - held[t]):
                swapped = True
                break
        if not swapped:
            stuck[g] = True
    final = held - target
    slack = band * 1.001  # a broker on the edge of its band is in it
    givers_left = np.flatnonzero(eligible & (final > slack))
    takers_left = np.flatnonzero(eligible & (final < -slack))
    return ByteBalance(state.rep, mover.moves, givers_left.astype(np.int64), takers_left.astype(np.int64))


def _even_counts(
    mover: ByteMover,
    eligible: BoolArray,
    target: FloatArray,
    limit: FloatArray,
    ctarget: IntArray,
    band: float,
    rack: IntArray,
    n_racks: int,
    crossing: bool,
) -> None:
    """Secondary aim: move the smallest replicas from brokers above their count target to brokers
    below it, only as far as both stay inside their byte band; where a broker has no byte room,
    trade two of its smallest replicas for one of about their size."""
    held, count, cand = mover.held, mover.count, mover.cand
    stuck = np.zeros(len(held), dtype=np.bool_)
    low = np.iinfo(np.int64).min
    while True:
        spare = np.where(eligible & (cand.left_alive > 0) & ~stuck, count - ctarget, low)
        g = int(spare.argmax())
        if spare[g] <= 0:
            return
        lack = np.where(eligible, ctarget - count, low)
        lack[g] = low
        done = False
        for t in _best_two(-lack.astype(np.float64), rack, int(rack[g]), n_racks, crossing):
            if lack[t] <= 0:
                continue
            cap = min(min(target[t] + band, limit[t]) - held[t], held[g] - (target[g] - band))
            if mover.move_smallest(g, t, min(int(spare[g]), int(lack[t]), _BATCH), cap):
                done = True
                break
            # No byte room for a plain move: g sends its two smallest, t sends back one replica of
            # about their size, so both stay in their byte band and the counts move by one.
            key_g, key_t = held[g] - target[g], held[t] - target[t]
            lowest = max(-band - key_g, key_t - band, held[t] - limit[t])
            highest = min(band - key_g, key_t + band, limit[g] - held[g])
            if lowest <= highest and mover.trade(g, t, lowest, highest):
                done = True
                break
        if not done:
            stuck[g] = True


def _best_two(score: FloatArray, rack: IntArray, own_rack: int, n_racks: int, crossing: bool) -> list[int]:
    """The index with the lowest score overall (only when some replica may change racks), then the
    lowest in ``own_rack`` (if different)."""
    best = int(score.argmin())
    out = [best] if crossing and np.isfinite(score[best]) else []
    if own_rack < n_racks:
        local = np.where(rack == own_rack, score, np.inf)
        b2 = int(local.argmin())
        if np.isfinite(local[b2]) and b2 not in out:
            out.append(b2)
    return out


def _may_cross(state: WorkingState, movable: BoolArray, ctx: BrokerContext) -> bool:
    """Whether some movable replica could ever change racks: a partition with fewer replicas than
    racks, more than one allowed in a rack, or replicas still to be placed or on brokers of racks
    that keep no eligible broker."""
    if ctx.n_racks <= 1:
        return False
    rows = np.flatnonzero(movable)
    rf = (state.rep[rows] >= 0).sum(axis=1)
    odd = (rf != ctx.n_racks) | (state.hi[rows] > 1).any(axis=1)
    off_rack = ctx.rack_ext[np.where(state.rep[rows] >= 0, state.rep[rows], ctx.unplaced)] >= ctx.n_racks
    return bool(odd.any() or (off_rack & (state.rep[rows] >= 0)).any())
