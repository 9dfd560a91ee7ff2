"""Global repair stage: place the quota units the partition-level stage could not fill.

GOALS
    Finish the plan with as few extra moves as possible. The open units only say that some
    brokers must still shed and others still gain replicas, so sources and destinations are
    re-paired freely: first any replica on a source (from any group) that may legally go to any
    open destination, same rack first (one move each, so M_LB is still met); then a destination
    swap: a replica planned to go to ``x`` goes to the open destination instead and the source
    sends one to ``x`` (still one move per unit); then a two-hop exchange ``src -> x -> dst``
    through a third broker (two moves, balance kept); failing that, replicas
    that *must* leave (removed brokers, replicas still to be placed) go to the legal broker
    furthest below its target, and units of ordinary over-target brokers are left (the report then
    shows the imbalance).

CONSTRAINTS
    As in :mod:`select`. Runs on the whole cluster (the leftover units are few; a distributed
    engine runs this on its driver with the rows of the brokers involved).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.placement.arrays import BoolArray, IntArray
from kafka_zk_operator.domain.placement.keys import RANK_BITS, rank_key
from kafka_zk_operator.domain.placement.match import fill_bins
from kafka_zk_operator.domain.placement.state import BrokerContext, WorkingState

#: Leftover units above which the two-hop search is skipped (it is a per-unit search).
_MAX_TWO_HOP_UNITS = 5_000


@dataclass(frozen=True, eq=False)
class Repaired:
    replicas: IntArray
    moved: BoolArray
    unresolved: int  # units left open (balance not reached)
    two_hop: int  # units that cost two moves


def repair(
    replicas: IntArray,
    moved: BoolArray,
    *,
    src: IntArray,
    dst: IntArray,
    count: IntArray,
    movable: BoolArray,
    sizes: IntArray,
    row_hash: np.ndarray,
    ctx: BrokerContext,
    target: IntArray,
) -> Repaired:
    """Fill the open units ``(src, dst, count)`` (any order; merged per pair here)."""
    state = WorkingState(replicas, ctx)
    state.moved = moved.copy()
    if int(count.sum()) == 0:
        return Repaired(state.rep, state.moved, 0, 0)
    n = ctx.n_brokers
    src_left = np.bincount(src, weights=count, minlength=n + 1).round().astype(np.int64)
    dst_left = np.bincount(dst, weights=count, minlength=n + 1).round().astype(np.int64)
    _direct(state, src_left, dst_left, movable, sizes, row_hash)
    _swap_destinations(state, src_left, dst_left, movable)
    bin_src, bin_dst, cap = _pair_up(src_left, dst_left)
    two_hop = 0
    if 0 < int(cap.sum()) <= _MAX_TWO_HOP_UNITS:
        for b in np.flatnonzero(cap > 0):
            while cap[b] > 0 and _two_hop(state, int(bin_src[b]), int(bin_dst[b]), movable, target):
                cap[b] -= 1
                two_hop += 1
    must_leave = (bin_src == ctx.unplaced) | ~np.r_[ctx.eligible, False][bin_src]
    for b in np.flatnonzero((cap > 0) & must_leave):
        while cap[b] > 0:
            _evacuate_one(state, int(bin_src[b]), movable, target)
            cap[b] -= 1
    return Repaired(state.rep, state.moved, int(cap.sum()), two_hop)


def _pair_up(src_left: IntArray, dst_left: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Pair the remaining source and destination units north-west (index order)."""
    srcs: list[int] = []
    dsts: list[int] = []
    caps: list[int] = []
    s_idx = [int(i) for i in np.flatnonzero(src_left > 0)]
    d_idx = [int(i) for i in np.flatnonzero(dst_left > 0)]
    s_left = {i: int(src_left[i]) for i in s_idx}
    d_left = {i: int(dst_left[i]) for i in d_idx}
    i = j = 0
    while i < len(s_idx) and j < len(d_idx):
        a, b = s_idx[i], d_idx[j]
        amount = min(s_left[a], d_left[b])
        srcs.append(a)
        dsts.append(b)
        caps.append(amount)
        s_left[a] -= amount
        d_left[b] -= amount
        if s_left[a] == 0:
            i += 1
        if d_left[b] == 0:
            j += 1
    return _ints(srcs), _ints(dsts), _ints(caps)


