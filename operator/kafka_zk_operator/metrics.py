"""Prometheus metrics of the operator (served on ``KZO_METRICS_PORT`` at ``/metrics``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence

import prometheus_client
from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kafka_zk_operator import __version__

BUILD_INFO = Gauge("kzo_build_info", "Always 1; its version label is the operator's version", ["version"])
BUILD_INFO.labels(version=__version__).set(1)
RECONCILIATIONS = Counter(
    "kzo_reconciliations_total", "Reconciliations by resource kind and result", ["kind", "result"]
)
RECONCILE_SECONDS = Histogram(
    "kzo_reconcile_duration_seconds",
    "Time spent in one reconciliation",
    ["kind"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
RESYNCS_UNCHANGED = Counter(
    "kzo_resyncs_unchanged_total",
    "Resyncs that found the resource, its status and every znode they read as the last one left them",
    ["kind"],
)
HANDLER_NUDGES = Counter(
    "kzo_handler_nudges_total",
    "Resources no handler had reported on a whole resync period after kopf last saw them, touched"
    " so that kopf handles them again",
    ["kind"],
)
STATUS_FIELDS_PATCHED = Counter(
    "kzo_status_fields_patched_total",
    "Status fields a reconcile's patch changed, by field (which part of the status keeps changing)",
    ["kind", "field"],
)
STATUS_REFRESHES = Counter(
    "kzo_status_refreshes_total",
    "KafkaTopic status patches of live partition fields (leaders, ISR) sent because Kafka changed them",
    ["cluster"],
)
ZK_WRITES = Counter("kzo_zookeeper_writes_total", "ZooKeeper writes (transactions count once)", ["cluster"])
ADMIN_WRITES = Counter(
    "kzo_admin_api_writes_total",
    "Kafka Admin API write requests (CreateTopics, CreatePartitions, IncrementalAlterConfigs, DeleteTopics...)",
    ["cluster"],
)
LEADER = Gauge("kzo_leader", "1 while this replica is the elected leader (always 1 without leader election)")
ZK_CONNECTED = Gauge(
    "kzo_zookeeper_session_connected", "1 while the ZooKeeper session is connected", ["cluster"]
)
TOPICS_BY_CONDITION = Gauge(
    "kzo_kafkatopics", "KafkaTopic resources by Ready condition reason", ["cluster", "ready", "reason"]
)
EVENTS_POSTED = Counter("kzo_events_total", "Kubernetes Events posted", ["kind", "type", "reason"])
REASSIGNMENT_PROGRESS = Gauge(
    "kzo_reassignment_partitions_done",
    "Partitions completed by a PartitionReassignment",
    ["namespace", "name"],
)
REASSIGNMENT_TOTAL = Gauge(
    "kzo_reassignment_partitions_total", "Partitions in a PartitionReassignment's plan", ["namespace", "name"]
)
REASSIGNMENT_ETA = Gauge(
    "kzo_reassignment_estimated_completion_timestamp_seconds",
    "When a running PartitionReassignment should complete at its pace so far (Unix time)",
    ["namespace", "name"],
)
REPLICAS_MOVED = Counter("kzo_replicas_moved_total", "Replica moves completed by reassignments", ["cluster"])
QUEUED_REASSIGNMENTS = Gauge(
    "kzo_reassignments_queued", "PartitionReassignments waiting in the queue", ["cluster"]
)
PRIVATE_HOOKS = Gauge(
    "kzo_private_hook_active",
    "1 while a hook into kopf's or kazoo's internals is in place, 0 once the installed library was found"
    " without the shape it relies on (the operator then works without it, slower)",
    ["hook"],
)
MIGRATION_PHASE = Gauge(
    "kzo_kraft_migration_phase",
    "1 for the phase of the ZooKeeper -> KRaft migration the operator last read for the cluster"
    " (ZooKeeper: no migration), 0 for the other phases",
    ["cluster", "phase"],
)
_hooks_off: set[str] = set()
_hooks_lock = threading.Lock()
log = logging.getLogger(__name__)


def migration_phase(cluster: str, current: str, phases: Sequence[str]) -> None:
    """Record the cluster's migration phase: 1 for ``current``, 0 for every other of ``phases``."""
    for name in phases:
        MIGRATION_PHASE.labels(cluster, name).set(1 if name == current else 0)


def private_hook(hook: str, active: bool, why: str = "") -> None:
    """Record whether ``hook`` (a hook into kopf's or kazoo's internals, e.g. ``kazoo_batched_sends``)
    is in place; the first time it is not, a warning says so (docs/development.md#private-hooks)."""
    PRIVATE_HOOKS.labels(hook=hook).set(1 if active else 0)
    if active:
        return
    with _hooks_lock:
        if hook in _hooks_off:
            return
        _hooks_off.add(hook)
    log.warning(
        "private hook %s is off: %s; the installed library is not the one it was written for "
        "(tests/unit/test_private_hooks.py names what changed; docs/development.md#private-hooks)",
        hook,
        why or "its target is not as expected",
    )


#: ``(cluster, topic, under-replicated partitions, offline partitions)`` of the topics one reporter tracks.
TopicHealthSamples = Callable[[], Sequence[tuple[str, str, int, int]]]


class TopicHealthCollector(Collector):
    """``kzo_topic_under_replicated_partitions`` and ``kzo_topic_offline_partitions``, per cluster
    and topic, read from the health reporters' own tables when Prometheus scrapes.

    A labelled ``Gauge`` keeps one child object per topic and metric, about 790 bytes each: 16 MB
    of the operator's memory at 10,000 topics (issue #16).
    """

    def __init__(self) -> None:
        self._sources: list[TopicHealthSamples] = []
        self._lock = threading.Lock()

    def add(self, source: TopicHealthSamples) -> None:
        with self._lock:
            self._sources.append(source)

    def remove(self, source: TopicHealthSamples) -> None:
        with self._lock:
            if source in self._sources:
                self._sources.remove(source)

    def describe(self) -> Iterator[GaugeMetricFamily]:
        yield from self._families()

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self._lock:
            sources = list(self._sources)
        under, offline = self._families()
        for source in sources:
            for cluster, topic, under_replicated, offline_partitions in source():
                under.add_metric([cluster, topic], under_replicated)
                offline.add_metric([cluster, topic], offline_partitions)
        yield under
        yield offline

    @staticmethod
    def _families() -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
        labels = ["cluster", "topic"]
        return (
            GaugeMetricFamily(
                "kzo_topic_under_replicated_partitions",
                "Under-replicated partitions per topic",
                labels=labels,
            ),
            GaugeMetricFamily("kzo_topic_offline_partitions", "Offline partitions per topic", labels=labels),
        )


TOPIC_HEALTH = TopicHealthCollector()
prometheus_client.REGISTRY.register(TOPIC_HEALTH)

_serving: set[int] = set()
_serving_lock = threading.Lock()


def serve(port: int) -> None:
    """Serve ``/metrics`` on ``port`` (once per process: a standby starts it before kopf does)."""
    with _serving_lock:
        if port and port not in _serving:
            prometheus_client.start_http_server(port)
            _serving.add(port)
