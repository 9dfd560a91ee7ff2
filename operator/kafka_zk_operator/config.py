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
            sasl:                             # optional: the brokers' ZooKeeper identity
              mechanism: DIGEST-MD5
              usernameFile: /etc/kzo/zk/username
              passwordFile: /etc/kzo/zk/password
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
    oldest line the brokers' ``/brokers/ids`` registrations allow (``domain.kafka_lines``).

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
``KZO_STATUS_HEARTBEAT_SECONDS``
    An in-sync resync changes nothing in the status; ``lastSyncTime`` is refreshed at most this
    often (default 300) unless something else changed.

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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kafka_zk_operator import zk_connection_settings
from kafka_zk_operator.domain import errors, kafka_lines
from kafka_zk_operator.domain.crd_identity import LEGACY_KOPF_ANNOTATIONS
from kafka_zk_operator.zk_connection_settings import SaslSettings, TlsSettings, ZkConnectionSettings


def legacy_kopf_annotations(annotations: Mapping[str, str] | None) -> list[str]:
    """The legacy kopf annotations present in ``annotations`` (to be removed)."""
    return [key for key in LEGACY_KOPF_ANNOTATIONS if key in (annotations or {})]


@dataclass(frozen=True)
class ClusterSettings:
    name: str
    zookeeper: ZkConnectionSettings
    #: ``kafkaVersion``: the oldest line the brokers run; ``None`` infers it from the registrations.
    kafka_version: kafka_lines.KafkaLine | None = None


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


_CONNECT_FORMAT = "HOST:PORT[,HOST:PORT...][/CHROOT], e.g. 'zk-0:2181,zk-1:2181/kafka'"
#: A Kubernetes namespace name: an RFC 1123 label.
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
#: kazoo sends the session timeout as a 32-bit count of milliseconds.
_MAX_SESSION_TIMEOUT_S = 2_147_483.0
_MIN_SESSION_TIMEOUT_S = 0.001


def _show(value: object, limit: int = 80) -> str:
    """``repr`` of a user-supplied value, shortened: always one line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _plain(text: str) -> str:
    """A path or name as is when printable (one line), else its ``repr``."""
    return text if text.isprintable() else _show(text)


def _kind(value: object) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, bool):
        return f"the boolean {value!r}"
    if isinstance(value, str):
        return f"the string {_show(value)}"
    if isinstance(value, int | float):
        return f"the number {_show(value)}"
    return f"a {type(value).__name__}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _utf8(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(
            f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
        ) from exc


def _read_file(path: str, what: str) -> str:
    """The text of ``path`` (UTF-8). :raises SettingsError: unreadable or not UTF-8."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or _one_line(str(exc))
        raise SettingsError(
            f"{what}: cannot read {_plain(path)}: {reason}; check the path and that the file is "
            "mounted and readable"
        ) from exc
    except ValueError as exc:  # e.g. an embedded NUL character
        raise SettingsError(f"{what}: {_show(path)} is not a usable file path ({exc})") from exc
    return _utf8(data, f"{what}: {_plain(path)}")


def _read_secret_file(section: Mapping[Any, Any], key: str, where: str) -> str | None:
    path = section.get(key)
    what = f"{where}.{key}"
    if path is None:
        return None
    if not isinstance(path, str) or not path.strip():
        raise SettingsError(f"{what} must be the path of a file (a string), got {_kind(path)}")
    text = _read_file(path, what)
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()  # as text-mode reading did


def _optional_str(section: Mapping[Any, Any], key: str, where: str) -> str | None:
    value = section.get(key)
    if value is None or isinstance(value, str):
        return value
    raise SettingsError(f"{where}.{key} must be a string, got {_kind(value)}; quote it in the YAML")


def _section(raw: Mapping[Any, Any], key: str, where: str) -> Mapping[Any, Any] | None:
    value = raw.get(key)
    if value is None or isinstance(value, Mapping):
        return value
    raise SettingsError(f"{where}.{key} must be a mapping of {key} settings, got {_kind(value)}")


def _flag(raw: Mapping[Any, Any], key: str, where: str, default: bool) -> bool:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    raise SettingsError(f"{where}.{key} must be true or false (unquoted), got {_kind(value)}")


def _session_timeout(raw: Mapping[Any, Any], where: str) -> float:
    value = raw.get("sessionTimeoutSeconds")
    if value is None:
        return 18.0
    number = math.nan
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        try:
            number = float(value)
        except (ValueError, OverflowError):
            number = math.nan
    if not _MIN_SESSION_TIMEOUT_S <= number <= _MAX_SESSION_TIMEOUT_S:  # False for NaN
        raise SettingsError(
            f"{where}.sessionTimeoutSeconds must be a positive finite number of seconds "
            f"({_MIN_SESSION_TIMEOUT_S:g} to {_MAX_SESSION_TIMEOUT_S:.0f}), e.g. 18; got {_kind(value)}"
        )
    return number


