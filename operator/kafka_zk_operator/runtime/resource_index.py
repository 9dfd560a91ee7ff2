"""The operator's own in-memory indexes of its resources, instead of kopf's ``@kopf.index``.

kopf holds the handlers of every resource at start-up until each resource of its initial listing
is indexed, inside that resource's worker. With a bound on kopf's workers
(``settings.queueing.worker_limit``) the first workers wait at that barrier for resources the
bound keeps from starting: the operator deadlocks (kopf issue #1243, measured here with 10,000
KafkaTopics and a bound of 1,000). Unbounded, a restart runs one worker per resource at once, and
those workers were the largest part of the operator's memory peak (issue #16).

So the operator keeps its indexes itself: a :class:`ResourceIndex` is filled from a paged listing
before kopf starts watching (``handlers.indexes``), so handlers never see a partial index at
start-up, and kept current from every event kopf delivers, before the change handlers run (the
same order kopf's own indexes had). Entries the start-up listing added and no event has confirmed
since (:meth:`ResourceIndex.unconfirmed`) may belong to resources deleted between the listing and
kopf's own; ``handlers.indexes`` checks those once kopf has had time to deliver everything.

An event that brings the very ``resourceVersion`` already indexed (kopf's own start-up listing
after the operator's, one event per resource on every restart) changes nothing and is not indexed
again; it only confirms the entry.

Like kopf's ``Index``: ``key → the values of the resources under that key``; each resource
contributes a ``{key: value}`` mapping computed from its body. Read from kopf's handler threads
while the event loop updates it, so every access takes a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Any

#: What a resource contributes: key → its value under that key (empty: nothing).
Entries = Callable[[Mapping[str, Any], Any], Mapping[Any, Any]]


def uid_of(body: Mapping[str, Any]) -> str:
    return str((body.get("metadata") or {}).get("uid", ""))


def ref_of(body: Mapping[str, Any]) -> tuple[str, str]:
    meta = body.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


class ResourceIndex:
    """key → {uid: value}, fed resource by resource (see the module docstring)."""

    def __init__(self, name: str, entries: Entries) -> None:
        self.name = name
        self._entries = entries
        self._values: dict[Hashable, dict[str, Any]] = {}
        self._keys_of: dict[str, tuple[Hashable, ...]] = {}
        #: uid → the ``metadata.resourceVersion`` of the body indexed (one object state each).
        self._versions: dict[str, str] = {}
        #: uid → (namespace, name) of the resources the listing added and no event confirmed yet.
        self._unconfirmed: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def update(self, body: Mapping[str, Any], memo: Any, *, listed: bool = False) -> None:
        """Index ``body`` in place of what its resource contributed before. ``listed``: it comes
        from the start-up listing rather than from an event kopf delivered."""
        uid = uid_of(body)
        version = (body.get("metadata") or {}).get("resourceVersion")
        with self._lock:
            if version is not None and self._versions.get(uid) == version:
                if not listed:
                    self._unconfirmed.pop(uid, None)
                return  # this very state is indexed: the entries would be the same
        entries = dict(self._entries(body, memo))
        with self._lock:
            self._drop(uid)
            if version is not None:
                self._versions[uid] = str(version)
            for key, value in entries.items():
                self._values.setdefault(key, {})[uid] = value
            if entries:
                self._keys_of[uid] = tuple(entries)
            if listed and entries:
                self._unconfirmed[uid] = ref_of(body)
            else:
                self._unconfirmed.pop(uid, None)

    def remove(self, uid: str) -> None:
        """The resource is gone."""
        with self._lock:
            self._drop(uid)
            self._unconfirmed.pop(uid, None)

    def confirm(self, uid: str) -> None:
        """The resource still exists (checked against the API server)."""
        with self._lock:
            self._unconfirmed.pop(uid, None)

    def get(self, key: Hashable) -> list[Any]:
        """The values under ``key`` (one per resource contributing one)."""
        with self._lock:
            found = self._values.get(key)
            return list(found.values()) if found else []

    def first(self, key: Hashable) -> Any | None:
        """One value under ``key`` (None: none), for keys only one resource contributes to."""
        with self._lock:
            found = self._values.get(key)
            return next(iter(found.values())) if found else None

    def keys(self) -> list[Any]:
        with self._lock:
            return list(self._values)

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)

    def unconfirmed(self) -> dict[str, tuple[str, str]]:
        """uid → (namespace, name) of what the start-up listing added and no event has confirmed."""
        with self._lock:
            return dict(self._unconfirmed)

    def _drop(self, uid: str) -> None:
        self._versions.pop(uid, None)
        for key in self._keys_of.pop(uid, ()):
            under = self._values.get(key)
            if under is not None:
                under.pop(uid, None)
                if not under:
                    del self._values[key]
