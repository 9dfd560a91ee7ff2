"""SASL DIGEST-MD5 and TLS ZooKeeper connections, against a real ZooKeeper 3.8 (and Kafka 3.9).

Every connection goes the operator's own way: a clusters file read by ``config.load``, then
``ClusterRuntime.store()`` (``session.connect`` + ``ZkStore``). Each ZooKeeper is started once
for the module:

- **SASL**: a JAAS ``Server`` section (DigestLoginModule, ``user_kafka``), the SASL
  authentication provider and ``sessionRequireClientSASLAuth=true``, so a client without SASL is
  refused; one Kafka broker logs in with a JAAS ``Client`` section and runs with
  ``zookeeper.set.acl=true``. A second server without the enforcement covers kazoo's other
  refusal path (AUTH_FAILED instead of a closed session).
- **TLS**: ``secureClientPort`` with Netty, PEM key and trust stores, ``ssl.clientAuth=need``
  and the x509 authentication provider; the server certificate names only ``127.0.0.1``.
- **SASL and TLS together**: both of the above on one server, and a Kafka broker that reaches it
  only over ZooKeeper TLS (Netty, PEM stores, hostname verification) with its SASL login.
"""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from kazoo.client import KazooClient
from kazoo.exceptions import SessionClosedRequireSaslError
from kazoo.security import Permissions

from kafka_zk_operator import config
from kafka_zk_operator.adapters.zk import session
from kafka_zk_operator.adapters.zk.znodes_config import ConfigEntityType
from kafka_zk_operator.config import zookeeper
from kafka_zk_operator.devstack import artifacts, certs, ports
from kafka_zk_operator.devstack.kafka import KafkaBroker
from kafka_zk_operator.devstack.zookeeper import ZooKeeperServer
from kafka_zk_operator.domain import errors
from kafka_zk_operator.runtime.clusters import ClusterRuntime
from tests.integration.helpers import wait_for

KAFKA_VERSION = artifacts.DEFAULT_KAFKA_VERSION  # 3.9.2, whose jars also hold ZooKeeper 3.8.4
SASL_USER, SASL_PASSWORD = "kafka", "kafka-secret"
SASL_CHROOT = "/kafka-sasl"
TLS_CHROOT = "/kafka-tls"
KAFKA_PARENTS = (
    "/brokers/ids",
    "/brokers/topics",
    "/config/topics",
    "/config/brokers",
    "/config/changes",
    "/admin/delete_topics",
)


# --------------------------------------------------------------------------- helpers


def _cluster(
    tmp_path: Path, entry: dict[str, Any], connection_timeout_s: float | None = None
) -> ClusterRuntime:
    """The operator's runtime for one cluster described by ``entry`` in a clusters file."""
    path = tmp_path / f"clusters-{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump({"clusters": [{"name": "main", **entry}]}))
    cluster = config.load({"KZO_CLUSTERS_FILE": str(path)}).clusters[0]
    if connection_timeout_s is not None:  # not a clusters-file key; only to keep failing tests short
        zookeeper = dataclasses.replace(cluster.zk, connection_timeout_s=connection_timeout_s)
        cluster = dataclasses.replace(cluster, zookeeper=zookeeper)
    return ClusterRuntime(cluster, patcher=None)


def _refusal(runtime: ClusterRuntime, within_s: float, caplog: pytest.LogCaptureFixture) -> str:
    """The one-line ``ClusterUnavailable`` the operator reports, which must come within ``within_s``
    and without a traceback in the log (kazoo's included)."""
    caplog.clear()
    started = time.monotonic()
    try:
        with pytest.raises(errors.ClusterUnavailable) as raised:
            runtime.store()
    finally:
        runtime.close()
    elapsed = time.monotonic() - started
    message = str(raised.value)
    assert "\n" not in message and "Traceback" not in message, message
    assert elapsed < within_s, f"took {elapsed:.1f} s: {message}"
    tracebacks = [record.getMessage() for record in caplog.records if record.exc_info]
    assert not tracebacks, f"logged with a traceback: {tracebacks}"
    return message


def _acl(client: KazooClient, path: str) -> set[tuple[str, str, int]]:
    return {(a.id.scheme, a.id.id, a.perms) for a in client.get_acls(path)[0]}


