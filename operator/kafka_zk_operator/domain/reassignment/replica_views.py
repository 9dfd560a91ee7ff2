"""The replica list of a partition as of *before* or *after* an in-flight reassignment.

Used by ``kzo snapshot`` (which list goes into the snapshot) and ``kzo import`` (which
replication factor goes into a KafkaTopic). What ZooKeeper records (reference §3.1, §8, §9):

* Kafka 2.4+: while a partition moves, ``/brokers/topics/<t>`` lists ``RS = (target ++
  original).distinct`` with ``adding_replicas = target - original`` and ``removing_replicas =
  original - target``. The **target** is exactly ``RS`` minus the removing replicas (it is the
  prefix of ``RS``, order included). The **original** set is exactly ``RS`` minus the adding
  replicas; its order is only known when target and original share no broker (otherwise the
  shared brokers appear in target order: ZooKeeper does not keep the old order).
* Kafka 1.1 to 2.3 (and a 2.4+ request the controller has not picked up yet): no bookkeeping in
  the topic znode; the target is only in ``/admin/reassign_partitions``. Before the controller
  acts, the topic znode still holds the original; after, it holds the union of both (2.3:
  unordered). So the original is exact only while the target is not yet contained in it.

Pure functions, no I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafka_zk_operator.domain.model import BrokerId, PartitionId, TopicAssignment

Replicas = tuple[BrokerId, ...]


class ReassignmentView(enum.StrEnum):
    """Which replica list stands for a partition that is being reassigned."""

    #: Where the partition is going: the cluster as it will be when the reassignment completes.
    TARGET = "target"
    #: Where the partition was before the reassignment started.
    ORIGINAL = "original"


@dataclass(frozen=True, slots=True)
class MovingPartition:
    """A partition with a reassignment in flight, and both of its replica lists."""

    topic: str
    partition: PartitionId
    #: The replica list in ``/brokers/topics/<t>`` right now.
    current: Replicas
    target: Replicas
    original: Replicas
    #: False when ``original`` is only an approximation (see the module docstring).
    original_exact: bool


def pending_targets(
    entries: Sequence[tuple[str, PartitionId, Sequence[BrokerId]]],
) -> dict[str, dict[PartitionId, Replicas]]:
    """``/admin/reassign_partitions`` entries (topic, partition, replicas) grouped by topic."""
    grouped: dict[str, dict[PartitionId, Replicas]] = {}
    for topic, partition, replicas in entries:
        grouped.setdefault(topic, {})[partition] = tuple(replicas)
    return grouped


def moving_partition(
    topic: str,
    partition: PartitionId,
    assignment: TopicAssignment,
    pending: Mapping[PartitionId, Replicas] | None = None,
) -> MovingPartition | None:
    """Both replica lists of ``partition`` when it is being reassigned, else ``None``."""
    current = tuple(assignment.partitions[partition])
    adding = set(assignment.adding_replicas.get(partition, ()))
    removing = set(assignment.removing_replicas.get(partition, ()))
    if adding or removing:
        target = tuple(b for b in current if b not in removing)
        original = tuple(b for b in current if b not in adding)
        return MovingPartition(
            topic, partition, current, target, original, original_exact=not set(target) & set(original)
        )
    requested = (pending or {}).get(partition)
    if requested is None or tuple(requested) == current:
        return None
    target = tuple(requested)
    # Not yet acted on: the topic znode still holds the original, exactly. Once the target is
    # contained in it, it may be the union of both (before 2.4) and the original is unknown.
    exact = not set(target) <= set(current)
    return MovingPartition(topic, partition, current, target, current, original_exact=exact)


def replicas_as_of(
    topic: str,
    assignment: TopicAssignment,
    view: ReassignmentView,
    pending: Mapping[PartitionId, Replicas] | None = None,
) -> tuple[dict[PartitionId, Replicas], list[MovingPartition]]:
    """Every partition's replica list under ``view``, in partition order, and the moving ones."""
    replicas: dict[PartitionId, Replicas] = {}
    moving: list[MovingPartition] = []
    for partition in sorted(assignment.partitions):
        move = moving_partition(topic, partition, assignment, pending)
        if move is None:
            replicas[partition] = tuple(assignment.partitions[partition])
        else:
            moving.append(move)
            replicas[partition] = move.target if view is ReassignmentView.TARGET else move.original
    return replicas, moving
