"""Where a KafkaTopic's new partitions go: Kafka's own placement, or balanced over the whole cluster.

``spec.placement: Kafka`` (the default) is exactly what ``kafka-topics --create`` and
``--alter --partitions`` do (:mod:`kafka_zk_operator.domain.kafka.assignment`): each topic is laid out
round robin from a random start, blind to every other topic, so many small topics pile up
unevenly over the brokers. ``spec.placement: Balanced`` asks the placement engine's load-aware
placement (:func:`kafka_zk_operator.domain.placement.place_new_partitions`) instead: the new
replicas go to the least-loaded brokers given every topic in the cluster, while the topic itself
stays spread (no broker holds much more than its share of the topic) and rack-diverse, and
preferred leaders are balanced cluster-wide. Existing partitions never move.

The load view is a :class:`~kafka_zk_operator.domain.reassignment.plan.ClusterView` (live brokers
and every topic's replicas). Replicas on brokers that are not registered do not count as load
(those brokers cannot receive anything either); topics queued for deletion do not count. When the
topic being grown has replicas on unregistered brokers the engine cannot reason about its spread,
and :func:`balanced_assignment` answers ``None``: the caller then uses Kafka's placement.

Pure (numpy through the engine).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence

from kafka_zk_operator.domain import errors, placement
from kafka_zk_operator.domain.model import BrokerId, PartitionId
from kafka_zk_operator.domain.reassignment.computed import cluster_arrays
from kafka_zk_operator.domain.reassignment.plan import ClusterView


class Placement(enum.Enum):
    """``spec.placement`` of a KafkaTopic."""

    KAFKA = "Kafka"
    BALANCED = "Balanced"


def balanced_assignment(
    cluster: ClusterView,
    topic: str,
    *,
    existing: Mapping[PartitionId, Sequence[BrokerId]],
    partitions: int,
    replication_factor: int,
) -> dict[PartitionId, tuple[BrokerId, ...]] | None:
    """Replica lists (leader first) for partitions ``len(existing) .. partitions - 1`` of ``topic``.

    :param existing: the topic's current partitions (empty for a new topic); they do not move.
    :returns: ``None`` when ``existing`` has replicas on unregistered brokers (see module doc).
    :raises InvalidReplicationFactor: more replicas than registered brokers.
    :raises InvalidSpec: only some brokers have a rack (with ``rack_aware``).
    """
    live = dict(cluster.brokers)
    if any(b not in live for replicas in existing.values() for b in replicas):
        return None
    count = partitions - len(existing)
    if count <= 0:
        return {}
    if replication_factor > len(live):
        raise errors.InvalidReplicationFactor(
            f"Replication factor {replication_factor} is larger than the {len(live)} registered brokers"
        )
    assignments = {
        name: {p: tuple(b for b in replicas if b in live) for p, replicas in parts.items()}
        for name, parts in cluster.assignments.items()
        if name != topic and name not in cluster.deleting
    }
    if existing:
        assignments[topic] = {p: tuple(replicas) for p, replicas in existing.items()}
    view = ClusterView(brokers=live, assignments=_without_empty(assignments))
    placed = placement.place_new_partitions(
        cluster_arrays(view),
        [placement.NewPartitions(topic, count, None if existing else replication_factor)],
    )
    return {p: tuple(replicas) for p, replicas in sorted(placed.assignments[topic].items())}


def _without_empty(
    assignments: Mapping[str, Mapping[PartitionId, tuple[BrokerId, ...]]],
) -> dict[str, dict[PartitionId, tuple[BrokerId, ...]]]:
    """Rows left with no live replica carry no load; the engine's arrays need at least one."""
    kept: dict[str, dict[PartitionId, tuple[BrokerId, ...]]] = {}
    for name, parts in assignments.items():
        rows = {p: replicas for p, replicas in parts.items() if replicas}
        if rows:
            kept[name] = rows
    return kept
