"""Broker-level stage, part 1: how many replicas each broker should end with, and the bound M_LB.

GOALS
    Replica counts within ±1 across the eligible brokers; where the rack rules make that
    impossible (e.g. RF = number of racks and unequal racks: each rack holds exactly one replica
    of every partition, whatever the planner does) within ±1 inside each such rack, reporting the
    rack as *unfixably skewed*. Among the targets meeting that balance, those needing the fewest
    moves: the ``+1`` slots go to the brokers that hold the most replicas already.

CONSTRAINTS
    ``floor[b] <= target[b] <= ceil[b]`` (floor = replicas that may not move, e.g. of excluded
    topics); rack totals within ``[rack_lo[r], rack_hi[r]]`` (the sums over partitions of the
    per-rack minimum and maximum of :mod:`racks`, plus the fixed replicas); targets sum to
    ``total``; ineligible (removed) brokers get 0.

ALGORITHM (integer water-filling)
    1. Find the smallest level ``l`` with ``sum_r clip(sum_{b in r} clip(l + 1, floor, ceil),
       rack_lo, rack_hi) >= total`` (binary search; each evaluation is one ``bincount``).
    2. A rack whose clipped total still grows from ``l`` to ``l + 1`` is *at level*: its brokers get
       ``l`` or ``l + 1``; ``rack_lo`` may force some ``+1`` in it. The remaining ``+1`` units go to
       the at-level brokers with the largest ``prefer`` (current replicas), racks permitting.
    3. Any other rack is clamped to ``rack_lo`` or ``rack_hi``: its total is fixed and water-filled
       inside the rack (again ``+1`` by ``prefer``). It is reported as a :class:`RackSkew` when its
       brokers end outside the cluster level (``[l, l + 1]`` of the at-level racks, or
       ``floor/ceil(total / brokers)`` when every rack is clamped).
    4. Optionally (:func:`widen`) a tolerance band of ``±tolerance`` replicas around those targets:
       brokers inside it keep their count, the sums are then repaired one unit at a time.

The count lower bound of reference §5.1 for these targets is :func:`count_lower_bound`: every
replica a broker must gain is one move, ``M_LB = sum_b max(0, target_b - load_b)``, which equals
the replicas that must leave over-target and removed brokers when the totals agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.placement.arrays import BoolArray, IntArray


@dataclass(frozen=True)
class RackSkew:
    """A rack whose per-broker replica count cannot match the other racks' (rack rules bind)."""

    rack: int
    brokers: int
    total: int
    per_broker_min: int
    per_broker_max: int
    cluster_level: float
    bound: str  # "min": the rack must hold at least `total`; "max": at most


@dataclass(frozen=True, eq=False)
class Targets:
    """Per-broker targets plus the balance band the exact check may choose within.

    ``lo <= target <= hi``; brokers in class ``k`` (``klass == k``) may each take ``hi - lo`` extra
    units above ``lo`` as long as the class takes ``class_extra[k]`` in total. ``klass == -1``
    means the target is fixed.
    """

    target: IntArray
    lo: IntArray
    hi: IntArray
    klass: IntArray
    class_extra: IntArray
    level: int
    skewed: tuple[RackSkew, ...]


def count_lower_bound(load: IntArray, target: IntArray) -> int:
    """Reference §5.1: ``sum_b max(0, target_b - load_b)`` (loads of removed brokers count as excess)."""
    return int(np.maximum(0, target - load[: len(target)]).sum())


