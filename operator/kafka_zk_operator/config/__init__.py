"""Operator settings: one typed, frozen value read from the environment at start-up.

Environment variables (the Helm chart sets them; every one has a default):

``KZO_CLUSTERS_FILE``
    YAML file listing the Kafka clusters this operator serves (mounted from a Secret)::

        clusters:
          - name: main                        # KafkaTopic.spec.cluster refers to it
            zookeeper: zk-0.zk:2181,zk-1.zk:2181/kafka   # Kafka's zookeeper.connect, with chroot
            sessionTimeoutSeconds: 18
            secureAcls: false                 # true when the brokers run with zookeeper.set.acl=true
            kafkaVersion: "2.8"               # optional: the oldest Kafka line the brokers run (see below)
            bootstrapServers: kafka-0.kafka:9092,kafka-1.kafka:9092  # optional: the brokers' listeners, for
                                              # partition sizes (PartitionReassignment spec.balance)
                                              # and the Admin API (KRaft, a migration's takeover)
            kafkaSecurity:                    # optional: TLS/SASL on bootstrapServers (default PLAINTEXT;
              protocol: SASL_SSL              # config.kafka_security_section has every key)
              tls: {caFile: /etc/kzo/kafka-ca.crt}
              sasl: {mechanism: SCRAM-SHA-512, usernameFile: /etc/kzo/kafka/username,
                     passwordFile: /etc/kzo/kafka/password}
              # Kerberos instead: mechanism: GSSAPI, principal: kzo@EXAMPLE.COM,
              # keytab: /etc/kzo-krb5/operator.keytab (docs/install.md#sasl-gssapi-kerberos)
            sasl:                             # optional: the brokers' ZooKeeper identity
              mechanism: DIGEST-MD5
              usernameFile: /etc/kzo/zk/username
              passwordFile: /etc/kzo/zk/password
              # Kerberos instead: mechanism: GSSAPI, principal: kafka/kafka-zk-operator@EXAMPLE.COM,
              # keytab: /etc/kzo-krb5/operator.keytab (docs/zookeeper.md)
            digestAuthFile: /etc/kzo/zk/digest   # optional: "user:password" for ZooKeeper digest auth
            tls:                              # optional: ZooKeeper TLS (client port must be TLS)
              caFile: /etc/kzo/zk-tls/ca.crt
              certFile: /etc/kzo/zk-tls/tls.crt
              keyFile: /etc/kzo/zk-tls/tls.key
              keyPasswordFile: /etc/kzo/zk-tls/key-password   # optional: an encrypted keyFile
              verify: true                    # check the server certificate against caFile
              verifyHostname: true            # ... and that it names the connect-string host
        defaultCluster: main                  # used when spec.cluster is empty (defaults to the only one)

    ``kafkaVersion`` ("0.10.0" ... "3.9"; a full version such as "2.8.2" works too) selects the
    rules for topic configs and config-change notifications. Without it the operator infers the
    oldest line the brokers' ``/brokers/ids`` registrations allow (``domain.kafka.lines``). A KRaft
    cluster (``bootstrapServers``, no ``zookeeper``) may also name "4.0" or "4.1"; without it its
    line is the one that introduced its finalized ``metadata.version``. A cluster with
    ``zookeeper`` refuses 4.x: Kafka 4.0 removed ZooKeeper mode.

``KZO_ZOOKEEPER`` / ``KZO_CLUSTER_NAME`` / ``KZO_KAFKA_VERSION``
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
``KZO_CREATE_BATCH_SECONDS``
    Topic creates that arrive within this many seconds of each other are written to ZooKeeper as
    one transaction, so that Kafka's controller handles them as one change (default 0.2; 0: each
    create alone). A 10,000-topic burst cost the brokers 23% less CPU that way (docs/performance.md).
``KZO_STATUS_HEARTBEAT_SECONDS``
    An in-sync resync changes nothing in the status. Unset (the default): ``lastSyncTime`` is
    written only together with another status change, so that a no-op resync of N topics writes
    nothing (with 10,000 topics a 5-minute heartbeat alone was 33 status patches a second). Set:
    ``lastSyncTime`` is also refreshed when it is older than this many seconds.

``KZO_WORKER_LIMIT``
    Resources of one kind kopf handles at once (default 1000; 0: unbounded). Each in kopf's hands
    holds its event, body and patch: a burst or a restart of 10,000 KafkaTopics unbounded was
    10,000 at once, most of the operator's memory peak. The others wait in kopf's queue, each as
    its raw events only.
``KZO_WORKER_THREADS``
    Threads that run the handlers' blocking work: ZooKeeper reads and writes, and the waits of a
    create (for the other creates of its transaction, for its partitions' leaders) (default 16).
``KZO_API_CONNECTIONS``
    Requests kopf may have in flight to the API server at once (default 32); its watch streams
    get their own connections on top. More waits for a free connection: each open connection
    holds a 256 KiB TLS buffer, and unbounded (kopf's default) a topic burst opened hundreds.

``KZO_LEADER_ELECTION``
    ``true`` when several replicas run (the chart's default of two): they elect one leader on a
    Lease and the others stand by (``runtime.leadership``, docs/install.md#high-availability).
    Default ``false``: one replica, no Lease.
``KZO_LEADER_ELECTION_NAMESPACE`` / ``KZO_LEADER_ELECTION_LEASE`` / ``KZO_LEADER_ELECTION_LEASE_SECONDS``
    Where the Lease is (default: the pod's namespace, from ``POD_NAMESPACE`` or the ServiceAccount's
    namespace file; name ``kafka-zk-operator``), and how long it lasts without renewal (default 10:
    the standby takes over at most about 12 s after the leader died). The replica's identity is
    ``POD_NAME`` (else the host name) plus a random suffix, new for every process.

``KZO_REASSIGNMENT_POLL_SECONDS`` and ``KZO_REASSIGNMENT_STUCK_SECONDS`` belong to
``handlers.partitionreassignment`` (read there at import); :func:`load` only checks them, so that
a bad value is a one-line error before the handlers are imported.

Bad input of any kind is a :class:`SettingsError` whose message is one line naming the variable
or key, what is wrong and what is expected; :func:`load` raises nothing else.
"""

