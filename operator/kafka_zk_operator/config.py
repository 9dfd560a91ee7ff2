"""Operator settings: one typed, frozen value read from the environment at start-up.

Environment variables (the Helm chart sets them; every one has a default):

``KZO_CLUSTERS_FILE``
    YAML file listing the Kafka clusters this operator serves (mounted from a Secret)::

        clusters:
          - name: main                        # KafkaTopic.spec.cluster refers to it
            zookeeper: zk-0.zk:2181,zk-1.zk:2181/kafka   # Kafka's zookeeper.connect, with chroot
            sessionTimeoutSeconds: 18
            secureAcls: false                 # true when the brokers run with zookeeper.set.acl=true
            sasl:                             # optional: the brokers' ZooKeeper identity
              mechanism: DIGEST-MD5
              usernameFile: /etc/kzo/zk/username
              passwordFile: /etc/kzo/zk/password
            digestAuthFile: /etc/kzo/zk/digest   # optional: "user:password" for ZooKeeper digest auth
            tls:                              # optional: ZooKeeper TLS (client port must be TLS)
              caFile: /etc/kzo/zk-tls/ca.crt
              certFile: /etc/kzo/zk-tls/tls.crt
              keyFile: /etc/kzo/zk-tls/tls.key
        defaultCluster: main                  # used when spec.cluster is empty (defaults to the only one)

``KZO_ZOOKEEPER`` / ``KZO_CLUSTER_NAME``
    Shortcut for a single cluster without a file (name defaults to ``default``).
``KZO_NAMESPACES``
    Comma-separated namespaces to watch; empty (default) watches all namespaces.
``KZO_RESYNC_SECONDS``
    Full level-based resync period per resource (default 60).
``KZO_CONFIG_DRIFT``
    ``revert`` (default) or ``report`` out-of-band topic config changes.
``KZO_DELETED_TOPIC_DRIFT``
    ``recreate`` (default) or ``report`` topics deleted in Kafka behind the operator's back.
``KZO_METRICS_PORT``
    Prometheus ``/metrics`` port (default 9090; 0 disables). The liveness probe is kopf's, on
    ``KZO_HEALTH_PORT`` (default 8080, path ``/healthz``).
``KZO_CREATE_WAIT_SECONDS``
    How long a create waits in-line for partition leaders before reporting (default 10).
``KZO_STATUS_HEARTBEAT_SECONDS``
    An in-sync resync changes nothing in the status; ``lastSyncTime`` is refreshed at most this
    often (default 300) unless something else changed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kafka_zk_operator.adapters.zk.session import SaslSettings, TlsSettings, ZkConnectionSettings
from kafka_zk_operator.domain import errors

GROUP = "kafka.zk-operator.io"
VERSION = "v1alpha1"
FINALIZER = f"{GROUP}/finalizer"


@dataclass(frozen=True)
class ClusterSettings:
    name: str
    zookeeper: ZkConnectionSettings


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
    status_heartbeat_seconds: float = 300.0
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


def _read_secret_file(path: str | None, what: str) -> str | None:
    if path is None:
        return None
    try:
        return Path(path).read_text().strip()
    except OSError as exc:
        raise SettingsError(f"cannot read {what} from {path}: {exc.strerror}") from exc


def _cluster_from_dict(raw: Mapping[str, Any], index: int) -> ClusterSettings:
    where = f"clusters[{index}]"
    name = raw.get("name")
    connect = raw.get("zookeeper")
    if not isinstance(name, str) or not name:
        raise SettingsError(f"{where}.name must be a non-empty string")
    if not isinstance(connect, str) or ":" not in connect:
        raise SettingsError(f"{where}.zookeeper must be a connect string like 'zk:2181/kafka'")
    sasl = None
    if isinstance(raw.get("sasl"), Mapping):
        s = raw["sasl"]
        sasl = SaslSettings(
            mechanism=str(s.get("mechanism", "DIGEST-MD5")),
            username=_read_secret_file(s.get("usernameFile"), f"{where}.sasl.usernameFile")
            or s.get("username"),
            password=_read_secret_file(s.get("passwordFile"), f"{where}.sasl.passwordFile"),
            principal=s.get("principal"),
        )
    digest = _read_secret_file(raw.get("digestAuthFile"), f"{where}.digestAuthFile")
    tls = None
    if isinstance(raw.get("tls"), Mapping):
        t = raw["tls"]
        tls = TlsSettings(
            ca_file=t.get("caFile"),
            cert_file=t.get("certFile"),
            key_file=t.get("keyFile"),
            verify_certs=bool(t.get("verify", True)),
        )
    zk = ZkConnectionSettings(
        connect=connect,
        session_timeout_s=float(raw.get("sessionTimeoutSeconds", 18)),
        sasl=sasl,
        digest_auth=(digest,) if digest else (),
        tls=tls,
        secure_acls=bool(raw.get("secureAcls", False)),
    )
    return ClusterSettings(name=name, zookeeper=zk)


def _choice(env: Mapping[str, str], key: str, default: str, allowed: tuple[str, ...]) -> str:
    value = env.get(key, default).strip().lower() or default
    if value not in allowed:
        raise SettingsError(f"{key}={value!r} is not one of: {', '.join(allowed)}")
    return value


def _number(env: Mapping[str, str], key: str, default: float) -> float:
    raw = env.get(key)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise SettingsError(f"{key}={raw!r} is not a number") from exc


def load(env: Mapping[str, str] | None = None) -> OperatorSettings:
    """Read settings from ``env`` (default ``os.environ``). :raises SettingsError: with the cause."""
    env = os.environ if env is None else env
    clusters: list[ClusterSettings] = []
    default_cluster = None
    clusters_file = env.get("KZO_CLUSTERS_FILE")
    if clusters_file:
        try:
            doc = yaml.safe_load(Path(clusters_file).read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise SettingsError(f"KZO_CLUSTERS_FILE={clusters_file}: {exc}") from exc
        if not isinstance(doc, Mapping) or not isinstance(doc.get("clusters"), list):
            raise SettingsError(f"KZO_CLUSTERS_FILE={clusters_file} must have a 'clusters' list")
        clusters = [_cluster_from_dict(raw, i) for i, raw in enumerate(doc["clusters"])]
        default_cluster = doc.get("defaultCluster")
    elif env.get("KZO_ZOOKEEPER"):
        name = env.get("KZO_CLUSTER_NAME", "default")
        clusters = [_cluster_from_dict({"name": name, "zookeeper": env["KZO_ZOOKEEPER"]}, 0)]
    if not clusters:
        raise SettingsError("no Kafka cluster configured: set KZO_CLUSTERS_FILE or KZO_ZOOKEEPER")
    names = [c.name for c in clusters]
    if len(set(names)) != len(names):
        raise SettingsError(f"cluster names must be unique, got {names}")
    if default_cluster is not None and default_cluster not in names:
        raise SettingsError(f"defaultCluster {default_cluster!r} is not one of {names}")
    namespaces = tuple(ns.strip() for ns in env.get("KZO_NAMESPACES", "").split(",") if ns.strip())
    return OperatorSettings(
        clusters=tuple(clusters),
        default_cluster=default_cluster,
        namespaces=namespaces,
        resync_seconds=_number(env, "KZO_RESYNC_SECONDS", 60.0),
        config_drift=_choice(env, "KZO_CONFIG_DRIFT", "revert", ("revert", "report")),
        deleted_topic_drift=_choice(env, "KZO_DELETED_TOPIC_DRIFT", "recreate", ("recreate", "report")),
        metrics_port=int(_number(env, "KZO_METRICS_PORT", 9090)),
        health_port=int(_number(env, "KZO_HEALTH_PORT", 8080)),
        create_wait_seconds=_number(env, "KZO_CREATE_WAIT_SECONDS", 10.0),
        status_heartbeat_seconds=_number(env, "KZO_STATUS_HEARTBEAT_SECONDS", 300.0),
    )
