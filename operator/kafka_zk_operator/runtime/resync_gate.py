"""When a resource's periodic resync has something to add, and when its first one comes.

The resync timer re-reads a resource's Kafka state once per period to catch drift. Two things
made it cost more than it finds (issue #16):

- a resource reconciled a moment ago by its create, update or resume handler was reconciled
  again by its timer: during a burst of creates and after a takeover, every resource was read
  twice within seconds. A resync is *due* only when no reconcile of the resource finished in the
  last half period;
- every resource seen at once (a burst, an operator start) had its timer fire at once one
  period later, a second burst that queued ahead of whatever else had to run. The first resync
  of each resource is spread uniformly over the period after the first one.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable


class ResyncGate:
    def __init__(
        self,
        period_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.period_s = period_s
        self._clock = clock
        self._jitter = jitter
        self._finished: dict[str, float] = {}
        self._lock = threading.Lock()

    def first_delay(self) -> float:
        """Seconds before a resource's first resync: between one and two periods."""
        return self.period_s * (1.0 + self._jitter())

    def reconciled(self, key: str) -> None:
        """A reconcile of ``key`` finished (without asking for a retry)."""
        with self._lock:
            self._finished[key] = self._clock()

    def due(self, key: str) -> bool:
        """Whether a resync of ``key`` may find something the last reconcile did not."""
        with self._lock:
            finished = self._finished.get(key)
        return finished is None or self._clock() - finished >= self.period_s / 2

    def forget(self, key: str) -> None:
        """``key``'s resource is gone."""
        with self._lock:
            self._finished.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._finished)
