"""Unit tests for SASL GSSAPI (Kerberos) on the Kafka listeners: the ``kafkaSecurity.sasl`` section
with ``principal``, ``keytab``, ``service`` and ``domainName`` (every problem one ``SettingsError``
line naming the key), kafka-python's arguments for it, and the one-line messages of
``adapters.kafka.admin_kerberos`` for what MIT's library reports. The real KDC and broker are in
``tests/integration/test_admin_gssapi.py``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from kafka_zk_operator.adapters.kafka import admin_kerberos, admin_security
from kafka_zk_operator.config import SettingsError, kafka_security_section, load
from kafka_zk_operator.config.kafka_security import KafkaClientSecurity
from kafka_zk_operator.domain import errors

CLUSTER = "clusters:\n  - name: main\n    zookeeper: zk:2181/kafka\n    bootstrapServers: kafka-0:9093\n"
PRINCIPAL = "kzo@EXAMPLE.COM"


@pytest.fixture(autouse=True)
def gssapi_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests do not depend on ``gssapi`` being installed (the one that needs it absent says so)."""
    monkeypatch.setattr(kafka_security_section, "gssapi_installed", lambda: True)


@pytest.fixture
def keytab(tmp_path: Path) -> str:
    path = tmp_path / "operator.keytab"
    path.write_bytes(b"\x05\x02\x00\x00")
    return str(path)


def _section(text: str, indent: str = "    ") -> str:
    return f"{indent}kafkaSecurity:\n" + "".join(
        f"{indent}  {line}\n" for line in text.strip("\n").split("\n")
    )


def _gssapi(keytab: str, extra: str = "") -> str:
    return f"sasl:\n  mechanism: GSSAPI\n  principal: {PRINCIPAL}\n  keytab: {keytab}\n{extra}"


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


def test_the_documented_section_is_read(tmp_path: Path, keytab: str) -> None:
    extra = "  service: kafka-svc\n  domainName: kafka.example.com\n"
    security = _load(tmp_path, CLUSTER + _section(_gssapi(keytab, extra)))
    assert security == KafkaClientSecurity(
        protocol="SASL_PLAINTEXT",
        sasl_mechanism="GSSAPI",
        service="kafka-svc",
        domain="kafka.example.com",
        principal=PRINCIPAL,
        keytab=keytab,
    )
    assert security.summary == f"SASL_PLAINTEXT GSSAPI as {PRINCIPAL!r}"
    assert admin_security.client_arguments(security) == {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "GSSAPI",
        "sasl_kerberos_service_name": "kafka-svc",
        "sasl_kerberos_domain_name": "kafka.example.com",
    }


def test_the_service_defaults_to_kafka_and_the_keytab_is_optional(tmp_path: Path) -> None:
    security = _load(tmp_path, CLUSTER + _section(f"sasl:\n  mechanism: gssapi\n  principal: {PRINCIPAL}"))
    assert (security.service, security.keytab, security.domain) == ("kafka", None, None)
    arguments = admin_security.client_arguments(security)
    assert arguments["sasl_kerberos_service_name"] == "kafka"
    assert "sasl_plain_username" not in arguments


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        (
            "sasl:\n  mechanism: GSSAPI",
            "kafkaSecurity.sasl: GSSAPI needs principal, the Kerberos principal the operator logs in as",
        ),
        (
            "sasl:\n  mechanism: GSSAPI\n  principal: 'kzo @EXAMPLE.COM'",
            "kafkaSecurity.sasl: GSSAPI needs principal",
        ),
        (
            f"sasl:\n  mechanism: GSSAPI\n  principal: {PRINCIPAL}\n  keytab: /nonexistent/kzo.keytab",
            "kafkaSecurity.sasl.keytab: cannot read /nonexistent/kzo.keytab",
        ),
        (
            f"sasl:\n  mechanism: GSSAPI\n  principal: {PRINCIPAL}\n  usernameFile: /u",
            "kafkaSecurity.sasl.usernameFile is for PLAIN and SCRAM; GSSAPI (Kerberos) logs in with principal",
        ),
        (
            f"sasl:\n  mechanism: GSSAPI\n  principal: {PRINCIPAL}\n  domainName: 'a b'",
            "kafkaSecurity.sasl.domainName must be a host name",
        ),
        (
            f"sasl:\n  mechanism: GSSAPI\n  principal: {PRINCIPAL}\n  service: kafka/x",
            "kafkaSecurity.sasl.service must be the service name of the brokers' Kerberos principal",
        ),
        (
            "sasl:\n  mechanism: SCRAM-SHA-512\n  domainName: kafka.example.com",
            "kafkaSecurity.sasl.domainName is for mechanism GSSAPI (Kerberos)",
        ),
        (
            f"sasl:\n  mechanism: PLAIN\n  principal: {PRINCIPAL}",
            "kafkaSecurity.sasl.principal is for mechanism GSSAPI (Kerberos)",
        ),
    ],
)
def test_a_bad_gssapi_section_is_one_line_naming_the_key(tmp_path: Path, section: str, expected: str) -> None:
    message = _error(tmp_path, CLUSTER + _section(section))
    assert f"clusters[0].{expected}" in message, message


def test_a_file_that_is_no_keytab_is_refused(tmp_path: Path) -> None:
    (tmp_path / "kzo.keytab").write_text("not a keytab\n")
    message = _error(tmp_path, CLUSTER + _section(_gssapi(str(tmp_path / "kzo.keytab"))))
    assert "kafkaSecurity.sasl.keytab" in message and "is not a Kerberos keytab" in message


