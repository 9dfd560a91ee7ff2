"""The resync timer skips a resource reconciled less than half a period ago and spreads the first
resyncs of a burst over a period (``runtime.resync_gate``, issue #16)."""

from __future__ import annotations

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
