"""adapters.kafka.admin_errors: Kafka's error codes, kafka-python's exceptions and its
IncrementalAlterConfigs result text as domain errors, each saying what was asked and what to fix."""

from __future__ import annotations

import pytest
from kafka import errors as kafka_errors

from kafka_zk_operator.adapters.kafka import admin_errors
from kafka_zk_operator.domain import errors

BOOTSTRAP = "kafka-0:9092,kafka-1:9092"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (36, errors.VersionConflict),
        (3, errors.VersionConflict),
        (17, errors.InvalidTopicName),
        (37, errors.InvalidPartitions),
        (38, errors.InvalidReplicationFactor),
        (39, errors.InvalidSpec),
        (40, errors.InvalidConfig),
        (44, errors.InvalidSpec),
        (60, errors.ReassignmentInProgress),
        (73, errors.NotSupported),
        (35, errors.NotSupported),
        (29, errors.ClusterUnavailable),
        (7, errors.ClusterUnavailable),
        (41, errors.ClusterUnavailable),
        (-1, errors.ClusterUnavailable),
        (9999, errors.ClusterUnavailable),
    ],
)
def test_each_code_maps_to_one_domain_error(code: int, expected: type[errors.KzoError]) -> None:
    error = admin_errors.error_for(
        code, "Kafka's words", action="creating topic 'orders'", bootstrap=BOOTSTRAP
    )
    assert type(error) is expected
    assert "creating topic 'orders'" in error.message and "Kafka's words" in error.message


def test_no_error_is_none() -> None:
    assert admin_errors.error_for(0, None, action="x", bootstrap=BOOTSTRAP) is None
    admin_errors.raise_for(0, None, action="x", bootstrap=BOOTSTRAP)


def test_refusals_name_kafkas_error_and_what_to_fix() -> None:
    error = admin_errors.error_for(
        39, "Unknown broker(s) in replica assignment: 9.", action="adding partitions 3..3 to topic 't'",
        bootstrap=BOOTSTRAP,
    )  # fmt: skip
    assert error is not None and error.message == (
        "Kafka refused adding partitions 3..3 to topic 't' (INVALID_REPLICATION_ASSIGNMENT: Unknown broker(s) in "
        "replica assignment: 9.): fix the assignment: each partition's replicas must be distinct, registered "
        "brokers, and every partition must have the same number of them"
    )
    config = admin_errors.error_for(40, "Unknown topic config name: foo.bar", action="a", bootstrap=BOOTSTRAP)
    assert config is not None and "fix spec.config" in config.message and not config.retryable
    unknown = admin_errors.error_for(-1, None, action="deleting topic 't'", bootstrap=BOOTSTRAP)
    assert unknown is not None and BOOTSTRAP in unknown.message and unknown.retryable


def test_the_alter_configs_result_text_of_kafka_python_is_parsed() -> None:
    """kafka-python 3.x reports each resource as ``str(error_class(message))``: its real format."""
    text = str(kafka_errors.for_code(40)("Invalid value x for configuration retention.ms: Not a number"))
    assert text.startswith("[Error 40] InvalidConfigurationError")
    assert admin_errors.alter_result(text) == (
        40,
        "Invalid value x for configuration retention.ms: Not a number",
    )
    assert admin_errors.alter_result("OK") == (0, None)
    assert admin_errors.alter_result(str(kafka_errors.for_code(3)())) == (3, None)
    assert admin_errors.alter_result("something else") == (-1, "something else")


@pytest.mark.parametrize(
    "raised",
    [
        kafka_errors.KafkaTimeoutError("Unable to bootstrap from kafka-0:9092"),
        kafka_errors.NodeNotReadyError("controller"),
        kafka_errors.KafkaConnectionError("socket closed"),
        ConnectionRefusedError(111, "refused"),
        RuntimeError("Failed to find active controller id!"),
    ],
)
def test_the_network_and_timeouts_are_cluster_unavailable_naming_the_servers(raised: Exception) -> None:
    with (
        pytest.raises(errors.ClusterUnavailable) as caught,
        admin_errors.mapped(BOOTSTRAP, "describing topic 't'"),
    ):
        raise raised
    assert BOOTSTRAP in caught.value.message and "describing topic 't'" in caught.value.message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_raised_broker_answer_maps_by_its_code() -> None:
    with pytest.raises(errors.ReassignmentInProgress), admin_errors.mapped(BOOTSTRAP, "reassigning"):
        raise kafka_errors.ReassignmentInProgressError("Request failed")
    with pytest.raises(errors.InvalidSpec), admin_errors.mapped(BOOTSTRAP, "creating"):
        raise kafka_errors.InvalidReplicationAssignmentError("bad")


def test_domain_errors_pass_through_unchanged() -> None:
    original = errors.TopicBeingDeleted("gone")
    with pytest.raises(errors.TopicBeingDeleted) as caught, admin_errors.mapped(BOOTSTRAP, "x"):
        raise original
    assert caught.value is original
