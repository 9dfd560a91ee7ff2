"""Byte balance: move replicas so every broker holds about the same bytes, copying few bytes.

GOALS (in priority order)
    1. The count planner's constraints: one replica per broker per partition, every partition's
       rack limits kept (``racks``), removed brokers end empty, replicas still to be placed
       (UNPLACED slots of a replication-factor increase or rack repair) get a broker, rows that are
       not movable (excluded topics) never change.
    2. Every eligible broker's bytes within ``target ± band`` (:func:`byte_targets`).
    3. Few bytes copied: the byte moves go from a broker above its band (or one that must empty)
       to one with room, each sized to what the two brokers need, so the plan stays close to
       :func:`bytes_lower_bound`.
    4. Replica counts, second: when the giver holds more replicas than its count target and the
       receiver fewer, the bytes are carried by that many replicas of typical size rather than by a
       few large ones; a last pass moves (or trades two for one) small replicas towards the count
       targets inside the byte bands. A plan is an end state: a replica that moves twice while it
       is planned is still copied once.

TARGETS
    Bytes per broker are the sizes of the partitions it holds a replica of. A rack may hold at
    most ``hi`` and at least ``lo`` replicas of each partition (``racks.rack_limits``), which bounds
    the bytes a rack can end with; the rack levels are water-filled inside those bounds and each
    rack's bytes are shared evenly by its brokers, never below the bytes a broker must keep (rows
    that may not move). With equal racks and nothing pinned every target is the cluster mean.

ALGORITHM
    Greedy, one replica per step: the broker furthest above its band gives to the one with the
    most room (in the giver's rack when the best one elsewhere cannot take any of its replicas);
    once nobody is above the band, the broker furthest below it takes from the one with the most
    bytes. The mover is the largest replica not above the ideal amount (what the giver must shed,
    capped by what the receiver lacks), else the smallest one that still fits the receiver's band.
    A broker that can neither give nor take any legal replica is left as it is and reported.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kafka_zk_operator.domain.placement.arrays import BoolArray, IntArray
from kafka_zk_operator.domain.placement.racks import rack_limits
from kafka_zk_operator.domain.placement.report import broker_bytes
from kafka_zk_operator.domain.placement.state import BrokerContext, WorkingState

FloatArray = npt.NDArray[np.float64]

#: Default half-width of the byte band, as a fraction of the mean bytes per eligible broker.
DEFAULT_BYTE_TOLERANCE = 0.02

#: Replicas of one broker looked at per attempt before another broker is tried.
_SCAN_LIMIT = 64

#: At most this many replicas of typical size move between one pair of brokers per step (when
#: counts as well as bytes call for many); each is at most the pair's bytes over their count.
_BATCH = 32


@dataclass(frozen=True, eq=False)
class ByteTargets:
    """Per-broker byte targets (``(N,)``, 0 for brokers that are not eligible), the mean over the
    eligible brokers, the band half-width in bytes, the brokers whose target is above the mean's
    band (rack limits or bytes they must keep hold them there), and the bytes that fit no broker's
    capacity (``short``, 0 without capacities or when everything fits)."""

    target: FloatArray
    mean: float
    band: float
    pinned: BoolArray
    short: float = 0.0


@dataclass(frozen=True, eq=False)
class ByteBalance:
    """The replica matrix after the byte moves and the brokers left outside their band."""

    replicas: IntArray
    moves: int
    givers_left: IntArray
    takers_left: IntArray


def byte_targets(
    replicas: IntArray,
    *,
    sizes: IntArray,
    movable: BoolArray,
    rf_new: IntArray,
    ctx: BrokerContext,
    tolerance: float,
    capacity: FloatArray | None = None,
) -> ByteTargets:
    """Targets as the module docstring says, for the rows after the replication-factor pre-steps;
    ``capacity`` (``(N,)`` bytes, ``inf`` for none) caps each broker's target."""
    n, k = ctx.n_brokers, ctx.n_racks
    eligible = ctx.eligible
    rack = np.minimum(ctx.rack_ext[:n], k - 1)
    fixed = broker_bytes(replicas[~movable], sizes[~movable], n + 1)[:n].astype(np.float64)
    fixed = np.where(eligible, fixed, 0.0)
    ceiling = np.full(n, np.inf) if capacity is None else capacity.astype(np.float64)
    ceiling = np.where(eligible, np.maximum(ceiling, fixed), 0.0)  # bytes that may not move stay
    size_m = sizes[movable].astype(np.float64)
    lo_row, hi_row = rack_limits(rf_new[movable], k)
    total = float(fixed.sum() + (size_m * rf_new[movable]).sum())
    fixed_rack = np.bincount(rack[eligible], weights=fixed[eligible], minlength=k)
    rack_lo = fixed_rack + float((size_m * lo_row).sum())
    rack_hi = fixed_rack + np.array(
        [float((size_m * np.minimum(hi_row, ctx.rack_sizes[r])).sum()) for r in range(k)]
    )

    def rack_totals(x: float) -> FloatArray:
        per_rack = np.bincount(rack[eligible], weights=_fill(x, fixed, ceiling)[eligible], minlength=k)
        out: FloatArray = np.clip(per_rack, rack_lo, np.maximum(rack_lo, rack_hi))
        return out

    rack_total = rack_totals(_level(lambda x: float(rack_totals(x).sum()), total))
    target = np.zeros(n, dtype=np.float64)
    for r in range(k):
        members = eligible & (rack == r)
        floor, ceil = fixed[members], ceiling[members]
        mu = _level(functools.partial(_filled, floor=floor, ceiling=ceil), float(rack_total[r]))
        target[members] = _fill(mu, floor, ceil)
    mean = total / max(1, int(eligible.sum()))
    pinned = eligible & (target > mean * (1.0 + tolerance))
    short = 0.0 if capacity is None else max(0.0, total - float(target.sum()))
    if short <= max(1.0, 1e-9 * total):  # float rounding of the water level, not a shortfall
        short = 0.0
    return ByteTargets(target=target, mean=mean, band=mean * tolerance, pinned=pinned, short=short)