def _ints(values: list[int]) -> IntArray:
    return np.array(values, dtype=np.int64)


def _direct(
    state: WorkingState,
    src_left: IntArray,
    dst_left: IntArray,
    movable: BoolArray,
    sizes: IntArray,
    row_hash: np.ndarray,
) -> None:
    """Any legal replica on an open source to any open destination (same rack first)."""
    sources = np.flatnonzero(src_left > 0)
    bins = np.flatnonzero(dst_left > 0)
    if len(sources) == 0 or len(bins) == 0:
        return
    rows, slots = np.nonzero(np.isin(state.rep, sources) & ~state.moved & movable[:, None])
    if len(rows) == 0:
        return
    src = state.rep[rows, slots]
    key = rank_key(slots == 0, sizes[rows], row_hash[rows])
    order = np.argsort((src << RANK_BITS) | key, kind="stable")
    rows, slots, src = rows[order], slots[order], src[order]
    rack = state.ctx.rack_ext
    n_bins = len(bins)
    e_m = np.repeat(np.arange(len(rows)), n_bins)
    e_bin = np.tile(np.arange(n_bins), len(rows))
    # Preference per mover: destinations in the mover's rack first, then by index.
    other_rack = (rack[bins][e_bin] != rack[src][e_m]).astype(np.int64)
    pref = np.lexsort((e_bin, other_rack, e_m))
    e_m, e_bin = e_m[pref], e_bin[pref]
    cap = dst_left[bins].copy()
    fill_bins(
        state,
        m_row=rows,
        m_slot=slots,
        m_src=src,
        e_m=e_m,
        e_bin=e_bin,
        bin_dst=bins,
        bin_cap=cap,
        check_racks=True,
        src_cap=src_left,
    )
    dst_left[bins] = cap


def _swap_destinations(
    state: WorkingState, src_left: IntArray, dst_left: IntArray, movable: BoolArray
) -> None:
    """For an open (s, d): a planned move into x goes to d instead, and s sends a replica to x."""
    budget = _MAX_TWO_HOP_UNITS
    sources = np.flatnonzero(src_left > 0).tolist()
    dests = np.flatnonzero(dst_left > 0).tolist()
    if not sources or not dests:
        return
    n = state.ctx.n_brokers
    m_rows, m_slots = np.nonzero(state.moved & (state.rep >= 0) & (state.rep < n))
    on_source = {s_b: _slots_on(state, s_b, movable) for s_b in sources}
    for s_b in sources:
        for d_b in dests:
            while src_left[s_b] > 0 and dst_left[d_b] > 0 and budget > 0:
                budget -= 1
                used = _swap_one(state, s_b, d_b, m_rows, m_slots, *on_source[s_b])
                if used is None:
                    break
                qi, q_row, q_slot = used
                src_left[s_b] -= 1
                dst_left[d_b] -= 1
                # The replica sent from s is now a planned move too; it left s.
                m_rows = np.r_[m_rows, q_row]
                m_slots = np.r_[m_slots, q_slot]
                rows, slots = on_source[s_b]
                keep = np.arange(len(rows)) != qi
                on_source[s_b] = (rows[keep], slots[keep])


