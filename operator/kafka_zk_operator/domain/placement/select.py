"""Partition-level stage: choose which replicas move and where, one group of partitions at a time.

GOALS
    Realise the group's quotas ``(src, dst, count)`` from :mod:`transport` exactly, moving the
    cheapest replicas: followers before leaders, small partitions before large ones, then a seeded
    hash (the rank of :func:`keys.rank_key`).

CONSTRAINTS
    At most one replica per broker per partition; each partition keeps its rack limits (within
    ``[lo, hi]`` per rack, see :mod:`racks`); only movable rows (selected, not excluded topics)
    move; a slot moves at most once.

ALGORITHM
    1. Candidates: replica slots on a source with a quota in this group, sorted by
       (group, source, rank). A segment is one (group, source).
    2. Rack classes. For each destination rack r', in rack order, each segment picks its next
       candidates that may legally *enter* r' and *leave* their own rack, replicas a rack still
       needs first; picks beyond a partition's room in r' (or below its minimum in the source
       rack) are dropped and re-picked. Then the in-rack class picks freely: an in-rack move
       never changes rack counts.
    3. Matching: every picked mover is matched to the bins (destination brokers) of its segment and
       rack class by :func:`match.fill_bins` (membership checked; a partition never gets a broker
       twice).
    4. Replacement: unmatched movers are released; bins with room take other candidates of the same
       segment that are valid for that exact broker.
    5. Quota units still open are returned as ``leftover`` for the global repair stage.

Every step only reads the group's own rows and quotas, and ties are broken by the rank key and
then by row order, so running the groups one by one (a distributed worker per group, rows in
(topic, partition) order) or all at once (this engine) yields the same moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain.placement.arrays import BoolArray, IntArray
from kafka_zk_operator.domain.placement.keys import RANK_BITS, rank_key
from kafka_zk_operator.domain.placement.match import edges_by_range, fill_bins
from kafka_zk_operator.domain.placement.state import BrokerContext, WorkingState, segment_positions
from kafka_zk_operator.domain.placement.transport import GroupQuotas

#: Re-pick rounds per rack class when picks are dropped for rack limits.
_MAX_PICK_ROUNDS = 8
#: Replacement rounds (step 4).
_MAX_REPLACEMENT_ROUNDS = 3
#: Destination bins each picked mover may try in step 3.
_BIN_WINDOW = 8


@dataclass(frozen=True, eq=False)
class Selection:
    """Result of the partition-level stage for a set of rows."""

    replicas: IntArray
    moved: BoolArray
    leftover: GroupQuotas


def select_moves(
    replicas: IntArray,
    *,
    group: IntArray,
    movable: BoolArray,
    sizes: IntArray,
    row_hash: np.ndarray,
    quotas: GroupQuotas,
    ctx: BrokerContext,
) -> Selection:
    """Run steps 1-5 (module docstring) for the rows given (any union of whole groups)."""
    state = WorkingState(replicas, ctx)
    if quotas.total == 0:
        return Selection(state.rep, state.moved, quotas)
    return _Selector(state, group, movable, sizes, row_hash, quotas).run()


class _Selector:
    def __init__(
        self,
        state: WorkingState,
        group: IntArray,
        movable: BoolArray,
        sizes: IntArray,
        row_hash: np.ndarray,
        quotas: GroupQuotas,
    ) -> None:
        ctx = state.ctx
        self.state = state
        self.quotas = quotas
        self.k = ctx.n_racks
        width = ctx.n_brokers + 1
        q_code = quotas.group * width + quotas.src
        self.seg_codes = np.unique(q_code)
        self.q_seg = np.searchsorted(self.seg_codes, q_code)
        self.q_rack = ctx.rack_ext[quotas.dst]
        n_seg = len(self.seg_codes)
        self.need = np.zeros((n_seg, self.k), dtype=np.int64)
        np.add.at(self.need, (self.q_seg, self.q_rack), quotas.count)
        self.seg_src_rack = ctx.rack_ext[self.seg_codes % width]
        # Step 1: candidates sorted by (segment, rank).
        rows, slots = np.nonzero((state.rep >= 0) & movable[:, None])
        src = state.rep[rows, slots]
        code = group[rows] * width + src
        pos = np.minimum(np.searchsorted(self.seg_codes, code), n_seg - 1)
        hit = self.seg_codes[pos] == code
        rows, slots, src, seg = rows[hit], slots[hit], src[hit], pos[hit]
        key = rank_key(slots == 0, sizes[rows], row_hash[rows])
        order = np.argsort((seg << RANK_BITS) | key, kind="stable")
        self.rows, self.slots, self.src, self.seg = rows[order], slots[order], src[order], seg[order]
        self.src_rack = ctx.rack_ext[self.src]
        self.seg_start = np.searchsorted(self.seg, np.arange(n_seg + 1))
        self.selected = np.zeros(len(self.rows), dtype=np.bool_)
        self.cls = np.full(len(self.rows), -1, dtype=np.int64)

    def run(self) -> Selection:
        for rack in range(self.k):
            self._cross_class(rack)
        self._in_rack_class()
        cap = self.quotas.count.copy()
        self._match(cap)
        for _ in range(_MAX_REPLACEMENT_ROUNDS):
            if not self._replace(cap):
                break
        open_ = cap > 0
        q = self.quotas
        leftover = GroupQuotas(q.group[open_], q.src[open_], q.dst[open_], cap[open_], q.n_groups)
        return Selection(self.state.rep, self.state.moved, leftover)

    # -- step 2 -------------------------------------------------------------------------------
    def _pick(self, mask: BoolArray, need_seg: IntArray) -> IntArray:
        valid = mask & ~self.selected
        before = np.concatenate(([0], np.cumsum(valid)))
        rank = before[:-1] - before[self.seg_start[self.seg]]
        return np.flatnonzero(valid & (rank < need_seg[self.seg]))

    def _cross_class(self, rack: int) -> None:
        k, st = self.k, self.state
        need_seg = np.where(self.seg_src_rack != rack, self.need[:, rack], 0)
        if not need_seg.any():
            return
        filled = np.zeros(len(need_seg), dtype=np.int64)
        banned = np.zeros(len(self.rows), dtype=np.bool_)
        rows, src_rack = self.rows, self.src_rack
        real = src_rack < k
        src_c = np.minimum(src_rack, k - 1)
        placing = self.src == st.ctx.unplaced
        for _ in range(_MAX_PICK_ROUNDS):
            remaining = need_seg - filled
            if not remaining.any():
                break
            enter = st.cnt[rows, rack] < st.hi[rows, rack]
            leave = ~real | (st.cnt[rows, src_c] - 1 >= st.lo[rows])
            base = enter & leave & ~banned & (src_rack != rack)
            needy = st.cnt[rows, rack] < st.lo[rows]
            if placing.any():
                spare = self._spare_unplaced()
                base &= ~placing | needy | (spare[rows] >= 1)
            first = self._pick(base & needy, remaining)
            self.selected[first] = True
            rest = remaining - np.bincount(self.seg[first], minlength=len(remaining))
            second = self._pick(base & ~needy, rest)
            self.selected[first] = False
            take = np.sort(np.concatenate((first, second)))
            if len(take) == 0:
                break
            kept, dropped = self._respect_limits(take, rack)
            banned[dropped] = True
            if len(kept):
                self.selected[kept] = True
                self.cls[kept] = rack
                np.add.at(st.cnt, (rows[kept], np.full(len(kept), rack)), 1)
                out = kept[real[kept]]
                np.add.at(st.cnt, (rows[out], src_rack[out]), -1)
                filled += np.bincount(self.seg[kept], minlength=len(filled))

    def _spare_unplaced(self) -> IntArray:
        """Per row: unplaced replicas not yet picked, minus the racks the row still misses."""
        st = self.state
        pend = (self.src == st.ctx.unplaced) & ~self.selected
        n_rows = len(st.rep)
        pending = np.bincount(self.rows[pend], minlength=n_rows)
        missing = np.maximum(0, st.lo[:, None] - st.cnt).sum(axis=1)
        spare: IntArray = pending - missing
        return spare

    def _respect_limits(self, take: IntArray, rack: int) -> tuple[IntArray, IntArray]:
        """Split picks (priority order) into kept and dropped by each partition's rack room."""
        st, k = self.state, self.k
        r = self.rows[take]
        order = np.lexsort((take, r))
        rank = np.empty(len(take), dtype=np.int64)
        rank[order] = segment_positions(r[order])
        ok = rank < (st.hi[r, rack] - st.cnt[r, rack])
        placing = self.src[take] == st.ctx.unplaced
        if placing.any():
            # Unplaced picks into this rack: one if the row misses it, plus its spare ones.
            spare = self._spare_unplaced()
            allowed = (st.cnt[r, rack] < st.lo[r]).astype(np.int64) + np.maximum(0, spare[r])
            cand = np.flatnonzero(ok & placing)
            order_p = cand[np.lexsort((take[cand], r[cand]))]
            rank_p = segment_positions(r[order_p])
            ok[order_p[rank_p >= allowed[order_p]]] = False
        s_r = self.src_rack[take]
        real = s_r < k
        key = r * (k + 1) + s_r
        cand = np.flatnonzero(ok)
        order2 = cand[np.lexsort((take[cand], key[cand]))]
        rank2 = segment_positions(key[order2])
        room_out = np.where(
            real[order2], st.cnt[r[order2], np.minimum(s_r[order2], k - 1)] - st.lo[r[order2]], 1 << 40
        )
        ok2 = np.zeros(len(take), dtype=np.bool_)
        ok2[order2] = rank2 < room_out
        return take[ok2], take[~ok2]

    def _in_rack_class(self) -> None:
        k = self.k
        n_seg = len(self.seg_codes)
        has_rack = self.seg_src_rack < k
        need_seg = np.zeros(n_seg, dtype=np.int64)
        need_seg[has_rack] = self.need[np.flatnonzero(has_rack), self.seg_src_rack[has_rack]]
        if not need_seg.any():
            return
        take = self._pick(np.ones(len(self.rows), dtype=np.bool_), need_seg)
        self.selected[take] = True
        self.cls[take] = self.src_rack[take]

    # -- steps 3 and 4 ------------------------------------------------------------------------
    def _match(self, cap: IntArray) -> None:
        k, st = self.k, self.state
        movers = np.flatnonzero(self.selected)
        if len(movers) == 0:
            return
        q_key = self.q_seg * k + self.q_rack
        m_key = self.seg[movers] * k + self.cls[movers]
        lo = np.searchsorted(q_key, m_key, "left")
        hi = np.searchsorted(q_key, m_key, "right")
        # Each mover sees a window of its segment's bins, starting at bin (i mod #bins), so every
        # destination gets a mix of movers (leaders' replicas included), not one slice of the
        # rank, and a source sending to many brokers (UNPLACED) does not create #movers x #bins
        # edges. Movers left unmatched are re-picked by the replacement step.
        n_bins = np.maximum(hi - lo, 1)
        window = np.minimum(n_bins, _BIN_WINDOW)
        e_m, offset = edges_by_range(np.zeros(len(movers), dtype=np.int64), window)
        # index within the mover's own segment (group-local), so each group's moves depend on that
        # group alone: the contract the Spark job relies on (plan() == per-group execution)
        start = segment_positions(self.seg[movers]) % n_bins
        e_bin = lo[e_m] + (start[e_m] + offset) % n_bins[e_m]
        got = fill_bins(
            st,
            m_row=self.rows[movers],
            m_slot=self.slots[movers],
            m_src=self.src[movers],
            e_m=e_m,
            e_bin=e_bin,
            bin_dst=self.quotas.dst,
            bin_cap=cap,
            check_racks=False,
        )
        lost = movers[got < 0]
        if len(lost):
            cross = self.cls[lost] != self.src_rack[lost]
            lost_x = lost[cross]
            np.add.at(st.cnt, (self.rows[lost_x], self.cls[lost_x]), -1)
            back = lost_x[self.src_rack[lost_x] < k]
            np.add.at(st.cnt, (self.rows[back], self.src_rack[back]), 1)
            self.selected[lost] = False
            self.cls[lost] = -1

    def _replace(self, cap: IntArray) -> bool:
        open_bins = np.flatnonzero(cap > 0)
        if len(open_bins) == 0:
            return False
        seg = self.q_seg[open_bins]
        lo, hi = self.seg_start[seg], self.seg_start[seg + 1]
        e_bin_idx, e_cand = edges_by_range(lo, hi)
        e_bin = open_bins[e_bin_idx]
        keep = ~self.selected[e_cand] & ~self.state.moved[self.rows[e_cand], self.slots[e_cand]]
        e_bin, e_cand = e_bin[keep], e_cand[keep]
        if len(e_cand) == 0:
            return False
        order = np.lexsort((e_bin, e_cand))
        e_bin, e_cand = e_bin[order], e_cand[order]
        movers, e_m = np.unique(e_cand, return_inverse=True)
        got = fill_bins(
            self.state,
            m_row=self.rows[movers],
            m_slot=self.slots[movers],
            m_src=self.src[movers],
            e_m=e_m.astype(np.int64),
            e_bin=e_bin,
            bin_dst=self.quotas.dst,
            bin_cap=cap,
            check_racks=True,
        )
        done = movers[got >= 0]
        self.selected[done] = True
        return bool(len(done))
