"""Frozen value types shared by every layer: brokers, assignments, topics, partition states.

Broker ids and partition ids are plain ``int``; topic names plain ``str``. An *assignment* maps
partition id → replica list, the first replica being the preferred leader (Kafka's meaning).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Generic, TypeVar

BrokerId = int
PartitionId = int
TopicName = str
Assignment = Mapping[PartitionId, tuple[BrokerId, ...]]

T = TypeVar("T")


@dataclass(frozen=True)
class Versioned(Generic[T]):
    """A value with the version it was read at: a conditional write of it names that version.

    ZooKeeper: the znode's data version. The Admin API has no versions; its backend reads
    the value again right before a write and passes ``-1``.
    """

    value: T
    version: int


@dataclass(frozen=True, slots=True, order=True)
class Broker:
    """A broker as the placement algorithms see it: its id and optional ``broker.rack``."""

    id: BrokerId
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionState:
    """The controller-owned ``/brokers/topics/<t>/partitions/<p>/state`` content (read-only for us)."""

    leader: BrokerId
    isr: tuple[BrokerId, ...]
    leader_epoch: int
    controller_epoch: int
    leader_recovery_state: int = 0
    partition_epoch: int = 0


@dataclass(frozen=True, slots=True)
class TopicAssignment:
    """The ``/brokers/topics/<t>`` content: replicas per partition plus reassignment bookkeeping.

    ``extra`` keeps fields this version of the operator does not know, so a rewrite preserves them.
    """

    partitions: Mapping[PartitionId, tuple[BrokerId, ...]]
    topic_id: str | None = None
    adding_replicas: Mapping[PartitionId, tuple[BrokerId, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    removing_replicas: Mapping[PartitionId, tuple[BrokerId, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    version: int = 3
    extra: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def replication_factor(self) -> int:
        """Replica count of partition 0 outside of a reassignment (Kafka's notion of the topic's RF)."""
        if not self.partitions:
            return 0
        first = min(self.partitions)
        return len(self.partitions[first]) - len(self.adding_replicas.get(first, ()))

    @property
    def is_reassigning(self) -> bool:
        return bool(self.adding_replicas) or bool(self.removing_replicas)


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    topic: TopicName
    partition: PartitionId

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class PartitionReassignment:
    """One partition's reassignment as Kafka holds it (an entry of ``/admin/reassign_partitions``,
    or one of ListPartitionReassignments): the target replica list, preferred leader first."""

    topic: TopicName
    partition: PartitionId
    replicas: tuple[BrokerId, ...]

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)