def _start_zookeeper(workdir: Path, port: int | None = None, **options: Any) -> ZooKeeperServer:
    server = ZooKeeperServer(
        workdir, port or ports.free_port(), artifacts.kafka_libs(KAFKA_VERSION), **options
    )
    server.start()
    try:
        server.wait_ready(timeout=60)
    except BaseException:
        _stop(server)
        raise
    return server


def _stop(server: ZooKeeperServer | KafkaBroker) -> None:
    if server.process is not None:
        server.process.stop()


def _secret(path: Path, text: str) -> str:
    return str(certs.write(path, text.encode(), private=True))


# --------------------------------------------------------------------------- SASL


@dataclass
class SaslZooKeeper:
    server: ZooKeeperServer
    username_file: str
    password_file: str

    @property
    def connect(self) -> str:
        return f"{self.server.connect}{SASL_CHROOT}"

    def entry(self, *, password_file: str | None = None) -> dict[str, Any]:
        return {
            "zookeeper": self.connect,
            "secureAcls": True,
            "sasl": {
                "mechanism": "DIGEST-MD5",
                "usernameFile": self.username_file,
                "passwordFile": password_file or self.password_file,
            },
        }


def _sasl_server(
    workdir: Path, *, enforce: bool, password: str = SASL_PASSWORD, port: int | None = None
) -> ZooKeeperServer:
    jaas = workdir / "zookeeper-jaas.conf"
    jaas.parent.mkdir(parents=True, exist_ok=True)
    jaas.write_text(
        "Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        f'  user_{SASL_USER}="{password}";\n}};\n'
    )
    extra = {"authProvider.1": "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"}
    if enforce:
        extra["sessionRequireClientSASLAuth"] = "true"
    return _start_zookeeper(
        workdir, port, extra_config=extra, jvm_options=(f"-Djava.security.auth.login.config={jaas}",)
    )


@pytest.fixture(scope="module")
def sasl_zk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SaslZooKeeper]:
    """ZooKeeper that refuses sessions without SASL, plus one Kafka broker logged in over SASL."""
    workdir = tmp_path_factory.mktemp("sasl-zk")
    server = _sasl_server(workdir / "zookeeper", enforce=True)
    jaas = workdir / "kafka-jaas.conf"
    jaas.write_text(
        "Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        f'  username="{SASL_USER}"\n  password="{SASL_PASSWORD}";\n}};\n'
    )
    broker = KafkaBroker(
        broker_id=1,
        rack=None,
        port=ports.free_port(),
        workdir=workdir / "kafka-1",
        libs=artifacts.kafka_libs(KAFKA_VERSION),
        zk_connect=f"{server.connect}{SASL_CHROOT}",
        cluster_size=1,
        extra_properties={"zookeeper.set.acl": "true"},
        jvm_options=(f"-Djava.security.auth.login.config={jaas}",),
    )
    zk = SaslZooKeeper(
        server,
        _secret(workdir / "secrets/username", f"{SASL_USER}\n"),
        _secret(workdir / "secrets/password", SASL_PASSWORD),
    )
    try:
        broker.start()
        broker.wait_listening()
        runtime = _cluster(workdir, zk.entry())
        try:
            store = runtime.store()
            wait_for(
                lambda: store.broker_ids() == [1] and store.controller() is not None,
                timeout=60,
                what="the SASL broker to register and become controller",
            )
        finally:
            runtime.close()
        yield zk
    finally:
        _stop(broker)
        _stop(server)


@pytest.fixture(scope="module")
def lenient_sasl_zk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SaslZooKeeper]:
    """ZooKeeper with SASL but without sessionRequireClientSASLAuth (ZooKeeper's default)."""
    workdir = tmp_path_factory.mktemp("sasl-zk-lenient")
    server = _sasl_server(workdir / "zookeeper", enforce=False)
    try:
        yield SaslZooKeeper(
            server,
            _secret(workdir / "secrets/username", SASL_USER),
            _secret(workdir / "secrets/password", SASL_PASSWORD),
        )
    finally:
        _stop(server)


