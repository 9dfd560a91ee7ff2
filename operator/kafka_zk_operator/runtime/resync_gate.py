"""When a resource's periodic resync has something to add.

The resync re-reads a resource's Kafka state once per period to catch drift. A resource
reconciled a moment ago by its create, update or resume handler was reconciled again by its
resync: during a burst of creates and after a takeover, every resource was read twice within
seconds (issue #16). A resync is *due* only when no reconcile of the resource finished in the
last half period. (Resyncs are spread over the period by ``handlers.kafkatopic_resync.slot``.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class ResyncGate:
    def __init__(
        self,
        period_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.period_s = period_s
        self._clock = clock
        self._finished: dict[str, float] = {}
        self._lock = threading.Lock()

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
