"""adapters.k8s.kopf_toggles: kopf's start-up gate, same answers, one condition waiter."""

from __future__ import annotations

import asyncio

from kopf._cogs.aiokits import aiotoggles
from kopf._core.reactor import orchestration, running

from kafka_zk_operator.adapters.k8s import kopf_toggles


def test_kopf_still_builds_its_toggle_sets_through_the_patched_module_attribute() -> None:
    kopf_toggles.install()
    assert aiotoggles.ToggleSet is kopf_toggles.SharedWaitToggleSet
    assert getattr(orchestration, "aiotoggles") is aiotoggles, "kopf builds operator_indexed there"  # noqa: B009
    assert getattr(running, "aiotoggles") is aiotoggles, "and operator_paused there"  # noqa: B009


def test_waiters_are_released_when_the_last_toggle_is_dropped() -> None:
    async def scenario() -> tuple[int, list[bool], int]:
        gate = kopf_toggles.SharedWaitToggleSet(all)
        toggles = [await gate.make_toggle(name=str(i)) for i in range(200)]
        released: list[bool] = []

        async def worker(toggle: aiotoggles.Toggle) -> None:
            await gate.drop_toggle(toggle)
            await gate.wait_for(True)
            released.append(gate.is_on())

        tasks = [asyncio.create_task(worker(t)) for t in toggles[:-1]]
        await asyncio.sleep(0.01)
        waiting_before_last = len(released)
        condition_waiters = len(gate._condition._waiters)  # kopf's one condition
        tasks.append(asyncio.create_task(worker(toggles[-1])))
        await asyncio.wait_for(asyncio.gather(*tasks), 5)
        return waiting_before_last, released, condition_waiters

    waiting_before_last, released, condition_waiters = asyncio.run(scenario())
    assert waiting_before_last == 0, "nobody passes the gate while a toggle is left"
    assert released == [True] * 200
    assert condition_waiters == 1, "one task waits on kopf's condition, not one per resource"


def test_a_cancelled_waiter_does_not_cancel_the_others_and_turned_toggles_count() -> None:
    async def scenario() -> bool:
        gate = kopf_toggles.SharedWaitToggleSet(all)
        toggle = await gate.make_toggle(False, name="listing")
        first = asyncio.create_task(gate.wait_for(True))
        second = asyncio.create_task(gate.wait_for(True))
        await asyncio.sleep(0.01)
        first.cancel()
        await asyncio.sleep(0.01)
        await toggle.turn_to(True)  # a toggle turned on (not dropped) also opens the gate
        await asyncio.wait_for(second, 5)
        await gate.wait_for(True)  # already on: returns at once
        return first.cancelled()

    assert asyncio.run(scenario())
