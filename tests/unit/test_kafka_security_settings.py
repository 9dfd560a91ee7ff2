"""Unit tests for the clusters file's ``kafkaSecurity`` section (TLS and SASL on ``bootstrapServers``):
what it reads, every mistake one ``SettingsError`` line naming the key, and the kafka-python arguments
``adapters.kafka.admin_client`` makes of it. The real brokers with SSL, SASL_PLAINTEXT and SASL_SSL
listeners are in ``tests/integration/test_admin_security.py``.
"""

from __future__ import annotations

import logging
import ssl
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kafka_zk_operator.adapters.kafka import admin_client, admin_security
from kafka_zk_operator.config import SettingsError, kafka_security_section, load
from kafka_zk_operator.config.kafka_security import PLAINTEXT, KafkaClientSecurity
from kafka_zk_operator.devstack.certs import CertificateAuthority

CLUSTER = "clusters:\n  - name: main\n    zookeeper: zk:2181/kafka\n    bootstrapServers: kafka-0:9093\n"
KRAFT = "clusters:\n  - name: kraft\n    bootstrapServers: kafka-0:9093\n"


@pytest.fixture
def tls_files(tmp_path: Path) -> dict[str, str]:
    """A CA, a client certificate and its key (PEM), an encrypted copy of the key and its password."""
    ca = CertificateAuthority.create("kzo-test-ca")
    cert, key = ca.issue("kzo-operator")
    encrypted = serialization.load_pem_private_key(key, None)
    assert isinstance(encrypted, ec.EllipticCurvePrivateKey)
    locked = encrypted.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"key-secret"),
    )
    files = {
        "ca": ca.cert_pem,
        "cert": cert,
        "key": key,
        "locked": locked,
        "key_password": b"key-secret\n",
        "wrong": b"not-it\n",
        "other_key": CertificateAuthority.create("other").key_pem,
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return {name: str(tmp_path / name) for name in files}


@pytest.fixture
def secrets(tmp_path: Path) -> dict[str, str]:
    for name, text in {"username": "kzo\n", "password": "s3cret\n", "empty": ""}.items():
        (tmp_path / name).write_text(text)
    return {name: str(tmp_path / name) for name in ("username", "password", "empty")}


def _load(tmp_path: Path, content: str) -> KafkaClientSecurity:
    path = tmp_path / "clusters.yaml"
    path.write_text(content)
    return load({"KZO_CLUSTERS_FILE": str(path)}).clusters[0].kafka_security


def _error(tmp_path: Path, content: str) -> str:
    with pytest.raises(SettingsError) as raised:
        _load(tmp_path, content)
    message = str(raised.value)
    assert message and "\n" not in message, message
    return message


def _section(text: str) -> str:
    return "    kafkaSecurity:\n" + "".join(f"      {line}\n" for line in text.strip("\n").split("\n"))


# --- what is read ---------------------------------------------------------------------------------


def test_without_the_section_the_connection_is_plaintext(tmp_path: Path) -> None:
    assert _load(tmp_path, CLUSTER) == PLAINTEXT
    assert admin_security.client_arguments(PLAINTEXT) == {"security_protocol": "PLAINTEXT"}


def test_sasl_ssl_with_scram_and_mutual_tls_is_read(
    tmp_path: Path, tls_files: dict[str, str], secrets: dict[str, str]
) -> None:
    section = f"""
protocol: sasl_ssl
tls:
  caFile: {tls_files["ca"]}
  certFile: {tls_files["cert"]}
  keyFile: {tls_files["locked"]}
  keyPasswordFile: {tls_files["key_password"]}
  verifyHostname: false
sasl:
  mechanism: scram-sha-512
  usernameFile: {secrets["username"]}
  passwordFile: {secrets["password"]}
"""
    security = _load(tmp_path, CLUSTER + _section(section))
    assert security == KafkaClientSecurity(
        protocol="SASL_SSL",
        ca_file=tls_files["ca"],
        cert_file=tls_files["cert"],
        key_file=tls_files["locked"],
        key_password="key-secret",
        verify_hostname=False,
        sasl_mechanism="SCRAM-SHA-512",
        username="kzo",
        password="s3cret",
    )
    assert admin_security.client_arguments(security) == {
        "security_protocol": "SASL_SSL",
        "ssl_cafile": tls_files["ca"],
        "ssl_certfile": tls_files["cert"],
        "ssl_keyfile": tls_files["locked"],
        "ssl_password": "key-secret",
        "ssl_check_hostname": False,
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "kzo",
        "sasl_plain_password": "s3cret",
    }
    assert security.summary == "SASL_SSL SCRAM-SHA-512 as 'kzo'"


@pytest.mark.parametrize(
    ("sections", "protocol"),
    [("tls", "SSL"), ("sasl", "SASL_PLAINTEXT"), ("tls sasl", "SASL_SSL")],
)
def test_without_protocol_it_follows_from_the_sections(
    tmp_path: Path, tls_files: dict[str, str], secrets: dict[str, str], sections: str, protocol: str
) -> None:
    text = ""
    if "tls" in sections:
        text += f"tls:\n  caFile: {tls_files['ca']}\n"
    if "sasl" in sections:
        text += f"sasl:\n  mechanism: PLAIN\n  username: kzo\n  passwordFile: {secrets['password']}\n"
    security = _load(tmp_path, CLUSTER + _section(text))
    assert security.protocol == protocol
    arguments = admin_security.client_arguments(security)
    assert ("ssl_cafile" in arguments) is ("tls" in sections)
    assert ("sasl_mechanism" in arguments) is ("sasl" in sections)


def test_a_kraft_cluster_takes_the_section_too(tmp_path: Path, tls_files: dict[str, str]) -> None:
    security = _load(tmp_path, KRAFT + _section(f"protocol: SSL\ntls:\n  caFile: {tls_files['ca']}"))
    assert security.protocol == "SSL" and security.ca_file == tls_files["ca"] and security.verify_hostname


def test_ssl_without_a_tls_section_uses_the_system_cas(tmp_path: Path) -> None:
    assert _load(tmp_path, CLUSTER + _section("protocol: SSL")) == KafkaClientSecurity(protocol="SSL")


# --- every mistake is one line naming the key -----------------------------------------------------


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        (
            "protocol: TLS",
            "kafkaSecurity.protocol 'TLS' is not a Kafka security protocol; use PLAINTEXT, SSL",
        ),
        ("protocol: 3", "kafkaSecurity.protocol must be a string, got the number 3"),
        ("protocl: SSL", "kafkaSecurity: unknown key 'protocl'; expected one of protocol, tls, sasl"),
        ("protocol: SASL_SSL", "kafkaSecurity: protocol SASL_SSL needs a sasl section (mechanism"),
        (
            "protocol: PLAINTEXT\ntls: {}",
            "kafkaSecurity.tls is for protocol SSL or SASL_SSL, and protocol is",
        ),
        ("tls: [a]", "kafkaSecurity.tls must be a mapping of tls settings, got a list"),
        ("tls:\n  verify: false", "kafkaSecurity.tls: unknown key 'verify'; expected one of caFile"),
        ("tls:\n  caFile: /nonexistent/ca.crt", "kafkaSecurity.tls.caFile: cannot read /nonexistent/ca.crt"),
        ("tls:\n  verifyHostname: 'no'", "kafkaSecurity.tls.verifyHostname must be true or false"),
        (
            "sasl:\n  username: kzo",
            "kafkaSecurity.sasl.mechanism must be one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512",
        ),
        ("sasl:\n  mechanism: OAUTHBEARER", "kafkaSecurity.sasl.mechanism must be one of PLAIN"),
        (
            "sasl:\n  mechanism: PLAIN\n  username: kzo",
            "kafkaSecurity.sasl: PLAIN needs usernameFile (or username)",
        ),
        ("sasl:\n  mechanism: PLAIN\n  passwrd: x", "kafkaSecurity.sasl: unknown key 'passwrd'"),
        (
            "protocol: SSL\nsasl:\n  mechanism: PLAIN",
            "kafkaSecurity.sasl needs protocol SASL_PLAINTEXT or SASL_SSL, and protocol is SSL",
        ),
        (
            "sasl:\n  mechanism: PLAIN\n  keytab: /k",
            "kafkaSecurity.sasl.keytab is for mechanism GSSAPI (Kerberos)",
        ),
        (
            "sasl:\n  mechanism: SCRAM-SHA-256\n  service: 'a b'",
            "kafkaSecurity.sasl.service must be the service",
        ),
        ("[SSL]", "kafkaSecurity must be a mapping with protocol, tls and/or sasl"),
    ],
)
def test_a_bad_section_is_one_line_naming_the_key(tmp_path: Path, section: str, expected: str) -> None:
    message = _error(tmp_path, CLUSTER + _section(section))
    assert f"clusters[0].{expected}" in message, message