def test_sasl_topic_created_by_the_operator_is_led_by_kafka_and_carries_kafkas_acls(
    sasl_zk: SaslZooKeeper, tmp_path: Path, unique_topic: str
) -> None:
    runtime = _cluster(tmp_path, sasl_zk.entry())
    try:
        store = runtime.store()
        store.create_topic(unique_topic, {0: (1,), 1: (1,)}, {"retention.ms": "3600000"})

        observed = store.read_topic(unique_topic)
        assert observed.assignment is not None and observed.config_version is not None
        assert dict(observed.assignment.partitions) == {0: (1,), 1: (1,)}
        assert observed.config == {"retention.ms": "3600000"}

        # The controller creates the partition state znodes under our topic znode and rewrites it
        # with a topic_id: both need write access for its sasl:kafka identity on what we created.
        wait_for(
            lambda: (
                {p: s.leader for p, s in store.partition_states(unique_topic, [0, 1]).items()} == {0: 1, 1: 1}
            ),
            timeout=30,
            what=f"Kafka to elect leaders for {unique_topic}",
        )
        assigned = wait_for(
            lambda: a if (a := store.read_assignment(unique_topic)) and a.value.topic_id else None,
            timeout=30,
            what="the controller to add a topic_id",
        )
        assert len(assigned.value.topic_id or "") == 22

        client = store.client
        kafkas = _acl(client, "/brokers/topics")  # created by the broker with zookeeper.set.acl=true
        assert kafkas == {("sasl", SASL_USER, Permissions.ALL), ("world", "anyone", Permissions.READ)}
        assert _acl(client, f"/brokers/topics/{unique_topic}") == kafkas
        assert _acl(client, f"/config/topics/{unique_topic}") == kafkas

        store.update_entity_config(
            ConfigEntityType.BROKERS, "1", lambda cfg: {**cfg, "leader.replication.throttled.rate": "1000000"}
        )
        assert (
            _acl(client, "/config/brokers/1")
            == _acl(client, "/config/brokers")
            == {("sasl", SASL_USER, Permissions.ALL)}
        ), "no world-read under /config/brokers, like Kafka's own"
    finally:
        runtime.close()


