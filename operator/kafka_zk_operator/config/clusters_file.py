"""The clusters file (``KZO_CLUSTERS_FILE``): the Kafka clusters the operator serves, each with its
ZooKeeper connect string, session timeout, SASL, digest auth, TLS, ACL mode and ``kafkaVersion``,
and its Kafka listeners (``bootstrapServers``, secured as ``kafkaSecurity`` says: ``kafka_security_section``).

Every problem is a one-line :class:`SettingsError` naming the key (``clusters[0].tls.certFile``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import yaml

from kafka_zk_operator.config import kafka_security_section, zookeeper
from kafka_zk_operator.config.kafka_security import PLAINTEXT, KafkaClientSecurity
from kafka_zk_operator.config.settings import ClusterSettings, SettingsError
from kafka_zk_operator.config.values import (
    flag,
    kerberos_principal,
    keytab_file,
    kind_of,
    one_line,
    optional_str,
    plain,
    read_file,
    secret_file,
    show,
    subsection,
)
from kafka_zk_operator.config.zookeeper import SaslSettings, TlsSettings, ZkConnectionSettings
from kafka_zk_operator.domain.kafka import lines as kafka_lines

_CONNECT_FORMAT = "HOST:PORT[,HOST:PORT...][/CHROOT], e.g. 'zk-0:2181,zk-1:2181/kafka'"
#: kazoo sends the session timeout as a 32-bit count of milliseconds.
_MAX_SESSION_TIMEOUT_S = 2_147_483.0
_MIN_SESSION_TIMEOUT_S = 0.001


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
            f"({_MIN_SESSION_TIMEOUT_S:g} to {_MAX_SESSION_TIMEOUT_S:.0f}), e.g. 18; got {kind_of(value)}"
        )
    return number


def _connect_problem(value: str) -> str | None:
    """Why ``value`` is not a ZooKeeper connect string (the CLI's rules, plus a port), or None."""
    problem = zookeeper.hosts_problem(value) or zookeeper.chroot_problem(value)
    if problem is None and ":" not in value:
        return "no HOST:PORT in it"
    return problem


def connect_string(value: object, what: str) -> str:
    """A validated connect string (stripped). :raises SettingsError: naming ``what``."""
    if not isinstance(value, str) or not value.strip():
        got = "it is missing" if value is None else f"got {kind_of(value)}"
        raise SettingsError(
            f"{what} must be a ZooKeeper connect string (Kafka's zookeeper.connect) "
            f"like {_CONNECT_FORMAT}; {got}"
        )
    connect = value.strip()
    problem = _connect_problem(connect)
    if problem is not None:
        raise SettingsError(
            f"{what}={show(value)} is not a ZooKeeper connect string ({problem}); expected {_CONNECT_FORMAT}"
        )
    return connect


_SERVICE_NAME = re.compile(r"[A-Za-z0-9._-]+")


def _gssapi(section: Mapping[Any, Any], where: str, service: str) -> SaslSettings:
    for key in ("username", "usernameFile", "passwordFile"):
        if section.get(key) is not None:
            raise SettingsError(
                f"{where}.{key} is for DIGEST-MD5; GSSAPI (Kerberos) logs in with principal and keytab"
            )
    principal = kerberos_principal(section, where, "kafka/kafka-zk-operator@EXAMPLE.COM")
    keytab = keytab_file(section, where)
    if not zookeeper.kerberos_binding_installed():
        raise SettingsError(
            f"{where}: GSSAPI needs the Python Kerberos binding (module "
            f"'{zookeeper.KERBEROS_BINDING}'), which is not installed; install "
            "kafka-zk-operator[kerberos] (built against MIT Kerberos, Debian libkrb5-dev)"
        )
    return SaslSettings(mechanism="GSSAPI", service=service, principal=principal, keytab=keytab)


def _sasl(section: Mapping[Any, Any], where: str) -> SaslSettings:
    mechanism = (optional_str(section, "mechanism", where) or "DIGEST-MD5").strip().upper()
    if mechanism not in zookeeper.SASL_MECHANISMS:
        raise SettingsError(
            f"{where}.mechanism {show(mechanism)} is not a ZooKeeper SASL mechanism; use "
            f"{' or '.join(zookeeper.SASL_MECHANISMS)}, as in the brokers' JAAS Client section"
        )
    service = optional_str(section, "service", where)
    if service is not None and not _SERVICE_NAME.fullmatch(service):
        raise SettingsError(
            f"{where}.service must be the service name of ZooKeeper's principal (letters, digits, "
            f"'.', '_', '-'; default 'zookeeper'), got {show(service)}"
        )
    service = service or "zookeeper"
    if mechanism == "GSSAPI":
        return _gssapi(section, where, service)
    if section.get("keytab") is not None:
        raise SettingsError(
            f"{where}.keytab is for mechanism GSSAPI (Kerberos); DIGEST-MD5 logs in with usernameFile "
            "and passwordFile"
        )
    sasl = SaslSettings(
        mechanism=mechanism,
        username=secret_file(section, "usernameFile", where) or optional_str(section, "username", where),
        password=secret_file(section, "passwordFile", where),
        principal=optional_str(section, "principal", where),
        service=service,
    )
    if not (sasl.username and sasl.password):
        raise SettingsError(
            f"{where}: DIGEST-MD5 needs usernameFile (or username) and passwordFile, non-empty: the "
            "username and password of the brokers' JAAS Client section"
        )
    return sasl


def _cluster_from_dict(raw: object, where: str) -> ClusterSettings:
    if not isinstance(raw, Mapping):
        raise SettingsError(
            f"{where} must be a mapping with 'name' and 'zookeeper' (or, for a KRaft cluster, "
            f"'bootstrapServers') keys (e.g. '- name: main' / '  zookeeper: zk:2181/kafka'), got {kind_of(raw)}"
        )
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise SettingsError(f"{where}.name must be a non-empty string")
    bootstrap = _bootstrap_servers(raw.get("bootstrapServers"), f"{where}.bootstrapServers")
    line = kafka_version(raw.get("kafkaVersion"), f"{where}.kafkaVersion")
    if raw.get("zookeeper") is None and bootstrap is not None:
        return _kraft_cluster(raw, where, name, bootstrap, line)
    if raw.get("zookeeper") is None:
        raise SettingsError(
            f"{where} needs zookeeper, the brokers' zookeeper.connect (like {_CONNECT_FORMAT}), or, for "
            "a KRaft cluster, bootstrapServers (the brokers' listeners, e.g. 'kafka-0:9092,kafka-1:9092')"
        )
    connect = connect_string(raw.get("zookeeper"), f"{where}.zookeeper")
    zookeeper_mode_line(line, f"{where}.kafkaVersion", "this cluster has zookeeper")
    sasl = None
    s = subsection(raw, "sasl", where)
    if s is not None:
        sasl = _sasl(s, f"{where}.sasl")
    digest = secret_file(raw, "digestAuthFile", where)
    tls = None
    t = subsection(raw, "tls", where)
    if t is not None:
        tls_where = f"{where}.tls"
        tls = TlsSettings(
            ca_file=optional_str(t, "caFile", tls_where),
            cert_file=optional_str(t, "certFile", tls_where),
            key_file=optional_str(t, "keyFile", tls_where),
            key_password=secret_file(t, "keyPasswordFile", tls_where),
            verify_certs=flag(t, "verify", tls_where, True),
            verify_hostname=flag(t, "verifyHostname", tls_where, True),
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
        secure_acls=flag(raw, "secureAcls", where, False),
    )
    return ClusterSettings(
        name=name,
        zookeeper=zk,
        kafka_version=line,
        bootstrap_servers=bootstrap,
        kafka_security=_kafka_security(raw, where, bootstrap),
    )


def _kafka_security(raw: Mapping[Any, Any], where: str, bootstrap: str | None) -> KafkaClientSecurity:
    value = raw.get("kafkaSecurity")
    if value is None:
        return PLAINTEXT
    if bootstrap is None:
        raise SettingsError(
            f"{where}.kafkaSecurity secures the connections to bootstrapServers, and this cluster has "
            "none: add the brokers' listeners as bootstrapServers, or remove kafkaSecurity"
        )
    return kafka_security_section.parse(value, f"{where}.kafkaSecurity")


#: The keys that configure the ZooKeeper connection, meaningless for a cluster without one.
_ZOOKEEPER_KEYS = ("sasl", "tls", "digestAuthFile", "secureAcls", "sessionTimeoutSeconds")


def _kraft_cluster(
    raw: Mapping[Any, Any], where: str, name: str, bootstrap: str, line: kafka_lines.KafkaLine | None
) -> ClusterSettings:
    """A cluster with ``bootstrapServers`` and no ``zookeeper``: a KRaft cluster (3.x KRaft, a
    finalized migration, or 4.x), served through the Kafka Admin API alone."""
    given = [key for key in _ZOOKEEPER_KEYS if raw.get(key) is not None]
    if given:
        raise SettingsError(
            f"{where}.{given[0]} configures the ZooKeeper connection, and this cluster has no "
            "zookeeper (a KRaft cluster, served through bootstrapServers): remove it, or add the "
            "brokers' zookeeper.connect as zookeeper"
        )
    if line is not None and not kafka_lines.runs_kraft(line):
        raise SettingsError(
            f"{where}: kafkaVersion {kafka_lines.line_name(line)} has no KRaft mode, so this cluster "
            "needs zookeeper (the brokers' zookeeper.connect); KRaft clusters run Kafka 3.3 or newer"
        )
    return ClusterSettings(
        name=name,
        zookeeper=None,
        kafka_version=line,
        bootstrap_servers=bootstrap,
        kafka_security=_kafka_security(raw, where, bootstrap),
    )


_HOST_PORT = re.compile(r"^[A-Za-z0-9._\[\]:-]+:[0-9]{1,5}$")


def _bootstrap_servers(value: object, where: str) -> str | None:
    """``HOST:PORT[,HOST:PORT...]`` (Kafka's listeners, secured by ``kafkaSecurity``), or ``None``."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{where} must be a string HOST:PORT[,HOST:PORT...], got {kind_of(value)}")
    parts = [part.strip() for part in value.split(",")]
    bad = [
        part for part in parts if not _HOST_PORT.match(part) or not 0 < int(part.rsplit(":", 1)[1]) < 65536
    ]
    if bad:
        raise SettingsError(
            f"{where}: {bad[0]!r} is not HOST:PORT; expected the brokers' listeners, "
            "e.g. 'kafka-0:9092,kafka-1:9092'"
        )
    return ",".join(parts)


def _one_keytab(clusters: list[ClusterSettings], label: str) -> None:
    """MIT Kerberos reads the client keytab from the process environment (``KRB5_CLIENT_KTNAME``):
    one per operator process (ZooKeeper's and Kafka's logins), which may hold several principals."""
    keytabs: dict[str, str] = {}
    for cluster in clusters:
        sasl = cluster.zookeeper.sasl if cluster.zookeeper is not None else None
        for keytab in (sasl.keytab if sasl is not None else None, cluster.kafka_security.keytab):
            if keytab is not None:
                keytabs.setdefault(keytab, cluster.name)
    if len(keytabs) > 1:
        (first, a), (second, b) = list(keytabs.items())[:2]
        who = (
            f"cluster {show(a)} (sasl, kafkaSecurity.sasl)" if a == b else f"clusters {show(a)} and {show(b)}"
        )
        raise SettingsError(
            f"{label}: {who} name different keytabs ({plain(first)}, "
            f"{plain(second)}); the operator has one Kerberos client keytab: put the keys of every "
            "principal it logs in as into one keytab file (kadmin 'ktadd -k FILE' for each) and name that"
        )


def _one_kafka_principal(clusters: list[ClusterSettings], label: str) -> None:
    """kafka-python's GSSAPI logs in with the process's default Kerberos credentials: one principal
    for every cluster's ``kafkaSecurity`` (ZooKeeper's logins name theirs, and may differ)."""
    principals: dict[str, str] = {}
    for cluster in clusters:
        if cluster.kafka_security.principal is not None:
            principals.setdefault(cluster.kafka_security.principal, cluster.name)
    if len(principals) > 1:
        (first, a), (second, b) = list(principals.items())[:2]
        raise SettingsError(
            f"{label}: clusters {show(a)} and {show(b)} log in to Kafka as different Kerberos principals "
            f"({first}, {second}) in kafkaSecurity.sasl; kafka-python uses one per operator (its default "
            "credentials): give every cluster's Kafka listeners the same principal"
        )


def kafka_version(value: object, what: str) -> kafka_lines.KafkaLine | None:
    """A ``kafkaVersion`` value: absent/empty, or a supported Kafka version as a string."""
    if value is None or value == "":
        return None
    number = isinstance(value, float | int) and not isinstance(value, bool)
    if number:
        value = str(value)  # YAML reads 2.8 as a number; "0.10.2" (two dots) stays a string
    if not isinstance(value, str):
        raise SettingsError(f'{what} must be a Kafka version such as "2.8", got {kind_of(value)}')
    try:
        return kafka_lines.parse_line(value)
    except ValueError as exc:
        hint = ' (YAML read it as a number: quote the version, e.g. "0.10.2")' if number else ""
        raise SettingsError(f"{what}: {exc}{hint}") from None


def zookeeper_mode_line(
    line: kafka_lines.KafkaLine | None, what: str, why: str
) -> kafka_lines.KafkaLine | None:
    """``line`` if a ZooKeeper-mode cluster can run it (3.9 or older).

    :raises SettingsError: a 4.x line: Kafka 4.0 removed ZooKeeper mode.
    """
    if line is not None and not kafka_lines.runs_zookeeper(line):
        raise SettingsError(
            f"{what}: Kafka {kafka_lines.line_name(line)} has no ZooKeeper mode (Kafka 4.0 removed it), "
            f"and {why}: a ZooKeeper-mode cluster runs Kafka "
            f"{kafka_lines.line_name(kafka_lines.NEWEST_ZK_LINE)} or older; for a KRaft cluster give "
            "bootstrapServers and no zookeeper"
        )
    return line


def _yaml_problem(exc: Exception) -> str:
    """One line for a PyYAML (or constructor) failure, with line/column when known."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = one_line(exc.problem or exc.context or "syntax error")
        context = f" ({one_line(exc.context)})" if exc.context and exc.problem else ""
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        return f"invalid YAML{where}: {problem}{context}"
    if isinstance(exc, yaml.reader.ReaderError):
        char = f"character #x{exc.character:04x}" if isinstance(exc.character, int) else "character"
        return f"invalid YAML at character {exc.position}: unacceptable {char} ({one_line(str(exc.reason))})"
    if isinstance(exc, RecursionError):
        return "invalid YAML: nested too deeply"
    return f"invalid YAML: {one_line(str(exc)) or type(exc).__name__}"


def clusters_from_file(path: str) -> tuple[list[ClusterSettings], str | None]:
    label = f"KZO_CLUSTERS_FILE={plain(path)}"
    text = read_file(path, "KZO_CLUSTERS_FILE")
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
    _one_keytab(clusters, label)
    _one_kafka_principal(clusters, label)
    default_cluster = doc.get("defaultCluster")
    names = [c.name for c in clusters]
    if default_cluster is not None and (not isinstance(default_cluster, str) or default_cluster not in names):
        raise SettingsError(
            f"{label}: defaultCluster {show(default_cluster)} is not one of {names}; "
            "name one of the clusters or remove it"
        )
    return clusters, default_cluster