from __future__ import annotations

import math
import os
import re
import socket
import uuid
from collections.abc import Mapping

from kafka_zk_operator.config.clusters_file import (
    clusters_from_file,
    connect_string,
    kafka_version,
    zookeeper_mode_line,
)
from kafka_zk_operator.config.settings import DEFAULT_WORKER_LIMIT
from kafka_zk_operator.config.settings import ClusterSettings as ClusterSettings
from kafka_zk_operator.config.settings import LeaderElectionSettings as LeaderElectionSettings
from kafka_zk_operator.config.settings import OperatorSettings as OperatorSettings
from kafka_zk_operator.config.settings import SettingsError as SettingsError
from kafka_zk_operator.config.settings import legacy_kopf_annotations as legacy_kopf_annotations
from kafka_zk_operator.config.values import show
from kafka_zk_operator.config.zookeeper import ZkConnectionSettings

#: A Kubernetes namespace name: an RFC 1123 label.
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def _cluster_from_env(env: Mapping[str, str]) -> ClusterSettings:
    connect = connect_string(env["KZO_ZOOKEEPER"], "KZO_ZOOKEEPER")
    name = env.get("KZO_CLUSTER_NAME") or "default"
    return ClusterSettings(
        name=name,
        zookeeper=ZkConnectionSettings(connect=connect, session_timeout_s=18.0),
        kafka_version=zookeeper_mode_line(
            kafka_version(env.get("KZO_KAFKA_VERSION", "").strip(), "KZO_KAFKA_VERSION"),
            "KZO_KAFKA_VERSION",
            "KZO_ZOOKEEPER serves the cluster through ZooKeeper",
        ),
    )


def _choice(env: Mapping[str, str], key: str, default: str, allowed: tuple[str, ...]) -> str:
    value = env.get(key, default).strip().lower() or default
    if value not in allowed:
        raise SettingsError(f"{key}={value!r} is not one of: {', '.join(allowed)}")
    return value