def test_a_client_without_sasl_is_refused(
    sasl_zk: SaslZooKeeper, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    raw = KazooClient(hosts=sasl_zk.server.connect, timeout=10)  # no chroot: start() reads nothing
    raw.start(timeout=10)
    try:
        with pytest.raises(SessionClosedRequireSaslError):
            raw.exists(SASL_CHROOT)
    finally:
        raw.stop()
        raw.close()

    message = _refusal(_cluster(tmp_path, {"zookeeper": sasl_zk.connect}), within_s=10, caplog=caplog)
    assert message == (
        f"ZooKeeper at {sasl_zk.connect} requires SASL authentication and closed the session; add a "
        "sasl section with the brokers' ZooKeeper identity (their JAAS Client section) to this cluster"
    )


@pytest.mark.parametrize("server", ["sasl_zk", "lenient_sasl_zk"])
def test_a_wrong_sasl_password_is_one_clear_line_at_once(
    server: str, request: pytest.FixtureRequest, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    zk: SaslZooKeeper = request.getfixturevalue(server)
    wrong = _secret(tmp_path / "wrong-password", "not-the-password")
    # The default connection timeout is 15 s: a refused login must not wait for it.
    message = _refusal(_cluster(tmp_path, zk.entry(password_file=wrong)), within_s=5, caplog=caplog)
    assert message == (
        f"ZooKeeper at {zk.connect} refused the SASL DIGEST-MD5 login of 'kafka': wrong username or "
        "password, or a mechanism the server does not accept; the sasl files must hold the brokers' "
        "JAAS Client credentials"
    )


@pytest.mark.parametrize("enforce", [True, False], ids=["enforced", "lenient"])
def test_a_session_whose_login_is_refused_on_reconnect_is_replaced(
    enforce: bool, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """kazoo never reconnects after a refused login; the operator must not keep that dead client."""
    workdir = tmp_path / "zookeeper"
    server = _sasl_server(workdir, enforce=enforce)
    zk = SaslZooKeeper(
        server, _secret(tmp_path / "username", SASL_USER), _secret(tmp_path / "password", SASL_PASSWORD)
    )
    entry = {**zk.entry(), "zookeeper": server.connect}  # no chroot
    runtime = _cluster(tmp_path, entry)
    raw = session.connect(runtime.settings.zk)  # what a first broker would have created
    try:
        raw.ensure_path("/brokers/ids")
    finally:
        raw.stop()
        raw.close()
    try:
        first = runtime.store()
        assert first.topic_names() == []
        # The password changes on ZooKeeper only: kazoo's reconnect is refused, and it gives up.
        _stop(server)
        server = _sasl_server(workdir, enforce=enforce, password="rotated", port=server.port)
        wait_for(
            lambda: first.client.client_state in ("AUTH_FAILED", "CLOSED"),
            timeout=30,
            what="kazoo to give up after the refused login",
        )
        assert "refused the SASL DIGEST-MD5 login of 'kafka'" in _refusal(runtime, within_s=5, caplog=caplog)
        # Once both sides agree again, the next use opens a new session.
        _stop(server)
        server = _sasl_server(workdir, enforce=enforce, port=server.port)
        assert wait_for(lambda: _topic_names_or_none(runtime), timeout=30, what="a new session") == ["none"]
    finally:
        runtime.close()
        _stop(server)


def _topic_names_or_none(runtime: ClusterRuntime) -> list[str] | None:
    try:
        return runtime.store().topic_names() or ["none"]
    except errors.ClusterUnavailable:
        return None


# --------------------------------------------------------------------------- TLS


@dataclass
class TlsZooKeeper:
    server: ZooKeeperServer
    secure_port: int
    files: dict[str, str]

    def connect(self, host: str = ports.LOOPBACK, port: int | None = None) -> str:
        return f"{host}:{port or self.secure_port}{TLS_CHROOT}"

    def entry(self, host: str = ports.LOOPBACK, **tls: Any) -> dict[str, Any]:
        settings = {"caFile": self.files["ca"], "certFile": self.files["cert"], "keyFile": self.files["key"]}
        settings.update(tls)
        return {"zookeeper": self.connect(host), "secureAcls": True, "tls": settings}


def _mutual_tls_settings(secure_port: int, files: dict[str, str]) -> dict[str, str]:
    """zoo.cfg lines for a Netty TLS port that requires client certificates (x509 identities)."""
    return {
        "secureClientPort": str(secure_port),
        "secureClientPortAddress": ports.LOOPBACK,
        "serverCnxnFactory": "org.apache.zookeeper.server.NettyServerCnxnFactory",
        "ssl.keyStore.location": files["server"],
        "ssl.keyStore.type": "PEM",
        "ssl.trustStore.location": files["ca"],
        "ssl.trustStore.type": "PEM",
        "ssl.clientAuth": "need",
        "authProvider.x509": "org.apache.zookeeper.server.auth.X509AuthenticationProvider",
    }


def _ip_only_server_cert(ca: certs.CertificateAuthority) -> bytes:
    """A server certificate and key (PEM, key first) naming only 127.0.0.1, not localhost."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "zookeeper")]))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ports.LOOPBACK))]),
            critical=False,
        )
        .sign(ca.key, hashes.SHA256())
    )
    return certs._pem_key(key) + certs._pem_cert(cert)


@pytest.fixture(scope="module")
def tls_zk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsZooKeeper]:
    workdir = tmp_path_factory.mktemp("tls-zk")
    ca, stranger = certs.CertificateAuthority.create("zk-ca"), certs.CertificateAuthority.create("other-ca")
    client_cert, client_key = ca.issue(SASL_USER)
    files = {
        "ca": str(certs.write(workdir / "tls/ca.crt", ca.cert_pem)),
        "other-ca": str(certs.write(workdir / "tls/other-ca.crt", stranger.cert_pem)),
        "cert": str(certs.write(workdir / "tls/client.crt", client_cert)),
        "key": str(certs.write(workdir / "tls/client.key", client_key, private=True)),
        "server": str(certs.write(workdir / "tls/server.pem", _ip_only_server_cert(ca), private=True)),
    }
    secure_port = ports.free_port()
    server = _start_zookeeper(
        workdir / "zookeeper",
        extra_config=_mutual_tls_settings(secure_port, files),
    )
    zk = TlsZooKeeper(server, secure_port, files)
    try:
        root = session.connect(
            zookeeper.ZkConnectionSettings(
                connect=f"{ports.LOOPBACK}:{secure_port}",
                tls=zookeeper.TlsSettings(
                    ca_file=files["ca"], cert_file=files["cert"], key_file=files["key"]
                ),
            )
        )
        try:
            for path in KAFKA_PARENTS:
                root.ensure_path(TLS_CHROOT + path)
        finally:
            root.stop()
            root.close()
        yield zk
    finally:
        _stop(server)


def test_tls_with_a_client_certificate_creates_and_reads_a_topic(
    tls_zk: TlsZooKeeper, tmp_path: Path, unique_topic: str
) -> None:
    runtime = _cluster(tmp_path, tls_zk.entry())
    try:
        store = runtime.store()
        store.create_topic(unique_topic, {0: (1, 2), 1: (2, 1)}, {"cleanup.policy": "compact"})
        observed = store.read_topic(unique_topic)
        assert observed.assignment is not None and observed.config_version is not None
        assert dict(observed.assignment.partitions) == {0: (1, 2), 1: (2, 1)}
        assert observed.config == {"cleanup.policy": "compact"}
        # The session's identity is the certificate's subject: what brokers with ZooKeeper mTLS
        # and zookeeper.set.acl=true use (they must all present the same DN).
        assert _acl(store.client, f"/brokers/topics/{unique_topic}") == {
            ("x509", f"CN={SASL_USER}", Permissions.ALL),
            ("world", "anyone", Permissions.READ),
        }
    finally:
        runtime.close()


def test_a_plaintext_client_cannot_use_the_tls_port(
    tls_zk: TlsZooKeeper, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    message = _refusal(
        _cluster(tmp_path, {"zookeeper": tls_zk.connect()}, connection_timeout_s=2), within_s=6, caplog=caplog
    )
    assert message.startswith(f"cannot connect to ZooKeeper at {tls_zk.connect()} within 2 s")
    # ... while the same server's plaintext port serves a plaintext client.
    plain = KazooClient(hosts=tls_zk.server.connect)
    plain.start(timeout=10)
    try:
        assert plain.exists(TLS_CHROOT) is not None
    finally:
        plain.stop()
        plain.close()


def test_a_wrong_ca_is_one_clear_line(
    tls_zk: TlsZooKeeper, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The default 15 s connection timeout: a handshake every server refused is not waited out.
    runtime = _cluster(tmp_path, tls_zk.entry(caFile=tls_zk.files["other-ca"]))
    assert _refusal(runtime, within_s=6, caplog=caplog) == (
        f"TLS connection to ZooKeeper at {tls_zk.connect()} failed: certificate verify failed: unable "
        "to get local issuer certificate; check tls.caFile, certFile and keyFile, and that the port "
        "is ZooKeeper's secureClientPort"
    )


def test_a_tls_refusal_waits_only_while_a_server_has_not_refused(
    tls_zk: TlsZooKeeper, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other_ca = tls_zk.files["other-ca"]
    both = f"{ports.LOOPBACK}:{tls_zk.secure_port},localhost:{tls_zk.secure_port}{TLS_CHROOT}"
    entry = {**tls_zk.entry(caFile=other_ca), "zookeeper": both}
    message = _refusal(_cluster(tmp_path, entry), within_s=6, caplog=caplog)
    assert message.startswith(f"TLS connection to ZooKeeper at {both} failed: certificate verify failed")

    # A server that is down may come up with the right certificate: wait for the timeout.
    down = f"{ports.LOOPBACK}:{tls_zk.secure_port},{ports.LOOPBACK}:{ports.free_port()}{TLS_CHROOT}"
    entry = {**tls_zk.entry(caFile=other_ca), "zookeeper": down}
    started = time.monotonic()
    message = _refusal(_cluster(tmp_path, entry, connection_timeout_s=3), within_s=8, caplog=caplog)
    assert time.monotonic() - started >= 3, message
    assert "certificate verify failed" in message, message


def test_the_server_certificate_must_name_the_connected_host(
    tls_zk: TlsZooKeeper, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = _cluster(tmp_path, tls_zk.entry(host="localhost"))
    message = _refusal(runtime, within_s=6, caplog=caplog)
    assert message.startswith(
        f"TLS connection to ZooKeeper at {tls_zk.connect('localhost')} failed: certificate verify "
        "failed: Hostname mismatch"
    ), message

    relaxed = _cluster(tmp_path, tls_zk.entry(host="localhost", verifyHostname=False))
    try:
        assert relaxed.store().topic_names() is not None
    finally:
        relaxed.close()


def test_without_a_client_certificate_the_tls_port_refuses(
    tls_zk: TlsZooKeeper, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    entry = tls_zk.entry()
    entry["tls"] = {"caFile": tls_zk.files["ca"]}  # ssl.clientAuth=need
    assert _refusal(_cluster(tmp_path, entry), within_s=6, caplog=caplog) == (
        f"TLS connection to ZooKeeper at {tls_zk.connect()} failed: the server ended the handshake "
        "with SSLV3_ALERT_BAD_CERTIFICATE (with ssl.clientAuth=need it wants a client certificate "
        "signed by a CA it trusts); check tls.caFile, certFile and keyFile, and that the port is "
        "ZooKeeper's secureClientPort"
    )


def _encrypted_key(tls_zk: TlsZooKeeper, workdir: Path, password: bytes) -> tuple[str, str]:
    """The client key re-encrypted with ``password`` (PKCS#8 PEM), and a file holding it."""
    key = serialization.load_pem_private_key(Path(tls_zk.files["key"]).read_bytes(), password=None)
    encrypted = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(password),
    )
    key_file = certs.write(workdir / "client-encrypted.key", encrypted, private=True)
    password_file = certs.write(workdir / "key-password", password + b"\n", private=True)
    return str(key_file), str(password_file)


def test_an_encrypted_client_key_is_opened_with_key_password_file(
    tls_zk: TlsZooKeeper, tmp_path: Path, unique_topic: str
) -> None:
    key_file, password_file = _encrypted_key(tls_zk, tmp_path, b"s3cret-key-pass")
    runtime = _cluster(tmp_path, tls_zk.entry(keyFile=key_file, keyPasswordFile=password_file))
    try:
        store = runtime.store()
        store.create_topic(unique_topic, {0: (1, 2)}, {})
        assert _acl(store.client, f"/brokers/topics/{unique_topic}") == {
            ("x509", f"CN={SASL_USER}", Permissions.ALL),
            ("world", "anyone", Permissions.READ),
        }
    finally:
        runtime.close()


@pytest.mark.parametrize("password", [b"not-it", None], ids=["wrong", "missing"])
def test_a_wrong_or_missing_key_password_is_one_clear_line(
    tls_zk: TlsZooKeeper,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    password: bytes | None,
) -> None:
    key_file, _ = _encrypted_key(tls_zk, tmp_path, b"s3cret-key-pass")
    entry = tls_zk.entry(keyFile=key_file)
    if password is not None:
        entry["tls"]["keyPasswordFile"] = str(
            certs.write(tmp_path / "wrong-password", password, private=True)
        )
    message = _refusal(_cluster(tmp_path, entry), within_s=6, caplog=caplog)
    assert message == (
        f"TLS connection to ZooKeeper at {tls_zk.connect()} failed: could not load the client "
        "certificate and key: certFile and keyFile must be a PEM certificate and its private key, "
        "and an encrypted keyFile needs its passphrase in keyPasswordFile; check tls.caFile, "
        "certFile and keyFile, and that the port is ZooKeeper's secureClientPort"
    )
    assert "pass phrase" not in capfd.readouterr().err, "OpenSSL must not prompt for it"


# --------------------------------------------------------------------------- SASL and TLS together

SASL_TLS_CHROOT = "/kafka-sasl-tls"


@pytest.fixture(scope="module")
def sasl_tls_zk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TlsZooKeeper, SaslZooKeeper]]:
    """One ZooKeeper demanding both a SASL login and a trusted client certificate on its TLS port,
    and a Kafka broker that itself reaches it only that way (ZooKeeper TLS with Netty, PEM stores,
    hostname verification on, plus its JAAS Client login) with ``zookeeper.set.acl=true``."""
    workdir = tmp_path_factory.mktemp("sasl-tls-zk")
    ca = certs.CertificateAuthority.create("zk-ca")
    client_cert, client_key = ca.issue(SASL_USER)
    files = {
        "ca": str(certs.write(workdir / "tls/ca.crt", ca.cert_pem)),
        "cert": str(certs.write(workdir / "tls/client.crt", client_cert)),
        "key": str(certs.write(workdir / "tls/client.key", client_key, private=True)),
        "client-pem": str(certs.write(workdir / "tls/client.pem", client_key + client_cert, private=True)),
        "server": str(certs.write(workdir / "tls/server.pem", _ip_only_server_cert(ca), private=True)),
    }
    jaas = workdir / "zookeeper-jaas.conf"
    jaas.write_text(
        "Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        f'  user_{SASL_USER}="{SASL_PASSWORD}";\n}};\n'
    )
    secure_port = ports.free_port()
    server = _start_zookeeper(
        workdir / "zookeeper",
        extra_config={
            **_mutual_tls_settings(secure_port, files),
            "authProvider.1": "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
            "sessionRequireClientSASLAuth": "true",
        },
        jvm_options=(f"-Djava.security.auth.login.config={jaas}",),
    )
    tls = TlsZooKeeper(server, secure_port, files)
    sasl = SaslZooKeeper(
        server,
        _secret(workdir / "secrets/username", SASL_USER),
        _secret(workdir / "secrets/password", SASL_PASSWORD),
    )
    kafka_jaas = workdir / "kafka-jaas.conf"
    kafka_jaas.write_text(
        "Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        f'  username="{SASL_USER}"\n  password="{SASL_PASSWORD}";\n}};\n'
    )
    broker = KafkaBroker(
        broker_id=1,
        rack=None,
        port=ports.free_port(),
        workdir=workdir / "kafka-1",
        libs=artifacts.kafka_libs(KAFKA_VERSION),
        zk_connect=tls.connect(port=secure_port).replace(TLS_CHROOT, SASL_TLS_CHROOT),
        cluster_size=1,
        extra_properties={
            "zookeeper.set.acl": "true",
            "zookeeper.ssl.client.enable": "true",
            "zookeeper.clientCnxnSocket": "org.apache.zookeeper.ClientCnxnSocketNetty",
            "zookeeper.ssl.keystore.location": files["client-pem"],
            "zookeeper.ssl.keystore.type": "PEM",
            "zookeeper.ssl.truststore.location": files["ca"],
            "zookeeper.ssl.truststore.type": "PEM",
        },
        jvm_options=(f"-Djava.security.auth.login.config={kafka_jaas}",),
    )
    try:
        broker.start()
        broker.wait_listening()
        runtime = _cluster(workdir, _sasl_tls_entry(tls, sasl))
        try:
            store = runtime.store()
            wait_for(
                lambda: store.broker_ids() == [1] and store.controller() is not None,
                timeout=60,
                what="the SASL+TLS broker to register and become controller",
            )
        finally:
            runtime.close()
        yield tls, sasl
    finally:
        _stop(broker)
        _stop(server)


def _sasl_tls_entry(tls: TlsZooKeeper, sasl: SaslZooKeeper) -> dict[str, Any]:
    entry = tls.entry()
    entry["zookeeper"] = entry["zookeeper"].replace(TLS_CHROOT, SASL_TLS_CHROOT)
    entry["sasl"] = sasl.entry()["sasl"]
    return entry


def test_sasl_and_tls_together_with_a_broker_on_zookeeper_tls(
    sasl_tls_zk: tuple[TlsZooKeeper, SaslZooKeeper], tmp_path: Path, unique_topic: str
) -> None:
    tls, sasl = sasl_tls_zk
    runtime = _cluster(tmp_path, _sasl_tls_entry(tls, sasl))
    try:
        store = runtime.store()
        store.create_topic(unique_topic, {0: (1,), 1: (1,)}, {"retention.ms": "3600000"})
        # The broker, on ZooKeeper TLS + SASL itself, leads what the operator wrote.
        wait_for(
            lambda: (
                {p: s.leader for p, s in store.partition_states(unique_topic, [0, 1]).items()} == {0: 1, 1: 1}
            ),
            timeout=30,
            what=f"the SASL+TLS broker's controller to elect leaders for {unique_topic}",
        )
        wait_for(
            lambda: (a := store.read_assignment(unique_topic)) and a.value.topic_id,
            timeout=30,
            what="the controller to add a topic_id",
        )
        # Both identities of the session own the znode, as the broker's own znodes do.
        assert _acl(store.client, f"/brokers/topics/{unique_topic}") == {
            ("sasl", SASL_USER, Permissions.ALL),
            ("x509", f"CN={SASL_USER}", Permissions.ALL),
            ("world", "anyone", Permissions.READ),
        }
        assert _acl(store.client, "/brokers/ids/1") == _acl(store.client, f"/brokers/topics/{unique_topic}")
    finally:
        runtime.close()


def test_sasl_and_tls_together_refuse_a_wrong_password_in_one_line(
    sasl_tls_zk: tuple[TlsZooKeeper, SaslZooKeeper], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tls, sasl = sasl_tls_zk
    entry = _sasl_tls_entry(tls, sasl)
    entry["sasl"]["passwordFile"] = _secret(tmp_path / "wrong", "not-the-password")
    message = _refusal(_cluster(tmp_path, entry), within_s=6, caplog=caplog)
    assert message.startswith(
        f"ZooKeeper at {entry['zookeeper']} refused the SASL DIGEST-MD5 login of 'kafka'"
    ), message
