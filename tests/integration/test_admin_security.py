"""The operator's Kafka connections over TLS and SASL (``kafkaSecurity``), against one real
ZooKeeper-mode Kafka 3.9.2 broker of its own with four listeners:

=================  =========================================================================
PLAINTEXT          inter-broker, and the plain kafka-python client that checks Kafka's view
SSL                a certificate for 127.0.0.1 from a CA made here (PEM key store)
SASL_PLAINTEXT     PLAIN (a user in the listener's JAAS) and SCRAM-SHA-512 (a user in ZooKeeper)
SASL_SSL           SCRAM-SHA-512 over the same certificate
=================  =========================================================================

For each, a clusters file read by ``config.load`` configures the cluster; the ``AdminBackend`` the
runtime builds from it creates a topic, and a plain client on the PLAINTEXT listener sees it; the
runtime's partition sizes (DescribeLogDirs) go through the same listener. A wrong password, or a
CA that did not sign the broker's certificate, is ``ClusterUnavailable`` saying which, never a
traceback. ``kzo check`` logs in on the SASL_SSL listener, and ``kzo snapshot --sizes-from-cluster``
reads partition sizes through it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka import errors as kafka_errors
from kafka.admin import KafkaAdminClient, UserScramCredentialUpsertion

from kafka_zk_operator import config
from kafka_zk_operator.adapters.kafka.admin_backend import AdminBackend
from kafka_zk_operator.devstack import ports
from kafka_zk_operator.devstack.certs import CertificateAuthority, write
from kafka_zk_operator.devstack.kafka import KafkaBroker
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec
from kafka_zk_operator.domain import errors
from kafka_zk_operator.runtime.clusters import ClusterRuntime
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for

REPO = Path(__file__).resolve().parents[2]
PLAIN_USER, PLAIN_PASSWORD = "kzoplain", "plain-secret-1"
SCRAM_USER, SCRAM_PASSWORD = "kzo", "scram-secret-1"
_PLAIN_JAAS = (
    f'org.apache.kafka.common.security.plain.PlainLoginModule required user_{PLAIN_USER}="{PLAIN_PASSWORD}";'
)
_SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


@dataclass
class SecureBroker:
    listeners: dict[str, str]  # listener name → 127.0.0.1:port
    files: Path  # the CA, the secrets
    zk_connect: str

    @property
    def plaintext(self) -> str:
        return self.listeners["PLAINTEXT"]


def _properties_value(pem: bytes) -> str:
    """A PEM block as one line of a Java properties file (its ``\\n`` escapes are newlines)."""
    return pem.decode().strip().replace("\n", "\\n")


def _broker_properties(listeners: dict[str, str], cert: bytes, key: bytes) -> dict[str, str]:
    urls = ",".join(f"{name}://{address}" for name, address in listeners.items())
    return {
        "listeners": urls,
        "advertised.listeners": urls,
        "inter.broker.listener.name": "PLAINTEXT",
        # A PEM key store given inline: a key *file* of type PEM needs an encrypted key (ssl.key.password).
        "ssl.keystore.type": "PEM",
        "ssl.keystore.certificate.chain": _properties_value(cert),
        "ssl.keystore.key": _properties_value(key),
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": _PLAIN_JAAS,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": _SCRAM_JAAS,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": _PLAIN_JAAS,
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": _SCRAM_JAAS,
    }


def _add_scram_user(listeners: dict[str, str]) -> None:
    """The SCRAM-SHA-512 user, through the PLAINTEXT listener (AlterUserScramCredentials; ZooKeeper
    mode stores it under /config/users, and the broker learns of it from a change notification),
    then waited for: a plain kafka-python client logs in with it on the SASL_PLAINTEXT listener."""
    admin = KafkaAdminClient(bootstrap_servers=listeners["PLAINTEXT"], request_timeout_ms=20000)
    try:
        upsert = UserScramCredentialUpsertion(SCRAM_USER, "SCRAM-SHA-512", SCRAM_PASSWORD)
        assert admin.alter_user_scram_credentials([upsert]) == {SCRAM_USER: None}
    finally:
        admin.close()

    def logs_in() -> bool:
        try:
            client = KafkaAdminClient(
                bootstrap_servers=listeners["SASL_PLAINTEXT"],
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="SCRAM-SHA-512",
                sasl_plain_username=SCRAM_USER,
                sasl_plain_password=SCRAM_PASSWORD,
                bootstrap_timeout_ms=2000,
            )
        except kafka_errors.KafkaError:
            return False
        client.close()
        return True

    wait_for(logs_in, timeout=30.0, what=f"the broker to know SCRAM user {SCRAM_USER!r}")


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    started = time.monotonic()
    workdir = tmp_path_factory.mktemp("admin-security")
    files = workdir / "files"
    ca = CertificateAuthority.create("kzo-test-kafka-ca")
    cert, key = ca.issue("kafka-1", server=True)  # names localhost and 127.0.0.1
    write(files / "ca.crt", ca.cert_pem)
    write(files / "other-ca.crt", CertificateAuthority.create("not-the-brokers-ca").cert_pem)
    for name, text in {
        "plain-user": PLAIN_USER,
        "plain-password": PLAIN_PASSWORD,
        "scram-user": SCRAM_USER,
        "scram-password": SCRAM_PASSWORD,
        "wrong-password": "not-the-password",
    }.items():
        write(files / name, f"{text}\n".encode(), private=True)
    stack = LocalStack(
        StackSpec(brokers=0, with_kubernetes=False, racks=()),
        workdir / "stack",
        progress=lambda m: print(f"[stack] {m}"),
    )
    stack.up()  # ZooKeeper only: the broker below has listeners of its own
    assert stack.kafka_libs is not None
    listeners = {
        name: f"{ports.LOOPBACK}:{ports.free_port()}"
        for name in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
    }
    zk_connect = f"{stack.zk_hosts}{stack.spec.chroot}"
    kafka = KafkaBroker(
        broker_id=1,
        rack=None,
        port=int(listeners["PLAINTEXT"].rsplit(":", 1)[1]),
        workdir=workdir / "kafka-1",
        libs=stack.kafka_libs,
        zk_connect=zk_connect,
        cluster_size=1,
        extra_properties=_broker_properties(listeners, cert, key),
    )
    try:
        kafka.start()
        kafka.wait_listening()
        stack.wait_brokers_registered({1})
        _add_scram_user(listeners)
        print(f"[figures] broker with TLS and SASL listeners ready in {time.monotonic() - started:.1f} s")
        yield SecureBroker(listeners, files, zk_connect)
    finally:
        kafka.stop()
        stack.down()


@pytest.fixture(scope="module")
def kafka(broker: SecureBroker) -> Iterator[KafkaView]:
    view = KafkaView(broker.plaintext)
    try:
        yield view
    finally:
        view.close()


#: listener → (kafkaSecurity of the clusters file, with {files} for the secrets' folder).
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "ssl": ("SSL", {"protocol": "SSL", "tls": {"caFile": "{files}/ca.crt"}}),
    "sasl-plaintext-plain": (
        "SASL_PLAINTEXT",
        {
            "protocol": "SASL_PLAINTEXT",
            "sasl": {
                "mechanism": "PLAIN",
                "usernameFile": "{files}/plain-user",
                "passwordFile": "{files}/plain-password",
            },
        },
    ),
    "sasl-plaintext-scram": (
        "SASL_PLAINTEXT",
        {
            "sasl": {
                "mechanism": "SCRAM-SHA-512",
                "usernameFile": "{files}/scram-user",
                "passwordFile": "{files}/scram-password",
            },
        },
    ),
    "sasl-ssl-scram": (
        "SASL_SSL",
        {
            "protocol": "SASL_SSL",
            "tls": {"caFile": "{files}/ca.crt", "verifyHostname": True},
            "sasl": {
                "mechanism": "SCRAM-SHA-512",
                "username": SCRAM_USER,
                "passwordFile": "{files}/scram-password",
            },
        },
    ),
}


def _filled(value: object, files: Path) -> object:
    if isinstance(value, dict):
        return {key: _filled(item, files) for key, item in value.items()}
    return value.format(files=files) if isinstance(value, str) else value


def _clusters_file(broker: SecureBroker, tmp_path: Path, listener: str, security: dict[str, Any]) -> Path:
    cluster = {
        "name": "main",
        "zookeeper": broker.zk_connect,
        "bootstrapServers": broker.listeners[listener],
        "kafkaSecurity": _filled(security, broker.files),
    }
    path = tmp_path / "clusters.yaml"
    path.write_text(yaml.safe_dump({"clusters": [cluster]}))
    return path


def _cluster(
    broker: SecureBroker, tmp_path: Path, listener: str, security: dict[str, Any]
) -> config.ClusterSettings:
    path = _clusters_file(broker, tmp_path, listener, security)
    (cluster,) = config.load({"KZO_CLUSTERS_FILE": str(path)}).clusters
    return cluster


@pytest.mark.parametrize("case", list(CASES))
def test_the_admin_backend_creates_a_topic_through_a_secured_listener(
    broker: SecureBroker, kafka: KafkaView, tmp_path: Path, case: str
) -> None:
    listener, security = CASES[case]
    cluster = _cluster(broker, tmp_path, listener, security)
    assert cluster.kafka_security.protocol == listener
    runtime = ClusterRuntime(cluster, None)
    topic = f"secured-{case}-{uuid.uuid4().hex[:6]}"
    try:
        started = time.monotonic()
        backend = runtime.admin()
        assert backend.security == cluster.kafka_security
        backend.create_topic(topic, {0: (1,), 1: (1,)}, {"retention.ms": "3600000"})
        took = time.monotonic() - started
        described = wait_for(lambda: kafka.describe(topic), what="the plain client to see the topic")
        assert {p: entry["replicas"] for p, entry in described.items()} == {0: [1], 1: [1]}
        wait_for(
            lambda: {(topic, 0), (topic, 1)} <= set(runtime.partition_sizes()),
            what="DescribeLogDirs, through the same listener, to report the topic's partitions",
        )
        print(f"[figures] {case}: first create (bootstrap and login included) {took:.2f} s")
    finally:
        runtime.close()


@pytest.mark.parametrize("case", [c for c in CASES if "sasl" in c])
def test_a_wrong_password_is_cluster_unavailable_naming_the_login(
    broker: SecureBroker, kafka: KafkaView, tmp_path: Path, case: str
) -> None:
    listener, security = CASES[case]
    wrong = {**security, "sasl": {**security["sasl"], "passwordFile": "{files}/wrong-password"}}
    cluster = _cluster(broker, tmp_path, listener, wrong)
    backend = AdminBackend(
        broker.listeners[listener], client_id="kzo-test-wrong", security=cluster.kafka_security, timeout_s=6.0
    )
    topic = f"refused-{case}-{uuid.uuid4().hex[:6]}"
    try:
        with pytest.raises(errors.ClusterUnavailable) as raised:
            backend.create_topic(topic, {0: (1,)}, {})
    finally:
        backend.close()
    message = str(raised.value)
    mechanism = cluster.kafka_security.sasl_mechanism
    bootstrap = broker.listeners[listener]
    login = f"({listener} {mechanism} as "
    # kafka-python sees the broker's SASL_AUTHENTICATION_FAILED answer, or (always over TLS, seen
    # in runs) only the socket the broker closes after it.
    assert message.startswith(
        (
            f"Kafka at {bootstrap} refused the operator's login {login}",
            f"Kafka at {bootstrap} closed the connection during the operator's login {login}",
        )
    ), message
    assert "check kafkaSecurity.sasl" in message and "\n" not in message
    assert "not-the-password" not in message
    assert kafka.describe(topic) is None


def test_a_ca_that_did_not_sign_the_brokers_certificate_is_a_failed_handshake(
    broker: SecureBroker, kafka: KafkaView, tmp_path: Path
) -> None:
    cluster = _cluster(broker, tmp_path, "SSL", {"tls": {"caFile": "{files}/other-ca.crt"}})
    backend = AdminBackend(
        broker.listeners["SSL"], client_id="kzo-test-other-ca", security=cluster.kafka_security, timeout_s=6.0
    )
    try:
        with pytest.raises(errors.ClusterUnavailable) as raised:
            backend.create_topic(f"refused-tls-{uuid.uuid4().hex[:6]}", {0: (1,)}, {})
    finally:
        backend.close()
    message = str(raised.value)
    assert message.startswith(f"the TLS handshake with Kafka at {broker.listeners['SSL']} failed (SSL): "), (
        message
    )
    assert "CERTIFICATE_VERIFY_FAILED" in message or "certificate verify failed" in message, message


def test_kzo_check_logs_in_on_the_sasl_ssl_listener(broker: SecureBroker, tmp_path: Path) -> None:
    listener, security = CASES["sasl-ssl-scram"]
    path = _clusters_file(broker, tmp_path, listener, security)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KZO_") and k != "KUBECONFIG"}
    environment.update(PYTHONPATH=str(REPO / "operator"), KZO_CLUSTERS_FILE=str(path))
    done = subprocess.run(
        [sys.executable, "-m", "kafka_zk_operator", "check", "--timeout", "10", "--no-api"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    expected = f"ok    kafka main: {broker.listeners[listener]} (SASL_SSL SCRAM-SHA-512 as '{SCRAM_USER}'): brokers 1 answer"
    assert expected in done.stdout, done.stdout


def test_kzo_snapshot_reads_partition_sizes_through_the_sasl_ssl_listener(
    broker: SecureBroker, kafka: KafkaView, tmp_path: Path
) -> None:
    listener, security = CASES["sasl-ssl-scram"]
    path = _clusters_file(broker, tmp_path, listener, security)
    topic = f"sized-{uuid.uuid4().hex[:6]}"
    kafka.create_topic(topic, 1, 1)
    kafka.produce(topic, [b"x" * 1000] * 50)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KZO_") and k != "KUBECONFIG"}
    environment.update(PYTHONPATH=str(REPO / "operator"), KZO_CLUSTERS_FILE=str(path))
    out = tmp_path / "snapshot.json"
    done = subprocess.run(
        [sys.executable, "-m", "kafka_zk_operator", "snapshot", "--zookeeper", broker.zk_connect,
         "--sizes-from-cluster", "main", "-o", str(out), "-q"],
        capture_output=True, text=True, env=environment, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    sizes = json.loads(out.read_text())["topics"][topic]["sizes"]
    # Kafka's own account of the partition, asked over the PLAINTEXT listener by a plain client
    plain = KafkaAdminClient(bootstrap_servers=broker.plaintext, client_id="kzo-test-sizes")
    try:
        answer = plain.describe_log_dirs()
    finally:
        plain.close()
    kafka_size = max(
        partition["partition_size"]
        for response in answer
        for log_dir in response["log_dirs"]
        for entry in log_dir["topics"]
        if entry["name"] == topic
        for partition in entry["partitions"]
        if partition["partition_index"] == 0
    )
    assert sizes == {"0": kafka_size} and kafka_size >= 50_000, (sizes, kafka_size)
