"""The status a resource will have once this process's own last status patch lands.

kopf sends a handler's status patch after the handler returns, and the next handler of the same
resource sees it only when the watch stream delivers the patched object. Under load (a burst of
thousands of creations) that takes from seconds to minutes, and a reconcile that ran on the older
status meanwhile took it for the truth: a topic this process had just created, whose status did
not show ``appliedConfig`` yet, was reported ``Adopted`` (one more status write, then ``InSync``:
another), and a deletion in that window skipped deleting the topic it had created (issue #16).

So each reconcile's patch is remembered until a status that already holds it is seen, and a
reconcile in between works from the status with that patch applied (``merge_patched``): exactly
what the API server will make of it. Fields another writer also sets (``shared``: the health
reporter's live partition fields and ``lastSyncTime``) are left out: a newer value from that
writer would make the patch look never landed, and a stale copy of them would be written again.
A record that is never seen (kopf could not send the patch) is dropped after ``ttl_s``: it only
ever stands in for a patch on its way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kafka_zk_operator.runtime.unchanged import merge_patched

#: Longer than the slowest watch delivery measured (a 10,000-topic burst on 2 cores).
DEFAULT_TTL_S = 600.0


class PendingStatus:
    """Per resource uid: the status patch sent last and not yet seen back."""

    def __init__(
        self,
        *,
        shared: frozenset[str] = frozenset(),
        ttl_s: float = DEFAULT_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.shared = shared
        self.ttl_s = ttl_s
        self._clock = clock
        self._patches: dict[str, tuple[dict[str, Any], float]] = {}
        self._lock = threading.Lock()

    def record(self, uid: str, patch: Mapping[str, Any]) -> None:
        """``patch`` (a JSON merge patch of ``status``) was handed to kopf for ``uid``; it comes
        after any patch still pending (the caller worked from :meth:`current`)."""
        mine = {key: value for key, value in patch.items() if key not in self.shared}
        if not mine:
            return
        with self._lock:
            earlier = self._patches.get(uid)
            combined = _composed(earlier[0], mine) if earlier is not None else mine
            self._patches[uid] = (combined, self._clock())

    def current(self, uid: str, status: Mapping[str, Any] | None) -> Mapping[str, Any]:
        """``status`` as it will be once the pending patch lands (``status`` itself if none is)."""
        seen = status or {}
        with self._lock:
            entry = self._patches.get(uid)
            if entry is None:
                return seen
            patch, recorded = entry
            patched = merge_patched(seen, patch)
            if self._clock() - recorded >= self.ttl_s or patched == dict(seen):
                del self._patches[uid]  # seen back (or never coming): the status is the truth
                return seen
        return patched

    def forget(self, uid: str) -> None:
        with self._lock:
            self._patches.pop(uid, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._patches)


def _composed(first: Mapping[str, Any], then: Mapping[str, Any]) -> dict[str, Any]:
    """One JSON merge patch with the effect of ``first`` followed by ``then``."""
    combined = dict(first)
    for key, value in then.items():
        earlier = combined.get(key)
        if isinstance(value, Mapping) and isinstance(earlier, Mapping):
            combined[key] = _composed(earlier, value)
        else:
            combined[key] = value
    return combined
