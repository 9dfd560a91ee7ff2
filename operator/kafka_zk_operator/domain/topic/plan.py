"""The values of topic planning: the topic a KafkaTopic asks for, what ZooKeeper holds for it, and
the plan of writes (``domain.topic.planning.plan_topic`` makes it, the topic service applies it).

:class:`ObservedTopic` is the one observation of a topic: ``ZkStore.read_topic`` returns it, the
planner plans against it, and ``domain.topic.status`` builds the status (and the watch-driven
partition health) from it."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.model import BrokerId, PartitionId, PartitionState, TopicAssignment
from kafka_zk_operator.domain.topic.new_partitions import Placement

ReplicaMap = Mapping[PartitionId, tuple[BrokerId, ...]]
#: (existing partitions, wanted partition count, replication factor) -> replica lists for the new
#: partitions, or ``None`` to fall back to Kafka's placement (see ``domain.topic.new_partitions``).
Placer = Callable[
    [Mapping[PartitionId, Sequence[BrokerId]], int, int], dict[PartitionId, tuple[BrokerId, ...]] | None
]


class DriftPolicy(enum.StrEnum):
    """What to do when Kafka differs from the spec in a way the operator can change."""

    #: Write the spec (Strimzi's behaviour): out-of-band config changes are reverted.
    REVERT = "revert"
    #: Keep Kafka's value and report it; only what changed in the spec since the operator last
    #: wrote the config is applied. Partitions added outside the operator are reported too.
    REPORT = "report"


class PlanKind(enum.StrEnum):
    CREATE = "Create"
    GROW = "Grow"
    ALTER_CONFIG = "AlterConfig"
    GROW_AND_ALTER_CONFIG = "GrowAndAlterConfig"
    NO_CHANGE = "NoChange"


@dataclass(frozen=True, slots=True)
class DesiredTopic:
    """The topic a KafkaTopic asks for (``spec.topicName`` or ``metadata.name``, etc.)."""

    name: str
    partitions: int
    replication_factor: int
    config: Mapping[str, str]
    #: ``spec.assignment`` with integer partition ids, or ``None`` for a computed placement.
    assignment: ReplicaMap | None = None
    #: ``spec.placement``: how a computed placement is computed (the caller supplies the placer).
    placement: Placement = Placement.KAFKA


@dataclass(frozen=True, slots=True)
class ObservedTopic:
    """What ZooKeeper holds for the topic name, read in one pass (``ZkStore.read_topic``).

    Nothing at all under the name: ``assignment`` None, ``config`` empty, not marked for deletion
    (the planner also takes ``None`` for that).
    """

    #: ``/brokers/topics/<t>``; ``None`` when absent.
    assignment: TopicAssignment | None
    #: ``/config/topics/<t>`` (the complete override set; empty when absent).
    config: Mapping[str, str]
    #: ``/admin/delete_topics/<t>`` exists.
    marked_for_deletion: bool = False
    #: The topic appears in ``/admin/reassign_partitions`` (the topic znode's adding/removing
    #: replicas are checked as well).
    in_reassignment: bool = False
    #: Why ``/admin/reassign_partitions`` could not be read (then ``in_reassignment`` is True: the
    #: topic may be moving, so partitions and the replication factor wait; the rest is applied).
    reassignment_note: str | None = None
    #: ``/brokers/topics/<t>/partitions/<p>/state`` per partition (missing ones: no leader yet).
    partition_states: Mapping[PartitionId, PartitionState] = field(default_factory=dict)
    #: ZooKeeper data version of ``/config/topics/<t>`` as read: a config write is conditional on
    #: it (``None``: the znode did not exist, so the write must create it).
    config_version: int | None = None
    #: ZooKeeper data version of ``/brokers/topics/<t>`` as read: adding partitions is conditional
    #: on it (``None``: no topic znode).
    assignment_version: int | None = None

    @property
    def is_reassigning(self) -> bool:
        return self.in_reassignment or (self.assignment is not None and self.assignment.is_reassigning)


@dataclass(frozen=True, slots=True)
class CreateTopic:
    """Write ``/config/topics/<t>`` (even when empty), then create ``/brokers/topics/<t>``."""

    assignment: ReplicaMap
    config: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class AlterTopicConfig:
    """Replace ``/config/topics/<t>`` with ``config`` and add a change notification."""

    #: The complete new override set (operator-owned keys carried over from Kafka).
    config: Mapping[str, str]
    #: One phrase per changed key, e.g. ``retention.ms: '1000' -> '2000'``.
    changes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GrowPartitions:
    """Append ``new_assignment`` to ``/brokers/topics/<t>``, keeping every other field."""

    #: Partition count the plan was made against; the write must find exactly this many.
    existing_partition_count: int
    #: Only the new partitions, ids ``existing_partition_count .. total-1``.
    new_assignment: ReplicaMap

    @property
    def total_partitions(self) -> int:
        return self.existing_partition_count + len(self.new_assignment)


TopicAction = CreateTopic | AlterTopicConfig | GrowPartitions


@dataclass(frozen=True, slots=True)
class TopicPlan:
    """The writes for one topic, in the order to apply them, plus what to tell the user."""

    topic: str
    #: Config before partitions, so new partitions' logs are created with the new config.
    actions: tuple[TopicAction, ...] = ()
    warnings: tuple[str, ...] = ()
    drift: tuple[str, ...] = ()

    @property
    def create(self) -> CreateTopic | None:
        return next((a for a in self.actions if isinstance(a, CreateTopic)), None)

    @property
    def alter_config(self) -> AlterTopicConfig | None:
        return next((a for a in self.actions if isinstance(a, AlterTopicConfig)), None)

    @property
    def grow(self) -> GrowPartitions | None:
        return next((a for a in self.actions if isinstance(a, GrowPartitions)), None)

    @property
    def kind(self) -> PlanKind:
        if self.create:
            return PlanKind.CREATE
        if self.grow and self.alter_config:
            return PlanKind.GROW_AND_ALTER_CONFIG
        if self.grow:
            return PlanKind.GROW
        if self.alter_config:
            return PlanKind.ALTER_CONFIG
        return PlanKind.NO_CHANGE

    @property
    def reason(self) -> errors.Reason:
        """Created, Updated or InSync (the caller says Adopted for a first sync of an existing topic)."""
        if self.create:
            return errors.Reason.CREATED
        return errors.Reason.UPDATED if self.actions else errors.Reason.IN_SYNC
