"""Vectorised greedy b-matching of replica movers to destination bins, used by every stage.

GOALS / CONSTRAINTS
    Each mover (a replica slot that should change broker) gets at most one bin (a destination
    broker with a capacity); a bin takes at most its capacity; a partition never gets the same
    broker twice; with ``check_racks`` the partition's rack limits are checked too (otherwise the
    caller has already accounted for the rack change).

ALGORITHM (proposal rounds, deterministic)
    Movers are numbered in priority order; each mover's edges are listed in preference order.
    Every round, each unassigned mover proposes along its first edge that is still open and valid;
    only the best proposal per partition survives (so two replicas of one partition never race
    for the same broker or rack); each bin accepts proposals in mover order up to its remaining
    capacity. Accepted moves are applied to the working state at once, so the next round sees
    them. Rounds stop when nothing is accepted.
"""

from __future__ import annotations

import numpy as np

from kafka_zk_operator.domain.placement.arrays import IntArray
from kafka_zk_operator.domain.placement.state import WorkingState, first_per_key, segment_positions


def fill_bins(
    state: WorkingState,
    *,
    m_row: IntArray,
    m_slot: IntArray,
    m_src: IntArray,
    e_m: IntArray,
    e_bin: IntArray,
    bin_dst: IntArray,
    bin_cap: IntArray,
    check_racks: bool,
    src_cap: IntArray | None = None,
) -> IntArray:
    """Assign movers to bins (module docstring). ``bin_cap`` is decremented in place.

    :param e_m: edges' mover index, non-decreasing (edges grouped by mover, in preference order).
    :param src_cap: optional per-broker limit on movers leaving it (indexed by ``m_src``,
        decremented in place).
    :returns: the bin of each mover, or -1.
    """
    n_movers = len(m_row)
    assigned = np.full(n_movers, -1, dtype=np.int64)
    if n_movers == 0 or len(e_m) == 0:
        return assigned
    e_row = m_row[e_m]
    e_dst = bin_dst[e_bin]
    while True:
        idx = np.flatnonzero((assigned[e_m] < 0) & (bin_cap[e_bin] > 0))
        if len(idx) == 0:
            break
        ok = state.not_member(e_row[idx], e_dst[idx])
        if check_racks:
            ok &= state.rack_ok(e_row[idx], m_src[e_m[idx]], e_dst[idx])
        idx = idx[ok]
        if len(idx) == 0:
            break
        proposals = idx[first_per_key(e_m[idx])]
        # One proposal per partition: the mover with the best priority.
        by_row = proposals[np.lexsort((e_m[proposals], e_row[proposals]))]
        proposals = by_row[first_per_key(e_row[by_row])]
        if src_cap is not None:
            by_src = proposals[np.lexsort((e_m[proposals], m_src[e_m[proposals]]))]
            rank_src = segment_positions(m_src[e_m[by_src]])
            proposals = by_src[rank_src < src_cap[m_src[e_m[by_src]]]]
        # Bins accept in mover order up to their capacity.
        by_bin = proposals[np.lexsort((e_m[proposals], e_bin[proposals]))]
        rank = segment_positions(e_bin[by_bin])
        accepted = by_bin[rank < bin_cap[e_bin[by_bin]]]
        if len(accepted) == 0:
            break
        movers = e_m[accepted]
        state.apply(m_row[movers], m_slot[movers], e_dst[accepted], counted=not check_racks)
        np.subtract.at(bin_cap, e_bin[accepted], 1)
        if src_cap is not None:
            np.subtract.at(src_cap, m_src[movers], 1)
        assigned[movers] = e_bin[accepted]
    return assigned


def edges_by_range(lo: IntArray, hi: IntArray) -> tuple[IntArray, IntArray]:
    """Edges ``(m, b)`` for every mover ``m`` and bin ``b`` in ``[lo[m], hi[m])``, grouped by mover."""
    counts = np.maximum(hi - lo, 0)
    total = int(counts.sum())
    e_m = np.repeat(np.arange(len(lo)), counts)
    offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return e_m, np.repeat(lo, counts) + offsets
