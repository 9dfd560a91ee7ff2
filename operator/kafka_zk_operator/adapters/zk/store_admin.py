"""Admin requests in the ZooKeeper store: topic deletion markers, ``/admin/reassign_partitions``
(only ever created, one at a time, never cancelled) and ``/admin/preferred_replica_election``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kazoo.protocol.states import ZnodeStat

from kafka_zk_operator.adapters.zk import errors as zk_errors
from kafka_zk_operator.adapters.zk import znodes_admin, znodes_config, znodes_topics
from kafka_zk_operator.adapters.zk.store_base import Versioned
from kafka_zk_operator.adapters.zk.store_writes import GuardedWrites
from kafka_zk_operator.domain import errors

#: A topic's place in ``/admin/reassign_partitions``: (in it, why the znode could not be read). A
#: znode that does not parse counts as holding every topic (see ``maybe_in_reassignment``).
ReassignmentPlace = tuple[bool, str | None]

#: The place of every topic while no reassignment is pending.
NOT_MOVING: ReassignmentPlace = (False, None)


@dataclass(frozen=True)
class DecodedReassignment:
    """``/admin/reassign_partitions`` decoded once for one state of the znode: its last
    modification (``mzxid``, the zxid of the write or of the creation, which only grows) names the
    data exactly, so while a stat shows it unchanged the data is the same. A znode that does not
    parse is kept as its problem and raised again (a new error each time) to every caller until
    it changes."""

    mzxid: int
    version: int
    decoded: tuple[znodes_admin.PartitionReassignment, ...] | None
    topic_names: frozenset[str]
    problem: str | None

    @classmethod
    def of(cls, data: bytes, stat: ZnodeStat) -> DecodedReassignment:
        path = znodes_admin.REASSIGN_PARTITIONS_PATH
        try:
            entries = znodes_admin.ReassignPartitionsZNode.decode(data, path)
        except errors.MalformedZnode as malformed:
            return cls(stat.mzxid, stat.version, None, frozenset(), malformed.problem)
        names = frozenset(entry.topic for entry in entries)
        return cls(stat.mzxid, stat.version, entries, names, None)

    def entries(self) -> tuple[znodes_admin.PartitionReassignment, ...]:
        """:raises MalformedZnode: the data did not parse."""
        if self.decoded is None:
            raise errors.MalformedZnode(znodes_admin.REASSIGN_PARTITIONS_PATH, self.problem or "")
        return self.decoded

    def place_of(self, topic: str) -> ReassignmentPlace:
        if self.decoded is None:
            return True, errors.MalformedZnode(
                znodes_admin.REASSIGN_PARTITIONS_PATH, self.problem or ""
            ).message
        return topic in self.topic_names, None


class AdminRequestStore(GuardedWrites):
    """The requests Kafka's controller acts on: deletions, reassignments, preferred elections."""

    #: ``/admin/reassign_partitions`` as this store last decoded it (set per store when read).
    _reassignment_decoded: DecodedReassignment | None = None

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
        """``/admin/reassign_partitions`` decoded, with its version; None when there is none.

        Its stat is asked first; its data is read and decoded only when the znode changed since
        this store last decoded it (:class:`DecodedReassignment`).

        :raises MalformedZnode: its data does not parse.
        """
        decoded = self._decoded_reassignment()
        if decoded is None:
            return None
        return Versioned(list(decoded.entries()), decoded.version)

    def _decoded_reassignment(self) -> DecodedReassignment | None:
        """The reassignment znode as last decoded, if its stat still names that state (or an
        older one); else read and decoded again (and kept). Every reconcile of a topic asks it (is
        the topic moving?): a 10,000-partition znode is 710 KB, read and decoded in about half a
        second here, and a resync of 10,000 topics during a reassignment asked it 10,000 times."""
        stat = self._stat(znodes_admin.REASSIGN_PARTITIONS_PATH)
        if stat is None:
            return None
        return self._decoded_since(stat.mzxid)

    def _decoded_since(self, mzxid: int) -> DecodedReassignment | None:
        """The decode kept, when it is of the state ``mzxid`` names or of a later one (``mzxid``
        grows with every write, and a znode created again gets a larger one); else the znode read
        and decoded again, one thread at a time: the threads that asked meanwhile find it kept.
        None: the znode is gone."""
        kept = self._reassignment_decoded
        if kept is not None and kept.mzxid >= mzxid:
            return kept
        with self._reassignment_lock:
            kept = self._reassignment_decoded
            if kept is not None and kept.mzxid >= mzxid:
                return kept
            got = self._get(znodes_admin.REASSIGN_PARTITIONS_PATH)
            if got is None:
                return None  # completed meanwhile
            decoded = DecodedReassignment.of(got[0], got[1])
            self._reassignment_decoded = decoded
            return decoded

    def kept_reassignment_place(self, topic: str, mzxid: int) -> ReassignmentPlace | None:
        """``topic``'s place in the reassignment znode as of the state ``mzxid`` names (0: there
        was none) or a later one, from what this store keeps, without a request (a resync probe
        asks it on the event loop); None when the decode kept is of an older state."""
        if mzxid == 0:
            return NOT_MOVING
        kept = self._reassignment_decoded
        return kept.place_of(topic) if kept is not None and kept.mzxid >= mzxid else None

    def reassignment_place(self, topic: str, mzxid: int) -> ReassignmentPlace:
        """:meth:`kept_reassignment_place`, reading and decoding the znode when the decode kept
        is older (blocking: in a pool thread)."""
        kept = self.kept_reassignment_place(topic, mzxid)
        if kept is not None:
            return kept
        decoded = self._decoded_since(mzxid)
        return NOT_MOVING if decoded is None else decoded.place_of(topic)

    def watch_reassignment(self, callback: Callable[[object], None]) -> bool:
        """Have ZooKeeper call ``callback`` (on kazoo's thread) once, when
        ``/admin/reassign_partitions`` is next created, changed or deleted - the controller
        rewrites it as partitions finish and deletes it when the batch is done. A one-shot watch;
        the same callback set again before it fires is still one watch (kazoo keeps a set).
        Returns whether the znode exists now."""
        with zk_errors.mapped(self.client, znodes_admin.REASSIGN_PARTITIONS_PATH):
            return self.client.exists(znodes_admin.REASSIGN_PARTITIONS_PATH, watch=callback) is not None

    def maybe_in_reassignment(self, topic: str) -> ReassignmentPlace:
        """Whether ``topic`` is in ``/admin/reassign_partitions``; (True, why) when that znode holds
        data that does not parse (Kafka's controller ignores it from 2.0 on, but 1.1 and older may
        act on it, and it may be a writer's half-understood format: assume the worst)."""
        decoded = self._decoded_reassignment()
        return NOT_MOVING if decoded is None else decoded.place_of(topic)

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

    #: ZooKeeper mode cannot cancel ``/admin/reassign_partitions``: the controller runs it to its end.
    can_cancel = False

    def cancel_reassignment(self, partitions: Sequence[znodes_admin.TopicPartition]) -> None:
        """:raises NotSupported: always (only the Admin API's AlterPartitionReassignments cancels)."""
        raise errors.NotSupported(
            "ZooKeeper mode cannot cancel a running /admin/reassign_partitions; the batch runs to its end"
        )

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