def balance_targets(
    *,
    eligible: BoolArray,
    floor: IntArray,
    ceil: IntArray,
    rack: IntArray,
    rack_lo: IntArray,
    rack_hi: IntArray,
    total: int,
    prefer: IntArray,
) -> Targets:
    """Balanced targets (module docstring, steps 1-3). Arrays are per broker index."""
    n = len(eligible)
    k = len(rack_lo)
    el = np.flatnonzero(eligible)
    if len(el) == 0:
        if total:
            raise errors.InvalidSpec("no eligible broker is left to hold the replicas")
        zeros = np.zeros(n, dtype=np.int64)
        return Targets(zeros, zeros, zeros, np.full(n, -1, dtype=np.int64), np.zeros(0, np.int64), 0, ())
    f = floor[el].astype(np.int64)
    u = np.maximum(ceil[el].astype(np.int64), f)
    r = rack[el].astype(np.int64)
    pref = prefer[el].astype(np.int64)

    def capacity(level: int) -> IntArray:
        return _sum_by(r, np.clip(level, f, u), k)

    def placed(level: int) -> int:
        return int(np.clip(capacity(level), rack_lo, rack_hi).sum())

    if placed(0) > total:
        raise errors.InvalidSpec(
            "the replicas that may not move, plus the rack minimums, exceed the replicas to place"
        )
    top = int(max(int(u.max(initial=0)), total)) + 1
    if placed(top) < total:
        raise errors.InvalidSpec(
            f"the eligible brokers cannot hold {total} replicas under the rack rules "
            "(too few brokers or racks for the replication factor)"
        )
    low, high = 0, top
    while low < high:  # smallest level whose next level can hold everything
        mid = (low + high) // 2
        if placed(mid + 1) >= total:
            high = mid
        else:
            low = mid + 1
    level = low
    cap_l, cap_l1 = capacity(level), capacity(level + 1)
    s_l, s_l1 = np.clip(cap_l, rack_lo, rack_hi), np.clip(cap_l1, rack_lo, rack_hi)
    room = s_l1 - s_l
    extra_units = total - int(s_l.sum())

    t = np.clip(level, f, u)
    lo_b = t.copy()
    hi_b = t.copy()
    klass = np.full(len(el), -1, dtype=np.int64)
    at_level = (f <= level) & (u > level) & (room[r] > 0)
    forced = np.where(room > 0, s_l - cap_l, 0)
    # Rank at-level brokers inside their rack by (prefer desc, index).
    order = np.lexsort((np.arange(len(el)), -pref, r))
    order = order[at_level[order]]
    rank = _rank_in_segments(r[order])
    pick_forced = rank < forced[r[order]]
    t[order[pick_forced]] += 1
    optional = order[(~pick_forced) & (rank < forced[r[order]] + room[r[order]])]
    if extra_units:
        opt_order = np.lexsort((optional, -pref[optional]))
        t[optional[opt_order[:extra_units]]] += 1
    class_extra = [int(forced.sum()) + extra_units]
    hi_b[at_level] += 1
    klass[at_level] = 0

    clamped: list[tuple[int, IntArray, IntArray]] = []
    for rack_index in range(k):
        members = np.flatnonzero(r == rack_index)
        if len(members) == 0 or room[rack_index] > 0 or s_l[rack_index] == cap_l[rack_index]:
            continue
        total_r = int(s_l[rack_index])
        t_r, mu, movable = _water_fill(f[members], u[members], total_r, pref[members])
        t[members] = t_r
        lo_b[members] = np.clip(mu, f[members], u[members])
        hi_b[members] = lo_b[members] + movable
        if movable.any():
            klass[members[movable.astype(bool)]] = len(class_extra)
            class_extra.append(int((t_r - lo_b[members]).sum()))
        clamped.append((rack_index, members, t_r))
    if at_level.any():
        ref_lo, ref_hi, ref = level, level + 1, float(level) + 0.5
    else:
        ref_lo, ref_hi, ref = total // len(el), -(-total // len(el)), total / len(el)
    skewed: list[RackSkew] = []
    for rack_index, members, t_r in clamped:
        free = f[members] < t_r  # brokers not pinned by their fixed replicas
        if not free.any():
            continue
        lo_r, hi_r = int(t_r[free].min()), int(t_r[free].max())
        if lo_r >= ref_lo and hi_r <= ref_hi:
            continue
        skewed.append(
            RackSkew(
                rack=rack_index,
                brokers=len(members),
                total=int(t_r.sum()),
                per_broker_min=int(t_r.min()),
                per_broker_max=int(t_r.max()),
                cluster_level=ref,
                bound="min" if s_l[rack_index] > cap_l[rack_index] else "max",
            )
        )
    target = np.zeros(n, dtype=np.int64)
    lo_all = np.zeros(n, dtype=np.int64)
    hi_all = np.zeros(n, dtype=np.int64)
    k_all = np.full(n, -1, dtype=np.int64)
    target[el], lo_all[el], hi_all[el], k_all[el] = t, lo_b, hi_b, klass
    assert int(target.sum()) == total, "balance_targets: totals disagree"
    return Targets(target, lo_all, hi_all, k_all, np.array(class_extra, dtype=np.int64), level, tuple(skewed))


