"""The cluster's ``kafkaSecurity`` (``config.kafka_security``) as kafka-python's client arguments,
and why a client on a secured listener did not start, in words that say what to check.

kafka-python retries a bootstrap whatever failed (a refused SASL login, a TLS handshake the
certificate did not pass) until its timeout, then raises only "Unable to bootstrap": the causes
are in what it logs meanwhile. :func:`recorded_failures` keeps those (kafka-python's logging stays
silent) so that :func:`why_not_started` can name the real one. Used by ``admin_client`` only.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import ssl
from collections.abc import Iterator, Sequence
from typing import Any

from kafka_zk_operator.adapters.kafka import admin_kerberos
from kafka_zk_operator.config.kafka_security import PLAINTEXT, KafkaClientSecurity


def client_arguments(security: KafkaClientSecurity) -> dict[str, Any]:
    """kafka-python's arguments for ``security`` (``security_protocol``, ``ssl_*``, ``sasl_*``)."""
    arguments: dict[str, Any] = {"security_protocol": security.protocol}
    if security.protocol in ("SSL", "SASL_SSL"):
        arguments.update(
            ssl_cafile=security.ca_file,
            ssl_certfile=security.cert_file,
            ssl_keyfile=security.key_file,
            ssl_password=security.key_password,
            ssl_check_hostname=security.verify_hostname,
        )
    if security.sasl_mechanism == "GSSAPI":
        # The principal is not an argument: kafka-python uses the default credentials, which
        # admin_kerberos.login makes the principal's.
        arguments.update(
            sasl_mechanism="GSSAPI",
            sasl_kerberos_service_name=security.service,
            sasl_kerberos_domain_name=security.domain,
        )
    elif security.sasl_mechanism is not None:
        arguments.update(
            sasl_mechanism=security.sasl_mechanism,
            sasl_plain_username=security.username,
            sasl_plain_password=security.password,
        )
    return arguments


#: Exceptions kept from one bootstrap's log records.
_KEPT = 500


class _Recorder(logging.Handler):
    """Keeps the exceptions kafka-python's log records carry (as arguments or ``exc_info``)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        found = [arg for arg in args if isinstance(arg, BaseException)]
        if record.exc_info and record.exc_info[1] is not None:
            found.append(record.exc_info[1])
        # Every attempt logs its failure three times (transport, connection, bootstrap), and the
        # first attempts after a refused login often see only the broker closing the socket; the
        # retries back off exponentially, so a whole bootstrap stays well under the bound.
        self.seen.extend(found[: _KEPT - len(self.seen)])


@contextlib.contextmanager
def recorded_failures(name: str) -> Iterator[list[BaseException]]:
    """Within the block, logger ``name`` prints nothing and the exceptions its warnings and
    errors carry are collected in the list yielded."""
    logger = logging.getLogger(name)
    recorder = _Recorder()
    level, propagate = logger.level, logger.propagate
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    logger.addHandler(recorder)
    try:
        yield recorder.seen
    finally:
        logger.removeHandler(recorder)
        logger.setLevel(level)
        logger.propagate = propagate


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it was raised from or during (kafka-python wraps TLS errors)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _text(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def why_not_started(
    bootstrap: str, security: KafkaClientSecurity, exc: BaseException, seen: Sequence[BaseException] = ()
) -> str:
    """One line: why no client started on ``bootstrap`` (``exc``, or a cause in ``seen``)."""
    kafka_errors: Any = importlib.import_module("kafka.errors")
    login_errors = (kafka_errors.SaslAuthenticationFailedError, kafka_errors.UnsupportedSaslMechanismError)
    causes = [cause for failure in (exc, *seen) for cause in _chain(failure)]
    login = next((cause for cause in causes if isinstance(cause, login_errors)), None)
    if login is not None:
        return (
            f"Kafka at {bootstrap} refused the operator's login ({security.summary}): {_text(login)}; check "
            "kafkaSecurity.sasl in the clusters file (the user, its password, the mechanism the listener enables)"
        )
    gss = next((cause for cause in causes if type(cause).__module__.startswith("gssapi")), None)
    if gss is not None:
        return admin_kerberos.failure_text(security, bootstrap, gss)
    handshake = next(
        (cause for cause in causes if isinstance(cause, ssl.SSLError | ssl.CertificateError)), None
    )
    if handshake is not None:
        return (
            f"the TLS handshake with Kafka at {bootstrap} failed ({security.summary}): {_text(handshake)}; "
            "check kafkaSecurity.tls.caFile (the CA of the brokers' certificates), that the certificates "
            "name the bootstrap and advertised hosts (or verifyHostname), and that the port is a TLS listener"
        )
    named = f" ({security.summary})" if security != PLAINTEXT else ""
    closed = any("socket disconnected" in str(cause) for cause in causes)
    if security.sasl_mechanism is not None and closed:
        # Over TLS kafka-python often sees only the socket closing, not the broker's error answer.
        return (
            f"Kafka at {bootstrap} closed the connection during the operator's login{named} ({_text(exc)}), "
            "as brokers do after a refused login; check kafkaSecurity.sasl in the clusters file (the user, "
            "its password, the mechanism the listener enables)"
        )
    return f"cannot reach Kafka at {bootstrap}{named}: {_text(exc)}"