def test_without_the_gssapi_package_it_says_what_to_install(
    tmp_path: Path, keytab: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kafka_security_section, "gssapi_installed", lambda: False)
    message = _error(tmp_path, CLUSTER + _section(_gssapi(keytab)))
    assert "clusters[0].kafkaSecurity.sasl: GSSAPI needs the Python package 'gssapi'" in message
    assert "install kafka-zk-operator[kerberos]" in message


def test_zookeeper_and_kafka_share_the_one_client_keytab(tmp_path: Path, keytab: str) -> None:
    other = tmp_path / "other.keytab"
    other.write_bytes(b"\x05\x02")
    zk_sasl = f"    sasl: {{mechanism: GSSAPI, principal: zk@EXAMPLE.COM, keytab: {other}}}\n"
    message = _error(tmp_path, CLUSTER + zk_sasl + _section(_gssapi(keytab)))
    assert "cluster 'main' (sasl, kafkaSecurity.sasl) name different keytabs" in message
    zk_sasl = f"    sasl: {{mechanism: GSSAPI, principal: zk@EXAMPLE.COM, keytab: {keytab}}}\n"
    assert _load(tmp_path, CLUSTER + zk_sasl + _section(_gssapi(keytab))).principal == PRINCIPAL


def test_every_cluster_logs_in_to_kafka_as_one_principal(tmp_path: Path, keytab: str) -> None:
    second = (
        "  - name: second\n    zookeeper: zk:2181/other\n    bootstrapServers: kafka-9:9093\n"
        + _section(f"sasl:\n  mechanism: GSSAPI\n  principal: other@EXAMPLE.COM\n  keytab: {keytab}")
    )
    message = _error(tmp_path, CLUSTER + _section(_gssapi(keytab)) + second)
    assert "clusters 'main' and 'second' log in to Kafka as different Kerberos principals" in message


# --- what MIT's failures read as ------------------------------------------------------------------


class FakeGSSError(Exception):
    """Shaped as python-gssapi's errors (their module is under ``gssapi``)."""


FakeGSSError.__module__ = "gssapi.raw.misc"

SECURITY = KafkaClientSecurity(
    protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI", principal=PRINCIPAL, keytab="/etc/kzo-krb5/k.keytab"
)


@pytest.mark.parametrize(
    ("text", "reason", "hint"),
    [
        (
            "Major (458752): No credentials were supplied, or the credentials were unavailable or "
            "inaccessible, Minor (2529639053): Can't find client principal nobody@KZO.TEST in cache collection",
            "Can't find client principal nobody@KZO.TEST in cache collection",
            "the keytab must hold the principal's current key",
        ),
        (
            "Major (851968): Unspecified GSS failure.  Minor code may provide more information, "
            "Minor (2529638919): Server kafka/nohost@KZO.TEST not found in Kerberos database",
            "Server kafka/nohost@KZO.TEST not found in Kerberos database",
            "the brokers' principals must be SERVICE/HOST@REALM",
        ),
        (
            "Major (851968): Unspecified GSS failure.  Minor code may provide more information, Minor (0): Unknown error",
            "Unspecified GSS failure. Minor code may provide more information",
            "check the principal and keytab",
        ),
    ],
)
def test_a_kerberos_failure_is_mits_reason_and_what_to_check(text: str, reason: str, hint: str) -> None:
    message = admin_kerberos.failure_text(SECURITY, "kafka-0:9093", FakeGSSError(text))
    assert message.startswith(
        f"Kerberos login of {PRINCIPAL!r} from keytab /etc/kzo-krb5/k.keytab for Kafka at kafka-0:9093 "
        f"failed: {reason}; {hint}"
    ), message


def test_a_kerberos_failure_kafka_python_logged_is_named() -> None:
    text = "Major (851968): Unspecified GSS failure, Minor (2529638919): Server kafka/x@R not found in Kerberos database"
    message = admin_security.why_not_started(
        "kafka-0:9093", SECURITY, OSError("Unable to bootstrap"), [RuntimeError("x"), FakeGSSError(text)]
    )
    assert message.startswith(f"Kerberos login of {PRINCIPAL!r}"), message
    assert "Server kafka/x@R not found in Kerberos database" in message


def test_without_gssapi_the_login_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_module(name: str) -> Any:
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(importlib, "import_module", no_module)
    with pytest.raises(errors.ClusterUnavailable) as raised:
        admin_kerberos.login(SECURITY, "kafka-0:9093")
    assert str(raised.value) == (
        "Kafka SASL GSSAPI needs the Python package 'gssapi', which cannot be loaded (No module named "
        "'gssapi'); install kafka-zk-operator[kerberos] and MIT Kerberos' libgssapi-krb5"
    )


def test_a_keytab_gone_since_the_start_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(admin_kerberos, "gssapi_module", lambda unavailable: object())
    gone = KafkaClientSecurity(
        protocol="SASL_PLAINTEXT",
        sasl_mechanism="GSSAPI",
        principal=PRINCIPAL,
        keytab=str(tmp_path / "k.keytab"),
    )
    with pytest.raises(errors.ClusterUnavailable) as raised:
        admin_kerberos.login(gone, "kafka-0:9093")
    assert str(raised.value) == (
        f"cannot read the keytab {tmp_path / 'k.keytab'} of {PRINCIPAL!r} for Kafka at kafka-0:9093: No such "
        "file or directory; check that it is mounted and readable by the operator's user"
    )
