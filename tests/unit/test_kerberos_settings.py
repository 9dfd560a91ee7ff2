"""Unit tests for SASL GSSAPI (Kerberos): the clusters file's ``sasl`` section with ``principal`` and
``keytab`` (every problem one ``SettingsError`` line naming the key), and the one-line messages of
``adapters.zk.kerberos`` / ``session`` for what MIT's library reports. The real KDC, ZooKeeper and
Kafka are in ``tests/integration/test_store_kerberos_zookeeper.py``.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest

from kafka_zk_operator.adapters.zk import kerberos, session
from kafka_zk_operator.config import SettingsError, load, zookeeper
from kafka_zk_operator.config.zookeeper import SaslSettings, ZkConnectionSettings
from kafka_zk_operator.domain import errors

CLUSTER = "clusters:\n  - name: main\n    zookeeper: zk-0:2181/kafka\n"
PRINCIPAL = "kafka/kafka-zk-operator@EXAMPLE.COM"


@pytest.fixture(autouse=True)
def binding_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests do not depend on the binding being installed (tests that need it absent say so)."""
    monkeypatch.setattr(zookeeper, "kerberos_binding_installed", lambda: True)


def _keytab(tmp_path: Path, name: str = "operator.keytab", data: bytes = b"\x05\x02\x00\x00") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _load(tmp_path: Path, content: str) -> SaslSettings:
    path = tmp_path / "clusters.yaml"
    path.write_text(content)
    sasl = load({"KZO_CLUSTERS_FILE": str(path)}).clusters[0].zk.sasl
    assert sasl is not None
    return sasl


def _error(tmp_path: Path, content: str) -> str:
    path = tmp_path / "clusters.yaml"
    path.write_text(content)
    with pytest.raises(SettingsError) as raised:
        load({"KZO_CLUSTERS_FILE": str(path)})
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_the_documented_gssapi_section_loads(tmp_path: Path) -> None:
    keytab = _keytab(tmp_path)
    sasl = _load(
        tmp_path, CLUSTER + f"    sasl: {{mechanism: GSSAPI, principal: {PRINCIPAL}, keytab: {keytab}}}\n"
    )
    assert sasl == SaslSettings(mechanism="GSSAPI", principal=PRINCIPAL, keytab=keytab, service="zookeeper")


def test_the_service_name_and_an_old_format_keytab(tmp_path: Path) -> None:
    keytab = _keytab(tmp_path, data=b"\x05\x01")
    content = (
        CLUSTER + f"    sasl: {{mechanism: gssapi, principal: {PRINCIPAL}, keytab: {keytab}, service: zk}}\n"
    )
    sasl = _load(tmp_path, content)
    assert (sasl.mechanism, sasl.service, sasl.keytab) == ("GSSAPI", "zk", keytab)


def test_without_a_keytab_the_credentials_cache_is_used(tmp_path: Path) -> None:
    sasl = _load(tmp_path, CLUSTER + f"    sasl: {{mechanism: GSSAPI, principal: {PRINCIPAL}}}\n")
    assert sasl.keytab is None and sasl.principal == PRINCIPAL


@pytest.mark.parametrize(
    ("sasl", "expected"),
    [
        ("{mechanism: GSSAPI}", "clusters[0].sasl: GSSAPI needs principal, the Kerberos principal"),
        ("{mechanism: GSSAPI, principal: 'a b@R'}", "GSSAPI needs principal"),
        ("{mechanism: GSSAPI, principal: [p]}", "clusters[0].sasl.principal must be a string"),
        (
            f"{{mechanism: GSSAPI, principal: {PRINCIPAL}, passwordFile: /pw}}",
            "clusters[0].sasl.passwordFile is for DIGEST-MD5; GSSAPI (Kerberos) logs in with principal and keytab",
        ),
        (
            "{username: kafka, passwordFile: /pw, keytab: /k}",
            "clusters[0].sasl.keytab is for mechanism GSSAPI (Kerberos)",
        ),
        (
            f"{{mechanism: GSSAPI, principal: {PRINCIPAL}, keytab: 5}}",
            "clusters[0].sasl.keytab must be the path of a keytab file (a string), got the number 5",
        ),
        (
            f"{{mechanism: GSSAPI, principal: {PRINCIPAL}, keytab: /nonexistent/kzo.keytab}}",
            "clusters[0].sasl.keytab: cannot read /nonexistent/kzo.keytab: No such file or directory",
        ),
        (
            f"{{mechanism: GSSAPI, principal: {PRINCIPAL}, service: 'zoo keeper'}}",
            "clusters[0].sasl.service must be the service name of ZooKeeper's principal",
        ),
    ],
)
def test_an_unusable_gssapi_section(tmp_path: Path, sasl: str, expected: str) -> None:
    assert expected in _error(tmp_path, CLUSTER + f"    sasl: {sasl}\n")


