"""Broker-level stage, part 2: who sends how many replicas to whom, split into per-group quotas.

GOALS
    Ship every broker's excess (``load - target``; all of it for removed brokers and for the
    virtual UNPLACED broker) to brokers with a deficit, keeping replicas inside their rack whenever
    possible (an in-rack move never changes a partition's rack counts, so it is always rack-valid
    when RF <= racks), and cross racks only for a rack's net surplus.

CONSTRAINTS
    Rack-to-rack amounts respect (estimates of) how many replicas may legally cross: a replica of
    partition p may enter rack r' only while p has fewer than ``hi`` replicas there, and may leave
    rack r only while p keeps ``lo`` there. Replicas still to be placed that a rack *needs* (a
    partition below its rack minimum) are routed to that rack first.

ALGORITHM
    1. Rack level (K x K, tiny): needs of UNPLACED first, then in-rack amounts
       ``min(out_r, in_r)``, then the surpluses by a max-flow over rack pairs with the legal-crossing
       estimates as capacities (anything left over is sent anyway; the partition-level repair
       deals with it).
    2. Broker level: each rack pair's amount is split over its senders and over its receivers in
       proportion to what each still has to send / receive (largest remainder), and the two splits
       are paired north-west-corner, giving flows ``f[a, b]`` (at most ``#senders + #receivers``
       per pair). Every receiver thus gets its share from every rack and sender (this keeps
       partner brokers varied, which later leader balancing relies on).
    3. Groups (:func:`group_quotas`): sender ``a``'s excess is apportioned to groups in proportion
       to the movable replicas each group has on ``a`` (largest remainder); its units are then
       interleaved by group (unit i of a group with E units sits at (2i + 1) / 2E) and laid over
       ``a``'s flows in order, so every group gets its proportional share of every destination and
       the margins add up exactly. The result, ``(group, src, dst, count)``, is the contract with
       the partition-level stage.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain.placement.arrays import IntArray


@dataclass(frozen=True, eq=False)
class Flows:
    """Broker-level flows (``src`` may be the virtual UNPLACED broker)."""

    src: IntArray
    dst: IntArray
    count: IntArray


@dataclass(frozen=True, eq=False)
class GroupQuotas:
    """Per-group flows, sorted by (group, src, dst rack, dst): the partition-level stage's input."""

    group: IntArray
    src: IntArray
    dst: IntArray
    count: IntArray
    n_groups: int

    def of_group(self, group: int) -> GroupQuotas:
        """The rows of one group (what a distributed worker needs besides its partitions)."""
        mask = self.group == group
        return GroupQuotas(self.group[mask], self.src[mask], self.dst[mask], self.count[mask], self.n_groups)

    @property
    def total(self) -> int:
        return int(self.count.sum())