def test_an_empty_password_file_is_refused(tmp_path: Path, secrets: dict[str, str]) -> None:
    section = f"sasl:\n  mechanism: SCRAM-SHA-512\n  username: kzo\n  passwordFile: {secrets['empty']}"
    assert "SCRAM-SHA-512 needs usernameFile (or username) and passwordFile, non-empty" in _error(
        tmp_path, CLUSTER + _section(section)
    )


def test_the_section_needs_bootstrap_servers(tmp_path: Path) -> None:
    content = "clusters:\n  - name: main\n    zookeeper: zk:2181/kafka\n" + _section("protocol: SSL")
    assert (
        "clusters[0].kafkaSecurity secures the connections to bootstrapServers, and this cluster has none"
        in (_error(tmp_path, content))
    )


@pytest.mark.parametrize(
    ("tls", "expected"),
    [
        ("certFile: {cert}", "certFile and keyFile go together"),
        ("keyFile: {key}", "certFile and keyFile go together"),
        ("caFile: {key_password}", "tls.caFile: {key_password} is not PEM (no '-----BEGIN' line)"),
        ("caFile: {key}", "tls.caFile: {key} holds no usable CA certificate"),
        ("certFile: {cert}\n  keyFile: {other_key}", "certFile and keyFile do not load"),
        (
            "certFile: {cert}\n  keyFile: {locked}",
            "an encrypted key needs keyPasswordFile with the right password",
        ),
        (
            "certFile: {cert}\n  keyFile: {locked}\n  keyPasswordFile: {wrong}",
            "certFile and keyFile do not load",
        ),
        (
            "caFile: {ca}\n  keyPasswordFile: {key_password}",
            "keyPasswordFile decrypts keyFile; give keyFile too",
        ),
    ],
)
def test_tls_files_that_do_not_load_are_one_line(
    tmp_path: Path, tls_files: dict[str, str], tls: str, expected: str
) -> None:
    message = _error(tmp_path, CLUSTER + _section("tls:\n  " + tls.format(**tls_files)))
    assert "clusters[0].kafkaSecurity.tls" in message and expected.format(**tls_files) in message, message


