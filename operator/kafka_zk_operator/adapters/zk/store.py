"""The ZooKeeper store: every read and write the operator makes on a Kafka cluster's metadata.

Rules it enforces (``shared/reference/kafka-zookeeper.md`` §12-13):
- writes are conditional on the version that was read (never ``-1`` on ``/brokers/topics`` or
  ``/config``); multi-znode changes are one ZooKeeper transaction (topic create = config +
  assignment; config change = config + ``/config/changes`` notification);
- ``topic_id``, ``adding_replicas``, ``removing_replicas`` and unknown fields survive rewrites;
- partition ``state`` znodes are only read; partition counts only grow;
- ``/admin/reassign_partitions`` is only ever created (never set or deleted);
- nothing is written while the cluster is migrating to KRaft, and every write transaction checks
  the ``/controller_epoch`` version the KRaft guard read, so a controller change in between fails
  the write instead of letting it land (:meth:`ZkStore.ensure_writable`);
- a topic's config znode is only written while its topic znode exists (never re-created for a
  topic Kafka just deleted), and missing parents (``/config/brokers`` on 0.10.1-1.0) are created.

Every write increments ``writes`` (one per transaction or single-znode write) so callers and the
benchmarks can prove that a no-op resync writes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import ZnodeStat

from kafka_zk_operator.adapters.zk import errors as zk_errors
from kafka_zk_operator.adapters.zk import (
    watches,
    znodes_admin,
    znodes_brokers,
    znodes_cluster,
    znodes_config,
    znodes_topics,
)
from kafka_zk_operator.adapters.zk.session import kafka_acls
from kafka_zk_operator.domain import errors, kafka_lines, model

NOTIFICATION_PREFIX = znodes_config.CONFIG_CHANGE_CREATE_PATH
T = TypeVar("T")


@dataclass(frozen=True)
class Versioned(Generic[T]):
    """A decoded znode together with the ZooKeeper data version it was read at."""

    value: T
    version: int


@dataclass(frozen=True)
class TopicSnapshot:
    """Everything ZooKeeper says about one topic, read in one pass."""

    name: str
    assignment: Versioned[model.TopicAssignment]
    config: Versioned[dict[str, str]] | None
    marked_for_deletion: bool
    #: The topic is in ``/admin/reassign_partitions`` - or may be: see ``reassignment_znode_problem``.
    in_reassignment_znode: bool
    states: Mapping[int, model.PartitionState] = field(default_factory=dict)
    #: Why ``/admin/reassign_partitions`` could not be read (someone else wrote data that does not
    #: parse); the topic then counts as possibly being reassigned, and the rest of the read stands.
    reassignment_znode_problem: str | None = None


class ZkStore:
    """Reads and versioned writes of Kafka's znodes through one started ``KazooClient``."""

    def __init__(
        self,
        client: KazooClient,
        *,
        secure_acls: bool = False,
        kafka_version: kafka_lines.KafkaLine | None = None,
    ) -> None:
        self.client = client
        self.secure_acls = secure_acls
        #: The cluster's ``kafkaVersion`` setting (None: inferred from the registrations).
        self.kafka_version = kafka_version
        self._lock = threading.Lock()
        self.writes = 0
        #: Called after every successful write (e.g. to count it in a metric).
        self.on_write: Callable[[], None] | None = None
        #: (cversion of /brokers/ids, {live broker id: registration version}): re-read only when
        #: a broker registered or left since, not for every config write.
        self._registration_versions: tuple[int, dict[int, int]] | None = None

    # ------------------------------------------------------------------ helpers
    def _count_write(self) -> None:
        with self._lock:
            self.writes += 1
        if self.on_write is not None:
            self.on_write()

    def _get(self, path: str) -> tuple[bytes, ZnodeStat] | None:
        with zk_errors.mapped(path):
            try:
                data, stat = self.client.get(path)
            except NoNodeError:
                return None
        return data, stat

    def _exists(self, path: str) -> bool:
        with zk_errors.mapped(path):
            return self.client.exists(path) is not None

    def _children(self, path: str) -> list[str]:
        with zk_errors.mapped(path):
            try:
                children: list[str] = self.client.get_children(path)
            except NoNodeError:
                return []
        return children

    def _acl(self, path: str) -> object:
        return kafka_acls(path, self.secure_acls)

    # ------------------------------------------------------------------ watches
    def watch_children(self, path: str, callback: watches.ChildrenCallback) -> None:
        """``callback`` gets the children of ``path`` now and after every change (``adapters.zk.watches``)."""
        watches.watch_children(self.client, path, callback)

    def watch_data(self, path: str, callback: watches.DataCallback) -> None:
        """``callback`` gets the data of ``path`` now and after every change (``adapters.zk.watches``)."""
        watches.watch_data(self.client, path, callback)

    def holds_kafka_cluster(self) -> bool:
        """``/brokers/ids`` exists: a broker has registered under this chroot at least once."""
        return self._exists(znodes_brokers.BROKER_IDS_PATH)

    # ------------------------------------------------------------------ guards
    def ensure_writable(self) -> int | None:
        """Refuse to write when the cluster is (moving to) KRaft, as Kafka's own writers do.

        Returns the ``/controller_epoch`` version read *before* the guard's other reads (None in a
        chroot where no controller was ever elected). Every write transaction checks it
        (:meth:`_transaction`): any controller change since - a KRaft controller taking over among
        them, which rewrites the epoch - fails the write, and the caller re-reads. Kafka's 3.x
        config writer checks ``/controller``'s version instead; the epoch also moves when an
        ephemeral ``/controller`` is re-created at version 0 and while no controller is registered.
        """
        epoch = self._get(znodes_cluster.CONTROLLER_EPOCH_PATH)
        if self._exists(znodes_cluster.MIGRATION_PATH):
            raise errors.KRaftMigrationDetected(
                "the cluster is migrating to KRaft (/migration exists): ZooKeeper is no longer the "
                "source of truth, so the operator writes nothing; manage topics through the Admin API"
            )
        controller = self.controller()
        if controller is not None and controller.is_kraft_controller:
            raise errors.KRaftMigrationDetected(
                f"a KRaft controller (id {controller.broker_id}) owns /controller; "
                "the operator writes nothing"
            )
        return None if epoch is None else epoch[1].version

    def _transaction(self) -> tuple[Any, list[str]]:
        """A transaction that starts with the KRaft guard's ``/controller_epoch`` check, and its paths."""
        epoch_version = self.ensure_writable()
        tx = self.client.transaction()
        if epoch_version is None:
            return tx, []
        tx.check(znodes_cluster.CONTROLLER_EPOCH_PATH, epoch_version)
        return tx, [znodes_cluster.CONTROLLER_EPOCH_PATH]

    # ------------------------------------------------------------------ cluster reads
    def controller(self) -> znodes_cluster.ControllerRegistration | None:
        got = self._get(znodes_cluster.CONTROLLER_PATH)
        return (
            None
            if got is None
            else znodes_cluster.ControllerZNode.decode(got[0], znodes_cluster.CONTROLLER_PATH)
        )

    def controller_registration_version(self) -> int | None:
        """The ``/brokers/ids`` JSON version of the active controller (None: no controller, or it
        is not a registered broker, e.g. a KRaft controller during migration)."""
        controller = self.controller()
        if controller is None:
            return None
        path = znodes_brokers.BrokerIdZNode.path(controller.broker_id)
        got = self._get(path)
        return None if got is None else znodes_brokers.BrokerIdZNode.decode(got[0], path).version

    def cluster_id(self) -> str | None:
        got = self._get(znodes_cluster.CLUSTER_ID_PATH)
        return (
            None
            if got is None
            else znodes_cluster.ClusterIdZNode.decode(got[0], znodes_cluster.CLUSTER_ID_PATH)
        )

    def broker_ids(self) -> list[int]:
        return sorted(
            int(child) for child in self._children(znodes_brokers.BROKER_IDS_PATH) if child.isdigit()
        )

    def broker_registrations(self) -> list[znodes_brokers.BrokerRegistration]:
        registrations = []
        for broker_id in self.broker_ids():
            path = znodes_brokers.BrokerIdZNode.path(broker_id)
            got = self._get(path)
            if got is not None:  # the broker may have gone between the two reads
                registrations.append(znodes_brokers.BrokerIdZNode.decode(got[0], path))
        return registrations

    def live_brokers(self) -> list[model.Broker]:
        """Live brokers sorted by id, with racks: the input of Kafka's replica assignment."""
        return [r.broker for r in self.broker_registrations()]

    # ------------------------------------------------------------------ topic reads
    def topic_names(self) -> list[str]:
        return sorted(self._children(znodes_topics.TOPICS_PATH))

    def read_assignment(self, topic: str) -> Versioned[model.TopicAssignment] | None:
        path = znodes_topics.TopicZNode.path(topic)
        got = self._get(path)
        if got is None:
            return None
        return Versioned(znodes_topics.TopicZNode.decode(got[0], path), got[1].version)

    def read_topic_config(self, topic: str) -> Versioned[dict[str, str]] | None:
        return self.read_entity_config("topics", topic)

    def read_entity_config(self, entity_type: str, name: str) -> Versioned[dict[str, str]] | None:
        path = znodes_config.ConfigEntityZNode.path(entity_type, name)
        got = self._get(path)
        if got is None:
            return None
        return Versioned(dict(znodes_config.ConfigEntityZNode.decode(got[0], path).config), got[1].version)

    def partition_states(self, topic: str, partitions: Sequence[int]) -> dict[int, model.PartitionState]:
        states: dict[int, model.PartitionState] = {}
        for partition in partitions:
            path = znodes_topics.PartitionStateZNode.path(topic, partition)
            got = self._get(path)
            if got is not None:
                states[partition] = znodes_topics.PartitionStateZNode.decode(
                    got[0], path, zk_version=got[1].version
                )
        return states

    def is_marked_for_deletion(self, topic: str) -> bool:
        return self._exists(znodes_admin.delete_topic_path(topic))

    def topics_marked_for_deletion(self) -> list[str]:
        return sorted(self._children(znodes_admin.DELETE_TOPICS_PATH))

    def pending_reassignment(self) -> Versioned[list[znodes_admin.PartitionReassignment]] | None:
        path = znodes_admin.REASSIGN_PARTITIONS_PATH
        got = self._get(path)
        if got is None:
            return None
        return Versioned(list(znodes_admin.ReassignPartitionsZNode.decode(got[0], path)), got[1].version)

    def read_topic(self, topic: str, *, with_states: bool = True) -> TopicSnapshot | None:
        assignment = self.read_assignment(topic)
        if assignment is None:
            return None
        moving, problem = self.maybe_in_reassignment(topic)
        states = self.partition_states(topic, sorted(assignment.value.partitions)) if with_states else {}
        return TopicSnapshot(
            name=topic,
            assignment=assignment,
            config=self.read_topic_config(topic),
            marked_for_deletion=self.is_marked_for_deletion(topic),
            in_reassignment_znode=moving,
            states=states,
            reassignment_znode_problem=problem,
        )

    def topic_znode_version(self) -> int:
        """The topic-znode version this cluster's own writers use (mirror it on create).

        Taken from existing topic znodes (the highest seen among a few); v1, which every
        Kafka version reads, when the cluster has no topics yet.
        """
        best = znodes_topics.TOPIC_ZNODE_V1
        for name in self.topic_names()[:5]:
            got = self._get(znodes_topics.TopicZNode.path(name))
            if got is not None:
                best = max(
                    best, znodes_topics.TopicZNode.decode(got[0], znodes_topics.TopicZNode.path(name)).version
                )
        return best

    # ------------------------------------------------------------------ topic writes
    def create_topic(
        self,
        topic: str,
        partitions: Mapping[int, Sequence[int]],
        config: Mapping[str, str],
        *,
        znode_version: int | None = None,
    ) -> None:
        """Create config and assignment in ONE transaction (Kafka's create order, made atomic).

        :raises VersionConflict: config or topic znode created by someone else meanwhile (retry:
            the next read finds the topic and adopts it).
        :raises TopicBeingDeleted: a deletion of that name is still in progress.
        """
        tx, paths = self._transaction()
        if self.is_marked_for_deletion(topic):
            raise errors.TopicBeingDeleted(
                f"topic {topic!r} is still being deleted by Kafka; it can be created again once "
                "Kafka has removed it"
            )
        version = znode_version if znode_version is not None else self.topic_znode_version()
        assignment = model.TopicAssignment(
            partitions={p: tuple(r) for p, r in partitions.items()}, version=version
        )
        topic_path = znodes_topics.TopicZNode.path(topic)
        config_path = znodes_config.ConfigEntityZNode.path("topics", topic)
        config_data = znodes_config.ConfigEntityZNode.encode(znodes_config.ConfigEntity(config=dict(config)))
        existing_config = self._get(config_path)
        if existing_config is None:
            tx.create(config_path, config_data, acl=self._acl(config_path))
        else:  # a leftover config without a topic (e.g. an interrupted create): replace it, versioned
            tx.set_data(config_path, config_data, version=existing_config[1].version)
        tx.create(
            topic_path,
            znodes_topics.TopicZNode.encode(assignment, version=version),
            acl=self._acl(topic_path),
        )
        try:
            self._commit(tx, [*paths, config_path, topic_path])
        except errors.ResourceConflict as conflict:  # NodeExists: someone else was faster
            raise errors.VersionConflict(
                f"topic {topic!r} was created by someone else while the operator was creating it "
                f"({conflict.message}); re-reading it"
            ) from conflict

    def add_partitions(
        self,
        topic: str,
        new_partitions: Mapping[int, Sequence[int]],
        *,
        expected: Versioned[model.TopicAssignment],
    ) -> None:
        """Append partitions to the topic znode, conditional on the version read in ``expected``.

        Existing partitions, ``topic_id``, ``adding/removing_replicas`` and unknown fields are kept.
        :raises ReassignmentInProgress / TopicBeingDeleted: not safe now; retry later.
        :raises VersionConflict: the znode changed since ``expected`` was read.
        """
        tx, paths = self._transaction()
        current = expected.value
        moving, problem = self.maybe_in_reassignment(topic)
        if current.is_reassigning or moving:
            raise errors.ReassignmentInProgress(
                f"topic {topic!r} has partitions being reassigned; partitions are added once it finishes"
                if problem is None
                else f"partitions of topic {topic!r} are added once /admin/reassign_partitions can be read "
                f"({problem})"
            )
        if self.is_marked_for_deletion(topic):
            raise errors.TopicBeingDeleted(f"topic {topic!r} is being deleted; not adding partitions")
        count = current.partition_count
        if sorted(new_partitions) != list(range(count, count + len(new_partitions))):
            raise errors.InvalidPartitions(
                f"new partitions of {topic!r} must be numbered {count}..{count + len(new_partitions) - 1}"
            )
        merged = dict(current.partitions)
        merged.update({p: tuple(r) for p, r in new_partitions.items()})
        updated = model.TopicAssignment(
            partitions=merged,
            topic_id=current.topic_id,
            adding_replicas=current.adding_replicas,
            removing_replicas=current.removing_replicas,
            version=current.version,
            extra=current.extra,
        )
        path = znodes_topics.TopicZNode.path(topic)
        tx.set_data(
            path, znodes_topics.TopicZNode.encode(updated, version=current.version), version=expected.version
        )
        self._commit(tx, [*paths, path])

    def write_entity_config(
        self,
        entity_type: str,
        name: str,
        config: Mapping[str, str],
        *,
        expected_version: int | None,
    ) -> None:
        """Replace an entity's full config and notify brokers, in ONE transaction.

        ``expected_version=None`` means the config znode must not exist yet (it is created, with
        any missing parent: Kafka 0.10.1-1.0 brokers do not create ``/config/brokers``). The
        notification has the format the live brokers read (``config_change_version``). A topic's
        config is written only together with a check that its topic znode still exists.

        :raises TopicBeingDeleted: a topic config whose topic Kafka deleted (or is deleting).
        """
        tx, paths = self._transaction()
        path = znodes_config.ConfigEntityZNode.path(entity_type, name)
        data = znodes_config.ConfigEntityZNode.encode(znodes_config.ConfigEntity(config=dict(config)))
        notification = znodes_config.ConfigChangeZNode.encode(
            znodes_config.ConfigChangeNotification(
                entity_path=f"{entity_type}/{name}", version=self.config_change_version(entity_type)
            )
        )
        if znodes_config.ConfigEntityType(entity_type) is znodes_config.ConfigEntityType.TOPICS:
            paths.append(self._check_topic_exists(tx, name))
        if expected_version is None:
            for parent in self._missing_parents(path):
                tx.create(parent, b"", acl=self._acl(parent))
                paths.append(parent)
            tx.create(path, data, acl=self._acl(path))
        else:
            tx.set_data(path, data, version=expected_version)
        tx.create(NOTIFICATION_PREFIX, notification, acl=self._acl(NOTIFICATION_PREFIX), sequence=True)
        try:
            self._commit(tx, [*paths, path, NOTIFICATION_PREFIX])
        except errors.VersionConflict as conflict:
            topic_path = znodes_topics.TopicZNode.path(name) if entity_type == "topics" else None
            if topic_path is not None and conflict.message.startswith(f"{topic_path} does not exist"):
                raise self._topic_gone(name) from conflict
            raise

    def _check_topic_exists(self, tx: Any, topic: str) -> str:
        """Add a check that ``/brokers/topics/<topic>`` still exists (as read now) to ``tx``.

        :raises TopicBeingDeleted: it does not exist (Kafka deleted it, or is finishing).
        """
        path = znodes_topics.TopicZNode.path(topic)
        with zk_errors.mapped(path):
            stat = self.client.exists(path)
        if stat is None:
            raise self._topic_gone(topic)
        tx.check(path, stat.version)
        return path

    @staticmethod
    def _topic_gone(topic: str) -> errors.TopicBeingDeleted:
        return errors.TopicBeingDeleted(
            f"topic {topic!r} is deleted or being deleted in Kafka, so its config is not written "
            f"(that would re-create /config/topics/{topic} behind Kafka's deletion)"
        )

    def _missing_parents(self, path: str) -> list[str]:
        """Ancestors of ``path`` that do not exist, outermost first (``/config/brokers`` on old lines)."""
        missing: list[str] = []
        parent = path.rsplit("/", 1)[0]
        while parent and not self._exists(parent):
            missing.insert(0, parent)
            parent = parent.rsplit("/", 1)[0]
        return missing

    def config_change_version(self, entity_type: str) -> int:
        """The ``/config/changes`` format to write for ``entity_type``, by the cluster's line.

        :raises NotSupported: dynamic broker configs on a cluster whose line has none (0.10.0).
        :raises KafkaLineMismatch: the ``kafkaVersion`` setting contradicts the registrations.
        """
        return znodes_config.config_change_version_for_line(self.cluster_line(), entity_type)

    def cluster_line(self) -> kafka_lines.ClusterLine:
        """The Kafka line whose rules every write follows (``domain.kafka_lines``).

        :raises KafkaLineMismatch: the ``kafkaVersion`` setting contradicts the registrations.
        """
        return kafka_lines.cluster_line(self._live_registration_versions(), self.kafka_version)

    def _live_registration_versions(self) -> dict[int, int]:
        path = znodes_brokers.BROKER_IDS_PATH
        with zk_errors.mapped(path):
            stat = self.client.exists(path)  # its cversion moves whenever a broker comes or goes
        if stat is None:
            return {}
        cached = self._registration_versions
        if cached is not None and cached[0] == stat.cversion:
            return cached[1]
        versions = {r.broker.id: r.version for r in self.broker_registrations()}
        self._registration_versions = (stat.cversion, versions)
        return versions

    def update_entity_config(
        self,
        entity_type: str,
        name: str,
        change: Callable[[dict[str, str]], dict[str, str]],
        *,
        attempts: int = 10,
    ) -> bool:
        """Read-modify-write an entity config with retries on conflicts; False when unchanged."""
        for _ in range(attempts):
            current = self.read_entity_config(entity_type, name)
            before = dict(current.value) if current is not None else {}
            after = change(dict(before))
            if after == before and current is not None:
                return False
            if current is None and not after:
                return False
            try:
                self.write_entity_config(
                    entity_type, name, after, expected_version=None if current is None else current.version
                )
            except (errors.VersionConflict, errors.ResourceConflict):
                continue
            return True
        raise errors.VersionConflict(
            f"config of {entity_type}/{name} kept changing under concurrent writers; will retry"
        )

    def mark_topic_for_deletion(self, topic: str) -> bool:
        """Create ``/admin/delete_topics/<t>``. Returns False if it was already marked."""
        tx, paths = self._transaction()
        path = znodes_admin.delete_topic_path(topic)
        tx.create(path, b"", acl=self._acl(path))
        try:
            self._commit(tx, [*paths, path])
        except errors.ResourceConflict:  # NodeExists: already marked
            return False
        return True

    def withdraw_deletion_marker(self, topic: str) -> bool:
        """Delete ``/admin/delete_topics/<t>`` (the version read just before), as Kafka's own
        controllers do when deletion is disabled. False when it was already gone."""
        tx, paths = self._transaction()
        path = znodes_admin.delete_topic_path(topic)
        with zk_errors.mapped(path):
            stat = self.client.exists(path)
        if stat is None:
            return False
        tx.delete(path, version=stat.version)
        try:
            self._commit(tx, [*paths, path])
        except errors.VersionConflict as conflict:
            if conflict.message.startswith(f"{path} does not exist"):
                return False  # the controller removed it meanwhile
            raise
        return True

    def topic_fully_deleted(self, topic: str) -> bool:
        """Kafka's deletion is complete when topic, config and marker znodes are all gone."""
        return not (
            self._exists(znodes_topics.TopicZNode.path(topic))
            or self._exists(znodes_config.ConfigEntityZNode.path("topics", topic))
            or self._exists(znodes_admin.delete_topic_path(topic))
        )

    # ------------------------------------------------------------------ reassignment
    def maybe_in_reassignment(self, topic: str) -> tuple[bool, str | None]:
        """Whether ``topic`` is in ``/admin/reassign_partitions``; (True, why) when that znode holds
        data that does not parse (Kafka's controller ignores it from 2.0 on, but 1.1 and older may
        act on it, and it may be a writer's half-understood format: assume the worst)."""
        try:
            pending = self.pending_reassignment()
        except errors.MalformedZnode as malformed:
            return True, malformed.message
        return pending is not None and any(entry.topic == topic for entry in pending.value), None

    def create_reassignment(self, entries: Sequence[znodes_admin.PartitionReassignment]) -> None:
        """Create ``/admin/reassign_partitions``. Never sets an existing one (the controller
        only reacts to creation).

        :raises ReassignmentInProgress: a reassignment znode already exists.
        """
        tx, paths = self._transaction()
        path = znodes_admin.REASSIGN_PARTITIONS_PATH
        tx.create(path, znodes_admin.ReassignPartitionsZNode.encode(list(entries)), acl=self._acl(path))
        try:
            self._commit(tx, [*paths, path])
        except errors.ResourceConflict as exc:
            raise errors.ReassignmentInProgress(
                "another partition reassignment is running (/admin/reassign_partitions exists); "
                "waiting for it to finish"
            ) from exc

    def create_preferred_election(self, partitions: Sequence[znodes_admin.TopicPartition]) -> bool:
        """Create ``/admin/preferred_replica_election``; False if one is already pending."""
        tx, paths = self._transaction()
        path = znodes_admin.PREFERRED_REPLICA_ELECTION_PATH
        tx.create(path, znodes_admin.PreferredReplicaElectionZNode.encode(partitions), acl=self._acl(path))
        try:
            self._commit(tx, [*paths, path])
        except errors.ResourceConflict:  # NodeExists: one is pending
            return False
        return True

    def pending_preferred_election(self) -> tuple[znodes_admin.TopicPartition, ...] | None:
        """The partitions of the pending ``/admin/preferred_replica_election``, None if there is none.

        :raises MalformedZnode: the znode holds something Kafka would not have written.
        """
        path = znodes_admin.PREFERRED_REPLICA_ELECTION_PATH
        got = self._get(path)
        if got is None:
            return None
        return znodes_admin.PreferredReplicaElectionZNode.decode(got[0], path)

    # ------------------------------------------------------------------ transactions
    def _commit(self, tx: Any, paths: list[str]) -> None:
        with zk_errors.mapped(paths[-1]):
            results = tx.commit()
        failure = zk_errors.transaction_failure(list(results), paths)
        if failure is not None:
            if paths[0] == znodes_cluster.CONTROLLER_EPOCH_PATH and failure.message.startswith(
                paths[0] + " "
            ):
                raise errors.VersionConflict(
                    "the Kafka controller changed while the operator was writing (/controller_epoch moved "
                    "since the KRaft-migration guard read it); nothing was written, re-reading"
                ) from None
            raise failure
        self._count_write()