def _connect_problem(value: str) -> str | None:
    """Why ``value`` is not a ZooKeeper connect string (the CLI's rules, plus a port), or None."""
    problem = zk_connection_settings.hosts_problem(value) or zk_connection_settings.chroot_problem(value)
    if problem is None and ":" not in value:
        return "no HOST:PORT in it"
    return problem


def _connect(value: object, what: str) -> str:
    """A validated connect string (stripped). :raises SettingsError: naming ``what``."""
    if not isinstance(value, str) or not value.strip():
        got = "it is missing" if value is None else f"got {_kind(value)}"
        raise SettingsError(
            f"{what} must be a ZooKeeper connect string (Kafka's zookeeper.connect) "
            f"like {_CONNECT_FORMAT}; {got}"
        )
    connect = value.strip()
    problem = _connect_problem(connect)
    if problem is not None:
        raise SettingsError(
            f"{what}={_show(value)} is not a ZooKeeper connect string ({problem}); expected {_CONNECT_FORMAT}"
        )
    return connect


def _sasl(section: Mapping[Any, Any], where: str) -> SaslSettings:
    mechanism = (_optional_str(section, "mechanism", where) or "DIGEST-MD5").strip().upper()
    sasl = SaslSettings(
        mechanism=mechanism,
        username=_read_secret_file(section, "usernameFile", where)
        or _optional_str(section, "username", where),
        password=_read_secret_file(section, "passwordFile", where),
        principal=_optional_str(section, "principal", where),
    )
    if mechanism not in zk_connection_settings.SASL_MECHANISMS:
        raise SettingsError(
            f"{where}.mechanism {_show(mechanism)} is not a ZooKeeper SASL mechanism; use "
            f"{' or '.join(zk_connection_settings.SASL_MECHANISMS)}, as in the brokers' JAAS Client section"
        )
    if mechanism == "DIGEST-MD5" and not (sasl.username and sasl.password):
        raise SettingsError(
            f"{where}: DIGEST-MD5 needs usernameFile (or username) and passwordFile, non-empty: the "
            "username and password of the brokers' JAAS Client section"
        )
    return sasl


def _cluster_from_dict(raw: object, where: str) -> ClusterSettings:
    if not isinstance(raw, Mapping):
        raise SettingsError(
            f"{where} must be a mapping with 'name' and 'zookeeper' keys "
            f"(e.g. '- name: main' / '  zookeeper: zk:2181/kafka'), got {_kind(raw)}"
        )
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise SettingsError(f"{where}.name must be a non-empty string")
    connect = _connect(raw.get("zookeeper"), f"{where}.zookeeper")
    sasl = None
    s = _section(raw, "sasl", where)
    if s is not None:
        sasl = _sasl(s, f"{where}.sasl")
    digest = _read_secret_file(raw, "digestAuthFile", where)
    tls = None
    t = _section(raw, "tls", where)
    if t is not None:
        tls_where = f"{where}.tls"
        tls = TlsSettings(
            ca_file=_optional_str(t, "caFile", tls_where),
            cert_file=_optional_str(t, "certFile", tls_where),
            key_file=_optional_str(t, "keyFile", tls_where),
            key_password=_read_secret_file(t, "keyPasswordFile", tls_where),
            verify_certs=_flag(t, "verify", tls_where, True),
            verify_hostname=_flag(t, "verifyHostname", tls_where, True),
        )
        if (tls.cert_file is None) != (tls.key_file is None):  # kazoo would silently send no certificate
            raise SettingsError(
                f"{tls_where}: certFile and keyFile go together (the client certificate and its "
                "private key, PEM); give both for mutual TLS, or neither"
            )
        if tls.key_password is not None and tls.key_file is None:
            raise SettingsError(f"{tls_where}: keyPasswordFile decrypts keyFile; give keyFile too")
    zk = ZkConnectionSettings(
        connect=connect,
        session_timeout_s=_session_timeout(raw, where),
        sasl=sasl,
        digest_auth=(digest,) if digest else (),
        tls=tls,
        secure_acls=_flag(raw, "secureAcls", where, False),
    )
    return ClusterSettings(
        name=name,
        zookeeper=zk,
        kafka_version=_kafka_version(raw.get("kafkaVersion"), f"{where}.kafkaVersion"),
    )


def _kafka_version(value: object, what: str) -> kafka_lines.KafkaLine | None:
    """A ``kafkaVersion`` value: absent/empty, or a supported Kafka version as a string."""
    if value is None or value == "":
        return None
    number = isinstance(value, float | int) and not isinstance(value, bool)
    if number:
        value = str(value)  # YAML reads 2.8 as a number; "0.10.2" (two dots) stays a string
    if not isinstance(value, str):
        raise SettingsError(f'{what} must be a Kafka version such as "2.8", got {_kind(value)}')
    try:
        return kafka_lines.parse_line(value)
    except ValueError as exc:
        hint = ' (YAML read it as a number: quote the version, e.g. "0.10.2")' if number else ""
        raise SettingsError(f"{what}: {exc}{hint}") from None


