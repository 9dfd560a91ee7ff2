"""kopf's start-up gate without one wake-up per waiting resource per indexed resource.

When an operator has index handlers (the KafkaTopic handlers' ``kafkatopic_owners``), kopf holds
every resource's handlers at start-up until every resource of the initial listing is indexed
(so that no handler sees a partial index). It does that with one ``ToggleSet``: a toggle per
listed resource, dropped once indexed, and every resource's worker waiting on the set's
``asyncio.Condition`` until all are gone. Each drop notifies every waiter, so N resources cost
about N² wake-ups of asyncio tasks: a third of the event loop's time when a restarted operator
adopted 1,000 KafkaTopics (py-spy), and quadratic beyond.

:class:`SharedWaitToggleSet` keeps kopf's semantics (same toggles, same condition, same answer)
but lets only one task per awaited state wait on the condition; every other caller awaits that
task, so a drop wakes one task and the final drop releases everyone once. :func:`install` puts
it in place of kopf's class; kopf builds its toggle sets through the module attribute
(``aiotoggles.ToggleSet(all)``) when the operator starts, after this module is imported.
``tests/unit/test_kopf_toggles.py`` fails if kopf's internals move.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from kopf._cogs.aiokits import aiotoggles


class SharedWaitToggleSet(aiotoggles.ToggleSet):
    """kopf's ``ToggleSet`` with one condition waiter per awaited state."""

    def __init__(self, fn: Callable[[Iterable[bool]], bool]) -> None:
        super().__init__(fn)
        self._waiters: dict[bool, asyncio.Task[None]] = {}

    async def wait_for(self, __state: bool) -> None:
        wanted = bool(__state)
        while self.is_on() != wanted:
            waiter = self._waiters.get(wanted)
            if waiter is None or waiter.done():
                waiter = asyncio.get_running_loop().create_task(super().wait_for(wanted))
                self._waiters[wanted] = waiter
            # A caller cancelled (its resource deleted, the operator stopping) leaves the shared
            # waiter to the others.
            await asyncio.shield(waiter)


def install() -> None:
    """Make kopf build its toggle sets as :class:`SharedWaitToggleSet` (idempotent)."""
    aiotoggles.ToggleSet = SharedWaitToggleSet  # type: ignore[misc]