def _swap_one(
    state: WorkingState,
    s_b: int,
    d_b: int,
    m_rows: IntArray,
    m_slots: IntArray,
    q_rows: IntArray,
    q_slots: IntArray,
) -> tuple[int, int, int] | None:
    """One destination swap; returns (index in q, row, slot) of the replica sent from ``s_b``."""
    if len(m_rows) == 0 or len(q_rows) == 0:
        return None
    x = state.rep[m_rows, m_slots]
    ok = (
        (x != d_b)
        & state.not_member(m_rows, np.full(len(m_rows), d_b))
        & state.rack_ok(m_rows, x, np.full(len(m_rows), d_b))
    )
    if not ok.any():
        return None
    for xb in np.unique(x[ok]).tolist():
        if xb == s_b:
            continue
        to_x = state.not_member(q_rows, np.full(len(q_rows), xb)) & state.rack_ok(
            q_rows, np.full(len(q_rows), s_b), np.full(len(q_rows), xb)
        )
        if not to_x.any():
            continue
        cand = np.flatnonzero(ok & (x == xb))
        for qi in np.flatnonzero(to_x).tolist():
            others = cand[m_rows[cand] != q_rows[qi]]
            if len(others):
                mi = int(others[0])
                state.apply(m_rows[mi : mi + 1], m_slots[mi : mi + 1], np.array([d_b]))
                state.apply(q_rows[qi : qi + 1], q_slots[qi : qi + 1], np.array([xb]))
                return qi, int(q_rows[qi]), int(q_slots[qi])
    return None


def _slots_on(state: WorkingState, broker: int, movable: BoolArray) -> tuple[IntArray, IntArray]:
    rows, slots = np.nonzero((state.rep == broker) & ~state.moved & movable[:, None])
    return rows, slots


def _two_hop(state: WorkingState, src: int, dst: int, movable: BoolArray, target: IntArray) -> bool:
    """Move one replica ``src -> x`` and another ``x -> dst`` for some broker ``x``."""
    a_rows, a_slots = _slots_on(state, src, movable)
    if len(a_rows) == 0:
        return False
    for x in np.flatnonzero(state.ctx.eligible):
        xi = int(x)
        if xi in (src, dst):
            continue
        x_rows, x_slots = _slots_on(state, xi, movable)
        if len(x_rows) == 0:
            continue
        to_dst = state.not_member(x_rows, np.full(len(x_rows), dst)) & state.rack_ok(
            x_rows, np.full(len(x_rows), xi), np.full(len(x_rows), dst)
        )
        if not to_dst.any():
            continue
        to_x = state.not_member(a_rows, np.full(len(a_rows), xi)) & state.rack_ok(
            a_rows, np.full(len(a_rows), src), np.full(len(a_rows), xi)
        )
        if not to_x.any():
            continue
        for i in np.flatnonzero(to_x):
            others = np.flatnonzero(to_dst & (x_rows != a_rows[i]))
            if len(others):
                j = int(others[0])
                state.apply(x_rows[j : j + 1], x_slots[j : j + 1], np.array([dst]))
                state.apply(a_rows[i : i + 1], a_slots[i : i + 1], np.array([xi]))
                return True
    return False


def _evacuate_one(state: WorkingState, src: int, movable: BoolArray, target: IntArray) -> None:
    """Move one replica off ``src`` to the legal eligible broker furthest below its target."""
    rows, slots = _slots_on(state, src, movable)
    n = state.ctx.n_brokers
    load = np.bincount(state.rep[(state.rep >= 0) & (state.rep < n)], minlength=n)
    room = np.where(state.ctx.eligible, target - load, np.iinfo(np.int64).min // 2)
    brokers = np.argsort(-room, kind="stable")
    brokers = brokers[state.ctx.eligible[brokers]]
    for i in range(len(rows)):
        row = rows[i : i + 1]
        cands = brokers
        ok = state.not_member(np.repeat(row, len(cands)), cands) & state.rack_ok(
            np.repeat(row, len(cands)), np.full(len(cands), src), cands
        )
        if ok.any():
            state.apply(row, slots[i : i + 1], cands[np.flatnonzero(ok)[:1]])
            return
    raise errors.InvalidSpec(
        "cannot place every replica under the rack rules: a partition has no legal broker left "
        "(too few brokers or racks for its replication factor)"
    )
