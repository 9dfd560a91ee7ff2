"""The watch side of the health reporter (``runtime.health``): which znodes of a tracked topic are
watched, and what a firing watch does.

A topic is watched on its topic znode and on each partition ``state`` znode (leader, ISR), all in
the reporter's one ``ZnodeWatches``; ``/brokers/ids`` is watched for the cluster. A firing watch
only marks its topic dirty for the reporter's worker to refresh; a topic znode unchanged since the
reconcile that tracked it read it, or a watch taken over from that reconcile's reads
(``ZnodeWatches.adopt``), costs no read. A watch's answer also shows ZooKeeper reachable again,
which ends the reporter's wait after an outage.

``TopicWatches`` is a base of ``HealthReporter``, which owns the state these methods share (set
in its ``__init__``); they run on kazoo's thread or the caller's, always under its lock for that
state.
"""

from __future__ import annotations

import threading

from kafka_zk_operator.adapters.zk import znodes_topics
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.adapters.zk.watches import Priming, ZnodeWatches
from kafka_zk_operator.domain import errors

#: ``(namespace, name)`` of a KafkaTopic resource.
ResourceRef = tuple[str, str]


class TopicWatches:
    """The watches of the tracked topics and their callbacks; the state is ``HealthReporter``'s."""

    store: ZkStore
    _lock: threading.Condition
    _refs: dict[str, set[ResourceRef]]
    _watched_partitions: dict[str, int]
    _dirty: set[str]
    _watches: ZnodeWatches
    _read_since: dict[str, int]
    _brokers_seen_at: int
    _retry_at: float
    _stopped: bool

    def tracked(self, topic: str) -> bool:
        with self._lock:
            return topic in self._refs

    def mark_dirty(self, topic: str) -> None:
        with self._lock:
            if topic in self._refs:
                self._dirty.add(topic)
                self._lock.notify_all()

    def _adopt_watches(self, topic: str, priming: Priming, read_since: int) -> bool:
        """Take over the watches the caller's reads set on the topic's znodes; a partition whose
        watch cannot be taken over is armed ``since`` the caller's read. ``False``: the topic
        znode's cannot, nothing was taken over (the caller arms them all)."""
        topic_path = znodes_topics.topic_path(topic)
        data = priming.armed.get(topic_path)
        count = None if data is None else self._partition_count(data, topic_path)
        if count is None or not self._watches.adopt(topic_path, priming, read=True):
            return False
        if not self.tracked(topic):  # untracked meanwhile: its watch goes with it
            self._unless_tracked_discard(topic, [topic_path])
            return True
        self._watch_partitions(topic, count, since=read_since, priming=priming)
        return True

    def _on_brokers(self, children: list[str]) -> bool:
        with self._lock:
            if self._stopped:
                return False
            # At least the zxid of the change: a topic tracked later from an older read is refreshed.
            self._brokers_seen_at = self.store.last_zxid() or 0
            self._dirty.update(self._refs)
            self._lock.notify_all()
        self._zookeeper_answered()
        return True

    def _on_znode(self, path: str, data: bytes | None) -> None:
        """A watched topic znode (with its data) or partition state znode changed."""
        topic = znodes_topics.topic_of_path(path)
        if topic is None:
            return
        self._zookeeper_answered()
        if path == znodes_topics.topic_path(topic):
            with self._lock:
                self._read_since.pop(topic, None)  # changed since that read: refreshed below
            if data is not None:
                self._watch_partitions(topic, self._partition_count(data, path))
        self.mark_dirty(topic)

    def _on_znode_unchanged(self, path: str, data: bytes | None) -> None:
        """A topic znode unchanged since the reconcile that tracked it read it: watch its
        partitions from that zxid on; the topic is refreshed only if one of them changed."""
        topic = znodes_topics.topic_of_path(path)
        if topic is None or data is None:
            return
        self._zookeeper_answered()
        with self._lock:
            since = self._read_since.pop(topic, None)
        count = self._partition_count(data, path)
        if since is None or count is None:
            self.mark_dirty(topic)  # nothing to compare with: read it
        self._watch_partitions(topic, count, since=since)

    def _zookeeper_answered(self) -> None:
        """A watch's answer came: ZooKeeper is reachable, so topics kept by an outage (see
        ``_refresh_batch``) need not wait any longer. After a reconnection every watch is armed
        and reported again (``ZnodeWatches``), and this brings their refreshes forward."""
        with self._lock:
            if self._retry_at:
                self._retry_at = 0.0
                self._lock.notify_all()

    @staticmethod
    def _partition_count(data: bytes, path: str) -> int | None:
        try:
            assignment = znodes_topics.TopicZNode.decode(data, path)
        except errors.MalformedZnode:
            return None  # reported by the refresh's own read
        return max(assignment.partitions) + 1 if assignment.partitions else None

    def _watch_partitions(
        self, topic: str, count: int | None, *, since: int | None = None, priming: Priming | None = None
    ) -> None:
        """Watch the state znodes of partitions ``0..count-1`` (partitions only grow); with
        ``since``, a state znode changed after that zxid (or missing) marks the topic dirty.
        With ``priming``, a watch its reads set is taken over instead (``ZnodeWatches.adopt``)."""
        if count is None:
            return
        with self._lock:
            known = self._watched_partitions.get(topic)
            if known is None or count <= known:
                return
            self._watched_partitions[topic] = count
        paths = [znodes_topics.partition_state_path(topic, partition) for partition in range(known, count)]
        for path in paths:
            if priming is None or not self._watches.adopt(path, priming, read=False):
                self._watches.add(path, read=False, since=since)
        self._unless_tracked_discard(topic, paths)

    def _unless_tracked_discard(self, topic: str, paths: list[str]) -> None:
        """Discard the watches just added on ``paths`` if ``topic`` was untracked meanwhile: its
        :meth:`untrack` may have discarded them before they were added, and a watch of a deleted
        topic's znode would otherwise be armed again for good (issue #17). Under the lock, so that
        a track of the topic coming between the check and the discard keeps its watches."""
        with self._lock:
            if topic not in self._refs:
                for path in paths:
                    self._watches.discard(path)