def broker_flows(
    *,
    excess: IntArray,
    deficit: IntArray,
    rack_ext: IntArray,
    n_racks: int,
    crossing: IntArray,
    needs: IntArray,
) -> Flows:
    """Steps 1-2 of the module docstring.

    :param excess: ``(N + 1,)`` replicas each broker (last: UNPLACED) must shed.
    :param deficit: ``(N,)`` replicas each broker must gain; ``excess.sum() == deficit.sum()``.
    :param rack_ext: ``(N + 1,)`` rack of each broker, ``n_racks`` for UNPLACED.
    :param crossing: ``(K + 1, K)`` estimated replicas that may legally move from rack r to r'.
    :param needs: ``(K,)`` UNPLACED replicas that must land in each rack.
    """
    k = n_racks
    n = len(deficit)
    out = np.bincount(rack_ext, weights=excess, minlength=k + 1).round().astype(np.int64)
    inn = np.bincount(rack_ext[:n], weights=deficit, minlength=k + 1)[:k].round().astype(np.int64)
    amount = np.zeros((k + 1, k), dtype=np.int64)
    # UNPLACED needs first.
    for r in range(k):
        take = int(min(needs[r], inn[r], out[k] - amount[k].sum()))
        amount[k, r] += max(0, take)
    inn_left = inn - amount[k]
    for r in range(k):
        amount[r, r] = min(out[r], inn_left[r])
    exports = out - np.r_[np.diag(amount), 0] - np.r_[np.zeros(k, np.int64), amount[k].sum()]
    imports = inn - amount.sum(axis=0)
    cap = crossing.copy()
    cap[np.arange(k), np.arange(k)] = 0
    cross = _max_flow_transport(exports, imports, cap)
    amount += cross
    # Whatever the capacities could not carry goes anyway (north-west over rack pairs).
    exports = exports - cross.sum(axis=1)
    imports = imports - cross.sum(axis=0)
    for src_rack in range(k + 1):
        for dst_rack in range(k):
            move = int(min(exports[src_rack], imports[dst_rack]))
            if move > 0:
                amount[src_rack, dst_rack] += move
                exports[src_rack] -= move
                imports[dst_rack] -= move

    send = excess.astype(np.int64).copy()
    recv = deficit.astype(np.int64).copy()
    src_l: list[IntArray] = []
    dst_l: list[IntArray] = []
    cnt_l: list[IntArray] = []
    senders = [np.flatnonzero((rack_ext == r) & (excess > 0)) for r in range(k + 1)]
    receivers = [np.flatnonzero((rack_ext[:n] == r) & (deficit > 0)) for r in range(k)]
    pairs = [(k, r) for r in range(k)] + [(r, r) for r in range(k)]
    pairs += [(a, b) for a in range(k + 1) for b in range(k) if a != b and a != k]
    pairs += [(k, r) for r in range(k)]  # UNPLACED beyond its needs
    for src_rack, dst_rack in pairs:
        quota = int(amount[src_rack, dst_rack])
        if quota <= 0:
            continue
        s, d, c = _north_west(senders[src_rack], receivers[dst_rack], send, recv, quota)
        amount[src_rack, dst_rack] -= int(c.sum())
        src_l.append(s)
        dst_l.append(d)
        cnt_l.append(c)
    if not src_l:
        empty = np.zeros(0, dtype=np.int64)
        return Flows(empty, empty, empty)
    return Flows(np.concatenate(src_l), np.concatenate(dst_l), np.concatenate(cnt_l))


def _north_west(
    senders: IntArray, receivers: IntArray, send: IntArray, recv: IntArray, quota: int
) -> tuple[IntArray, IntArray, IntArray]:
    """Split ``quota`` over senders and receivers in proportion to ``send``/``recv``, then pair."""
    out_share = _apportion(quota, send[senders])
    in_share = _apportion(quota, recv[receivers])
    src: list[int] = []
    dst: list[int] = []
    cnt: list[int] = []
    i = j = 0
    left_out = out_share.tolist()
    left_in = in_share.tolist()
    while i < len(senders) and j < len(receivers):
        if left_out[i] <= 0:
            i += 1
            continue
        if left_in[j] <= 0:
            j += 1
            continue
        move = min(left_out[i], left_in[j])
        src.append(int(senders[i]))
        dst.append(int(receivers[j]))
        cnt.append(move)
        left_out[i] -= move
        left_in[j] -= move
    send[senders] -= out_share
    recv[receivers] -= in_share
    return (np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), np.array(cnt, dtype=np.int64))


def _apportion(total: int, weights: IntArray) -> IntArray:
    """Largest-remainder split of ``total`` in proportion to ``weights`` (never above a weight)."""
    w = np.maximum(weights.astype(np.int64), 0)
    whole = int(w.sum())
    if whole == 0 or total <= 0:
        return np.zeros(len(w), dtype=np.int64)
    total = min(total, whole)
    base = w * total // whole
    short = total - int(base.sum())
    if short:
        frac = w * total % whole
        order = np.lexsort((np.arange(len(w)), -frac))
        base[order[:short]] += 1
    return base


