"""Helpers for the placement tests: an independent exact solver (networkx) and invariant checks."""

from __future__ import annotations

import networkx as nx
import numpy as np

from kafka_zk_operator.domain.placement import Plan
from kafka_zk_operator.domain.placement.racks import rack_hi, rack_limits, violations


def exact_moves_networkx(result: Plan) -> int | None:
    """Minimum moves reaching the plan's balance band, by networkx's network simplex.

    Independent formulation of reference §5.4 with real lower bounds (demand transformation):
    ``S -> p`` (RF'), ``p -> (p, r)`` in ``[lo, hi]``, ``(p, r) -> b`` (1; cost 0 when kept, else
    1), ``b -> T`` (band minimum minus fixed replicas), ``b -> class -> T`` (the band's +1 units).
    """
    cluster, tg = result.cluster, result.targets
    eligible, movable = result.eligible, result.movable
    n = cluster.n_brokers
    rows = np.flatnonzero(movable)
    rf_new = (result.replicas[rows] >= 0).sum(axis=1)
    el_racks = np.unique(cluster.broker_rack[eligible])
    k = len(el_racks)
    rack_of = {
        int(b): int(np.searchsorted(el_racks, cluster.broker_rack[b])) for b in np.flatnonzero(eligible)
    }
    sizes = np.bincount(np.array(list(rack_of.values())), minlength=k)
    lo, hi_row = rack_limits(rf_new, k)
    hi = rack_hi(hi_row, sizes)
    fixed = np.bincount(cluster.replicas[~movable][cluster.replicas[~movable] >= 0], minlength=n)
    g = nx.DiGraph()
    demand: dict[object, int] = {}

    def arc(u: object, v: object, low: int, cap: int, cost: int) -> None:
        if cap < low:
            raise AssertionError("bad bounds")
        demand[u] = demand.get(u, 0) + low
        demand[v] = demand.get(v, 0) - low
        if cap - low > 0:
            g.add_edge(u, v, capacity=cap - low, weight=cost)

    total = int(rf_new.sum())
    demand["S"] = demand.get("S", 0) - total
    demand["T"] = demand.get("T", 0) + total
    for i, row in enumerate(rows):
        members = {int(b) for b in cluster.replicas[row] if b >= 0}
        arc("S", ("p", i), int(rf_new[i]), int(rf_new[i]), 0)
        for r in range(k):
            arc(("p", i), ("pr", i, r), int(lo[i]), int(hi[i, r]), 0)
        for b, r in rack_of.items():
            arc(("pr", i, r), ("b", b), 0, 1, 0 if b in members else 1)
    for b in rack_of:
        base = int(tg.lo[b] - fixed[b])
        arc(("b", b), "T", base, base, 0)
        if tg.hi[b] > tg.lo[b] and tg.klass[b] >= 0:
            arc(("b", b), ("c", int(tg.klass[b])), 0, int(tg.hi[b] - tg.lo[b]), 0)
    for c, extra in enumerate(tg.class_extra.tolist()):
        if extra:
            arc(("c", c), "T", int(extra), int(extra), 0)
    for node, d in demand.items():
        g.add_node(node, demand=d)
    try:
        flow = nx.min_cost_flow(g)
    except nx.NetworkXUnfeasible:
        return None
    return int(nx.cost_of_flow(g, flow))


def check_invariants(result: Plan) -> None:
    """Properties every plan must have, recomputed from the matrices."""
    after = result.replicas
    cluster = result.cluster
    report = result.report
    # No duplicate broker in a partition.
    ordered = np.sort(np.where(after >= 0, after, -np.arange(1, after.shape[1] + 1)[None, :]), axis=1)
    assert not (ordered[:, 1:] == ordered[:, :-1]).any(), "duplicate replicas"
    assert report.duplicates_after == 0
    # Removed / ineligible brokers receive nothing and end empty.
    assert not np.isin(after[after >= 0], np.flatnonzero(~result.eligible)).any(), (
        "replica left on a removed broker"
    )
    # Unselected rows are untouched.
    fixed = ~result.movable
    w = min(after.shape[1], cluster.replicas.shape[1])
    assert np.array_equal(after[fixed, :w], cluster.replicas[fixed, :w]), "an excluded partition changed"
    # Selected partitions span min(RF, racks) racks (unselected ones are not touched at all).
    el_racks = np.unique(cluster.broker_rack[result.eligible])
    remap = np.full(cluster.n_racks + 1, len(el_racks))
    remap[el_racks] = np.arange(len(el_racks))
    rack_ext = remap[np.r_[cluster.broker_rack, cluster.n_racks]]
    bad = violations(after, rack_ext, len(el_racks)) & result.movable
    assert not bad.any(), f"rack violation in selected rows {np.flatnonzero(bad)[:5]}"
    assert report.moves >= report.m_lb
    if report.unresolved_units == 0:
        assert report.balanced, f"not balanced: {report.notes}"
