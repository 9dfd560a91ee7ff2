"""The ZooKeeper store: every read and write the operator makes on a Kafka cluster's metadata.

Rules it enforces (``shared/reference/kafka-zookeeper.md`` §12-13):
- writes are conditional on the version that was read (never ``-1`` on ``/brokers/topics`` or
  ``/config``); multi-znode changes are one ZooKeeper transaction (topic create = config +
  assignment; config change = config + ``/config/changes`` notification);
- ``topic_id``, ``adding_replicas``, ``removing_replicas`` and unknown fields survive rewrites;
  creates leave the id to the controller, except while a KRaft migration is pending (or rolled
  back): then they carry one (Kafka's copy to KRaft aborts on a topic znode without it);
- partition ``state`` znodes are only read; partition counts only grow;
- ``/admin/reassign_partitions`` is only ever created (never set or deleted);
- nothing is written in a migration phase where ZooKeeper is not authoritative (the phase probe,
  ``adapters.zk.migration_probe``), and every write transaction checks the ``/controller_epoch``
  version the probe read, so a controller change in between fails the write instead of letting it
  land (:meth:`ZkStore.ensure_writable`);
- a topic's config znode is only written while its topic znode exists (never re-created for a
  topic Kafka just deleted), and missing parents (``/config/brokers`` on 0.10.1-1.0) are created.

Every write increments ``writes`` (one per transaction or single-znode write) so callers and the
benchmarks can prove that a no-op resync writes nothing.

With ``create_batch_seconds``, topic creates from several threads within that window are sent as
one transaction (``adapters.zk.group_commit``): Kafka's controller then handles them as one change.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterable, Mapping, Sequence

from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk import errors as zk_errors
from kafka_zk_operator.adapters.zk import (
    group_commit,
    stat_probe,
    topic_ids,
    znodes_admin,
    znodes_brokers,
    znodes_config,
    znodes_topics,
)
from kafka_zk_operator.adapters.zk.read_stamps import ReadStamps
from kafka_zk_operator.adapters.zk.store_admin import AdminRequestStore
from kafka_zk_operator.adapters.zk.store_base import ReadAhead
from kafka_zk_operator.adapters.zk.store_base import Versioned as Versioned
from kafka_zk_operator.adapters.zk.store_configs import ConfigStore
from kafka_zk_operator.adapters.zk.znodes_config import ConfigEntityType
from kafka_zk_operator.domain import errors, model
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.topic.plan import ObservedTopic


class ZkStore(ConfigStore, AdminRequestStore):
    """Reads and versioned writes of Kafka's znodes through one started ``KazooClient``.

    The topic znodes are here; entity configs, admin requests, the guard of every write and the
    shared reads come from :class:`~.store_configs.ConfigStore`, :class:`~.store_admin.AdminRequestStore`,
    :class:`~.store_writes.GuardedWrites` and :class:`~.store_base.StoreBase`.
    """

    def __init__(
        self,
        client: KazooClient,
        *,
        secure_acls: bool = False,
        kafka_version: kafka_lines.KafkaLine | None = None,
        create_batch_seconds: float = 0.0,
    ) -> None:
        super().__init__(client, secure_acls=secure_acls, kafka_version=kafka_version)
        #: Sends creates that arrive within ``create_batch_seconds`` together (None: each alone).
        self.create_batcher = (
            group_commit.CreateBatcher(self.client.transaction, self._commit, create_batch_seconds)
            if create_batch_seconds > 0
            else None
        )

    # ------------------------------------------------------------------ topic reads

    def topic_names(self) -> list[str]:
        return sorted(self._children(znodes_topics.TOPICS_PATH))

    def read_assignment(self, topic: str) -> Versioned[model.TopicAssignment] | None:
        path = znodes_topics.TopicZNode.path(topic)
        got = self._get(path)
        if got is None:
            return None
        return Versioned(znodes_topics.TopicZNode.decode(got[0], path), got[1].version)

    def partition_states(self, topic: str, partitions: Sequence[int]) -> dict[int, model.PartitionState]:
        """The state znodes of ``partitions`` that exist, all asked in one round trip."""
        paths = {
            partition: znodes_topics.PartitionStateZNode.path(topic, partition) for partition in partitions
        }
        states: dict[int, model.PartitionState] = {}
        with self.reading_ahead(*(("get", path) for path in paths.values())):
            for partition, path in paths.items():
                got = self._get(path)
                if got is not None:
                    states[partition] = znodes_topics.PartitionStateZNode.decode(
                        got[0], path, zk_version=got[1].version
                    )
        return states

    def wait_for_leaders(self, topic: str, partitions: int, timeout: float) -> bool:
        """Wait until the state znode of each of the first ``partitions`` partitions names a leader;
        False if one does not within ``timeout`` seconds.

        Waits on a one-shot ZooKeeper watch of the partition that has no leader yet, armed only
        then (it fires when the controller creates or changes that state znode), instead of
        reading every partition again and again: with thousands of creates in flight the polling
        itself was hundreds of reads a second.
        """
        deadline = time.monotonic() + timeout
        for partition in range(partitions):
            path = znodes_topics.PartitionStateZNode.path(topic, partition)
            while True:
                changed = threading.Event()
                # The watch first: armed before the read is answered, so an election after the
                # read still wakes this thread. The state is read only once it exists (a new
                # topic's usually does not yet: one request instead of two).
                with zk_errors.mapped(self.client, path):
                    exists = self.client.exists(path, watch=lambda _event, changed=changed: changed.set())
                if exists is not None and self._has_leader(path):
                    break
                left = deadline - time.monotonic()
                if left <= 0 or not changed.wait(left):
                    return False
        return True

    def _has_leader(self, state_path: str) -> bool:
        got = self._get(state_path)
        return (
            got is not None
            and znodes_topics.PartitionStateZNode.decode(got[0], state_path, zk_version=got[1].version).leader
            >= 0
        )

    def read_topic(
        self, topic: str, *, with_states: bool = True, expected_partitions: int = 0
    ) -> ObservedTopic:
        """Everything ZooKeeper holds for the topic name, each znode read once, with the versions
        the conditional writes need (a config write is given ``config_version``).

        The topic znode, its config and its deletion marker, then for an existing topic whether
        it is in ``/admin/reassign_partitions`` (an unparseable one counts as yes, with the reason
        in ``reassignment_note``) and its partition ``state`` znodes (unless ``with_states`` is
        False), ZooKeeper reading them in that order. A name with no znode at all gives an
        ``ObservedTopic`` with no assignment, an empty config and no marker.

        Two round trips: the topic's own znodes, then what its partition count says to read; one
        when ``expected_partitions`` (the count the caller last saw, e.g. in the resource's
        status) is right, since those reads then go out with the first.
        """
        topic_path = znodes_topics.TopicZNode.path(topic)
        config_path = znodes_config.ConfigEntityZNode.path(ConfigEntityType.TOPICS, topic)
        marker_path = znodes_admin.delete_topic_path(topic)
        expected = self._partition_reads(topic, range(expected_partitions), with_states)
        # Before the marker is asked: a stamp of its parent that is no newer than the marker's
        # answer (see topic_read_paths).
        self._note_shared(znodes_admin.DELETE_TOPICS_PATH)
        with self.reading_ahead(
            ("get", topic_path), ("get", config_path), ("exists", marker_path), *expected
        ):
            assignment = self.read_assignment(topic)
            moving, problem, states = False, None, {}
            if assignment is not None:
                partitions = sorted(assignment.value.partitions)
                with self.reading_ahead(*self._partition_reads(topic, partitions, with_states)):
                    moving, problem = self.maybe_in_reassignment(topic)
                    if with_states:
                        states = self.partition_states(topic, partitions)
            config = self.read_topic_config(topic)
            marked = self.is_marked_for_deletion(topic)
        return ObservedTopic(
            assignment=assignment.value if assignment is not None else None,
            config=config.value if config is not None else {},
            marked_for_deletion=marked,
            in_reassignment=moving,
            reassignment_note=problem,
            partition_states=states,
            config_version=config.version if config is not None else None,
            assignment_version=assignment.version if assignment is not None else None,
        )

    @staticmethod
    def _partition_reads(topic: str, partitions: Iterable[int], with_states: bool) -> tuple[ReadAhead, ...]:
        """What an existing topic's read needs besides its own znodes: the pending reassignment
        and (``with_states``) the state znodes of ``partitions``; nothing for no partitions."""
        states: tuple[ReadAhead, ...] = tuple(
            ("get", znodes_topics.PartitionStateZNode.path(topic, p)) for p in partitions
        )
        if not states:
            return ()
        return (("exists", znodes_admin.REASSIGN_PARTITIONS_PATH), *(states if with_states else ()))

    def read_topic_and_brokers(
        self, topic: str, *, expected_partitions: int = 0
    ) -> tuple[ObservedTopic, list[znodes_brokers.BrokerRegistration]]:
        """:meth:`read_topic` and :meth:`broker_registrations`, their first reads in one round trip."""
        with self.reading_ahead(("exists", znodes_brokers.BROKER_IDS_PATH)):
            observed = self.read_topic(topic, expected_partitions=expected_partitions)
            return observed, self.broker_registrations()

    def topic_read_paths(
        self, topic: str, partitions: int, read: ReadStamps | None = None
    ) -> tuple[str, ...]:
        """Every znode a reconcile of ``topic`` reads (``read_topic`` for a topic of ``partitions``
        partitions, and the live brokers), for ``adapters.zk.stat_probe``: when none of them
        changed, a new read would find what the last one found.

        The deletion marker stands for itself, or, when ``read`` (the read's own stamps) holds a
        stamp of ``/admin/delete_topics`` (``read_topic`` notes the shared one, taken before the
        marker was asked), for that parent: a reconcile depends only on whether the marker
        exists, and its parent's ``cversion`` moves whenever any marker comes or goes. Every
        probe then takes that stamp from the shared round (``RecentZxid``) instead of asking a
        marker of its own: on a busy cluster, one request fewer per topic and resync. A marker of
        another topic then makes every topic's next resync read in full once (more work, never a
        missed change). Parent unchanged since a stamp taken before the marker's read means no
        marker came or went since that read."""
        deletion = (
            znodes_admin.DELETE_TOPICS_PATH
            if read is not None and read.has(znodes_admin.DELETE_TOPICS_PATH)
            else znodes_admin.delete_topic_path(topic)
        )
        return (
            znodes_topics.TopicZNode.path(topic),
            znodes_config.ConfigEntityZNode.path(ConfigEntityType.TOPICS, topic),
            deletion,
            znodes_admin.REASSIGN_PARTITIONS_PATH,
            znodes_brokers.BROKER_IDS_PATH,
            *(znodes_topics.PartitionStateZNode.path(topic, p) for p in range(partitions)),
        )

    @staticmethod
    def reassignment_moved_alone(
        paths: Sequence[str], recorded: Sequence[stat_probe.Stamp], current: Sequence[stat_probe.Stamp]
    ) -> int | None:
        """When the stamps ``current`` of ``paths`` (:meth:`topic_read_paths`) differ from
        ``recorded`` in ``/admin/reassign_partitions`` alone: its ``mzxid`` now (0: it does not
        exist), to be asked the topic's place in it (``kept_reassignment_place``). Else None.

        The controller rewrites that znode as partitions finish; its stamp is in every topic's
        read, but a topic's reconcile depends only on its place in it (in it or not, or unreadable)."""
        if len(paths) != len(recorded) or len(paths) != len(current):
            return None
        moved = [index for index, (old, new) in enumerate(zip(recorded, current, strict=True)) if old != new]
        if len(moved) != 1 or paths[moved[0]] != znodes_admin.REASSIGN_PARTITIONS_PATH:
            return None
        now = current[moved[0]]
        return 0 if now is None else now[0]

    async def stamps(self, paths: Sequence[str]) -> tuple[stat_probe.Stamp, ...] | None:
        """The stamps of ``paths`` in one pipelined round, without blocking the event loop
        (``adapters.zk.stat_probe``); ``None`` when any could not be read. The cluster-wide ones
        come from the last :meth:`recent_zxid` round while it is fresh (``RecentZxid.shared_stamps``):
        taken after the zxid a caller got before, as the probe's own."""
        shared = self._recent_zxid.shared_stamps()
        if not shared:
            return await stat_probe.stamps(self.client, paths)
        own = [path for path in paths if path not in shared]
        got = await stat_probe.stamps(self.client, own)
        if got is None:
            return None
        mine = dict(zip(own, got, strict=True))
        return tuple(shared[path] if path in shared else mine[path] for path in paths)

    async def recent_zxid(self) -> int | None:
        """ZooKeeper's last applied transaction id, asked at most once a second for all callers
        (``stat_probe.RecentZxid``); ``None`` when it did not answer."""
        return await self._recent_zxid.get()

    def topic_znode_version(self) -> int:
        """The topic-znode version this cluster's own writers use (mirror it on create).

        Taken from existing topic znodes (the highest seen among a few); v1, which every
        Kafka version reads, when the cluster has no topics yet. Kept until a broker registers
        or leaves (an upgrade restarts every broker), so that a burst of creates does not list
        every topic once per create.
        """
        self.broker_registrations()  # one exists: the cversion the answer is kept under
        brokers_cversion = self._registrations[0] if self._registrations is not None else None
        kept = self._topic_znode_version
        if kept is not None and kept[0] == brokers_cversion:
            return kept[1]
        best, seen = znodes_topics.TOPIC_ZNODE_V1, False
        for name in self.topic_names()[:5]:
            got = self._get(znodes_topics.TopicZNode.path(name))
            if got is not None:
                seen = True
                best = max(
                    best, znodes_topics.TopicZNode.decode(got[0], znodes_topics.TopicZNode.path(name)).version
                )
        if seen and brokers_cversion is not None:
            self._topic_znode_version = (brokers_cversion, best)
        return best

    # ------------------------------------------------------------------ topic writes

    def create_topic(
        self,
        topic: str,
        partitions: Mapping[int, Sequence[int]],
        config: Mapping[str, str],
        *,
        znode_version: int | None = None,
        observed: ObservedTopic | None = None,
    ) -> None:
        """Create config and assignment in ONE transaction (Kafka's create order, made atomic).

        ``observed``: the caller's read of the name (no topic znode); its deletion marker and
        config version stand in for reading them again (two requests fewer per create in a
        burst). The write stays conditional on that config version, so a change since fails it.

        :raises VersionConflict: config or topic znode created by someone else meanwhile (retry:
            the next read finds the topic and adopts it).
        :raises TopicBeingDeleted: a deletion of that name is still in progress.
        :raises RequestTooLarge: too many partitions for one ZooKeeper request (nothing is sent).
        """
        topic_path = znodes_topics.TopicZNode.path(topic)
        config_path = znodes_config.ConfigEntityZNode.path("topics", topic)
        own_reads: tuple[ReadAhead, ...] = (
            (("exists", znodes_admin.delete_topic_path(topic)), ("get", config_path))
            if observed is None
            else ()
        )
        # Every read before the write in one round trip (the guard's epoch first, as alone).
        with self.reading_ahead(*self.guard_reads(), *own_reads, ("exists", znodes_brokers.BROKER_IDS_PATH)):
            tx, paths = self._transaction()
            if observed is None:
                marked = self.is_marked_for_deletion(topic)
                got = self._get(config_path)
                config_version = None if got is None else got[1].version
            else:
                marked, config_version = observed.marked_for_deletion, observed.config_version
            if marked:
                raise errors.TopicBeingDeleted(
                    f"topic {topic!r} is still being deleted by Kafka; it can be created again once "
                    "Kafka has removed it"
                )
            version = znode_version if znode_version is not None else self.topic_znode_version()
        topic_id = None
        if self.topic_ids_required():  # a migration may copy it before the controller adds an id
            topic_id = topic_ids.generate_topic_id(secrets.token_bytes)
            version = max(version, znodes_topics.TOPIC_ZNODE_V3)
        assignment = model.TopicAssignment(
            partitions={p: tuple(r) for p, r in partitions.items()}, topic_id=topic_id, version=version
        )
        config_data = znodes_config.ConfigEntityZNode.encode(znodes_config.ConfigEntity(config=dict(config)))
        if config_version is None:
            tx.create(config_path, config_data, acl=self._acl(config_path))
        else:  # a leftover config without a topic (e.g. an interrupted create): replace it, versioned
            tx.set_data(config_path, config_data, version=config_version)
        tx.create(
            topic_path,
            znodes_topics.TopicZNode.encode(assignment, version=version),
            acl=self._acl(topic_path),
        )
        try:
            if self.create_batcher is not None:
                self.create_batcher.create(tx, [*paths, config_path, topic_path], guards=len(paths))
            else:
                self._commit(tx, [*paths, config_path, topic_path])
        except errors.RequestTooLarge as too_large:
            raise _too_many_partitions(topic, len(partitions), too_large) from too_large
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
        :raises RequestTooLarge: too many partitions for one ZooKeeper request (nothing is sent).
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
        try:
            self._commit(tx, [*paths, path])
        except errors.RequestTooLarge as too_large:
            raise _too_many_partitions(topic, len(merged), too_large) from too_large


def _too_many_partitions(
    topic: str, partitions: int, too_large: errors.RequestTooLarge
) -> errors.RequestTooLarge:
    return errors.RequestTooLarge(
        f"Topic {topic!r} with {partitions:,} partitions cannot be written to ZooKeeper: {too_large.message}. "
        "Kafka's own tools cannot write it either while the servers keep that limit; ask for fewer partitions."
    )