def _filled(level: float, *, floor: FloatArray, ceiling: FloatArray) -> float:
    """Bytes held by brokers filled to ``level`` (:func:`_fill`), summed."""
    return float(_fill(level, floor, ceiling).sum())


def _fill(level: float, floor: FloatArray, ceiling: FloatArray) -> FloatArray:
    """Each broker's bytes when filled to ``level``, never below its floor nor above its ceiling."""
    out: FloatArray = np.minimum(np.maximum(level, floor), ceiling)
    return out


def _level(total_at: Callable[[float], float], goal: float) -> float:
    """The smallest ``x >= 0`` where the non-decreasing ``total_at(x)`` reaches ``goal`` (bisection;
    where it never does, a level above every ceiling)."""
    lo, hi = 0.0, max(1.0, goal)
    while total_at(hi) < goal and hi < 1e30:
        hi *= 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if total_at(mid) < goal:
            lo = mid
        else:
            hi = mid
    return hi


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


class _Candidates:
    """The movable replicas of each broker sorted by size, with 'still here' bookkeeping: a moved
    replica's entry in ``gone`` leads (through path-halving) to the nearest one below it."""

    def __init__(self, rep: IntArray, movable: BoolArray, sizes: IntArray, width: int) -> None:
        rows, slots = np.nonzero(movable[:, None] & (rep >= 0))
        owner = rep[rows, slots]
        small = np.int16 if width < np.iinfo(np.int16).max else np.int64
        order = np.argsort(owner.astype(small), kind="stable")  # radix sort; rows stay in order
        self.row = rows[order]
        self.slot = slots[order]
        self.size = sizes[self.row]
        self.start: list[int] = np.searchsorted(owner[order], np.arange(width + 1), side="left").tolist()
        self.gone: dict[int, int] = {}
        self.left_alive: IntArray = np.diff(np.array(self.start, dtype=np.int64)).astype(np.int64)
        self.sorted = np.zeros(width, dtype=np.bool_)

    def segment(self, broker: int) -> tuple[int, int]:
        """The broker's replicas, sorted by size (ties in row order) the first time it is asked."""
        start, end = self.start[broker], self.start[broker + 1]
        if not self.sorted[broker]:
            by_size = np.argsort(self.size[start:end], kind="stable") + start
            self.row[start:end] = self.row[by_size]
            self.slot[start:end] = self.slot[by_size]
            self.size[start:end] = self.size[by_size]
            self.sorted[broker] = True
        return start, end

    def alive_at_or_below(self, i: int) -> int:
        """The largest index ``<= i`` still here (``-1`` and below: none)."""
        gone = self.gone
        while i in gone:
            nxt = gone[i]
            if nxt in gone:
                nxt = gone[i] = gone[nxt]
            i = nxt
        return i

    def take(self, index: int, broker: int) -> None:
        self.gone[index] = index - 1
        self.left_alive[broker] -= 1


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
    cand = _Candidates(state.rep, movable, sizes, width)
    eligible = np.r_[ctx.eligible, False]
    target = np.r_[targets.target, 0.0]
    limit = np.r_[np.full(n, np.inf) if capacity is None else capacity, 0.0]
    ctarget = np.r_[count_target, 0].astype(np.int64)
    band = targets.band
    rack = ctx.rack_ext
    mover = _Mover(state, cand, sizes, held, count)
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
    again = _Mover(state, _Candidates(state.rep, movable, sizes, width), sizes, held, count)
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
    count = np.zeros(width, dtype=np.int64)  # unchanged by swaps; _Mover keeps it in step anyway
    cand = _Candidates(state.rep, movable, sizes, width)
    mover = _Mover(state, cand, sizes, held, count)
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
    mover: _Mover,
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