def test_a_file_that_is_no_keytab_is_refused(tmp_path: Path) -> None:
    text = _keytab(tmp_path, "krb5.conf", b"[libdefaults]\n")
    message = _error(
        tmp_path, CLUSTER + f"    sasl: {{mechanism: GSSAPI, principal: {PRINCIPAL}, keytab: {text}}}\n"
    )
    assert f"clusters[0].sasl.keytab: {text} is not a Kerberos keytab" in message
    message = _error(
        tmp_path, CLUSTER + f"    sasl: {{mechanism: GSSAPI, principal: {PRINCIPAL}, keytab: {tmp_path}}}\n"
    )
    assert f"clusters[0].sasl.keytab: cannot read {tmp_path}: Is a directory" in message


def test_gssapi_without_the_python_binding_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(zookeeper, "kerberos_binding_installed", lambda: False)
    message = _error(tmp_path, CLUSTER + f"    sasl: {{mechanism: GSSAPI, principal: {PRINCIPAL}}}\n")
    assert message.endswith(
        "clusters[0].sasl: GSSAPI needs the Python Kerberos binding (module 'kerberos'), which is not "
        "installed; install kafka-zk-operator[kerberos] (built against MIT Kerberos, Debian libkrb5-dev)"
    )


def test_every_cluster_shares_one_keytab(tmp_path: Path) -> None:
    first, second = _keytab(tmp_path, "a.keytab"), _keytab(tmp_path, "b.keytab")

    def cluster(name: str, keytab: str, principal: str) -> str:
        return (
            f"  - name: {name}\n    zookeeper: {name}:2181\n"
            f"    sasl: {{mechanism: GSSAPI, principal: {principal}, keytab: {keytab}}}\n"
        )

    same = "clusters:\n" + cluster("a", first, "kafka/a@R") + cluster("b", first, "kafka/b@R")
    path = tmp_path / "same.yaml"
    path.write_text(same)
    assert [c.zk.sasl.keytab for c in load({"KZO_CLUSTERS_FILE": str(path)}).clusters if c.zk.sasl] == [
        first,
        first,
    ]
    message = _error(
        tmp_path, "clusters:\n" + cluster("a", first, "kafka/a@R") + cluster("b", second, "kafka/b@R")
    )
    assert (
        f"clusters 'a' and 'b' name different keytabs ({first}, {second}); the operator has one Kerberos "
        in message
    )


# --- what MIT's library says, in one line -----------------------------------------------------------


class GSSError(Exception):
    """Stands in for the binding's ``kerberos.GSSError`` (same module and name)."""


GSSError.__module__ = "kerberos"
SASL = SaslSettings(mechanism="GSSAPI", principal=PRINCIPAL, keytab="/etc/kzo-krb5/operator.keytab")


def _gss(
    minor: str, major: str = "No credentials were supplied, or the credentials were unavailable"
) -> GSSError:
    return GSSError((major, 458752), (minor, -1765328353))


