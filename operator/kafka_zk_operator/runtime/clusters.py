"""Per configured Kafka cluster: its ZooKeeper session (``ZkStore``) and its Kafka Admin API
backend, each opened on first use, and the choice between them for each pass (:meth:`backend`).

The choice follows the ZooKeeper → KRaft migration phase, read again for every pass
(``domain.migration.phase``; nothing is cached across a phase change): the ZooKeeper store while
ZooKeeper is authoritative, the Admin API backend once a KRaft controller owns the cluster
(hybrid, dual-write, finalized) and for a cluster configured without ``zookeeper`` (KRaft);
during the initial metadata copy, or with no controller, the pass is refused as retryable.

A lost connection is reported as ``ClusterUnavailable`` by the store; kazoo reconnects by
itself, except after the server refused its login on a reconnect (e.g. a SASL password changed
on ZooKeeper before the operator's Secret): then the next ``store()`` starts a new session. The
session state is exported as a metric.

A connect string whose chroot holds no Kafka cluster (no ``/brokers/ids``: a wrong chroot, or no
broker has started with it yet) is ``ClusterUnavailable`` saying so, until a broker creates it;
without this check every topic would be refused as asking for more replicas than the 0 brokers.

With leader election (``runtime.leadership``) the store refuses to write unless this replica
leads, and the first time a store is used the leader claims the cluster's fence znode, whose
version every later write transaction checks (``adapters.zk.fence``).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable

from kafka_zk_operator import metrics
from kafka_zk_operator.adapters.kafka import log_dirs
from kafka_zk_operator.adapters.kafka.admin_backend import AdminBackend
from kafka_zk_operator.adapters.zk import fence, session
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.adapters.zk.znodes_brokers import BROKER_IDS_PATH
from kafka_zk_operator.config import ClusterSettings, OperatorSettings
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.migration import phase
from kafka_zk_operator.runtime.health import HealthReporter, StatusPatcher
from kafka_zk_operator.runtime.leadership import LeaderElector
from kafka_zk_operator.service.backend import ReassignmentBackend


class ClusterRuntime:
    def __init__(
        self,
        settings: ClusterSettings,
        patcher: StatusPatcher | None,
        leadership: LeaderElector | None = None,
        *,
        create_batch_seconds: float = 0.0,
    ) -> None:
        self.settings = settings
        self._create_batch_seconds = create_batch_seconds
        self._leadership = leadership
        self.name = settings.name
        self._patcher = patcher
        self._lock = threading.Lock()
        self._client: session.ZkSession | None = None
        self._store: ZkStore | None = None
        self._admin: AdminBackend | None = None
        #: The phase the last :meth:`backend` call decided (``None``: not read yet).
        self.phase: phase.PhaseDecision | None = None
        self.health: HealthReporter | None = None
        #: ``/brokers/ids`` was seen once: the chroot is a Kafka cluster's.
        self._kafka_seen = False

    def partition_sizes(self) -> dict[tuple[str, int], int]:
        """Bytes per partition, from the brokers' DescribeLogDirs through ``bootstrapServers``.

        :raises NotSupported: the cluster has no ``bootstrapServers``.
        :raises ClusterUnavailable: the brokers could not be asked (retried by the caller).
        """
        bootstrap = self.settings.bootstrap_servers
        if bootstrap is None:
            raise errors.NotSupported(
                f"balancing bytes needs partition sizes, which only the brokers report, and cluster "
                f"{self.name!r} has no bootstrapServers: add its listeners to the clusters file "
                "(clusters[].bootstrapServers, e.g. 'kafka-0:9092,kafka-1:9092'), or use balance replicas"
            )
        return log_dirs.fetch_sizes(
            bootstrap, client_id=f"kzo-operator-{self.name}", security=self.settings.kafka_security
        )

    def backend(self, *, reassignments: bool = False) -> ReassignmentBackend:
        """The backend of this pass, chosen from the migration phase read now.

        ``reassignments``: for a PartitionReassignment. While a migration is pending it goes
        through the Admin API when ``bootstrapServers`` is set (the ZooKeeper-mode controller
        carries it out; no ``/admin/reassign_partitions`` is left behind that a controller elected
        after a rollback would act on again).

        :raises KRaftMigrationDetected: (retryable) a phase in which neither may write: the
            initial metadata copy, no controller, or a KRaft controller and no ``bootstrapServers``.
        :raises ClusterUnavailable: ZooKeeper or the bootstrap servers do not answer.
        """
        if self.settings.zookeeper is None:
            admin = self.admin()
            self._note(phase.decide(phase.ProbeFacts(zookeeper=False)))
            return admin
        store = self.store()
        decision = store.read_phase()
        self.phase = decision
        if reassignments:
            decision = phase.for_reassignments(decision, bool(self.settings.bootstrap_servers))
        if decision.backend is phase.Backend.ZOOKEEPER:
            return store
        if decision.backend is phase.Backend.ADMIN and self.settings.bootstrap_servers is not None:
            return self.admin()
        message = decision.reason
        if decision.backend is phase.Backend.ADMIN:
            message += (
                f" Cluster {self.name!r} has no bootstrapServers, so the operator cannot reach the Admin "
                "API: add the brokers' listeners to the clusters file (clusters[].bootstrapServers)."
            )
        if decision.warning is not None:
            message += f" {decision.warning}"
        raise errors.KRaftMigrationDetected(message, phase=decision.phase.value)

    def zookeeper_authoritative(self) -> bool:
        """ZooKeeper decided the last pass (its reassignment znode's watch means something)."""
        return self.settings.zookeeper is not None and (
            self.phase is None
            or (
                self.phase.backend is phase.Backend.ZOOKEEPER
                and self.phase.phase is not phase.Phase.MIGRATION_PENDING
            )
        )

    def admin(self) -> AdminBackend:
        """The cluster's Admin API backend, built on first use (it connects on its first request).

        :raises NotSupported: the cluster has no ``bootstrapServers``.
        """
        bootstrap = self.settings.bootstrap_servers
        if bootstrap is None:
            raise errors.NotSupported(
                f"cluster {self.name!r} has no bootstrapServers, which the Kafka Admin API needs: add the "
                "brokers' listeners to the clusters file (clusters[].bootstrapServers)"
            )
        with self._lock:
            if self._admin is None:
                self._admin = AdminBackend(
                    bootstrap,
                    client_id=f"kzo-operator-{self.name}",
                    security=self.settings.kafka_security,
                    kafka_version=self.settings.kafka_version,
                )
                self._admin.on_write = lambda: metrics.ADMIN_WRITES.labels(self.name).inc()
            return self._admin

    def _note(self, decision: phase.PhaseDecision) -> None:
        if self.phase is None or self.phase.phase is not decision.phase:
            self._on_phase(decision)
        self.phase = decision

    def store(self) -> ZkStore:
        """The cluster's ZooKeeper store, connecting on first use.

        :raises ClusterUnavailable: :raises NotSupported: a KRaft cluster (no ``zookeeper``).
        """
        zookeeper = self.settings.zookeeper
        if zookeeper is None:
            raise errors.NotSupported(
                f"cluster {self.name!r} is a KRaft cluster (no zookeeper in its settings), and this needs "
                "ZooKeeper: PartitionReassignments run on ZooKeeper-mode clusters only for now"
            )
        with self._lock:
            if self._client is not None and session.has_given_up(self._client):  # we never stop one we keep
                self._close()
            if self._store is None:
                with warnings.catch_warnings():
                    # kazoo's "No chroot path exists" warning: _require_kafka says it properly.
                    warnings.filterwarnings("ignore", message="No chroot path exists", category=UserWarning)
                    client = session.connect(zookeeper)
                session.on_connection_change(client, self._on_connection_change)
                metrics.ZK_CONNECTED.labels(self.name).set(1)
                self._client = client
                self._store = ZkStore(
                    client,
                    secure_acls=zookeeper.secure_acls,
                    kafka_version=self.settings.kafka_version,
                    create_batch_seconds=self._create_batch_seconds,
                )
                self._store.on_write = lambda: metrics.ZK_WRITES.labels(self.name).inc()
                self._store.on_phase = self._on_phase
                if self._leadership is not None:
                    self._store.leadership_guard = self._leadership.check
                    self._store.on_fenced = self._leadership.lose
                if self._patcher is not None:
                    self.health = HealthReporter(self._store, self._patcher, self.name)
                    self.health.start()
            if not self._kafka_seen:
                self._require_kafka(self._store, zookeeper.connect)
            if self._leadership is not None and self._store.fence is None:
                self._claim_fence(self._store, self._leadership)
            return self._store

    def open_store(self) -> ZkStore | None:
        """The store if this cluster's session is open and connected, without connecting."""
        store = self._store
        return store if store is not None and store.client.connected else None

    def _claim_fence(self, store: ZkStore, leadership: LeaderElector) -> None:
        """Make every earlier leader's writes fail in ZooKeeper from now on (``adapters.zk.fence``)."""
        leadership.check()
        path = fence.fence_path(*leadership.fence_name)
        version = fence.claim(store.client, path, leadership.identity, secure_acls=store.secure_acls)
        store.fence = (path, version)

    def _require_kafka(self, store: ZkStore, connect: str) -> None:
        """:raises ClusterUnavailable: no ``/brokers/ids`` under the chroot (checked until seen)."""
        if not store.holds_kafka_cluster():
            raise errors.ClusterUnavailable(
                f"no Kafka cluster at ZooKeeper {connect}: {BROKER_IDS_PATH} does "
                "not exist under the chroot; check the chroot of the connect string (it must be the "
                "brokers' zookeeper.connect), or wait for the first broker to start"
            )
        self._kafka_seen = True

    def _on_phase(self, decision: phase.PhaseDecision) -> None:
        """A migration phase read for the first time or changed (the store logged it)."""
        metrics.migration_phase(self.name, decision.phase.value, [p.value for p in phase.Phase])

    def _on_connection_change(self, connected: bool) -> None:
        metrics.ZK_CONNECTED.labels(self.name).set(1 if connected else 0)

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self.health is not None:
            self.health.stop()
        if self._client is not None:
            session.close(self._client)
        if self._admin is not None:
            self._admin.close()
        self._client = self._store = self.health = self._admin = None


class ClusterPool:
    def __init__(
        self,
        settings: OperatorSettings,
        patcher: StatusPatcher | None,
        leadership: LeaderElector | None = None,
    ) -> None:
        self.settings = settings
        self._runtimes = {
            c.name: ClusterRuntime(c, patcher, leadership, create_batch_seconds=settings.create_batch_seconds)
            for c in settings.clusters
        }

    def get(self, cluster: str | None) -> ClusterRuntime:
        """:raises InvalidSpec: the name is not a configured cluster."""
        return self._runtimes[self.settings.cluster(cluster).name]

    def each(self, func: Callable[[ClusterRuntime], None]) -> None:
        for runtime in self._runtimes.values():
            func(runtime)

    def close(self) -> None:
        self.each(lambda runtime: runtime.close())
