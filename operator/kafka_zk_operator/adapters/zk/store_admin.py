"""Admin requests in the ZooKeeper store: topic deletion markers, ``/admin/reassign_partitions``
(only ever created, one at a time) and ``/admin/preferred_replica_election``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kafka_zk_operator.adapters.zk import errors as zk_errors
from kafka_zk_operator.adapters.zk import znodes_admin, znodes_config, znodes_topics
from kafka_zk_operator.adapters.zk.store_base import StoreBase, Versioned
from kafka_zk_operator.domain import errors


class AdminRequestStore(StoreBase):
    """The requests Kafka's controller acts on: deletions, reassignments, preferred elections."""

    # ------------------------------------------------------------------ topic deletion

    def is_marked_for_deletion(self, topic: str) -> bool:
        return self._exists(znodes_admin.delete_topic_path(topic))

    def topics_marked_for_deletion(self) -> list[str]:
        return sorted(self._children(znodes_admin.DELETE_TOPICS_PATH))

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
        stat = self._stat(path)
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

    def pending_reassignment(self) -> Versioned[list[znodes_admin.PartitionReassignment]] | None:
        path = znodes_admin.REASSIGN_PARTITIONS_PATH
        got = self._get(path)
        if got is None:
            return None
        return Versioned(list(znodes_admin.ReassignPartitionsZNode.decode(got[0], path)), got[1].version)

    def watch_reassignment(self, callback: Callable[[object], None]) -> bool:
        """Have ZooKeeper call ``callback`` (on kazoo's thread) once, when
        ``/admin/reassign_partitions`` is next created, changed or deleted - the controller
        rewrites it as partitions finish and deletes it when the batch is done. A one-shot watch;
        the same callback set again before it fires is still one watch (kazoo keeps a set).
        Returns whether the znode exists now."""
        with zk_errors.mapped(self.client, znodes_admin.REASSIGN_PARTITIONS_PATH):
            return self.client.exists(znodes_admin.REASSIGN_PARTITIONS_PATH, watch=callback) is not None

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

    # ------------------------------------------------------------------ preferred election

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
