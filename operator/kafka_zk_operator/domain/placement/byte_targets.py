"""Byte targets of a byte-balanced plan: how many bytes each broker should end with, and the band.

Used by :mod:`~kafka_zk_operator.domain.placement.byte_balance` (whose greedy moves replicas
towards these targets) and :mod:`~kafka_zk_operator.domain.placement.byte_stage`.

TARGETS
    Bytes per broker are the sizes of the partitions it holds a replica of. A rack may hold at
    most ``hi`` and at least ``lo`` replicas of each partition (``racks.rack_limits``), which bounds
    the bytes a rack can end with; the rack levels are water-filled inside those bounds and each
    rack's bytes are shared evenly by its brokers, never below the bytes a broker must keep (rows
    that may not move). With equal racks and nothing pinned every target is the cluster mean. The
    band is ``target ± tolerance * mean``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kafka_zk_operator.domain.placement.arrays import BoolArray, IntArray
from kafka_zk_operator.domain.placement.racks import rack_limits
from kafka_zk_operator.domain.placement.report import broker_bytes
from kafka_zk_operator.domain.placement.state import BrokerContext

FloatArray = npt.NDArray[np.float64]

#: Default half-width of the byte band, as a fraction of the mean bytes per eligible broker.
DEFAULT_BYTE_TOLERANCE = 0.02


@dataclass(frozen=True, eq=False)
class ByteTargets:
    """Per-broker byte targets (``(N,)``, 0 for brokers that are not eligible), the mean over the
    eligible brokers, the band half-width in bytes, the brokers whose target is above the mean's
    band (rack limits or bytes they must keep hold them there), and the bytes that fit no broker's
    capacity (``short``, 0 without capacities or when everything fits)."""

    target: FloatArray
    mean: float
    band: float
    pinned: BoolArray
    short: float = 0.0


def byte_targets(
    replicas: IntArray,
    *,
    sizes: IntArray,
    movable: BoolArray,
    rf_new: IntArray,
    ctx: BrokerContext,
    tolerance: float,
    capacity: FloatArray | None = None,
) -> ByteTargets:
    """Targets as the module docstring says, for the rows after the replication-factor pre-steps;
    ``capacity`` (``(N,)`` bytes, ``inf`` for none) caps each broker's target."""
    n, k = ctx.n_brokers, ctx.n_racks
    eligible = ctx.eligible
    rack = np.minimum(ctx.rack_ext[:n], k - 1)
    fixed = broker_bytes(replicas[~movable], sizes[~movable], n + 1)[:n].astype(np.float64)
    fixed = np.where(eligible, fixed, 0.0)
    ceiling = np.full(n, np.inf) if capacity is None else capacity.astype(np.float64)
    ceiling = np.where(eligible, np.maximum(ceiling, fixed), 0.0)  # bytes that may not move stay
    size_m = sizes[movable].astype(np.float64)
    lo_row, hi_row = rack_limits(rf_new[movable], k)
    total = float(fixed.sum() + (size_m * rf_new[movable]).sum())
    fixed_rack = np.bincount(rack[eligible], weights=fixed[eligible], minlength=k)
    rack_lo = fixed_rack + float((size_m * lo_row).sum())
    rack_hi = fixed_rack + np.array(
        [float((size_m * np.minimum(hi_row, ctx.rack_sizes[r])).sum()) for r in range(k)]
    )

    def rack_totals(x: float) -> FloatArray:
        per_rack = np.bincount(rack[eligible], weights=_fill(x, fixed, ceiling)[eligible], minlength=k)
        out: FloatArray = np.clip(per_rack, rack_lo, np.maximum(rack_lo, rack_hi))
        return out

    rack_total = rack_totals(_level(lambda x: float(rack_totals(x).sum()), total))
    target = np.zeros(n, dtype=np.float64)
    for r in range(k):
        members = eligible & (rack == r)
        floor, ceil = fixed[members], ceiling[members]
        mu = _level(functools.partial(_filled, floor=floor, ceiling=ceil), float(rack_total[r]))
        target[members] = _fill(mu, floor, ceil)
    mean = total / max(1, int(eligible.sum()))
    pinned = eligible & (target > mean * (1.0 + tolerance))
    short = 0.0 if capacity is None else max(0.0, total - float(target.sum()))
    if short <= max(1.0, 1e-9 * total):  # float rounding of the water level, not a shortfall
        short = 0.0
    return ByteTargets(target=target, mean=mean, band=mean * tolerance, pinned=pinned, short=short)


def _filled(level: float, *, floor: FloatArray, ceiling: FloatArray) -> float:
    """Bytes held by brokers filled to ``level`` (:func:`_fill`), summed."""
    return float(_fill(level, floor, ceiling).sum())


def _fill(level: float, floor: FloatArray, ceiling: FloatArray) -> FloatArray:
    """Each broker's bytes when filled to ``level``, never below its floor nor above its ceiling."""
    out: FloatArray = np.minimum(np.maximum(level, floor), ceiling)
    return out


def _level(total_at: Callable[[float], float], goal: float) -> float:
    """The smallest ``x >= 0`` where the non-decreasing ``total_at(x)`` reaches ``goal`` (bisection;
    where it never does, a level above every ceiling)."""
    lo, hi = 0.0, max(1.0, goal)
    while total_at(hi) < goal and hi < 1e30:
        hi *= 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if total_at(mid) < goal:
            lo = mid
        else:
            hi = mid
    return hi
