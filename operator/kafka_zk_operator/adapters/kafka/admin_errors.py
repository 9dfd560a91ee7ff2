"""Kafka's Admin API error codes as the domain's errors: the one place they are mapped.

Per-topic answers carry an error code and Kafka's message (``error_for``); kafka-python raises for
top-level failures and the network (``mapped``), and reports IncrementalAlterConfigs results as
text ``"[Error 40] InvalidConfigurationError: ..."`` (``alter_result_error``). Every error names
what was being done and, for what a person must fix, what to change; none escapes as a traceback.

=========================================  =============================================
Kafka error (code)                          domain error
=========================================  =============================================
TOPIC_ALREADY_EXISTS (36)                   ``VersionConflict``: the next pass reads and adopts
UNKNOWN_TOPIC_OR_PARTITION (3)              ``VersionConflict``: gone since the read; re-read
INVALID_TOPIC_EXCEPTION (17)                ``InvalidTopicName``
INVALID_PARTITIONS (37)                     ``InvalidPartitions``
INVALID_REPLICATION_FACTOR (38)             ``InvalidReplicationFactor``
INVALID_REPLICA_ASSIGNMENT (39)             ``InvalidSpec`` (the assignment)
INVALID_CONFIG (40)                         ``InvalidConfig``
POLICY_VIOLATION (44)                       ``InvalidSpec`` (the brokers' policy)
REASSIGNMENT_IN_PROGRESS (60)               ``ReassignmentInProgress``
TOPIC_DELETION_DISABLED (73)                ``NotSupported`` (``delete.topic.enable=false``)
UNSUPPORTED_VERSION (35), INVALID_REQUEST   ``NotSupported``
authorization failures (29, 31)             ``ClusterUnavailable`` (retried once the ACL exists)
anything else, timeouts, the network        ``ClusterUnavailable`` naming the bootstrap servers
=========================================  =============================================
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator

from kafka_zk_operator.adapters.kafka import admin_client
from kafka_zk_operator.domain import errors

UNKNOWN_TOPIC_OR_PARTITION = 3
REQUEST_TIMED_OUT = 7
INVALID_TOPIC = 17
TOPIC_AUTHORIZATION_FAILED = 29
CLUSTER_AUTHORIZATION_FAILED = 31
UNSUPPORTED_VERSION = 35
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_REPLICA_ASSIGNMENT = 39
INVALID_CONFIG = 40
INVALID_REQUEST = 42
POLICY_VIOLATION = 44
REASSIGNMENT_IN_PROGRESS = 60
TOPIC_DELETION_DISABLED = 73
ELECTION_NOT_NEEDED = 84

_ERROR_TEXT = re.compile(r"\[Error (-?\d+)\] \w+(?:: (.*))?", re.DOTALL)

_Build = Callable[[str], errors.KzoError]

#: code → (domain error, what to do about it). The text is appended to "Kafka refused <action>: <why>".
_MAPPING: dict[int, tuple[_Build, str]] = {
    TOPIC_ALREADY_EXISTS: (errors.VersionConflict, "the topic was created meanwhile; re-reading it"),
    UNKNOWN_TOPIC_OR_PARTITION: (
        errors.VersionConflict,
        "the topic is gone since it was read; re-reading it",
    ),
    INVALID_TOPIC: (errors.InvalidTopicName, "choose a valid topic name (spec.topicName)"),
    INVALID_PARTITIONS: (errors.InvalidPartitions, "fix spec.partitions or spec.assignment"),
    INVALID_REPLICATION_FACTOR: (
        errors.InvalidReplicationFactor,
        "fix spec.replicationFactor (at most the number of live brokers)",
    ),
    INVALID_REPLICA_ASSIGNMENT: (
        errors.InvalidSpec,
        "fix the assignment: each partition's replicas must be distinct, registered brokers, "
        "and every partition must have the same number of them",
    ),
    INVALID_CONFIG: (errors.InvalidConfig, "fix spec.config"),
    POLICY_VIOLATION: (
        errors.InvalidSpec,
        "change the spec to satisfy the brokers' policy (create.topic.policy.class.name, "
        "alter.config.policy.class.name)",
    ),
    REASSIGNMENT_IN_PROGRESS: (errors.ReassignmentInProgress, "retrying once the reassignment is done"),
    TOPIC_DELETION_DISABLED: (
        errors.NotSupported,
        "the brokers run with delete.topic.enable=false; the topic stays in Kafka",
    ),
    UNSUPPORTED_VERSION: (errors.NotSupported, "the brokers do not support this request"),
    INVALID_REQUEST: (errors.NotSupported, "the brokers do not accept this request"),
    TOPIC_AUTHORIZATION_FAILED: (
        errors.ClusterUnavailable,
        "grant the operator's principal the topic ACLs it needs (DESCRIBE, CREATE, ALTER, "
        "DESCRIBE_CONFIGS, ALTER_CONFIGS, DELETE); retrying",
    ),
    CLUSTER_AUTHORIZATION_FAILED: (
        errors.ClusterUnavailable,
        "grant the operator's principal the cluster ACLs it needs (DESCRIBE, ALTER, ALTER_CONFIGS); retrying",
    ),
}


def error_name(code: int) -> str:
    """Kafka's name of an error code (``INVALID_CONFIG``), from kafka-python's table."""
    name = getattr(admin_client.kafka_errors().for_code(code), "message", None)
    return str(name) if name else f"error {code}"


def error_for(code: int, message: str | None, *, action: str, bootstrap: str) -> errors.KzoError | None:
    """The domain error of one answer's ``(error_code, error_message)``; None for code 0.

    :param action: what was asked, e.g. ``"creating topic 'orders'"``.
    """
    if code == 0:
        return None
    why = f"{error_name(code)}" + (f": {message}" if message else "")
    mapped = _MAPPING.get(code)
    if mapped is None:
        return errors.ClusterUnavailable(f"Kafka at {bootstrap} failed {action} ({why}); retrying")
    build, advice = mapped
    return build(f"Kafka refused {action} ({why}): {advice}")


def alter_result(result: str) -> tuple[int, str | None]:
    """(error code, message) of one resource's ``alter_configs`` result: ``"OK"`` (code 0) or
    kafka-python's text of the error, ``"[Error <code>] <ClassName>: <message>"``; text of any other
    form is Kafka's UNKNOWN_SERVER_ERROR (-1) with the text as its message."""
    if result == "OK":
        return 0, None
    match = _ERROR_TEXT.fullmatch(result.strip())
    if match is None:
        return -1, result
    return int(match.group(1)), match.group(2)


