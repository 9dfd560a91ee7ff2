"""The whole-cluster load view behind ``spec.placement: Balanced``, read rarely and kept current.

Placing a topic's new partitions by load needs every topic's replicas. Reading them all for each
new topic would cost one ZooKeeper read per topic in the cluster per creation (quadratic in a
burst), so one :class:`ClusterViewCache` per ZooKeeper store keeps the view: it is read again when
it is older than ``max_age`` seconds, and between reads it records what this operator itself
writes (created topics, added partitions), so a burst of creations still sees each other's load.
Writes by others (``kafka-topics``, reassignments) show up at the next read; balanced placement
is a heuristic, a view a few seconds old only makes it slightly less even.

:meth:`ClusterViewCache.placing` serializes "place, then write" per cluster so two creations
running in parallel worker threads never both pick the same least-loaded brokers. The slow part,
reading the view, happens before (:meth:`ClusterViewCache.view`), under a lock of its own: a
placement waits for a refresh only when it needs it.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from kafka_zk_operator.domain.model import Broker, BrokerId, PartitionId
from kafka_zk_operator.domain.reassignment.plan import ClusterView
from kafka_zk_operator.domain.topic.new_partitions import balanced_assignment
from kafka_zk_operator.domain.topic.planning import Placer
from kafka_zk_operator.service.backend import TopicBackend
from kafka_zk_operator.service.reassignment.proposals import read_cluster

#: Age after which the view is read from ZooKeeper again.
MAX_AGE_S = 30.0


class ClusterViewCache:
    def __init__(
        self,
        read: Callable[[], ClusterView],
        *,
        max_age: float = MAX_AGE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self._max_age = max_age
        self._clock = clock
        self._view: ClusterView | None = None
        self._read_at = 0.0
        self._lock = threading.Lock()  # guards _view / _read_at (held briefly)
        self._refreshing = threading.Lock()  # one ZooKeeper read of the view at a time
        self._placing = threading.Lock()
        self.reads = 0

    @contextmanager
    def placing(self) -> Iterator[None]:
        """Hold while placing and writing one topic's partitions (call :meth:`view` first)."""
        with self._placing:
            yield

    def _fresh(self) -> ClusterView | None:
        with self._lock:
            if self._view is not None and self._clock() - self._read_at < self._max_age:
                return self._view
            return None

    def view(self) -> ClusterView:
        """The view, read from ZooKeeper first when it is older than ``max_age``."""
        view = self._fresh()
        if view is not None:
            return view
        with self._refreshing:
            view = self._fresh()  # another thread may have read it meanwhile
            if view is not None:
                return view
            started = self._clock()
            read = self._read()
            with self._lock:
                self._view, self._read_at = read, started
                self.reads += 1
            return read

    def placer(self, topic: str, live_brokers: Sequence[Broker]) -> Placer:
        """Balanced placement of ``topic`` on the view, with the brokers registered right now."""

        def place(
            existing: Mapping[PartitionId, Sequence[BrokerId]], partitions: int, replication_factor: int
        ) -> dict[PartitionId, tuple[BrokerId, ...]] | None:
            cached = self.view()
            current = ClusterView(
                brokers={b.id: b.rack for b in live_brokers},
                assignments=cached.assignments,
                deleting=cached.deleting,
            )
            return balanced_assignment(
                current,
                topic,
                existing=existing,
                partitions=partitions,
                replication_factor=replication_factor,
            )

        return place

    def record(self, topic: str, partitions: Mapping[PartitionId, Sequence[BrokerId]]) -> None:
        """This operator wrote ``partitions`` (all of the topic's, after the write).

        A refresh that started before the write may not contain it; the record is then lost until
        the next refresh (placement a little less even, never invalid).
        """
        with self._lock:
            if self._view is None:
                return
            assignments = dict(self._view.assignments)
            assignments[topic] = {p: tuple(replicas) for p, replicas in partitions.items()}
            self._view = ClusterView(
                brokers=self._view.brokers,
                assignments=assignments,
                moving=self._view.moving,
                deleting=self._view.deleting,
            )


_caches: weakref.WeakKeyDictionary[TopicBackend, ClusterViewCache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def cache_for(store: TopicBackend) -> ClusterViewCache:
    """The view cache of the cluster behind ``store`` (one per store, created on first use)."""
    with _caches_lock:
        cache = _caches.get(store)
        if cache is None:
            ref = weakref.ref(store)  # the cache must not keep its store alive

            def read() -> ClusterView:
                live = ref()
                assert live is not None, "the store of a cluster view cache is gone"
                return read_cluster(live)

            cache = ClusterViewCache(read)
            _caches[store] = cache
        return cache
