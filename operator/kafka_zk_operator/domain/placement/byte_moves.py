"""Replica moves of the byte balance: the movable replicas of each broker by size, and the mover.

:class:`Candidates` keeps each broker's movable replicas sorted by size and knows which are still
there; :class:`ByteMover` picks legal replicas of about the asked size on a giver (one replica per
partition and broker, the partition's rack limits kept, replicas still to be placed still placeable)
and moves, swaps or trades them, keeping bytes and replica counts per broker in step. The choices
of which brokers give and take are :mod:`~kafka_zk_operator.domain.placement.byte_balance`'s.
"""

from __future__ import annotations

import numpy as np

from kafka_zk_operator.domain.placement.arrays import BoolArray, IntArray
from kafka_zk_operator.domain.placement.byte_targets import FloatArray
from kafka_zk_operator.domain.placement.state import WorkingState

#: Replicas of one broker looked at per attempt before another broker is tried.
_SCAN_LIMIT = 64


class Candidates:
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


class ByteMover:
    """Finds legal replicas of about the asked size on a giver and moves them to a taker."""

    def __init__(
        self, state: WorkingState, cand: Candidates, sizes: IntArray, held: FloatArray, count: IntArray
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
