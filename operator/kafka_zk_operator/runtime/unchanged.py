"""What a resource's last full resync depended on, so that the next one can see nothing changed.

A resync of an in-sync KafkaTopic reads every znode of the topic and the live brokers, plans,
builds the status and finds nothing to do: with thousands of topics that was most of the
operator's CPU (issue #16). Its result depends only on

- the resource: its generation, its reconcile mode, whether another resource claims the topic
  (the *key*);
- the znodes it read: their stamps (``mzxid``, ``cversion``: ``adapters.zk.stat_probe``) as the
  read's own answers gave them (``adapters.zk.read_stamps``), so they name exactly the state of
  each znode the reconcile decided from; a znode found in two states during one read has none,
  and the resource's next resync reads in full;
- the status it started from (a digest; kopf's own ``status.kopf`` left out);
- the clock, only through the ``lastSyncTime`` heartbeat.

When a resync wrote nothing and asked for no retry, the handler records these (:class:`LastRead`);
the next resync of the resource probes the same znodes and, when key, stamps and status digest are
equal and no heartbeat is due, it is done: nothing read but the stamps, nothing written. Any
difference, or no record, is a full reconcile as before.

A create, update or resume handler whose reconcile wrote nothing, asked for no retry and changed
no status field records one too, the same way. (A reconcile that changed the status is not its
own fixed point: a first ``Adopted`` becomes ``InSync`` on the next one, so its next resync reads
in full.) A restarted operator's adoption reads every topic once; without this each topic's first
resync read it all again (10,000 full reconciles in the first period after a restart, issue #16),
and while its records held no stamps, the first write anywhere in ZooKeeper after a restart did
the same. A resync with no record to compare with does not probe: it reads in full, and its read
gives the stamps of the next record.

Before probing, a resync compares ZooKeeper's last transaction id (one request a second for the
whole cluster, ``stat_probe.RecentZxid``) with the one seen before the read its stamps come
from: equal means no znode at all changed since, and the resync is done without a request of
its own. On a quiet cluster that is every resync; a busy one falls back to the stamps, and a
resync whose stamps match moves its record's zxid forward.

Every topic's read includes ``/admin/reassign_partitions`` (while a topic is in it, partitions
and the replication factor wait), and Kafka's controller rewrites that znode as the partitions of
a reassignment finish: with its stamp compared like the others, each rewrite turned the next
resync of *every* topic into a full read (about a restart's work per period for as long as a
reassignment runs, issue #16). A reconcile depends only on the topic's place in it (in it or not;
unreadable), so a record keeps that place, and when the znode's stamp alone moved, the resync asks
the place in the new state from the decode the store keeps (read and decoded once per state of
the znode, in the thread pool, when none is kept yet): the same place is the same result. This is
sound whenever the znode changed: the place a reconcile decided from is of the state its stamp
names or of a later one (the decode the store keeps may be newer), and the one compared with is
later still.

A topic of more than :data:`MAX_PROBED_PARTITIONS` partitions (as ZooKeeper holds it) is never
probed: a probe costs the event loop about 0.25 ms per znode (3,000 stamps took 0.7-0.8 s of
CPU), and the schema lets a spec ask for 1,000,000 partitions, whose probe held the loop for
minutes and stalled every other resource's handlers.
Such a topic is resynced by the full reconcile in the thread pool, as before stamps.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_zk_operator import config
from kafka_zk_operator.adapters.zk.stat_probe import Stamp
from kafka_zk_operator.domain.timestamps import parse_timestamp
from kafka_zk_operator.domain.topic.resource import KafkaTopicResource

#: The most partitions a resync probes by stamps (see the module docstring).
MAX_PROBED_PARTITIONS = 2_000


def probed(partitions: int) -> bool:
    """Whether a resync of a topic of ``partitions`` partitions may go by stamps."""
    return 0 <= partitions <= MAX_PROBED_PARTITIONS


@dataclass(frozen=True)
class LastRead:
    """What the last clean resync of one resource depended on."""

    key: Hashable
    paths: tuple[str, ...]
    #: ``None``: recorded by a handler's read, which took no stamps (only ``zxid`` can settle).
    stamps: tuple[Stamp, ...] | None
    status_digest: str
    #: Epoch seconds from which ``lastSyncTime`` is due again (``inf``: no heartbeat).
    heartbeat_due: float
    #: ZooKeeper's last transaction id, seen before the read ``stamps`` come from (None: not known).
    zxid: int | None = None
    #: The topic's place in ``/admin/reassign_partitions`` (in it, why unreadable) the read
    #: decided from (None: not known). When that znode's stamp alone moved, the record still holds
    #: if the topic's place in its new state is the same (see the module docstring).
    reassignment: tuple[bool, str | None] | None = None

    def still_holds(self, key: Hashable, stamps: tuple[Stamp, ...], status_digest: str, now: float) -> bool:
        return (
            key == self.key
            and self.stamps is not None
            and stamps == self.stamps
            and status_digest == self.status_digest
            and now < self.heartbeat_due
        )

    def holds_with_no_transaction_since(
        self, key: Hashable, zxid: int, status_digest: str, now: float
    ) -> bool:
        """Like :meth:`still_holds` without reading a stamp: ZooKeeper has applied no transaction
        at all since the read this record's stamps come from (``stat_probe.RecentZxid``)."""
        return (
            self.zxid is not None
            and zxid == self.zxid
            and key == self.key
            and status_digest == self.status_digest
            and now < self.heartbeat_due
        )


def resync_key(
    annotations: Mapping[str, Any] | None, resource: KafkaTopicResource, conflict_with: str | None
) -> Hashable:
    """What a reconcile's result depends on besides ZooKeeper and the status: the generation, the
    reconcile mode, the resource that claims the same topic (``None``: none) and the legacy kopf
    annotations a reconcile removes."""
    legacy = tuple(config.legacy_kopf_annotations(annotations))
    return (resource.generation, resource.mode, conflict_with, legacy)


def heartbeat_due(status: Mapping[str, Any], heartbeat_seconds: float) -> float:
    """Epoch seconds from which ``status`` needs its ``lastSyncTime`` heartbeat (``inf``: never)."""
    last_sync = parse_timestamp(status.get("lastSyncTime"))
    if last_sync is None or math.isinf(heartbeat_seconds):
        return math.inf if math.isinf(heartbeat_seconds) else 0.0
    return last_sync.timestamp() + heartbeat_seconds


class LastReads:
    """The :class:`LastRead` of every resource (by uid), shared by the handler threads."""

    def __init__(self) -> None:
        self._records: dict[str, LastRead] = {}
        self._lock = threading.Lock()

    def get(self, uid: str) -> LastRead | None:
        with self._lock:
            return self._records.get(uid)

    def record(self, uid: str, last: LastRead) -> None:
        with self._lock:
            self._records[uid] = last

    def forget(self, uid: str) -> None:
        with self._lock:
            self._records.pop(uid, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)


def status_digest(status: Mapping[str, Any] | None) -> str:
    """A digest of a resource's status without kopf's own field (``status.kopf``)."""
    mine = {key: value for key, value in (status or {}).items() if key != "kopf"}
    text = json.dumps(mine, sort_keys=True, separators=(",", ":"), default=dict)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def merge_patched(target: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``target`` after a JSON merge patch (RFC 7386): what the API server makes of kopf's patch."""
    merged = dict(target)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge_patched(merged[key], value)
        elif isinstance(value, Mapping):
            merged[key] = merge_patched({}, value)
        else:
            merged[key] = value
    return merged
