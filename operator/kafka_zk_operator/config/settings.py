"""The operator's settings as typed, frozen values (read by :func:`kafka_zk_operator.config.load`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from kafka_zk_operator.config.kafka_security import PLAINTEXT, KafkaClientSecurity
from kafka_zk_operator.config.zookeeper import ZkConnectionSettings
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import LEGACY_KOPF_ANNOTATIONS
from kafka_zk_operator.domain.kafka import lines as kafka_lines


def legacy_kopf_annotations(annotations: Mapping[str, str] | None) -> list[str]:
    """The legacy kopf annotations present in ``annotations`` (to be removed)."""
    return [key for key in LEGACY_KOPF_ANNOTATIONS if key in (annotations or {})]


@dataclass(frozen=True)
class ClusterSettings:
    name: str
    #: ``None``: a KRaft cluster (no ZooKeeper), served through ``bootstrap_servers`` alone.
    zookeeper: ZkConnectionSettings | None
    #: ``kafkaVersion``: the oldest line the brokers run; ``None`` infers it from the registrations.
    kafka_version: kafka_lines.KafkaLine | None = None
    #: ``bootstrapServers``: Kafka listeners (``HOST:PORT,...``) for the Admin API and what only the
    #: brokers know (partition sizes, for byte-balanced reassignments); ``None``: not configured.
    bootstrap_servers: str | None = None
    #: ``kafkaSecurity``: how the operator logs in to ``bootstrap_servers`` (default plaintext).
    kafka_security: KafkaClientSecurity = PLAINTEXT

    @property
    def zk(self) -> ZkConnectionSettings:
        """The ZooKeeper connection, for code that only runs on a ZooKeeper cluster.

        :raises SettingsError: a KRaft cluster (no ``zookeeper`` in its settings).
        """
        if self.zookeeper is None:
            raise SettingsError(
                f"cluster {self.name!r} has no zookeeper (a KRaft cluster, served through bootstrapServers)"
            )
        return self.zookeeper


#: Resources of one kind kopf handles at once by default (measured: issue #16, docs/performance.md).
DEFAULT_WORKER_LIMIT = 1000


@dataclass(frozen=True)
class LeaderElectionSettings:
    """The Lease replicas elect their leader on (``runtime.leadership``), and this replica's name."""

    namespace: str
    lease: str
    identity: str
    lease_seconds: float = 10.0


@dataclass(frozen=True)
class OperatorSettings:
    clusters: tuple[ClusterSettings, ...]
    default_cluster: str | None = None
    namespaces: tuple[str, ...] = ()
    resync_seconds: float = 60.0
    config_drift: str = "revert"
    deleted_topic_drift: str = "recreate"
    metrics_port: int = 9090
    health_port: int = 8080
    create_wait_seconds: float = 10.0
    #: Creates within this window are one ZooKeeper transaction (0: each alone).
    create_batch_seconds: float = 0.2
    #: inf: no heartbeat (lastSyncTime is written only with another status change).
    status_heartbeat_seconds: float = math.inf
    #: Concurrent requests kopf may have in flight to the API server (its watch streams come on top).
    api_connections: int = 32
    #: Threads of kopf's pool for the blocking work of handlers (``KZO_WORKER_THREADS``).
    worker_threads: int = 16
    #: Resources of one kind kopf handles at once (0: unbounded; ``KZO_WORKER_LIMIT``).
    worker_limit: int = DEFAULT_WORKER_LIMIT
    #: None: leader election is off (one replica).
    leader_election: LeaderElectionSettings | None = None
    extra: Mapping[str, str] = field(default_factory=dict)

    def cluster(self, name: str | None) -> ClusterSettings:
        """The cluster a resource names, or the default one. :raises InvalidSpec: unknown name."""
        wanted = name or self.default_cluster
        if wanted is None:
            if len(self.clusters) == 1:
                return self.clusters[0]
            raise errors.InvalidSpec(
                "spec.cluster is empty and the operator serves several clusters "
                f"({', '.join(c.name for c in self.clusters)}); name one of them"
            )
        for cluster in self.clusters:
            if cluster.name == wanted:
                return cluster
        raise errors.InvalidSpec(
            f"unknown cluster {wanted!r}; this operator serves: {', '.join(c.name for c in self.clusters)}"
        )


class SettingsError(Exception):
    """The operator's own configuration is wrong; the message says which variable or key."""
