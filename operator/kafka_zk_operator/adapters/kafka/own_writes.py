"""What an Admin API backend wrote lately, so that its next reads can wait to see it.

Kafka's brokers learn of a change asynchronously (from the ZooKeeper-mode controller, or KRaft's
metadata log) and kafka-python asks whichever broker is least busy: a read right after a create
can find no topic on a broker that has not heard of it. ``adapters.kafka.admin_backend`` keeps
here the partition count and overrides of its last write per topic (for ``REMEMBER_S``), and the
topic ids whose deletion it requested; :func:`until_shown` asks a read again until it shows them.
Thread-safe; no I/O of its own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

T = TypeVar("T")

#: How long a write is remembered: longer than any broker takes to learn of it.
REMEMBER_S = 30.0


class OwnWrites:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        #: topic → (partitions or None, overrides or None, when).
        self._written: dict[str, tuple[int | None, dict[str, str] | None, float]] = {}
        #: topic → the topic id (None: unknown) whose deletion was requested.
        self._deleting: dict[str, str | None] = {}

    def wrote(
        self, topic: str, *, partitions: int | None = None, config: Mapping[str, str] | None = None
    ) -> None:
        """A create, growth or config change of ``topic`` landed (what it made the topic)."""
        with self._lock:
            now = self._clock()
            before = self._written.get(topic)
            if before is not None and now - before[2] < REMEMBER_S:
                partitions = partitions if partitions is not None else before[0]
                config = config if config is not None else before[1]
            self._written[topic] = (partitions, None if config is None else dict(config), now)

    def written(self, topic: str) -> tuple[int | None, dict[str, str] | None]:
        """(partitions, overrides) of the last write of ``topic`` still remembered, else Nones."""
        with self._lock:
            got = self._written.get(topic)
            if got is None:
                return None, None
            if self._clock() - got[2] >= REMEMBER_S:
                del self._written[topic]
                return None, None
            return got[0], got[1]

    def deleting(self, topic: str, topic_id: str | None) -> None:
        """The deletion of ``topic`` (with id ``topic_id``) was requested."""
        with self._lock:
            self._written.pop(topic, None)
            self._deleting[topic] = topic_id

    def deletion_pending(self, topic: str) -> bool:
        with self._lock:
            return topic in self._deleting

    def deletion_of(self, topic: str, topic_id: str | None) -> bool:
        """A requested deletion covers the topic ``topic`` with id ``topic_id`` as now described
        (not a topic re-created under that name since)."""
        with self._lock:
            if topic not in self._deleting:
                return False
            asked = self._deleting[topic]
        return asked is None or topic_id is None or topic_id == asked

    def gone(self, topic: str) -> None:
        """Kafka no longer knows ``topic``: nothing to wait for any more."""
        with self._lock:
            self._written.pop(topic, None)
            self._deleting.pop(topic, None)


def until_shown(
    within_s: float, read: Callable[[], T], shows: Callable[[T], bool], *, pause_s: float = 0.1
) -> T:
    """``read()``, asked again for up to ``within_s`` seconds while its answer does not ``shows``
    the last write (a broker that has not learned of it yet); the last answer either way."""
    deadline = time.monotonic() + within_s
    while True:
        answer = read()
        if shows(answer) or time.monotonic() >= deadline:
            return answer
        time.sleep(pause_s)
