"""Rack rules of a partition: how many of its replicas each rack may (and must) hold.

GOALS / CONSTRAINTS: a partition with replication factor ``RF`` in a cluster of ``K`` racks must
span ``min(RF, K)`` racks. Equivalently, per rack: at most ``hi`` replicas and, when ``RF >= K``,
at least one, where ``hi = max(1, RF - K + 1)`` (and never more than the rack's broker count).
These per-(partition, rack) bounds are what the exact min-cost-flow network and the planner use;
a *rack violation* is a partition spanning fewer racks than ``min(RF, K)``.
"""

from __future__ import annotations

import numpy as np

from kafka_zk_operator.domain.placement.arrays import BoolArray, IntArray


def rack_counts(replicas: IntArray, rack_of: IntArray, n_racks: int) -> IntArray:
    """``(P, n_racks)`` replicas of each row per rack. ``rack_of`` maps broker index to rack index;
    slots whose rack index is outside ``[0, n_racks)`` (or EMPTY slots) are not counted."""
    p, w = replicas.shape
    counts = np.zeros((p, n_racks), dtype=np.int64)
    rows = np.arange(p)
    for j in range(w):
        col = replicas[:, j]
        present = col >= 0
        racks = np.where(present, rack_of[np.maximum(col, 0)], -1)
        ok = (racks >= 0) & (racks < n_racks)
        _add_column(counts, rows[ok], racks[ok], n_racks)
    return counts


def _add_column(counts: IntArray, rows: IntArray, racks: IntArray, n_racks: int) -> None:
    """``counts[rows, racks] += 1`` for distinct rows (one column at a time), without ``add.at``."""
    flat = counts.reshape(-1)
    idx = rows * n_racks + racks
    flat[idx] += 1


def rack_limits(rf: IntArray, n_racks: int) -> tuple[IntArray, IntArray]:
    """Per row: the minimum (0 or 1) and maximum replicas any one rack may hold."""
    lo = (rf >= n_racks).astype(np.int64)
    hi = np.maximum(1, rf - n_racks + 1).astype(np.int64)
    return lo, hi


def rack_hi(hi_row: IntArray, rack_sizes: IntArray) -> IntArray:
    """``(P, K)`` per-rack maxima: the row maximum, capped by each rack's broker count."""
    return np.minimum(hi_row[:, None], rack_sizes[None, :])


def violations(replicas: IntArray, rack_of: IntArray, n_racks: int) -> BoolArray:
    """Rows spanning fewer racks than ``min(RF, n_racks)``."""
    counts = rack_counts(replicas, rack_of, n_racks)
    rf = (replicas >= 0).sum(axis=1)
    spanned = (counts > 0).sum(axis=1)
    return np.asarray(spanned < np.minimum(rf, n_racks), dtype=np.bool_)


def duplicates(replicas: IntArray) -> BoolArray:
    """Rows holding the same broker twice."""
    if replicas.shape[1] < 2:
        return np.zeros(replicas.shape[0], dtype=np.bool_)
    ordered = np.sort(replicas, axis=1)
    same = (ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)
    return np.asarray(same.any(axis=1), dtype=np.bool_)
