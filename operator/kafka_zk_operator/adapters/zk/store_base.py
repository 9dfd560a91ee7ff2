"""The base of the ZooKeeper store: one started kazoo session, the reads every part shares (sent
ahead, priming watches, recording stamps), and the cluster's brokers, controller and Kafka line.

``ZkStore`` (``adapters.zk.store``) is what callers use; the guarded writes (``store_writes``)
build on this, and its parts - entity configs (``store_configs``), admin requests
(``store_admin``) and topics (``store``) - on those.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError
from kazoo.protocol.states import KazooState, ZnodeStat

from kafka_zk_operator.adapters.zk import errors as zk_errors
from kafka_zk_operator.adapters.zk import (
    stat_probe,
    watches,
    znodes_admin,
    znodes_brokers,
    znodes_cluster,
)
from kafka_zk_operator.adapters.zk.read_stamps import ReadStamps
from kafka_zk_operator.adapters.zk.session import kafka_acls
from kafka_zk_operator.domain import model
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.migration import phase
from kafka_zk_operator.domain.model import Versioned as Versioned

#: A read sent ahead (:meth:`StoreBase.reading_ahead`): ``get`` (data and stat) or ``exists`` (stat).
ReadAhead = tuple[Literal["get", "exists"], str]


class StoreBase:
    """Reads of Kafka's cluster znodes on one ``KazooClient``, and the state its writes share."""

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
        #: (``/brokers/ids`` cversion, the registrations read under it): re-read only when a
        #: broker registered or left since (see broker_registrations).
        self._registrations: tuple[int, tuple[znodes_brokers.BrokerRegistration, ...]] | None = None
        #: (``/brokers/ids`` cversion, the topic-znode version taken from existing topics).
        self._topic_znode_version: tuple[int, int] | None = None
        #: With leader election: the fence znode and the version this replica claimed
        #: (``adapters.zk.fence``); every transaction checks it.
        self.fence: tuple[str, int] | None = None
        #: With leader election: raises ``LeadershipLost`` once this replica may no longer write;
        #: called before a transaction is built and again right before it is sent.
        self.leadership_guard: Callable[[], None] | None = None
        #: ZooKeeper's last transaction id for the resyncs, asked once a second for all of them.
        self._recent_zxid = stat_probe.RecentZxid(
            client,
            shared=(
                znodes_admin.REASSIGN_PARTITIONS_PATH,
                znodes_brokers.BROKER_IDS_PATH,
                znodes_admin.DELETE_TOPICS_PATH,
            ),
        )
        #: The migration phase the last write guard decided (``domain.migration.phase``), a callback
        #: for each change of it, and per thread the decision its write follows.
        self.migration_phase: phase.PhaseDecision | None = None
        self.on_phase: Callable[[phase.PhaseDecision], None] | None = None
        self._phase = threading.local()
        #: Called when a transaction failed on the fence (another replica claimed it).
        self.on_fenced: Callable[[str], None] | None = None
        #: Per thread: the answers of reads sent ahead, taken by the reads they stand for.
        self._ahead = threading.local()
        #: Per thread: the watches its reads set while :meth:`priming_watches` is open.
        self._priming = threading.local()
        #: Per thread: the stamps of what it reads while :meth:`recording_stamps` is open.
        self._recording = threading.local()
        #: Held while ``/admin/reassign_partitions`` is read and decoded (``store_admin``): one
        #: decode per state of it, however many threads ask at once.
        self._reassignment_lock = threading.Lock()

    # ------------------------------------------------------------------ helpers

    def _count_write(self) -> None:
        with self._lock:
            self.writes += 1
        if self.on_write is not None:
            self.on_write()

    @contextlib.contextmanager
    def reading_ahead(self, *reads: ReadAhead) -> Iterator[None]:
        """Send ``reads`` now, all before any answer is awaited, so that they cost one round
        trip together instead of one each; within the block, this thread's ``_get``, ``_exists``
        and ``_stat`` of those paths take the answers instead of asking again (each answer once;
        a read not sent ahead is asked as usual).

        A reconcile's reads are a dozen small requests whose latency, not their work, held the
        worker threads during a burst. ZooKeeper answers one session's requests in the order they
        were sent, so reads sent ahead are still done in the order given. A read that fails raises
        where it is taken, as it would have alone; one never taken is dropped with the block.
        """
        answers: dict[ReadAhead, Any] | None = getattr(self._ahead, "answers", None)
        outermost = answers is None
        if answers is None:
            answers = self._ahead.answers = {}
        added: list[ReadAhead] = []
        if self.client.state == KazooState.CONNECTED:  # else each read reports it where taken
            try:
                for read in reads:
                    if read not in answers:
                        kind, path = read
                        if kind == "get":
                            priming = self._priming_of(path)
                            answers[read] = (
                                self.client.get_async(path)
                                if priming is None
                                else self.client.get_async(path, watch=priming.watcher),
                                priming,
                            )
                        else:
                            answers[read] = (self.client.exists_async(path), None)
                        added.append(read)
            except KazooException:
                pass  # the connection closed meanwhile: the reads ask alone (and report it)
        try:
            yield
        finally:
            if outermost:
                self._ahead.answers = None
            else:  # an inner block: what it sent and nobody took goes with it
                for read in added:
                    answers.pop(read, None)

    @contextlib.contextmanager
    def recording_stamps(self) -> Iterator[ReadStamps]:
        """Note the stamp of every znode this thread gets or stats within the block, from the
        answers themselves (``adapters.zk.read_stamps``). A block opened within another one of the
        same thread yields the outer one's record: its reads are the outer reader's too."""
        outer: ReadStamps | None = getattr(self._recording, "stamps", None)
        if outer is not None:
            yield outer
            return
        self._recording.stamps = ReadStamps()
        try:
            yield self._recording.stamps
        finally:
            self._recording.stamps = None

    def _note_shared(self, path: str) -> None:
        """When this thread is recording, note ``path`` with its stamp from the last shared round
        (``RecentZxid.shared_stamps``) if that is fresh: a stamp ZooKeeper answered before any
        read this thread sends from now on. Recorded for a parent whose children's coming and
        going stand for a read of one of them (``ZkStore.read_topic``, the deletion marker)."""
        recording: ReadStamps | None = getattr(self._recording, "stamps", None)
        shared = self._recent_zxid.shared_stamps() if recording is not None else None
        if recording is not None and shared is not None and path in shared:
            recording.note(path, shared[path])

    def _note(self, path: str, stat: ZnodeStat | None) -> None:
        recording: ReadStamps | None = getattr(self._recording, "stamps", None)
        if recording is not None:
            recording.note(path, stat_probe.stamp_of(stat))

    @contextlib.contextmanager
    def priming_watches(self, priming: watches.Priming) -> Iterator[watches.Priming]:
        """Within the block, this thread's reads (``get``) of the znodes ``priming`` wants carry
        its watch, and each one that finds its znode notes it in ``priming.armed``: the watch is
        then set, to be handed over (``ZnodeWatches.adopt``) instead of armed by a request of its
        own. A block opened within another one of the same thread replaces it until it ends."""
        outer: watches.Priming | None = getattr(self._priming, "current", None)
        self._priming.current = priming
        try:
            yield priming
        finally:
            self._priming.current = outer

    def _priming_of(self, path: str) -> watches.Priming | None:
        """The open priming of this thread if it wants ``path``."""
        priming: watches.Priming | None = getattr(self._priming, "current", None)
        return priming if priming is not None and priming.wanted(path) else None

    def _sent_ahead(self, read: ReadAhead) -> tuple[Any, watches.Priming | None] | None:
        """The pending answer of ``read`` if it was sent ahead in this thread (taken: used once),
        and the priming whose watch it carries."""
        answers: dict[ReadAhead, Any] | None = getattr(self._ahead, "answers", None)
        return None if not answers else answers.pop(read, None)

    def _get(self, path: str) -> tuple[bytes, ZnodeStat] | None:
        ahead = self._sent_ahead(("get", path))
        priming = self._priming_of(path) if ahead is None else ahead[1]
        with zk_errors.mapped(self.client, path):
            try:
                if ahead is not None:
                    data, stat = ahead[0].get()
                elif priming is not None:
                    data, stat = self.client.get(path, watch=priming.watcher)
                else:
                    data, stat = self.client.get(path)
            except NoNodeError:
                self._note(path, None)
                return None
        self._note(path, stat)
        if priming is not None:  # found with the watch: ZooKeeper set it
            priming.armed[path] = data
        return data, stat

    def _stat(self, path: str) -> ZnodeStat | None:
        ahead = self._sent_ahead(("exists", path))
        with zk_errors.mapped(self.client, path):
            stat: ZnodeStat | None = ahead[0].get() if ahead is not None else self.client.exists(path)
        self._note(path, stat)
        return stat

    def _exists(self, path: str) -> bool:
        return self._stat(path) is not None

    def _children(self, path: str) -> list[str]:
        with zk_errors.mapped(self.client, path):
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

    def znode_watches(
        self, on_change: watches.ChangeCallback, on_unchanged: watches.ChangeCallback | None = None
    ) -> watches.ZnodeWatches:
        """Data watches on many znodes of this session, reported to ``on_change`` (``adapters.zk.watches``)."""
        return watches.ZnodeWatches(self.client, on_change, on_unchanged)

    def last_zxid(self) -> int | None:
        """The last transaction id this session has seen in a reply (``None``: none yet): every
        read sent from now on sees at least everything up to it (``ZnodeWatches.add``'s ``since``)."""
        zxid = int(self.client.last_zxid or 0)
        return zxid if zxid > 0 else None

    def holds_kafka_cluster(self) -> bool:
        """``/brokers/ids`` exists: a broker has registered under this chroot at least once."""
        return self._exists(znodes_brokers.BROKER_IDS_PATH)

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
        """Every live broker's registration, sorted by id.

        Read again only when ``/brokers/ids``'s cversion moved: it does whenever a broker comes,
        goes or registers again (a restart, a new session), which is the only way its id, rack
        or registration version change. So a reconcile pays one ``exists`` for them instead of a
        list and a read per broker.
        """
        path = znodes_brokers.BROKER_IDS_PATH
        stat = self._stat(path)
        if stat is None:
            return []
        cached = self._registrations
        if cached is not None and cached[0] == stat.cversion:
            return list(cached[1])
        registrations = []
        for broker_id in self.broker_ids():
            broker_path = znodes_brokers.BrokerIdZNode.path(broker_id)
            got = self._get(broker_path)
            if got is not None:  # the broker may have gone between the two reads
                registrations.append(znodes_brokers.BrokerIdZNode.decode(got[0], broker_path))
        # Cached under the cversion seen *before* the reads: a change meanwhile moved it past
        # that, so the next call reads again.
        self._registrations = (stat.cversion, tuple(registrations))
        return registrations

    def live_brokers(self) -> list[model.Broker]:
        """Live brokers sorted by id, with racks: the input of Kafka's replica assignment."""
        return [r.broker for r in self.broker_registrations()]

    def cluster_line(
        self, registrations: Sequence[znodes_brokers.BrokerRegistration] | None = None
    ) -> kafka_lines.ClusterLine:
        """The Kafka line whose rules every write follows (``domain.kafka.lines``), from
        ``registrations`` when the caller has just read them (:meth:`broker_registrations`: one
        request less per reconcile), else from a read of its own.

        :raises KafkaLineMismatch: the ``kafkaVersion`` setting contradicts the registrations.
        """
        live = self.broker_registrations() if registrations is None else registrations
        return kafka_lines.cluster_line({r.broker.id: r.version for r in live}, self.kafka_version)