def _yaml_problem(exc: Exception) -> str:
    """One line for a PyYAML (or constructor) failure, with line/column when known."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = _one_line(exc.problem or exc.context or "syntax error")
        context = f" ({_one_line(exc.context)})" if exc.context and exc.problem else ""
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        return f"invalid YAML{where}: {problem}{context}"
    if isinstance(exc, yaml.reader.ReaderError):
        char = f"character #x{exc.character:04x}" if isinstance(exc.character, int) else "character"
        return f"invalid YAML at character {exc.position}: unacceptable {char} ({_one_line(str(exc.reason))})"
    if isinstance(exc, RecursionError):
        return "invalid YAML: nested too deeply"
    return f"invalid YAML: {_one_line(str(exc)) or type(exc).__name__}"


def _clusters_from_file(path: str) -> tuple[list[ClusterSettings], str | None]:
    label = f"KZO_CLUSTERS_FILE={_plain(path)}"
    text = _read_file(path, "KZO_CLUSTERS_FILE")
    try:
        doc = yaml.safe_load(text) or {}
    except Exception as exc:  # PyYAML's constructors also raise ValueError, KeyError, RecursionError...
        raise SettingsError(f"{label}: {_yaml_problem(exc)}; fix the file's syntax") from exc
    if not isinstance(doc, Mapping) or not isinstance(doc.get("clusters"), list):
        raise SettingsError(f"{label} must have a 'clusters' list")
    items = doc["clusters"]
    if not items:
        raise SettingsError(f"{label}: 'clusters' is empty; list at least one cluster (name and zookeeper)")
    clusters = [_cluster_from_dict(raw, f"{label}: clusters[{i}]") for i, raw in enumerate(items)]
    default_cluster = doc.get("defaultCluster")
    names = [c.name for c in clusters]
    if default_cluster is not None and (not isinstance(default_cluster, str) or default_cluster not in names):
        raise SettingsError(
            f"{label}: defaultCluster {_show(default_cluster)} is not one of {names}; "
            "name one of the clusters or remove it"
        )
    return clusters, default_cluster


def _cluster_from_env(env: Mapping[str, str]) -> ClusterSettings:
    connect = _connect(env["KZO_ZOOKEEPER"], "KZO_ZOOKEEPER")
    name = env.get("KZO_CLUSTER_NAME") or "default"
    return ClusterSettings(
        name=name,
        zookeeper=ZkConnectionSettings(connect=connect, session_timeout_s=18.0),
        kafka_version=_kafka_version(env.get("KZO_KAFKA_VERSION", "").strip(), "KZO_KAFKA_VERSION"),
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
        f"{key}={_show(raw)} is not a valid number of seconds: use {expected}, "
        f"or leave it unset for the default {default:g}"
    )


def _port(env: Mapping[str, str], key: str, default: int, *, zero_disables: bool) -> int:
    raw = env.get(key)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    lowest = 0 if zero_disables else 1
    if math.isfinite(value) and value.is_integer() and lowest <= value <= 65535:
        return int(value)
    note = "; 0 disables it" if zero_disables else ""
    raise SettingsError(
        f"{key}={_show(raw)} is not a TCP port: use an integer {lowest}-65535{note} (default {default})"
    )


def _namespaces(env: Mapping[str, str]) -> tuple[str, ...]:
    namespaces = tuple(ns.strip() for ns in env.get("KZO_NAMESPACES", "").split(",") if ns.strip())
    for ns in namespaces:
        if not _NAMESPACE.fullmatch(ns):
            raise SettingsError(
                f"KZO_NAMESPACES entry {_show(ns)} is not a Kubernetes namespace name: use lowercase "
                "letters, digits and '-', starting and ending with a letter or digit, at most 63 "
                "characters; separate namespaces with ',' (empty watches all namespaces)"
            )
    return namespaces


def load(env: Mapping[str, str] | None = None) -> OperatorSettings:
    """Read settings from ``env`` (default ``os.environ``). :raises SettingsError: with the cause."""
    env = os.environ if env is None else env
    clusters: list[ClusterSettings] = []
    default_cluster: str | None = None
    clusters_file = env.get("KZO_CLUSTERS_FILE")
    if clusters_file:
        clusters, default_cluster = _clusters_from_file(clusters_file)
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
        status_heartbeat_seconds=_number(
            env, "KZO_STATUS_HEARTBEAT_SECONDS", 300.0, zero_means="refreshes lastSyncTime on every sync"
        ),
    )
