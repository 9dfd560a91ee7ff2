"""The one protocol between the topic services and a cluster backend.

Two backends implement it, side by side in ``adapters``: the ZooKeeper store
(``adapters.zk.store.ZkStore``: Kafka's own znodes, versioned transactions) where ZooKeeper is
authoritative, and the Kafka Admin API backend (``adapters.kafka.admin_backend.AdminBackend``)
where it is not (a migration past the KRaft controller's takeover, or a KRaft cluster).
``runtime.clusters`` picks one per pass from the migration phase (``domain.migration.phase``).

Everything above this seam (planning, placement, status, events, metrics) is shared. What the
backends do differently is documented on each method: the Admin API has no compare-and-set, so
its "versions" are ``None`` and every conditional write reads again right before it writes.

Protocols only: this module imports no kazoo and no Kafka client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from kafka_zk_operator.domain import model
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.topic.plan import ObservedTopic

#: Whether a topic is in a reassignment, and why that could not be read (``None``: it could).
ReassignmentPlace = tuple[bool, str | None]


class BrokerRecord(Protocol):
    """A live broker as its backend saw it (a ``/brokers/ids`` registration, or DescribeCluster)."""

    @property
    def broker(self) -> model.Broker: ...


class TopicBackend(Protocol):
    """What the KafkaTopic service reads and writes (``service.topics``, ``service.deletion``,
    ``service.cluster_views``).

    Errors are the domain's ``KzoError``s: ``ClusterUnavailable`` (retried), ``VersionConflict``
    (someone else wrote since the read: the next pass reads and plans again), ``InvalidSpec`` and
    ``NotSupported`` (what Kafka refused, said so it can be fixed).
    """

    #: Writes this backend made (a no-op pass makes none: the resync tests check it).
    writes: int

    # Reads.
    def topic_names(self) -> list[str]: ...

    def read_topic(
        self, topic: str, *, with_states: bool = True, expected_partitions: int = 0
    ) -> ObservedTopic:
        """Assignment, config overrides, leaders/ISR per partition, topic id, reassignment place."""
        ...

    def read_topic_and_brokers(
        self, topic: str, *, expected_partitions: int = 0
    ) -> tuple[ObservedTopic, Sequence[BrokerRecord]]: ...

    def read_assignment(self, topic: str) -> model.Versioned[model.TopicAssignment] | None: ...

    def partition_states(self, topic: str, partitions: Sequence[int]) -> dict[int, model.PartitionState]: ...

    def broker_ids(self) -> list[int]: ...

    def live_brokers(self) -> list[model.Broker]: ...

    def topics_marked_for_deletion(self) -> list[str]: ...

    def cluster_line(self, registrations: Sequence[Any] | None = None) -> kafka_lines.ClusterLine:
        """The Kafka line whose rules the writes follow. ``registrations``: the brokers this
        backend's :meth:`read_topic_and_brokers` just returned (each backend its own records)."""
        ...

    def maybe_in_reassignment(self, topic: str) -> ReassignmentPlace: ...

    def controller_registration_version(self) -> int | None:
        """The ZooKeeper-mode controller's ``/brokers/ids`` JSON version (``None``: none, or KRaft)."""
        ...

    def last_zxid(self) -> int | None:
        """ZooKeeper: the session's last zxid (what later reads see at least). Admin: ``None``."""
        ...

    def wait_for_leaders(self, topic: str, partitions: int, timeout: float) -> bool: ...

    # Writes.
    def create_topic(
        self,
        topic: str,
        partitions: Mapping[int, Sequence[int]],
        config: Mapping[str, str],
        *,
        observed: ObservedTopic | None = None,
    ) -> None:
        """Create the topic with exactly this assignment and these overrides, atomically."""
        ...

    def write_topic_config(
        self, topic: str, config: Mapping[str, str], *, expected_version: int | None
    ) -> None:
        """Make the topic's overrides exactly ``config``. ZooKeeper: one versioned replace.
        Admin: describe, then an incremental alter of only the keys that differ."""
        ...

    def add_partitions(
        self,
        topic: str,
        new_partitions: Mapping[int, Sequence[int]],
        *,
        expected: model.Versioned[model.TopicAssignment],
    ) -> None:
        """Add partitions (only ever grow); ``expected`` is the assignment they were planned from."""
        ...

    # Deletion.
    def is_marked_for_deletion(self, topic: str) -> bool: ...

    def mark_topic_for_deletion(self, topic: str) -> bool: ...

    def withdraw_deletion_marker(self, topic: str) -> bool: ...

    def topic_fully_deleted(self, topic: str) -> bool: ...


class ReassignmentBackend(TopicBackend, Protocol):
    """What the PartitionReassignment service adds (``service.reassignment``): Kafka's pending
    reassignment, entity configs (the throttles), submission and preferred leader election.

    ZooKeeper: ``/admin/reassign_partitions`` (one at a time, create only), versioned
    ``/config/<type>/<name>`` writes with change notifications, ``/admin/preferred_replica_election``.
    Admin API: ListPartitionReassignments / AlterPartitionReassignments (also to cancel a move),
    DescribeConfigs + IncrementalAlterConfigs of only the keys that change, ElectLeaders (PREFERRED).
    """

    def pending_reassignment(self) -> model.Versioned[list[model.PartitionReassignment]] | None:
        """Kafka's reassignment in progress, each partition's target (``None``: none).

        :raises MalformedZnode: (ZooKeeper) the znode does not parse."""
        ...

    def create_reassignment(self, entries: Sequence[model.PartitionReassignment]) -> None:
        """Start moving ``entries`` to their targets. :raises ReassignmentInProgress: (ZooKeeper)
        another reassignment appeared meanwhile."""
        ...

    @property
    def can_cancel(self) -> bool:
        """Whether :meth:`cancel_reassignment` can stop a running move. Admin API: True (KIP-455).
        ZooKeeper: False, ``/admin/reassign_partitions`` runs to its end (a stop or a deletion
        waits for the batch in flight)."""
        ...

    def cancel_reassignment(self, partitions: Sequence[model.TopicPartition]) -> None:
        """Cancel the moves of ``partitions``: Kafka puts back their replicas from before the move
        (Admin API: AlterPartitionReassignments with no target). A partition that is not moving
        (it finished meanwhile, or its topic is gone) is no error, so a repeat is harmless.

        :raises NotSupported: (ZooKeeper) the backend cannot cancel (see :attr:`can_cancel`)."""
        ...

    def read_entity_config(self, entity_type: str, name: str) -> model.Versioned[dict[str, str]] | None:
        """A ``topics`` or ``brokers`` entity's dynamic config overrides (``None``: none at all)."""
        ...

    def read_topic_config(self, topic: str) -> model.Versioned[dict[str, str]] | None: ...

    def update_entity_config(
        self, entity_type: str, name: str, change: Callable[[dict[str, str]], dict[str, str]]
    ) -> bool:
        """Read, apply ``change``, write what differs; False when nothing changed."""
        ...

    def create_preferred_election(self, partitions: Sequence[model.TopicPartition]) -> bool:
        """Ask for a preferred leader election; False when (ZooKeeper) another one is pending."""
        ...

    def pending_preferred_election(self) -> tuple[model.TopicPartition, ...] | None: ...