class _Mover:
    """Finds legal replicas of about the asked size on a giver and moves them to a taker."""

    def __init__(
        self, state: WorkingState, cand: _Candidates, sizes: IntArray, held: FloatArray, count: IntArray
    ) -> None:
        self.state = state
        self.cand = cand
        self.sizes = sizes
        self.held = held
        self.count = count
        self.moves = 0
        self.rack_of: list[int] = state.ctx.rack_ext.tolist()
        self.n_racks = state.ctx.n_racks
        self.unplaced = state.ctx.unplaced

    def move(self, g: int, t: int, x: float, cap: float, *, many: int = 1) -> bool:
        """Move up to ``many`` of the largest legal replicas of ``g`` not above ``x`` to ``t`` (if
        there is none, the smallest one not above ``cap``); ``False`` when ``t`` may take none."""
        start, end = self.cand.segment(g)
        if start == end:
            return False
        pos = int(np.searchsorted(self.cand.size[start:end], x, side="right")) + start - 1
        picked = self._below(pos, start, g, t, many)
        if not picked:
            picked = self._above(pos + 1, end, g, t, cap)
        if not picked:
            return False
        self._apply(picked, g, t)
        return True

    def swap(self, g: int, t: int, shift: float, room_t: float) -> bool:
        """``t`` sends ``g`` one of its smallest legal replicas ``q`` and ``g`` sends ``t`` the largest
        legal replica ``p`` with ``size(q) < size(p) <= size(q) + shift`` (and within ``t``'s
        ``room_t``, net); ``False`` when no such pair is found among ``t``'s smallest few."""
        t_start, t_end = self.cand.segment(t)
        g_start, g_end = self.cand.segment(g)
        cand = self.cand
        i, tried = t_start, 0
        while i < t_end and tried < 4:
            if i in cand.gone or not self._legal(int(cand.row[i]), t, g):
                i += 1
                continue
            tried += 1
            small = float(cand.size[i])
            bound = small + min(shift, room_t)
            pos = int(np.searchsorted(cand.size[g_start:g_end], bound, side="right")) + g_start - 1
            picked = self._below(pos, g_start, g, t, 1)
            if picked and float(cand.size[picked[0]]) > small:
                self._apply([i], t, g)
                self._apply(picked, g, t)
                return True
            i += 1
        return False

    def trade(self, g: int, t: int, lowest: float, highest: float) -> bool:
        """``g`` sends ``t`` its two smallest legal replicas and ``t`` sends back the smallest legal
        replica that changes ``g``'s bytes by between ``lowest`` and ``highest``."""
        cand = self.cand
        g_start, g_end = cand.segment(g)
        t_start, t_end = cand.segment(t)
        pair: list[int] = []
        i, looked = g_start, 0
        while i < g_end and len(pair) < 2 and looked < _SCAN_LIMIT:
            if i not in cand.gone:
                if self._legal(int(cand.row[i]), g, t):
                    pair.append(i)
                looked += 1
            i += 1
        if len(pair) < 2:
            return False
        sent = float(cand.size[pair[0]] + cand.size[pair[1]])
        low, high = sent + lowest, sent + highest
        if high < 0:
            return False
        j = int(np.searchsorted(cand.size[t_start:t_end], max(0.0, low), side="left")) + t_start
        looked = 0
        while j < t_end and looked < _SCAN_LIMIT:
            if j not in cand.gone:
                if float(cand.size[j]) > high:
                    return False
                if self._legal(int(cand.row[j]), t, g):
                    self._apply(pair, g, t)
                    self._apply([j], t, g)
                    return True
                looked += 1
            j += 1
        return False

    def move_smallest(self, g: int, t: int, many: int, cap: float) -> bool:
        """Move up to ``many`` of the smallest legal replicas of ``g`` to ``t``, together at most
        ``cap`` bytes; ``False`` when none fits."""
        start, end = self.cand.segment(g)
        cand = self.cand
        picked: list[int] = []
        total = 0.0
        looked = 0
        i = start
        while i < end and len(picked) < many and looked < _SCAN_LIMIT + many:
            if i not in cand.gone:
                size = float(cand.size[i])
                if total + size > cap:
                    break
                if self._legal(int(cand.row[i]), g, t):
                    picked.append(i)
                    total += size
                looked += 1
            i += 1
        if not picked:
            return False
        self._apply(picked, g, t)
        return True

    def _below(self, pos: int, start: int, g: int, t: int, many: int) -> list[int]:
        cand = self.cand
        picked: list[int] = []
        looked = 0
        i = cand.alive_at_or_below(pos)
        while i >= start and len(picked) < many and looked < _SCAN_LIMIT + many:
            if self._legal(int(cand.row[i]), g, t):
                picked.append(i)
            looked += 1
            i = cand.alive_at_or_below(i - 1)
        return picked

    def _above(self, i: int, end: int, g: int, t: int, cap: float) -> list[int]:
        cand = self.cand
        looked = 0
        while i < end and looked < _SCAN_LIMIT:
            if i not in cand.gone:
                if cand.size[i] > cap:
                    return []
                if self._legal(int(cand.row[i]), g, t):
                    return [i]
                looked += 1
            i += 1
        return []

    def _legal(self, row: int, g: int, t: int) -> bool:
        st = self.state
        members = st.rep[row].tolist()
        if t in members:
            return False
        rs, rd = self.rack_of[g], self.rack_of[t]
        if rs == rd:
            return True
        cnt = st.cnt[row].tolist()
        if cnt[rd] >= int(st.hi[row, rd]):
            return False
        lo = int(st.lo[row])
        if rs < self.n_racks and cnt[rs] - 1 < lo:
            return False
        if g == self.unplaced:
            missing = sum(max(0, lo - c) for c in cnt)
            pending = members.count(self.unplaced)
            if cnt[rd] >= lo and missing > pending - 1:
                return False
        return True

    def _apply(self, picked: list[int], g: int, t: int) -> None:
        cand = self.cand
        index = np.array(picked, dtype=np.int64)
        self.state.apply(cand.row[index], cand.slot[index], np.full(len(picked), t, dtype=np.int64))
        moved = float(cand.size[index].sum())
        self.held[g] -= moved
        self.held[t] += moved
        self.count[g] -= len(picked)
        self.count[t] += len(picked)
        for i in picked:
            cand.take(i, g)
        self.moves += len(picked)
