"""The one place a kafka-python ``KafkaAdminClient`` is built, with the cluster's
``kafkaSecurity`` (``config.kafka_security``: TLS, SASL PLAIN/SCRAM/GSSAPI) as kafka-python's
arguments, after the Kerberos login for GSSAPI (``admin_kerberos``).

Used by ``brokers`` (``kzo check``), ``log_dirs`` (partition sizes) and ``admin_backend`` (the
Admin API topic backend). A client that cannot bootstrap raises the caller's
``ClusterUnavailable`` subclass naming the bootstrap servers (and, for a refused login or a failed
TLS handshake, what to check), never kafka-python's own error.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Iterator
from typing import Any

from kafka_zk_operator.adapters.kafka import admin_kerberos, admin_security
from kafka_zk_operator.config.kafka_security import PLAINTEXT, KafkaClientSecurity
from kafka_zk_operator.domain import errors

#: What kafka-python raises besides its own errors when a broker cannot be reached or the
#: arguments are wrong (a malformed bootstrap string): caught wherever a client is used.
CLIENT_FAILURES: tuple[type[BaseException], ...] = (OSError, ValueError)


def kafka_errors() -> Any:
    """kafka-python's ``kafka.errors`` module (untyped)."""
    return importlib.import_module("kafka.errors")


def kafka_module() -> Any:
    """kafka-python's top-level ``kafka`` module (``TopicPartition``)."""
    return importlib.import_module("kafka")


def kafka_admin() -> Any:
    """kafka-python's ``kafka.admin`` module (``KafkaAdminClient``, ``ConfigResource``, ...)."""
    return importlib.import_module("kafka.admin")


def failures() -> tuple[type[BaseException], ...]:
    """Every exception a kafka-python call may raise for Kafka's or the network's reasons."""
    return (kafka_errors().KafkaError, *CLIENT_FAILURES)


@contextlib.contextmanager
def quiet(name: str) -> Iterator[None]:
    """Silence logger ``name`` within the block (kafka-python logs every failed connection)."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def open_admin(
    bootstrap: str,
    *,
    client_id: str,
    timeout_s: float,
    security: KafkaClientSecurity = PLAINTEXT,
    unavailable: type[errors.ClusterUnavailable] = errors.ClusterUnavailable,
) -> Any:
    """A started ``KafkaAdminClient`` on ``bootstrap``; the caller closes it.

    ``timeout_s`` bounds every request and the first bootstrap (kafka-python's own default: 30 s);
    ``security``: the cluster's ``kafkaSecurity`` (default plaintext). kafka-python retries a
    refused login or a failed TLS handshake until that bound; the error then says which it was.

    :raises ClusterUnavailable: (``unavailable``) kafka-python is missing, the Kerberos login
        failed (GSSAPI) or no broker answered.
    """
    try:
        module = kafka_admin()
    except ImportError:
        raise unavailable(
            "talking to Kafka needs the kafka-python package (pip install 'kafka-python>=3.0,<4')"
        ) from None
    if security.sasl_mechanism == "GSSAPI":
        admin_kerberos.login(security, bootstrap, unavailable)
    with admin_security.recorded_failures("kafka") as seen:
        try:
            return module.KafkaAdminClient(
                bootstrap_servers=bootstrap,
                client_id=client_id,
                request_timeout_ms=int(timeout_s * 1000),
                bootstrap_timeout_ms=int(timeout_s * 1000),
                **admin_security.client_arguments(security),
            )
        except failures() as exc:
            raise unavailable(admin_security.why_not_started(bootstrap, security, exc, seen)) from None


@contextlib.contextmanager
def admin_session(
    bootstrap: str,
    *,
    client_id: str,
    timeout_s: float,
    security: KafkaClientSecurity = PLAINTEXT,
    unavailable: type[errors.ClusterUnavailable] = errors.ClusterUnavailable,
) -> Iterator[Any]:
    """:func:`open_admin` for one block, closed at its end, kafka-python's logging silenced."""
    admin = open_admin(
        bootstrap, client_id=client_id, timeout_s=timeout_s, security=security, unavailable=unavailable
    )
    try:
        with quiet("kafka"):
            yield admin
    finally:
        admin.close()
