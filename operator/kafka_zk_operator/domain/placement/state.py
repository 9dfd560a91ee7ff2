"""Mutable working state of one planning run over a set of rows (all rows, or one group's).

Holds the replica matrix being rewritten, the per-(row, rack) replica counts kept in step with it,
the rack limits of every row, and which slots already received a new broker. The helpers answer
the two questions every stage asks: *may replica slot (p, j) move to broker b?* (not already a
member, rack limits respected) and *apply that move*.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain.placement.arrays import BoolArray, IntArray
from kafka_zk_operator.domain.placement.racks import rack_counts, rack_hi, rack_limits


@dataclass(frozen=True, eq=False)
class BrokerContext:
    """Broker facts every stage needs.

    :ivar rack_ext: ``(N + 1,)`` rack index of each broker in ``[0, K)``; ``K`` for the virtual
        UNPLACED broker (index ``N``) and for brokers of racks that keep no eligible broker.
    :ivar n_racks: ``K``, racks with at least one eligible broker.
    :ivar rack_sizes: ``(K,)`` eligible brokers per rack.
    :ivar eligible: ``(N,)`` brokers that may receive replicas.
    """

    rack_ext: IntArray
    n_racks: int
    rack_sizes: IntArray
    eligible: BoolArray

    @property
    def n_brokers(self) -> int:
        return len(self.eligible)

    @property
    def unplaced(self) -> int:
        """Index of the virtual broker holding replicas still to be placed."""
        return len(self.eligible)


class WorkingState:
    """The replica matrix under construction plus rack bookkeeping (see module docstring)."""

    def __init__(self, replicas: IntArray, ctx: BrokerContext) -> None:
        self.rep = replicas.copy()
        self.ctx = ctx
        k = ctx.n_racks
        rf = (self.rep >= 0).sum(axis=1).astype(np.int64)
        self.lo, hi_row = rack_limits(rf, k)
        self.hi = rack_hi(hi_row, ctx.rack_sizes)
        self.cnt = rack_counts(self.rep, ctx.rack_ext, k)
        self.moved = np.zeros(self.rep.shape, dtype=np.bool_)

    def not_member(self, rows: IntArray, dst: IntArray) -> BoolArray:
        """``dst[i]`` holds no replica of ``rows[i]`` yet."""
        return np.asarray(~(self.rep[rows] == dst[:, None]).any(axis=1), dtype=np.bool_)

    def rack_ok(self, rows: IntArray, src: IntArray, dst: IntArray) -> BoolArray:
        """Moving a replica of ``rows[i]`` from ``src[i]`` to ``dst[i]`` keeps its rack limits.

        A replica still to be placed may go to a rack the partition does not miss only if the
        partition's other unplaced replicas can still cover every rack it misses.
        """
        k = self.ctx.n_racks
        rs = self.ctx.rack_ext[src]
        rd = self.ctx.rack_ext[dst]
        same = rs == rd
        rd_c = np.minimum(rd, k - 1)
        enter = self.cnt[rows, rd_c] < self.hi[rows, rd_c]
        real_src = rs < k
        rs_c = np.minimum(rs, k - 1)
        leave = ~real_src | (self.cnt[rows, rs_c] - 1 >= self.lo[rows])
        ok = same | (enter & leave)
        placing = src == self.ctx.unplaced
        if placing.any():
            r = rows[placing]
            missing = np.maximum(0, self.lo[r, None] - self.cnt[r]).sum(axis=1)
            pending = (self.rep[r] == self.ctx.unplaced).sum(axis=1)
            needed = self.cnt[r, rd_c[placing]] < self.lo[r]
            ok[placing] &= needed | (missing <= pending - 1)
        return np.asarray(ok, dtype=np.bool_)

    def apply(self, rows: IntArray, slots: IntArray, dst: IntArray, *, counted: bool = False) -> None:
        """Move slot ``(rows[i], slots[i])`` to ``dst[i]`` (rows distinct). ``counted``: the rack
        counts already include these moves."""
        if len(rows) == 0:
            return
        src = self.rep[rows, slots]
        if not counted:
            self.count_move(rows, src, dst, +1)
        self.rep[rows, slots] = dst
        self.moved[rows, slots] = True

    def count_move(self, rows: IntArray, src: IntArray, dst: IntArray, sign: int) -> None:
        """Add (``sign=+1``) or undo (``-1``) the rack-count effect of moves ``src -> dst``."""
        k = self.ctx.n_racks
        rs = self.ctx.rack_ext[src]
        rd = self.ctx.rack_ext[dst]
        cross = rs != rd
        flat = self.cnt.reshape(-1)
        into = cross & (rd < k)
        np.add.at(flat, rows[into] * k + rd[into], sign)
        out = cross & (rs < k)
        np.add.at(flat, rows[out] * k + rs[out], -sign)


def first_per_key(keys: IntArray) -> BoolArray:
    """Mask of the first occurrence of each key (order as given)."""
    if len(keys) == 0:
        return np.zeros(0, dtype=np.bool_)
    _, first = np.unique(keys, return_index=True)
    mask = np.zeros(len(keys), dtype=np.bool_)
    mask[first] = True
    return mask


def segment_positions(sorted_keys: IntArray) -> IntArray:
    """Position of each element within its run of equal keys (keys already grouped)."""
    n = len(sorted_keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    return np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