def test_parse_names_the_section_it_is_given() -> None:
    with pytest.raises(SettingsError, match=r"^here\.protocol 'X' is not a Kafka security protocol"):
        kafka_security_section.parse({"protocol": "X"}, "here")


# --- what the client reports when the login or the handshake fails --------------------------------


def _refused(exc: BaseException, security: KafkaClientSecurity) -> str:
    return admin_security.why_not_started("kafka-0:9093", security, exc)


def test_a_refused_login_names_the_user_and_what_to_check() -> None:
    kafka_errors: Any = admin_client.kafka_errors()
    security = KafkaClientSecurity(
        protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512", username="kzo", password="Secret-42"
    )
    message = _refused(kafka_errors.SaslAuthenticationFailedError("Authentication failed"), security)
    assert message.startswith(
        "Kafka at kafka-0:9093 refused the operator's login (SASL_SSL SCRAM-SHA-512 as 'kzo')"
    )
    assert "check kafkaSecurity.sasl" in message and "Secret-42" not in message


def test_a_failed_handshake_says_what_to_check() -> None:
    message = _refused(
        ssl.SSLCertVerificationError("certificate verify failed"), KafkaClientSecurity(protocol="SSL")
    )
    assert message.startswith("the TLS handshake with Kafka at kafka-0:9093 failed (SSL)")
    assert "kafkaSecurity.tls.caFile" in message


