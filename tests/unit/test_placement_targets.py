"""Unit tests for the broker-level stage: balance targets, the bound M_LB, rack skew, tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.placement.targets import Targets, balance_targets, count_lower_bound, widen


def targets_for(
    load: list[int],
    *,
    racks: list[int] | None = None,
    rack_lo: list[int] | None = None,
    rack_hi: list[int] | None = None,
    eligible: list[bool] | None = None,
) -> Targets:
    n = len(load)
    arr = np.array(load, dtype=np.int64)
    rack = np.array(racks if racks is not None else [0] * n, dtype=np.int64)
    k = int(rack.max()) + 1
    el = np.ones(n, dtype=bool) if eligible is None else np.array(eligible, dtype=bool)
    return balance_targets(
        eligible=el,
        floor=np.zeros(n, dtype=np.int64),
        ceil=np.full(n, 10**9, dtype=np.int64),
        rack=rack,
        rack_lo=np.array(rack_lo if rack_lo is not None else [0] * k, dtype=np.int64),
        rack_hi=np.array(rack_hi if rack_hi is not None else [10**12] * k, dtype=np.int64),
        total=int(arr.sum()),
        prefer=arr,
    )


def test_reference_example_7_6_0_0_needs_six_moves() -> None:
    t = targets_for([7, 6, 0, 0])
    assert t.target.tolist() == [4, 3, 3, 3]
    assert count_lower_bound(np.array([7, 6, 0, 0]), t.target) == 6


def test_extra_replicas_go_to_the_most_loaded_brokers() -> None:
    t = targets_for([5, 9, 1, 7, 3])  # 25 / 5 = 5 each, no remainder
    assert t.target.tolist() == [5, 5, 5, 5, 5]
    t = targets_for([5, 9, 1, 7, 4])  # 26: one broker holds 6, the one holding 9
    assert t.target.tolist() == [5, 6, 5, 5, 5]


def test_adding_3_empty_brokers_to_12_moves_a_fifth() -> None:
    load = [1000] * 12 + [0] * 3
    t = targets_for(load)
    assert count_lower_bound(np.array(load), t.target) == 2400  # 20 % of 12,000


def test_reference_tier_l_bound_300_to_330_brokers() -> None:
    # 3M replicas on 300 brokers in 3 racks, 30 empty brokers added evenly, RF = racks = 3:
    # every rack must hold exactly 1M replicas, so the bound is per rack, 272,700 in total.
    load = [10_000] * 300 + [0] * 30
    racks = [i % 3 for i in range(330)]
    t = targets_for(load, racks=racks, rack_lo=[1_000_000] * 3, rack_hi=[1_000_000] * 3)
    assert count_lower_bound(np.array(load), t.target) == 272_700
    assert t.skewed == ()


def test_removed_brokers_get_nothing_and_their_load_counts() -> None:
    load = [4, 4, 4, 4]
    t = targets_for(load, eligible=[True, True, True, False])
    assert t.target.tolist() == [6, 5, 5, 0] or sorted(t.target[:3].tolist()) == [5, 5, 6]
    assert count_lower_bound(np.array(load), t.target) == 4


def test_rf_equal_to_racks_with_unequal_racks_is_reported_as_unfixable_skew() -> None:
    # Racks of 1, 2 and 3 brokers; RF 3 = racks: each rack holds exactly all 600 partitions.
    racks = [0, 1, 1, 2, 2, 2]
    t = targets_for([300] * 6, racks=racks, rack_lo=[600, 600, 600], rack_hi=[600, 600, 600])
    assert t.target.tolist() == [600, 300, 300, 200, 200, 200]
    assert {s.rack for s in t.skewed} == {0, 2}
    assert all(s.cluster_level == 300 for s in t.skewed)


def test_rack_minimum_forces_extra_units_into_a_rack() -> None:
    # Rack 1 must hold at least 9 of the 12 replicas: its brokers get 4/5, the other ones less.
    t = targets_for([3, 3, 3, 3], racks=[0, 0, 1, 1], rack_lo=[0, 9], rack_hi=[12, 12])
    assert t.target[2:].sum() == 9 and t.target[:2].sum() == 3
    assert np.ptp(t.target[2:]) <= 1 and np.ptp(t.target[:2]) <= 1


def test_floors_are_respected() -> None:
    arr = np.array([10, 0, 0], dtype=np.int64)
    t = balance_targets(
        eligible=np.ones(3, dtype=bool),
        floor=np.array([8, 0, 0]),
        ceil=np.full(3, 100),
        rack=np.zeros(3, dtype=np.int64),
        rack_lo=np.array([0]),
        rack_hi=np.array([100]),
        total=10,
        prefer=arr,
    )
    assert t.target.tolist() == [8, 1, 1]


def test_impossible_totals_are_user_errors() -> None:
    with pytest.raises(errors.InvalidSpec):
        targets_for([5, 5], rack_lo=[0], rack_hi=[4])


def test_tolerance_band_keeps_brokers_inside_it_untouched() -> None:
    load = np.array([12, 10, 9, 9], dtype=np.int64)  # mean 10
    strict = targets_for(load.tolist())
    assert count_lower_bound(load, strict.target) == 2
    wide = widen(
        strict,
        load=load,
        eligible=np.ones(4, dtype=bool),
        floor=np.zeros(4, dtype=np.int64),
        rack=np.zeros(4, dtype=np.int64),
        rack_lo=np.array([0]),
        rack_hi=np.array([100]),
        total=40,
        tolerance=1,
    )
    assert wide.target.sum() == 40
    assert count_lower_bound(load, wide.target) == 1  # only 12 -> 11 needed
    assert np.all(wide.target >= wide.lo) and np.all(wide.target <= wide.hi)