@pytest.mark.parametrize(
    ("minor", "hint"),
    [
        ("Decrypt integrity check failed", "the keytab must hold the principal's current key"),
        ("Preauthentication failed", "the keytab must hold the principal's current key"),
        (f"Can't find client principal {PRINCIPAL} in cache collection", "the keytab must hold"),
        (f"Client '{PRINCIPAL}' not found in Kerberos database", "the KDC does not know this principal"),
        (
            "Cannot contact any KDC for realm 'EXAMPLE.COM'",
            "krb5.conf must name a KDC of the principal's realm",
        ),
        (
            "Server zookeeper/zk-0@EXAMPLE.COM not found in Kerberos database",
            "ZooKeeper's principal must be SERVICE/HOST@REALM with HOST exactly as in the connect string",
        ),
        ("Clock skew too great", "check the keytab, that krb5.conf names a reachable KDC"),
    ],
)
def test_kerberos_failures_give_mits_reason_and_what_to_check(
    minor: str, hint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KRB5_CONFIG", "/etc/kzo-krb5-conf/krb5.conf")
    message = kerberos.failure_text(SASL, "ZooKeeper at zk-0:2181", _gss(minor))
    assert message.startswith(
        f"Kerberos login of {PRINCIPAL!r} from keytab /etc/kzo-krb5/operator.keytab for ZooKeeper at "
        f"zk-0:2181 failed: {minor}; {hint}"
    ), message
    assert message.endswith("(krb5.conf: /etc/kzo-krb5-conf/krb5.conf)")
    assert "No credentials were supplied" not in message


def test_the_major_status_is_used_when_there_is_no_minor_one() -> None:
    failure = GSSError(("An unsupported mechanism was requested", 65536), ("", 0))
    assert kerberos.gss_error_text(failure) == "An unsupported mechanism was requested"


def test_a_keytab_is_used_from_a_private_cache_unless_one_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KRB5CCNAME", raising=False)
    monkeypatch.setenv("KRB5_CLIENT_KTNAME", "FILE:/before")
    kerberos.use_keytab("/etc/kzo-krb5/operator.keytab")
    assert os.environ["KRB5_CLIENT_KTNAME"] == "FILE:/etc/kzo-krb5/operator.keytab"
    cache = os.environ["KRB5CCNAME"]
    assert cache.startswith("DIR:") and Path(cache[4:]).is_dir()
    assert Path(cache[4:]).stat().st_mode & 0o077 == 0, "private to the operator's user"
    monkeypatch.setenv("KRB5CCNAME", "FILE:/tmp/sidecar-cache")
    kerberos.use_keytab("/etc/kzo-krb5/operator.keytab")
    assert os.environ["KRB5CCNAME"] == "FILE:/tmp/sidecar-cache"


def test_a_missing_binding_at_connect_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kerberos", None)  # import kerberos raises ImportError
    with pytest.raises(errors.ClusterUnavailable) as raised:
        kerberos.login(SASL, "zk-0:2181", ["zk-0"])
    assert str(raised.value).startswith(
        "SASL GSSAPI needs the Python Kerberos binding 'kerberos', which cannot be loaded ("
    )
    assert "install kafka-zk-operator[kerberos]" in str(raised.value)


def test_session_messages_for_gssapi() -> None:
    settings = ZkConnectionSettings(connect="zk-0:2181/kafka", sasl=SASL)
    refused = session.failure_message(settings, None, auth_failed=True)
    assert refused.startswith(
        f"ZooKeeper at zk-0:2181/kafka refused the SASL GSSAPI login of {PRINCIPAL!r}: it could not accept "
        "the Kerberos ticket; check that ZooKeeper's JAAS Server section logs in as zookeeper/HOST@REALM"
    )
    # A Kerberos error that ended kazoo's connection thread (pure-sasl's GSSAPI set-up) is MIT's words.
    escaped = session.failure_message(settings, _gss("Clock skew too great"), auth_failed=False)
    assert escaped.startswith(f"Kerberos login of {PRINCIPAL!r} from keytab ")
    assert "failed: Clock skew too great; " in escaped


def test_kazoos_traceback_for_a_kerberos_failure_is_filtered() -> None:
    try:
        raise _gss("Clock skew too great")
    except GSSError:
        info = sys.exc_info()
    record = logging.LogRecord("kazoo.client.kzo", logging.ERROR, __file__, 1, "Unhandled", None, info)
    assert not session.kazoo_log.filter(record)
