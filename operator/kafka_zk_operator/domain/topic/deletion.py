"""Whether Kafka is ignoring a topic deletion request: the case of 0.10.0 and 0.10.1 controllers.

With ``delete.topic.enable=false``, controllers since 0.10.2 remove a marker written under
``/admin/delete_topics`` and keep the topic (the operator then reports ``DeletionRefusedByKafka``).
0.10.0 and 0.10.1 controllers register no watch on ``/admin/delete_topics`` at all in that case: the
marker stays forever and would hold the KafkaTopic's finalizer forever (seen on real 0.10.0.1 and
0.10.1.1 brokers; 0.10.2.2, 0.11.0.3, 1.1.1 and 3.9.2 remove it).

Those are exactly the brokers that register ``/brokers/ids`` JSON version 3 (0.10.2 went to v4;
v2 is ambiguous: 0.9 or any newer broker with an old inter-broker protocol). When such a
controller leaves our marker alone for :data:`IGNORED_AFTER_S` while nothing could make a deletion
wait - the topic is not being reassigned, every replica's broker is alive, every partition still
has its leader (a controller that deletes takes the replicas offline first) - the request is
taken as ignored: the operator withdraws its marker, as newer controllers would, and reports the
refusal. Pure: the caller reads ZooKeeper and passes the facts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from kafka_zk_operator.domain import model

#: How long a marker may sit untouched before a v3 controller is taken to ignore it.
IGNORED_AFTER_S = 60.0
#: ``/brokers/ids`` JSON version of Kafka 0.10.0 and 0.10.1 brokers.
MARKER_IGNORING_REGISTRATION_VERSION = 3


@dataclass(frozen=True)
class DeletionFacts:
    """What ZooKeeper says while our deletion marker exists."""

    controller_registration_version: int | None
    requested_at: datetime | None
    in_reassignment: bool
    replica_brokers: frozenset[int]
    live_brokers: frozenset[int]
    states: Mapping[int, model.PartitionState]
    partitions: Iterable[int]


def deletion_ignored(facts: DeletionFacts, now: datetime, *, after_s: float = IGNORED_AFTER_S) -> bool:
    """True when the marker is being ignored by a 0.10.0/0.10.1 controller (module docstring)."""
    if facts.controller_registration_version != MARKER_IGNORING_REGISTRATION_VERSION:
        return False
    if facts.requested_at is None or now - facts.requested_at < timedelta(seconds=after_s):
        return False
    if facts.in_reassignment or not facts.replica_brokers <= facts.live_brokers:
        return False  # Kafka defers such deletions (ineligible) without touching the leaders
    partitions = list(facts.partitions)
    return bool(partitions) and all(
        (state := facts.states.get(p)) is not None and state.leader >= 0 for p in partitions
    )