def test_a_plaintext_failure_reads_as_before() -> None:
    assert _refused(OSError("refused"), PLAINTEXT) == "cannot reach Kafka at kafka-0:9093: refused"


def test_the_cause_kafka_python_logged_while_retrying_is_named() -> None:
    """kafka-python retries a refused login until its timeout and raises only "Unable to
    bootstrap"; the SASL error it logged on the way is the one the message names."""
    kafka_errors: Any = admin_client.kafka_errors()
    security = KafkaClientSecurity(
        protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN", username="kzo", password="x"
    )
    logger = logging.getLogger("kafka")
    before = (logger.level, logger.propagate, list(logger.handlers))
    with admin_security.recorded_failures("kafka") as seen:
        logging.getLogger("kafka.net.manager").warning(
            "Bootstrap connection to %s failed: %s (backoff %.2f secs)",
            "bootstrap-0",
            kafka_errors.SaslAuthenticationFailedError("invalid credentials"),
            0.1,
        )
    timeout = kafka_errors.KafkaTimeoutError("Unable to bootstrap from kafka-0:9093")
    message = admin_security.why_not_started("kafka-0:9093", security, timeout, seen)
    assert message.startswith(
        "Kafka at kafka-0:9093 refused the operator's login (SASL_PLAINTEXT PLAIN as 'kzo')"
    )
    assert "invalid credentials" in message
    assert (logger.level, logger.propagate, list(logger.handlers)) == before


def test_a_tls_error_kafka_python_wrapped_is_found() -> None:
    kafka_errors: Any = admin_client.kafka_errors()
    try:
        try:
            raise ssl.SSLCertVerificationError(
                "certificate verify failed: unable to get local issuer certificate"
            )
        except ssl.SSLError as exc:
            raise kafka_errors.KafkaConnectionError(f"Handshake failed: {exc}") from None
    except kafka_errors.KafkaConnectionError as wrapped:
        wrapped.__context__ = wrapped.__context__ or ssl.SSLCertVerificationError("verify failed")
        message = admin_security.why_not_started(
            "k:1", KafkaClientSecurity(protocol="SSL"), OSError("x"), [wrapped]
        )
    assert message.startswith("the TLS handshake with Kafka at k:1 failed (SSL): "), message


def test_a_login_the_broker_answered_by_closing_the_socket_says_to_check_sasl() -> None:
    """Over TLS kafka-python often sees only the socket the broker closes after a refused login."""
    kafka_errors: Any = admin_client.kafka_errors()
    security = KafkaClientSecurity(
        protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512", username="kzo", password="x"
    )
    timeout = kafka_errors.KafkaTimeoutError("Unable to bootstrap from k:1")
    closed = kafka_errors.KafkaConnectionError("socket disconnected")
    message = admin_security.why_not_started("k:1", security, timeout, [closed])
    assert message.startswith(
        "Kafka at k:1 closed the connection during the operator's login (SASL_SSL SCRAM-SHA-512"
    )
    assert "check kafkaSecurity.sasl" in message
    assert admin_security.why_not_started("k:1", PLAINTEXT, timeout, [closed]).startswith(
        "cannot reach Kafka at k:1: "
    )
