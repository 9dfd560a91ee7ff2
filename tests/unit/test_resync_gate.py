"""The resync timer skips a resource reconciled less than half a period ago and spreads the first
resyncs of a burst over a period (``runtime.resync_gate``, issue #16)."""

from __future__ import annotations

import itertools

from kafka_zk_operator.runtime.resync_gate import ResyncGate
from tests.unit.clock_support import ManualClock


def test_a_resource_never_reconciled_is_due() -> None:
    assert ResyncGate(60, clock=ManualClock()).due("uid-1")


def test_a_resync_right_after_another_reconcile_is_skipped_until_half_a_period_has_passed() -> None:
    clock = ManualClock()
    gate = ResyncGate(60, clock=clock)
    gate.reconciled("uid-1")
    clock.now += 29.9
    assert not gate.due("uid-1")
    assert gate.due("uid-2"), "per resource"
    clock.now += 0.1
    assert gate.due("uid-1")


def test_a_forgotten_resource_holds_no_memory_and_is_due_again() -> None:
    clock = ManualClock()
    gate = ResyncGate(60, clock=clock)
    gate.reconciled("uid-1")
    gate.forget("uid-1")
    gate.forget("uid-never-seen")
    assert len(gate) == 0 and gate.due("uid-1")


def test_first_resyncs_are_spread_over_the_period_after_the_first_one() -> None:
    draws = itertools.cycle([0.0, 0.25, 0.999])
    gate = ResyncGate(60, jitter=lambda: next(draws))
    assert [gate.first_delay() for _ in range(3)] == [60.0, 75.0, 60 * 1.999]


def test_first_delays_of_a_real_burst_cover_the_period() -> None:
    gate = ResyncGate(60)
    delays = [gate.first_delay() for _ in range(1000)]
    assert 60 <= min(delays) < 66 and 114 < max(delays) < 120
