"""Build and render the cluster snapshot that ``kzo snapshot`` writes: the document the
placement engine's ``domain.documents.snapshot.parse_snapshot`` loads::

    {"brokers": {"<id>": {"rack": "<rack or null>"}},
     "topics": {"<name>": {"partitions": {"<p>": [<broker ids>]}}}}

* Brokers are the registered (live) ones, plus every unregistered broker that still holds a
  replica (offline), marked ``"live": false`` with the rack the caller knows for it (ZooKeeper
  forgets the rack of a broker that is down), because the loader requires every replica's broker
  to be listed.
* Topics carry one replica list per partition, the preferred leader first, and optionally
  ``"sizes": {"<p>": <bytes>}``. A partition being reassigned is written as of
  :class:`~kafka_zk_operator.domain.reassignment.replica_views.ReassignmentView` (target by default) and the
  topic gets ``"reassigning": {"view": "target", "partitions": {"<p>": {"target": [...],
  "original": [...]}}}``, a key the loader ignores.
* A topic Kafka could not serve as written (an empty or repeated replica list) is left out and
  reported, so the document always loads.

Keys are ordered numerically (broker and partition ids) or by name (topics), and :func:`render`
puts one broker or topic per line, so two snapshots of the same cluster are byte-identical and
diff well. Pure functions, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kafka_zk_operator.domain.model import Broker, BrokerId, PartitionId, TopicAssignment
from kafka_zk_operator.domain.reassignment.replica_views import (
    MovingPartition,
    ReassignmentView,
    Replicas,
    replicas_as_of,
)


@dataclass(frozen=True, slots=True)
class TopicInput:
    """One topic as read from ZooKeeper: its topic znode and its pending reassignment entries."""

    name: str
    assignment: TopicAssignment
    #: Targets from ``/admin/reassign_partitions`` for this topic's partitions.
    pending: Mapping[PartitionId, Replicas] = field(default_factory=dict)


@dataclass(frozen=True)
class Snapshot:
    """The JSON-ready document plus what the caller should tell the user about it."""

    document: dict[str, object]
    moving: tuple[MovingPartition, ...]
    #: Broker ids that hold replicas but are not registered in ``/brokers/ids`` (offline).
    unregistered_replica_brokers: tuple[BrokerId, ...]
    #: Topics left out, each with the reason.
    left_out: tuple[tuple[str, str], ...] = ()
    #: Topics whose partitions have different replica counts (the loader wants them allowed).
    mixed_rf_topics: tuple[str, ...] = ()

    @property
    def mixed_racks(self) -> bool:
        """Some listed brokers have a rack and others none (the loader refuses that)."""
        brokers = self.document["brokers"]
        assert isinstance(brokers, Mapping)
        racks = [body["rack"] is None for body in brokers.values()]
        return any(racks) and not all(racks)

    @property
    def partition_count(self) -> int:
        topics = self.document["topics"]
        assert isinstance(topics, Mapping)
        return sum(len(body["partitions"]) for body in topics.values())


def build(
    brokers: Sequence[Broker],
    topics: Sequence[TopicInput],
    *,
    view: ReassignmentView = ReassignmentView.TARGET,
    offline_racks: Mapping[BrokerId, str] | None = None,
    sizes: Mapping[tuple[str, PartitionId], int] | None = None,
) -> Snapshot:
    """The snapshot document of ``brokers`` and ``topics`` (any order in, sorted out).

    :param offline_racks: racks of brokers that are not registered but may hold replicas.
    :param sizes: bytes per (topic, partition); partitions without an entry get no size.
    """
    topic_doc: dict[str, object] = {}
    moving: list[MovingPartition] = []
    left_out: list[tuple[str, str]] = []
    mixed: list[str] = []
    used: set[BrokerId] = set()
    for topic in sorted(topics, key=lambda t: t.name):
        replicas, moves = replicas_as_of(topic.name, topic.assignment, view, topic.pending)
        problem = _unusable(replicas)
        if problem is not None:
            left_out.append((topic.name, problem))
            continue
        moving.extend(moves)
        for replica_list in replicas.values():
            used.update(replica_list)
        if len({len(r) for r in replicas.values()}) > 1:
            mixed.append(topic.name)
        body: dict[str, object] = {"partitions": {str(p): list(r) for p, r in replicas.items()}}
        if sizes is not None:
            known = {str(p): sizes[(topic.name, p)] for p in replicas if (topic.name, p) in sizes}
            if known:
                body["sizes"] = known
        if moves:
            body["reassigning"] = {
                "view": view.value,
                "partitions": {
                    str(m.partition): {"target": list(m.target), "original": list(m.original)} for m in moves
                },
            }
        topic_doc[topic.name] = body
    registered = {b.id for b in brokers}
    offline = sorted(used - registered)
    racks = offline_racks or {}
    broker_doc: dict[str, dict[str, object]] = {}
    for broker_id in sorted(registered | set(offline)):
        if broker_id in registered:
            rack = next(b.rack for b in brokers if b.id == broker_id)
            broker_doc[str(broker_id)] = {"rack": rack}
        else:
            broker_doc[str(broker_id)] = {"rack": racks.get(broker_id), "live": False}
    return Snapshot(
        document={"brokers": broker_doc, "topics": topic_doc},
        moving=tuple(moving),
        unregistered_replica_brokers=tuple(offline),
        left_out=tuple(left_out),
        mixed_rf_topics=tuple(mixed),
    )


def _unusable(replicas: Mapping[PartitionId, Replicas]) -> str | None:
    """Why a topic's replica lists cannot go into a snapshot, or ``None``."""
    if not replicas:
        return "its topic znode lists no partitions"
    for partition, replica_list in replicas.items():
        if not replica_list:
            return f"partition {partition} has no replicas"
        if len(set(replica_list)) != len(replica_list):
            return f"partition {partition} lists a broker twice: {list(replica_list)}"
    return None


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True)


def render(document: Mapping[str, object]) -> str:
    """JSON text with one broker and one topic per line; keys keep the document's order."""
    lines = ["{"]
    sections = list(document.items())
    for index, (key, value) in enumerate(sections):
        closing = "}" + ("," if index < len(sections) - 1 else "")
        if isinstance(value, Mapping) and value:
            lines.append(f"{_compact(key)}:{{")
            items = list(value.items())
            for position, (name, body) in enumerate(items):
                comma = "," if position < len(items) - 1 else ""
                lines.append(f" {_compact(name)}:{_compact(body)}{comma}")
            lines.append(closing)
        else:
            lines.append(f"{_compact(key)}:{_compact(value)}{closing[1:]}")
    lines.append("}")
    return "\n".join(lines) + "\n"