def _number(
    env: Mapping[str, str],
    key: str,
    default: float,
    *,
    zero_means: str | None = None,
    read_at_import: bool = False,
    default_text: str | None = None,
) -> float:
    """A finite number of seconds: > 0, or >= 0 when ``zero_means`` says what 0 does.

    ``read_at_import``: a handler module also does ``float(value or default)`` at import, so only
    an empty value may stand for the default (a blank one would crash that import).
    """
    raw = env.get(key)
    if raw is None or raw == "" or (raw.strip() == "" and not read_at_import):
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and (value > 0 or (value == 0 and zero_means is not None)):
        return value
    expected = f"a number >= 0 (0 {zero_means})" if zero_means is not None else "a number > 0"
    raise SettingsError(
        f"{key}={show(raw)} is not a valid number of seconds: use {expected}, "
        f"or leave it unset for the default {default_text or format(default, 'g')}"
    )


def _whole_number(raw: str) -> float:
    """``raw`` as a float; NaN when it is not a number (callers reject it with their message)."""
    try:
        value = float(raw)
    except ValueError:
        return math.nan
    return value if math.isfinite(value) and value.is_integer() else math.nan


def _count(
    env: Mapping[str, str],
    key: str,
    default: int,
    *,
    lowest: int = 1,
    highest: int = 10_000,
    lowest_means: str = "",
) -> int:
    """A whole number from ``lowest`` to ``highest`` (``lowest_means``: what the lowest does)."""
    raw = env.get(key)
    if raw is None or raw.strip() == "":
        return default
    value = _whole_number(raw)
    if lowest <= value <= highest:
        return int(value)
    means = f" ({lowest_means})" if lowest_means else ""
    raise SettingsError(
        f"{key}={show(raw)} is not valid: use a whole number from {lowest}{means} to {highest}, "
        f"or leave it unset for the default {default}"
    )


def _port(env: Mapping[str, str], key: str, default: int, *, zero_disables: bool) -> int:
    raw = env.get(key)
    if raw is None or raw.strip() == "":
        return default
    value = _whole_number(raw)
    lowest = 0 if zero_disables else 1
    if lowest <= value <= 65535:
        return int(value)
    note = "; 0 disables it" if zero_disables else ""
    raise SettingsError(
        f"{key}={show(raw)} is not a TCP port: use an integer {lowest}-65535{note} (default {default})"
    )


def _namespaces(env: Mapping[str, str]) -> tuple[str, ...]:
    namespaces = tuple(ns.strip() for ns in env.get("KZO_NAMESPACES", "").split(",") if ns.strip())
    for ns in namespaces:
        if not _NAMESPACE.fullmatch(ns):
            raise SettingsError(
                f"KZO_NAMESPACES entry {show(ns)} is not a Kubernetes namespace name: use lowercase "
                "letters, digits and '-', starting and ending with a letter or digit, at most 63 "
                "characters; separate namespaces with ',' (empty watches all namespaces)"
            )
    return namespaces


#: Where a pod's ServiceAccount token mount says which namespace it runs in.
_POD_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


def _pod_namespace(env: Mapping[str, str]) -> str | None:
    if env.get("POD_NAMESPACE", "").strip():
        return env["POD_NAMESPACE"].strip()
    try:
        with open(_POD_NAMESPACE_FILE, encoding="utf-8") as file:
            return file.read().strip() or None
    except OSError:
        return None


