"""One lock per key (a resource uid, a cluster), for handlers that must not run twice at once.

kopf runs timers in parallel with change handlers, and sync handlers in a thread pool; the
handlers serialize their reconciles per resource (and, for reassignments, per Kafka cluster)
with a :class:`KeyedLocks`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class KeyedLocks:
    def __init__(self) -> None:
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    @contextmanager
    def held(self, key: str) -> Iterator[None]:
        """Run the block while holding ``key``'s lock (created on first use)."""
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            yield

    def busy(self, key: str) -> bool:
        """Whether a block holds ``key``'s lock right now."""
        with self._guard:
            lock = self._locks.get(key)
        return lock is not None and lock.locked()

    def forget(self, key: str) -> None:
        """Drop ``key``'s lock (its resource is gone); a later use creates a new one."""
        with self._guard:
            self._locks.pop(key, None)
