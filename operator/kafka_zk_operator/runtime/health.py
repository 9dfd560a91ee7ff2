"""Watch-driven partition health in KafkaTopic status: changes show up within seconds.

For every managed topic the reporter keeps ZooKeeper watches on the topic znode and on each
partition ``state`` znode (leader, ISR), all in one ``ZnodeWatches`` of the session, plus one
watch on ``/brokers/ids`` for the cluster. A firing watch only marks the topic dirty; a worker thread reads the topic once
(``ZkStore.read_topic``, the observation a reconcile makes) and the live broker ids, builds the
live partition fields of the status (``domain.topic.status.partition_fields``) and merge-patches the
resource's status when they changed. No polling of every topic: quiet topics cost nothing.

The KafkaTopic handler writes the same fields from its own read, through kopf's patch, which
lands only after the handler returns. So that it never lands over a fresher refresh for good
(leaders and ISR going back in time until the next event), the handler runs inside
:meth:`HealthReporter.reconciling` and says which of these fields its patch carries; a refresh
that overlaps the reconcile, or comes within ``SETTLE_S`` after it, and disagrees with them is
repeated once that window has passed (then writing unconditionally). Agreeing data, the usual
case, costs nothing extra.

The first reconcile of a topic sets those watches with its own reads (``HandlerWrite.priming``,
``ZnodeWatches.adopt``), so tracking a topic a reconcile has just read costs no request (issue
#16: 2 of an adopted topic's 8); what may have changed since that read is armed and read as usual.

While ZooKeeper cannot be reached, a batch of refreshes stops at its first failure: one warning
for all the topics left, which stay dirty and are tried again after 5 s, then a wait that doubles
up to a minute while the outage lasts (``_refresh_batch``), or as soon as a watch's answer shows
ZooKeeper reachable again.

What is kept per topic is small on purpose (issue #16, 10,000 topics in the default memory
limit): what the status last got is kept as a digest, and the per-topic partition gauges are
read from the reporter's own table when Prometheus scrapes (``metrics.TOPIC_HEALTH``) rather than
kept as one gauge object per topic and metric.

The watches and their callbacks are in ``runtime.health_watches`` (a base of the reporter); the
tracking, the handler's window, the worker and the refresh are here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kafka_zk_operator import metrics
from kafka_zk_operator.adapters.zk import znodes_brokers, znodes_topics
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.adapters.zk.watches import Priming
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.timestamps import format_timestamp
from kafka_zk_operator.domain.topic.status import partition_fields
from kafka_zk_operator.domain.wording import counted
from kafka_zk_operator.runtime.health_watches import ResourceRef, TopicWatches

#: Merge-patches ``status`` of one KafkaTopic with the given fields (what it returns is not used).
StatusPatcher = Callable[[ResourceRef, dict[str, Any]], object]

DEBOUNCE_S = 0.3
#: After a refresh found ZooKeeper unreachable, the wait before the topics left are tried again;
#: doubled after each such failure up to ``UNAVAILABLE_MAX_WAIT_S``, back to this after a refresh
#: that reached ZooKeeper.
UNAVAILABLE_WAIT_S = 5.0
UNAVAILABLE_MAX_WAIT_S = 60.0
#: How long after a reconcile its status patch (kopf's, sent after the handler returns) may still
#: be on its way; a disagreeing refresh within it is repeated after it.
SETTLE_S = 2.0
log = logging.getLogger(__name__)


def _digest(fields: dict[str, Any]) -> bytes:
    """What is kept of the live fields a status holds: equal fields, equal digests."""
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def _gauge_counts(fields: dict[str, Any]) -> tuple[int, int]:
    """(under-replicated, offline) partitions, as the per-topic gauges report them."""
    return int(fields.get("underReplicatedPartitions") or 0), int(fields.get("offlinePartitions") or 0)


@dataclass
class HandlerWrite:
    """A reconcile's live partition fields: those its status patch carries, and all of them as
    its new status has them."""

    fields: dict[str, Any] = field(default_factory=dict)
    status: dict[str, Any] = field(default_factory=dict)
    #: The session's last zxid before the reconcile last read the topic (``None``: unknown);
    #: the handler moves it on when it read the topic again after writing.
    read_since: int | None = None
    #: The watches the reconcile's reads of the topic set (``None``: none), handed over by
    #: :meth:`HealthReporter.track`.
    priming: Priming | None = None


class HealthReporter(TopicWatches):
    """Live partition fields of tracked topics into their KafkaTopic statuses (see the module)."""

    def __init__(self, store: ZkStore, patch_status: StatusPatcher, cluster: str) -> None:
        self.store = store
        self.patch_status = patch_status
        self.cluster = cluster
        self._lock = threading.Condition()
        self._refs: dict[str, set[ResourceRef]] = {}
        #: Topic → how many of its partitions (0..n-1) have their state znode watched.
        self._watched_partitions: dict[str, int] = {}
        self._dirty: set[str] = set()
        #: Digests of the live fields each status holds, as far as this reporter knows.
        self._last_sent: dict[tuple[str, ResourceRef], bytes] = {}
        #: Topic → (under-replicated, offline) partitions at its last refresh: the gauges.
        self._health: dict[str, tuple[int, int]] = {}
        self._watches = store.znode_watches(self._on_znode, self._on_znode_unchanged)
        #: Topic → the zxid a reconcile read it after, until its partitions' watches are set.
        self._read_since: dict[str, int] = {}
        #: The session's last zxid when the live brokers were last reported changed.
        self._brokers_seen_at = 0
        #: Topic → handler reconciles in progress; the topic being refreshed now; topics a
        #: refresh touched while a reconcile of them ran.
        self._reconciling: dict[str, int] = {}
        self._refreshing: str | None = None
        self._overlapped: set[str] = set()
        #: Topic → (ref, the live fields a finished reconcile's patch carries, end of its window).
        self._handler_writes: dict[str, tuple[ResourceRef, dict[str, Any], float]] = {}
        #: Topic → when to refresh it again, writing whatever the status holds.
        self._rechecks: dict[str, float] = {}
        self.clock: Callable[[], float] = time.monotonic
        #: While ZooKeeper is unreachable: when to try the dirty topics again, and the next wait.
        self._retry_at = 0.0
        self._unavailable_wait = UNAVAILABLE_WAIT_S
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name=f"kzo-health-{cluster}", daemon=True)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self.store.watch_children(znodes_brokers.BROKER_IDS_PATH, self._on_brokers)
        metrics.TOPIC_HEALTH.add(self._gauge_samples)
        self._thread.start()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify_all()
        self._watches.stop()
        metrics.TOPIC_HEALTH.remove(self._gauge_samples)

    # ------------------------------------------------------------------ tracking
    def track(
        self, topic: str, ref: ResourceRef, *, read_since: int | None = None, priming: Priming | None = None
    ) -> None:
        """Report ``topic``'s health into the status of ``ref`` from now on (idempotent).

        ``read_since``: the caller read the topic after ZooKeeper's transaction ``read_since``
        (``HandlerWrite.read_since``); when none of its znodes changed after it, the watches are
        set without reading the topic again (an adopting operator's topics, issue #16).
        ``priming``: the watches the caller's reads set (``HandlerWrite.priming``); those still
        set are taken over without any request (``ZnodeWatches.adopt``), the others armed.
        """
        with self._lock:
            first = topic not in self._refs
            self._refs.setdefault(topic, set()).add(ref)
            if read_since is not None and self._brokers_seen_at > read_since:
                read_since = None  # the live brokers changed after that read (they are in its fields)
            if first:
                self._watched_partitions[topic] = 0
        if not first:
            return
        if read_since is not None and priming is not None and self._adopt_watches(topic, priming, read_since):
            return
        with self._lock:
            if read_since is not None and topic in self._refs:
                self._read_since[topic] = read_since
        # Reported at once, with its partitions: their watches, then a refresh (none when the
        # caller's read is still current).
        self._watches.add(znodes_topics.topic_path(topic), read=True, since=read_since)
        self._unless_tracked_discard(topic, [znodes_topics.topic_path(topic)])

    def untrack(self, topic: str, ref: ResourceRef) -> None:
        with self._lock:
            refs = self._refs.get(topic)
            if refs is None:
                return
            refs.discard(ref)
            self._last_sent.pop((topic, ref), None)
            if refs:
                return
            del self._refs[topic]
            watched = self._watched_partitions.pop(topic, 0)
            self._read_since.pop(topic, None)
            self._handler_writes.pop(topic, None)
            self._rechecks.pop(topic, None)
            self._health.pop(topic, None)
            # Under the lock: a track of the topic right after must not lose the watches it adds.
            self._watches.discard(znodes_topics.topic_path(topic))
            for partition in range(watched):
                self._watches.discard(znodes_topics.partition_state_path(topic, partition))

    def _gauge_samples(self) -> Sequence[tuple[str, str, int, int]]:
        """``(cluster, topic, under-replicated, offline)`` of every tracked topic refreshed once."""
        with self._lock:
            return [(self.cluster, topic, under, offline) for topic, (under, offline) in self._health.items()]

    @contextlib.contextmanager
    def reconciling(self, topic: str, ref: ResourceRef) -> Iterator[HandlerWrite]:
        """Around a handler's read of the topic and the building of its status patch; the handler
        sets ``.fields`` of the yielded note to the live fields its patch carries and ``.status``
        to all of them as its new status has them."""
        note = HandlerWrite(read_since=self.store.last_zxid())
        with self._lock:
            self._reconciling[topic] = self._reconciling.get(topic, 0) + 1
            if self._refreshing == topic:
                self._overlapped.add(topic)
            first = topic not in self._refs
        try:
            if first:  # its reads set the watches track would arm (see track)
                note.priming = self._watches.priming(lambda path: znodes_topics.topic_of_path(path) == topic)
                with self.store.priming_watches(note.priming):
                    yield note
            else:
                yield note
        finally:
            if note.priming is not None:
                self._watches.release(note.priming)  # those track did not take over
            with self._lock:
                left = self._reconciling.pop(topic) - 1
                if left:
                    self._reconciling[topic] = left
                overlapped = not left and topic in self._overlapped
                if overlapped:
                    self._overlapped.discard(topic)
                if not note.fields and note.status and ref in self._refs.get(topic, ()):
                    # Nothing to patch: the status holds what the reconcile read, unless a
                    # refresh has written since (its own record then stands). Without this an
                    # adopting operator rewrote every in-sync topic on its first refresh.
                    self._last_sent.setdefault((topic, ref), _digest(note.status))
                if note.status and ref in self._refs.get(topic, ()):
                    # The gauges of a topic no refresh has read yet (an adopted one: see track).
                    self._health.setdefault(topic, _gauge_counts(note.status))
                if note.fields:
                    until = self.clock() + SETTLE_S
                    self._handler_writes[topic] = (ref, dict(note.fields), until)
                    # What the status holds once the patch lands: the handler's status is its
                    # view of the status plus the patch (so a first reconcile's own refresh
                    # writes only what changed since).
                    if ref in self._refs.get(topic, ()):
                        self._last_sent[(topic, ref)] = _digest(note.status)
                    if overlapped:  # a refresh read or wrote around it: which landed last is unknown
                        self._rechecks[topic] = until
                        self._lock.notify_all()

    def _disagrees_with_handler(self, topic: str, ref: ResourceRef, fields: dict[str, Any]) -> None:
        """A refresh within a reconcile's window: if it differs from the reconcile's patch, the
        order in which the two land decides the status, so refresh again after the window."""
        with self._lock:
            entry = self._handler_writes.get(topic)
            if entry is None:
                return
            handler_ref, written, until = entry
            if self.clock() >= until:
                del self._handler_writes[topic]
                return
            if handler_ref == ref and any(fields.get(key) != value for key, value in written.items()):
                self._rechecks[topic] = until
                self._lock.notify_all()

    def _due_rechecks(self) -> float | None:
        """Move rechecks whose time has come to the dirty set (their last write forgotten, so the
        refresh writes); the seconds until the next one, if any. Call with the lock held."""
        now = self.clock()
        for topic in [t for t, (_, _, until) in self._handler_writes.items() if until <= now]:
            del self._handler_writes[topic]  # the window has passed
        for topic, due in list(self._rechecks.items()):
            if due <= now:
                del self._rechecks[topic]
                for ref in self._refs.get(topic, ()):
                    self._last_sent.pop((topic, ref), None)
                    self._dirty.add(topic)
        if not self._rechecks:
            return None
        return min(self._rechecks.values()) - now

    def _refreshing_now(self, topic: str, refreshing: bool) -> None:
        """A refresh of ``topic`` starts or ends; either way, a reconcile of it running then overlaps."""
        with self._lock:
            self._refreshing = topic if refreshing else None
            if topic in self._reconciling:
                self._overlapped.add(topic)

    # ------------------------------------------------------------------ worker
    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._stopped:
                    ready, wait = self._next_refresh()
                    if ready:
                        break
                    self._lock.wait(timeout=5 if wait is None else min(5.0, max(wait, 0.01)))
                if self._stopped:
                    return
            time.sleep(DEBOUNCE_S)  # let a burst of watch events settle into one refresh
            with self._lock:
                batch, self._dirty = self._dirty, set()
            self._refresh_batch(sorted(batch))

    def _next_refresh(self) -> tuple[bool, float | None]:
        """Whether dirty topics may be refreshed now; else the seconds until something is due
        (``None``: nothing is). Call with the lock held."""
        wait = self._due_rechecks()
        if not self._dirty:
            return False, wait
        pause = self._retry_at - self.clock()  # ZooKeeper was unreachable: not before then
        if pause <= 0:
            return True, None
        return False, pause if wait is None else min(wait, pause)

    def _refresh_batch(self, topics: Sequence[str]) -> None:
        """Refresh ``topics`` in order. When ZooKeeper is unreachable, every other refresh would
        fail the same way a moment later (a warning each: 10,000 lines for 10,000 topics), so the
        batch stops there: its topics left stay dirty, one warning says how many, and they are
        tried again after a wait that doubles while the outage lasts."""
        for index, topic in enumerate(topics):
            if self._stopped:  # shutting down: the session is closing, drop the rest
                return
            unavailable = self._refresh_one(topic)
            if unavailable is None:
                self._unavailable_wait = UNAVAILABLE_WAIT_S
                continue
            with self._lock:
                self._dirty.update(left for left in topics[index:] if left in self._refs)
                waiting = sorted(self._dirty)
                wait = self._unavailable_wait
                self._retry_at = self.clock() + wait
                self._unavailable_wait = min(wait * 2, UNAVAILABLE_MAX_WAIT_S)
            named = ", ".join(waiting[:3]) + (", ..." if len(waiting) > 3 else "")
            log.warning(
                "could not refresh the status of %s (%s): %s; trying again in %.0f s",
                counted(len(waiting), "topic"),
                named,
                unavailable.message,
                wait,
            )
            return

    def _refresh_one(self, topic: str) -> errors.ClusterUnavailable | None:
        """Refresh one topic; the error when ZooKeeper could not be reached (the caller says
        so), every other failure logged here."""
        self._refreshing_now(topic, True)
        try:
            self._refresh(topic)
        except errors.ClusterUnavailable as error:
            return error
        except errors.KzoError as error:  # e.g. a malformed znode: one line, no traceback
            log.warning("could not refresh the status of topic %s: %s", topic, error.message)
        except Exception:  # keep the reporter alive; the next event or resync retries
            log.exception("refreshing the status of topic %s failed", topic)
        finally:
            self._refreshing_now(topic, False)
        return None

    def _refresh(self, topic: str) -> None:
        with self._lock:
            refs = set(self._refs.get(topic, ()))
        if not refs:
            return
        # The same observation and partition fields as a reconcile's status.
        observed = self.store.read_topic(topic)
        fields = partition_fields(observed, self.store.broker_ids())
        with self._lock:
            if topic not in self._refs:
                return  # untracked while it was read: its gauges are gone and must stay gone
            self._health[topic] = _gauge_counts(fields)
        digest = _digest(fields)
        for ref in refs:
            self._disagrees_with_handler(topic, ref, fields)
            with self._lock:
                if self._last_sent.get((topic, ref)) == digest:
                    continue
            body = dict(fields)
            body["lastSyncTime"] = format_timestamp(datetime.now(UTC))
            self.patch_status(ref, body)
            metrics.STATUS_REFRESHES.labels(self.cluster).inc()
            with self._lock:
                if ref in self._refs.get(topic, ()):  # not untracked meanwhile
                    self._last_sent[(topic, ref)] = digest