def _leader_election(env: Mapping[str, str]) -> LeaderElectionSettings | None:
    if _choice(env, "KZO_LEADER_ELECTION", "false", ("true", "false")) == "false":
        return None
    namespace = env.get("KZO_LEADER_ELECTION_NAMESPACE", "").strip() or _pod_namespace(env)
    if namespace is None:
        raise SettingsError(
            "KZO_LEADER_ELECTION=true needs the namespace of its Lease: set KZO_LEADER_ELECTION_NAMESPACE "
            "(or POD_NAMESPACE; in a pod the ServiceAccount's namespace is used)"
        )
    if not _NAMESPACE.fullmatch(namespace):
        raise SettingsError(
            f"KZO_LEADER_ELECTION_NAMESPACE {show(namespace)} is not a Kubernetes namespace name: use "
            "lowercase letters, digits and '-', starting and ending with a letter or digit"
        )
    lease = env.get("KZO_LEADER_ELECTION_LEASE", "").strip() or "kafka-zk-operator"
    if len(lease) > 253 or not re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", lease):
        raise SettingsError(
            f"KZO_LEADER_ELECTION_LEASE {show(lease)} is not a Kubernetes object name: use lowercase "
            "letters, digits, '-' and '.', starting and ending with a letter or digit"
        )
    seconds = _number(env, "KZO_LEADER_ELECTION_LEASE_SECONDS", 10.0)
    if seconds < 2:
        raise SettingsError(
            f"KZO_LEADER_ELECTION_LEASE_SECONDS={show(env['KZO_LEADER_ELECTION_LEASE_SECONDS'])} is too "
            "short: use at least 2 (the leader renews every fifth of it)"
        )
    holder = env.get("POD_NAME", "").strip() or socket.gethostname()
    return LeaderElectionSettings(
        namespace=namespace, lease=lease, identity=f"{holder}_{uuid.uuid4().hex[:8]}", lease_seconds=seconds
    )


def load(env: Mapping[str, str] | None = None) -> OperatorSettings:
    """Read settings from ``env`` (default ``os.environ``). :raises SettingsError: with the cause."""
    env = os.environ if env is None else env
    clusters: list[ClusterSettings] = []
    default_cluster: str | None = None
    clusters_file = env.get("KZO_CLUSTERS_FILE")
    if clusters_file:
        clusters, default_cluster = clusters_from_file(clusters_file)
    elif env.get("KZO_ZOOKEEPER", "").strip():
        clusters = [_cluster_from_env(env)]
    if not clusters:
        raise SettingsError("no Kafka cluster configured: set KZO_CLUSTERS_FILE or KZO_ZOOKEEPER")
    names = [c.name for c in clusters]
    if len(set(names)) != len(names):
        raise SettingsError(f"cluster names must be unique, got {names}; rename the duplicates")
    # Read by handlers.partitionreassignment at import; checked here so that a bad value is one line.
    _number(env, "KZO_REASSIGNMENT_POLL_SECONDS", 5.0, read_at_import=True)
    _number(
        env,
        "KZO_REASSIGNMENT_STUCK_SECONDS",
        1800.0,
        zero_means="marks a leaderless batch stuck at once",
        read_at_import=True,
    )
    return OperatorSettings(
        clusters=tuple(clusters),
        default_cluster=default_cluster,
        namespaces=_namespaces(env),
        resync_seconds=_number(env, "KZO_RESYNC_SECONDS", 60.0, read_at_import=True),
        config_drift=_choice(env, "KZO_CONFIG_DRIFT", "revert", ("revert", "report")),
        deleted_topic_drift=_choice(env, "KZO_DELETED_TOPIC_DRIFT", "recreate", ("recreate", "report")),
        metrics_port=_port(env, "KZO_METRICS_PORT", 9090, zero_disables=True),
        health_port=_port(env, "KZO_HEALTH_PORT", 8080, zero_disables=False),
        create_wait_seconds=_number(env, "KZO_CREATE_WAIT_SECONDS", 10.0, zero_means="does not wait"),
        create_batch_seconds=_number(
            env, "KZO_CREATE_BATCH_SECONDS", 0.2, zero_means="writes each create alone"
        ),
        status_heartbeat_seconds=_number(
            env,
            "KZO_STATUS_HEARTBEAT_SECONDS",
            math.inf,
            zero_means="refreshes lastSyncTime on every sync",
            default_text="(no heartbeat)",
        ),
        api_connections=_count(env, "KZO_API_CONNECTIONS", 32),
        worker_threads=_count(env, "KZO_WORKER_THREADS", 16, highest=1024),
        worker_limit=_count(
            env, "KZO_WORKER_LIMIT", DEFAULT_WORKER_LIMIT, lowest=0, highest=100_000, lowest_means="unbounded"
        ),
        leader_election=_leader_election(env),
    )