def raise_for(code: int, message: str | None, *, action: str, bootstrap: str) -> None:
    """:func:`error_for`, raised.

    :raises KzoError: the answer holds an error.
    """
    error = error_for(code, message, action=action, bootstrap=bootstrap)
    if error is not None:
        raise error


@contextlib.contextmanager
def mapped(bootstrap: str, action: str) -> Iterator[None]:
    """Turn what kafka-python raises within the block into the domain's errors.

    A broker's error answer (``BrokerResponseError``) goes through :func:`error_for`; timeouts,
    lost connections, no reachable broker and kafka-python's own failures (e.g. "Failed to find
    active controller id!") are ``ClusterUnavailable`` naming the bootstrap servers.

    :raises KzoError: the call failed.
    """
    kafka_errors = admin_client.kafka_errors()
    try:
        yield
    except errors.KzoError:
        raise
    except kafka_errors.BrokerResponseError as exc:
        code = getattr(exc, "errno", None)
        text = str(exc.args[0]) if exc.args else None
        error = error_for(int(code), text, action=action, bootstrap=bootstrap) if code is not None else None
        raise error or errors.ClusterUnavailable(f"Kafka at {bootstrap} failed {action}: {exc}") from None
    except (kafka_errors.KafkaError, OSError, RuntimeError) as exc:
        raise errors.ClusterUnavailable(
            f"Kafka at {bootstrap} did not answer {action}: {exc or type(exc).__name__}"
        ) from None