def _max_flow_transport(supply: IntArray, demand: IntArray, cap: IntArray) -> IntArray:
    """Integral transport ``x[i, j] <= cap[i, j]`` maximising the total shipped (Edmonds-Karp)."""
    n_src, n_dst = cap.shape
    source, sink = n_src + n_dst, n_src + n_dst + 1
    size = sink + 1
    residual = np.zeros((size, size), dtype=np.int64)
    residual[source, :n_src] = np.maximum(supply, 0)
    residual[:n_src, n_src : n_src + n_dst] = np.maximum(cap, 0)
    residual[n_src : n_src + n_dst, sink] = np.maximum(demand, 0)
    original = residual.copy()
    while True:
        parent = [-1] * size
        parent[source] = source
        queue = deque([source])
        while queue and parent[sink] < 0:
            node = queue.popleft()
            for nxt in np.flatnonzero(residual[node] > 0):
                nxt_i = int(nxt)
                if parent[nxt_i] < 0:
                    parent[nxt_i] = node
                    queue.append(nxt_i)
        if parent[sink] < 0:
            break
        bottleneck = None
        node = sink
        while node != source:
            prev = parent[node]
            value = int(residual[prev, node])
            bottleneck = value if bottleneck is None else min(bottleneck, value)
            node = prev
        assert bottleneck is not None
        node = sink
        while node != source:
            prev = parent[node]
            residual[prev, node] -= bottleneck
            residual[node, prev] += bottleneck
            node = prev
    flow = original - residual
    shipped: IntArray = np.maximum(flow[:n_src, n_src : n_src + n_dst], 0)
    return shipped


def group_quotas(flows: Flows, movable_per_group: IntArray, rack_ext: IntArray) -> GroupQuotas:
    """Step 3 of the module docstring.

    :param movable_per_group: ``(G, N + 1)`` movable replicas of each group on each broker
        (for UNPLACED: the group's unplaced replicas).
    """
    n_groups, width = movable_per_group.shape
    if len(flows.src) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return GroupQuotas(empty, empty, empty, empty, n_groups)
    excess = np.bincount(flows.src, weights=flows.count, minlength=width).round().astype(np.int64)
    held = movable_per_group.sum(axis=0)
    if np.any(excess > held):
        raise AssertionError("group_quotas: a broker must shed more replicas than it holds")
    # Largest-remainder apportionment of excess[a] over groups, proportional to movable_per_group[:, a].
    with np.errstate(divide="ignore", invalid="ignore"):
        numer = movable_per_group * excess[None, :]
        base = np.where(held[None, :] > 0, numer // np.maximum(held, 1)[None, :], 0)
        frac = np.where(held[None, :] > 0, numer % np.maximum(held, 1)[None, :], 0)
    short = excess - base.sum(axis=0)
    # For each broker, the `short` groups with the largest remainders get one more (ties: lower group).
    g_idx = np.tile(np.arange(n_groups), width)  # column-major layout: entry c * G + g
    c_idx = np.repeat(np.arange(width), n_groups)
    order = np.lexsort((g_idx, -frac.T.ravel(), c_idx))
    ranks = np.empty(n_groups * width, dtype=np.int64)
    ranks[order] = _segment_positions(c_idx[order])
    apportioned = base + (short[None, :] > ranks.reshape(width, n_groups).T).astype(np.int64)

    # Units: (src, time, group), laid over the src's flows in order.
    nz_g, nz_a = np.nonzero(apportioned)
    per = apportioned[nz_g, nz_a]
    units_src = np.repeat(nz_a, per)
    units_grp = np.repeat(nz_g, per)
    starts = np.repeat(np.cumsum(per) - per, per)
    i = np.arange(len(units_src)) - starts
    time = (2 * i + 1) / (2 * np.repeat(per, per)).astype(np.float64)
    order_u = np.lexsort((units_grp, time, units_src))
    units_src, units_grp = units_src[order_u], units_grp[order_u]
    # Flows of each src in their given order, laid out src by src.
    f_order = np.argsort(flows.src, kind="stable")
    f_src, f_dst, f_cnt = flows.src[f_order], flows.dst[f_order], flows.count[f_order]
    ends = np.cumsum(f_cnt)
    position = np.arange(len(units_src))
    which = np.searchsorted(ends, position, side="right")
    assert bool(np.all(f_src[which] == units_src)), "group_quotas: units and flows disagree"
    units_dst = f_dst[which]
    k = int(rack_ext.max()) + 2
    dst_rack = rack_ext[units_dst]
    key = ((units_grp * width + units_src) * k + dst_rack) * width + units_dst
    uniq, counts = np.unique(key, return_counts=True)
    dst = uniq % width
    rest = uniq // width // k
    return GroupQuotas(
        group=(rest // width).astype(np.int64),
        src=(rest % width).astype(np.int64),
        dst=dst.astype(np.int64),
        count=counts.astype(np.int64),
        n_groups=n_groups,
    )


def _segment_positions(sorted_keys: IntArray) -> IntArray:
    n = len(sorted_keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    return np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