def widen(
    strict: Targets,
    *,
    load: IntArray,
    eligible: BoolArray,
    floor: IntArray,
    rack: IntArray,
    rack_lo: IntArray,
    rack_hi: IntArray,
    total: int,
    tolerance: int,
) -> Targets:
    """Step 4: a ``±tolerance`` band around ``strict``; brokers inside it keep their load."""
    if tolerance <= 0:
        return strict
    n = len(eligible)
    lo = np.where(eligible, np.maximum(floor, strict.lo - tolerance), 0).astype(np.int64)
    hi = np.where(eligible, strict.hi + tolerance, 0).astype(np.int64)
    t = np.clip(load[:n], lo, hi).astype(np.int64)
    k = len(rack_lo)
    rack_sum = _sum_by(rack, t, k)

    def step(candidates: BoolArray, down: bool) -> int:
        idx = np.flatnonzero(candidates)
        if len(idx) == 0:
            raise errors.InvalidSpec("the tolerance band cannot be met under the rack rules")
        if down:  # highest target first, then smallest load
            best = idx[np.lexsort((idx, load[idx], -t[idx]))[0]]
        else:  # lowest target first, then largest load
            best = idx[np.lexsort((idx, -load[idx], t[idx]))[0]]
        return int(best)

    for rack_index in range(k):
        in_rack = rack == rack_index
        while rack_sum[rack_index] > rack_hi[rack_index]:
            b = step(in_rack & eligible & (t > lo), down=True)
            t[b] -= 1
            rack_sum[rack_index] -= 1
        while rack_sum[rack_index] < rack_lo[rack_index]:
            b = step(in_rack & eligible & (t < hi), down=False)
            t[b] += 1
            rack_sum[rack_index] += 1
    diff = int(t.sum()) - total
    while diff > 0:
        b = step(eligible & (t > lo) & (rack_sum[rack] > rack_lo[rack]), down=True)
        t[b] -= 1
        rack_sum[rack[b]] -= 1
        diff -= 1
    while diff < 0:
        b = step(eligible & (t < hi) & (rack_sum[rack] < rack_hi[rack]), down=False)
        t[b] += 1
        rack_sum[rack[b]] += 1
        diff += 1
    klass = np.where(eligible & (hi > lo), 0, -1).astype(np.int64)
    extra = np.array([int((t - lo)[klass == 0].sum())], dtype=np.int64)
    return Targets(t, lo, hi, klass, extra, strict.level, strict.skewed)


def _sum_by(keys: IntArray, values: IntArray, size: int) -> IntArray:
    return np.bincount(keys, weights=values, minlength=size).round().astype(np.int64)


def _rank_in_segments(sorted_keys: IntArray) -> IntArray:
    """Position of each element within its run of equal keys (keys already grouped)."""
    n = len(sorted_keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    lengths = np.diff(np.r_[starts, n])
    return np.arange(n) - np.repeat(starts, lengths)


def _water_fill(f: IntArray, u: IntArray, total: int, prefer: IntArray) -> tuple[IntArray, int, IntArray]:
    """Most even split of ``total`` with ``f <= t <= u``; ``+1`` units by ``prefer`` (desc).

    Returns the targets, the level and a 0/1 array of brokers that may hold level + 1.
    """
    if int(f.sum()) > total or int(u.sum()) < total:
        raise errors.InvalidSpec("a rack's replica total is outside what its brokers may hold")
    low, high = 0, int(max(total, int(u.max(initial=0)))) + 1
    while low < high:
        mid = (low + high + 1) // 2
        if int(np.clip(mid, f, u).sum()) <= total:
            low = mid
        else:
            high = mid - 1
    t = np.clip(low, f, u)
    movable = ((f <= low) & (u > low)).astype(np.int64)
    extra = total - int(t.sum())
    if extra:
        idx = np.flatnonzero(movable)
        order = np.lexsort((idx, -prefer[idx]))
        t[idx[order[:extra]]] += 1
    return t, low, movable
