"""Exact minimum-move placement for small instances (reference §5.4), without third-party solvers.

GOALS
    The fewest replica moves (new partition-broker memberships) that reach a balanced placement:
    used to *prove* a plan optimal when it does not meet M_LB, and to replace it when it is not.

CONSTRAINTS (the network of reference §5.4)
    ``S -> p`` (capacity RF'), ``p -> (p, r)`` (at least ``lo``, at most ``hi`` replicas per rack;
    the minimum is a parallel arc of cost ``-BIG``), ``(p, r) -> b`` (capacity 1, cost 0 if ``b``
    holds ``p`` now, else 1), ``b -> T`` (``lo_b`` minus the replicas that may not move) and
    ``b -> class -> T`` (the ``+1`` units of the balance band, shared by the brokers of a class).
    Any maximum flow fills every sink arc, so every broker lands inside its band.

ALGORITHM
    Primal-dual min-cost flow: Dijkstra on reduced costs (potentials start from the layered DAG),
    then a Dinic blocking flow on the zero-reduced-cost arcs, repeated. Integral capacities give
    an integral optimum. Size is O(P * N) arcs, so callers only use it below a size limit.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain.placement.arrays import EMPTY, IntArray
from kafka_zk_operator.domain.placement.racks import rack_hi, rack_limits
from kafka_zk_operator.domain.placement.state import BrokerContext
from kafka_zk_operator.domain.placement.targets import Targets

_INF = float("inf")


@dataclass(frozen=True, eq=False)
class ExactResult:
    replicas: IntArray  # (P_movable, width) new rows, kept replicas first in their old order
    moves: int


def exact_placement(
    orig: IntArray,
    rf_new: IntArray,
    *,
    ctx: BrokerContext,
    targets: Targets,
    fixed_load: IntArray,
) -> ExactResult | None:
    """Solve the network of the module docstring for the movable rows ``orig`` (broker indexes,
    EMPTY padded; replicas on removed brokers or UNPLACED count as not kept). ``None`` when
    infeasible."""
    p_count = len(orig)
    k = ctx.n_racks
    elig = np.flatnonzero(ctx.eligible)
    n_el = len(elig)
    lo_row, hi_row = rack_limits(rf_new, k)
    hi_pr = rack_hi(hi_row, ctx.rack_sizes)
    big = int(rf_new.sum()) + 1
    # Node numbering in topological order: S, partitions, (p, r), brokers, classes, T.
    n_class = len(targets.class_extra)
    s_node = 0
    p0 = 1
    pr0 = p0 + p_count
    b0 = pr0 + p_count * k
    c0 = b0 + n_el
    t_node = c0 + n_class
    g = _Graph(t_node + 1)
    broker_node = {int(b): b0 + i for i, b in enumerate(elig)}
    by_rack = [[int(b) for b in elig if ctx.rack_ext[b] == r] for r in range(k)]
    pb_arcs: list[tuple[int, int, int]] = []  # (row, broker, arc id)
    for i in range(p_count):
        g.add(s_node, p0 + i, int(rf_new[i]), 0)
        members = {int(b) for b in orig[i] if b >= 0}
        for r in range(k):
            node = pr0 + i * k + r
            low, high = int(lo_row[i]), int(hi_pr[i, r])
            if low > 0:
                g.add(p0 + i, node, low, -big)
            if high - low > 0:
                g.add(p0 + i, node, high - low, 0)
            for b in by_rack[r]:
                arc = g.add(node, broker_node[b], 1, 0 if b in members else 1)
                pb_arcs.append((i, b, arc))
    for i, b_np in enumerate(elig):
        bi = int(b_np)
        base = int(targets.lo[bi] - fixed_load[bi])
        if base < 0:
            return None
        if base:
            g.add(b0 + i, t_node, base, 0)
        extra = int(targets.hi[bi] - targets.lo[bi])
        if extra and targets.klass[bi] >= 0:
            g.add(b0 + i, c0 + int(targets.klass[bi]), extra, 0)
    for c in range(n_class):
        if targets.class_extra[c]:
            g.add(c0 + c, t_node, int(targets.class_extra[c]), 0)
    required = int(rf_new.sum())
    flow = g.min_cost_flow(s_node, t_node, required)
    if flow < required:
        return None
    width = max(int(rf_new.max(initial=0)), orig.shape[1])
    out = np.full((p_count, width), EMPTY, dtype=np.int64)
    chosen: list[list[int]] = [[] for _ in range(p_count)]
    for i, b, arc in pb_arcs:
        if g.cap[arc] == 0:
            chosen[i].append(b)
    moves = 0
    for i in range(p_count):
        new_set = set(chosen[i])
        kept = [int(b) for b in orig[i] if b >= 0 and int(b) in new_set]
        added = sorted(new_set.difference(kept))
        moves += len(added)
        row = kept + added
        out[i, : len(row)] = row
    # Lower-bound arcs must be saturated, or the rack minimums were not met.
    for i in range(p_count):
        if lo_row[i] > 0:
            racks = {int(ctx.rack_ext[b]) for b in chosen[i]}
            if len(racks) < k:
                return None
    return ExactResult(out, moves)


class _Graph:
    """Residual graph with paired arcs (arc ``e`` and its reverse ``e ^ 1``)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.head: list[list[int]] = [[] for _ in range(n)]
        self.to: list[int] = []
        self.cap: list[int] = []
        self.cost: list[int] = []

    def add(self, u: int, v: int, cap: int, cost: int) -> int:
        arc = len(self.to)
        self.head[u].append(arc)
        self.to.append(v)
        self.cap.append(cap)
        self.cost.append(cost)
        self.head[v].append(arc + 1)
        self.to.append(u)
        self.cap.append(0)
        self.cost.append(-cost)
        return arc

    def _initial_potentials(self, source: int) -> list[float]:
        """Shortest distances on the initial DAG (arcs go from lower to higher node numbers)."""
        dist = [_INF] * self.n
        dist[source] = 0
        for u in range(self.n):
            du = dist[u]
            if du == _INF:
                continue
            for arc in self.head[u]:
                if self.cap[arc] > 0:
                    v = self.to[arc]
                    nd = du + self.cost[arc]
                    if nd < dist[v]:
                        dist[v] = nd
        return dist

    def min_cost_flow(self, source: int, sink: int, required: int) -> int:
        h = self._initial_potentials(source)
        h = [0.0 if x == _INF else x for x in h]
        flow = 0
        to, cap, cost, head = self.to, self.cap, self.cost, self.head
        while flow < required:
            dist = [_INF] * self.n
            dist[source] = 0
            heap = [(0.0, source)]
            while heap:
                d, u = heapq.heappop(heap)
                if d > dist[u]:
                    continue
                hu = h[u]
                for arc in head[u]:
                    if cap[arc] > 0:
                        v = to[arc]
                        nd = d + cost[arc] + hu - h[v]
                        if nd < dist[v]:
                            dist[v] = nd
                            heapq.heappush(heap, (nd, v))
            if dist[sink] == _INF:
                break
            limit = dist[sink]
            for v in range(self.n):
                h[v] += min(dist[v], limit)
            pushed = self._blocking_flows(source, sink, h, required - flow)
            if pushed == 0:
                break
            flow += pushed
        return flow

    def _blocking_flows(self, source: int, sink: int, h: list[float], limit: int) -> int:
        to, cap, cost, head = self.to, self.cap, self.cost, self.head
        total = 0
        while total < limit:
            level = [-1] * self.n
            level[source] = 0
            queue = deque([source])
            while queue:
                u = queue.popleft()
                for arc in head[u]:
                    v = to[arc]
                    if cap[arc] > 0 and level[v] < 0 and cost[arc] + h[u] - h[v] == 0:
                        level[v] = level[u] + 1
                        queue.append(v)
            if level[sink] < 0:
                break
            pointer = [0] * self.n
            while total < limit:
                pushed = self._augment(source, sink, level, pointer, h, limit - total)
                if pushed == 0:
                    break
                total += pushed
        return total

    def _augment(
        self, source: int, sink: int, level: list[int], pointer: list[int], h: list[float], limit: int
    ) -> int:
        """One augmenting path in the level graph (iterative DFS with current-arc pointers)."""
        to, cap, cost, head = self.to, self.cap, self.cost, self.head
        path: list[int] = []
        u = source
        while True:
            if u == sink:
                amount = min([limit, *(cap[a] for a in path)])
                for a in path:
                    cap[a] -= amount
                    cap[a ^ 1] += amount
                return amount
            advanced = False
            arcs = head[u]
            while pointer[u] < len(arcs):
                arc = arcs[pointer[u]]
                v = to[arc]
                if cap[arc] > 0 and level[v] == level[u] + 1 and cost[arc] + h[u] - h[v] == 0:
                    path.append(arc)
                    u = v
                    advanced = True
                    break
                pointer[u] += 1
            if advanced:
                continue
            if not path:
                return 0
            level[u] = -1  # dead end
            arc = path.pop()
            u = to[arc ^ 1]
            pointer[u] += 1
