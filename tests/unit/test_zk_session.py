"""Unit tests for ``adapters.zk.session``: TLS options reach kazoo, and every way a session can fail
to start is one line naming what to check. The real servers are in
``tests/integration/test_store_secure_zookeeper.py``; these cover the branches no server here
produces (a local SASL library error, a refused digest login, an unknown last error).
"""

from __future__ import annotations

import logging
import ssl
import sys
from typing import Any

import pytest
from kazoo import exceptions as kz

from kafka_zk_operator.adapters.zk import session
from kafka_zk_operator.config.zookeeper import SaslSettings, TlsSettings, ZkConnectionSettings

CONNECT = "zk-0:2182/kafka"


@pytest.mark.parametrize(
    ("tls", "verify_certs", "check_hostname"),
    [
        (TlsSettings(ca_file="/ca.crt"), True, True),
        (TlsSettings(ca_file="/ca.crt", verify_hostname=False), True, False),
        (TlsSettings(verify_certs=False), False, False),  # kazoo refuses a hostname check without one
    ],
)
def test_tls_settings_reach_kazoo(tls: TlsSettings, verify_certs: bool, check_hostname: bool) -> None:
    client = session.build_client(ZkConnectionSettings(connect=CONNECT, tls=tls))
    assert client.use_ssl is True
    assert client.ca == tls.ca_file
    assert (client.verify_certs, client.check_hostname) == (verify_certs, check_hostname)


def test_a_plain_connection_has_no_tls() -> None:
    assert session.build_client(ZkConnectionSettings(connect=CONNECT)).use_ssl is False


def _message(failure: BaseException | None, *, auth_failed: bool = False, **settings: Any) -> str:
    message = session.failure_message(ZkConnectionSettings(connect=CONNECT, **settings), failure, auth_failed)
    assert "\n" not in message
    return message


def _with_cause(exc: BaseException, cause: BaseException) -> BaseException:
    exc.__cause__ = cause
    return exc


def test_a_local_sasl_error_names_the_library() -> None:
    failure = _with_cause(kz.SASLException("library error"), ValueError("Unknown mechanism"))
    message = _message(failure, sasl=SaslSettings(mechanism="GSSAPI", principal="kafka/zk@REALM"))
    assert message.startswith(
        f"SASL GSSAPI could not start for ZooKeeper at {CONNECT}: ValueError: Unknown mechanism"
    )
    assert "pure-sasl" in message


def test_a_refused_login_names_the_user_and_never_the_password() -> None:
    sasl = SaslSettings(username="kafka", password="s3cret-value")
    message = _message(None, auth_failed=True, sasl=sasl)
    assert message.startswith(f"ZooKeeper at {CONNECT} refused the SASL DIGEST-MD5 login of 'kafka': ")
    assert "s3cret-value" not in message


def test_a_refused_digest_login_points_at_the_digest_file() -> None:
    message = _message(kz.AuthFailedError(), digest_auth=("kafka:pw",))
    assert (
        message
        == f"ZooKeeper at {CONNECT} refused the authentication data (digestAuthFile); check the user:password in it"
    )


def test_a_timeout_gives_the_last_error_when_known() -> None:
    refused = ConnectionRefusedError(111, "Connection refused")
    assert _message(refused, connection_timeout_s=3) == (
        f"cannot connect to ZooKeeper at {CONNECT} within 3 s (last error: ConnectionRefusedError: [Errno 111] "
        "Connection refused); check the connect string, network and credentials"
    )
    assert "(last error" not in _message(None)


def test_a_tls_client_on_a_plaintext_port() -> None:
    failure = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1006)")
    failure.reason = "WRONG_VERSION_NUMBER"
    message = _message(failure, tls=TlsSettings())
    assert message.startswith(f"TLS connection to ZooKeeper at {CONNECT} failed: WRONG_VERSION_NUMBER; ")
    assert "secureClientPort" in message


def test_kazoos_traceback_for_a_sasl_refusal_is_filtered_and_nothing_else() -> None:
    def record(exc: BaseException) -> logging.LogRecord:
        try:
            raise exc
        except BaseException:
            info = sys.exc_info()
        return logging.LogRecord("kazoo.client.kzo", logging.ERROR, __file__, 1, "Unhandled", None, info)

    assert not session.kazoo_log.filter(record(kz.SessionClosedRequireSaslError()))
    assert session.kazoo_log.filter(record(RuntimeError("a bug")))
