"""Unit tests: the Kafka line a cluster's rules come from (``domain.kafka.lines``)."""

from __future__ import annotations

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import lines as kafka_lines


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("2.0", (2, 0, 0)),
        ("2.0.1", (2, 0, 0)),
        (" 3.9.2 ", (3, 9, 0)),
        ("0.10.2", (0, 10, 2)),
        ("0.10.2.2", (0, 10, 2)),
        ("0.11.0.3", (0, 11, 0)),
        ("1.0", (1, 0, 0)),
        ("4.0", (4, 0, 0)),
        ("4.1.2", (4, 1, 0)),
    ],
)
def test_parse_line(text: str, line: kafka_lines.KafkaLine) -> None:
    assert kafka_lines.parse_line(text) == line


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("4.2", "Kafka 4.2 is not supported"),
        ("5.0", "Kafka 5.0 is not supported"),
        ("0.9.0.1", "Kafka 0.9.0 is not supported"),
        ("2.10", "Kafka 2.10 is not supported"),
        ("0.10", "is not a Kafka version"),
        ("latest", "is not a Kafka version"),
        ("", "is not a Kafka version"),
    ],
)
def test_parse_line_refusals(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        kafka_lines.parse_line(text)


def test_line_names_round_trip() -> None:
    assert [
        kafka_lines.parse_line(kafka_lines.line_name(line)) for line in kafka_lines.SUPPORTED_LINES
    ] == list(kafka_lines.SUPPORTED_LINES)
    assert kafka_lines.line_name((0, 10, 1)) == "0.10.1"
    assert kafka_lines.line_name((3, 9, 0)) == "3.9"


@pytest.mark.parametrize(
    ("registrations", "line"),
    [
        ({1: 5, 2: 5, 3: 5}, (2, 7, 0)),
        ({1: 4, 2: 5}, (0, 10, 2)),  # rolling upgrade: the oldest broker decides
        ({1: 3, 2: 4}, (0, 10, 0)),
        ({1: 2}, (0, 10, 0)),  # an IBP before 0.10.0-IV1: any binary
        ({}, (0, 10, 0)),  # nobody registered: the oldest supported line
    ],
)
def test_inferred_line_is_the_lowest_the_registrations_allow(
    registrations: dict[int, int], line: kafka_lines.KafkaLine
) -> None:
    inferred = kafka_lines.cluster_line(registrations, None)
    assert inferred.line == line
    assert not inferred.declared
    assert "set kafkaVersion" in inferred.basis


def test_inferred_basis_names_the_oldest_brokers() -> None:
    inferred = kafka_lines.cluster_line({1: 5, 2: 4, 3: 4}, None)
    assert inferred.describe() == (
        "Kafka 0.10.2 (brokers 2, 3 register /brokers/ids v4, which Kafka 0.10.2 to 3.9 writes; set "
        "kafkaVersion in the operator's cluster settings to the oldest line the brokers run to use its rules)"
    )


def test_declared_line_wins_when_the_registrations_allow_it() -> None:
    declared = kafka_lines.cluster_line({1: 4, 2: 5}, (2, 0, 0))
    assert declared.line == (2, 0, 0)
    assert declared.declared
    assert declared.describe() == "Kafka 2.0 (kafkaVersion in the operator's cluster settings)"
    # Older than the registrations say is allowed: stricter rules never hurt a broker.
    assert kafka_lines.cluster_line({1: 5}, (0, 10, 0)).line == (0, 10, 0)
    assert kafka_lines.cluster_line({}, (3, 9, 0)).line == (3, 9, 0)


def test_declared_line_newer_than_a_registration_allows_is_refused() -> None:
    with pytest.raises(errors.KafkaLineMismatch) as caught:
        kafka_lines.cluster_line({1: 4, 2: 3, 3: 3}, (2, 0, 0))
    assert caught.value.retryable
    assert str(caught.value) == (
        "the operator's settings say this cluster runs Kafka 2.0 or later (kafkaVersion), but brokers 2, 3 "
        "register /brokers/ids v3, which only Kafka 0.10.1 or older writes; set kafkaVersion to the oldest "
        "line any broker runs (the operator writes nothing until it matches)"
    )


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ((2, 0, 0), "Kafka ignores it"),
        ((3, 9, 0), "Kafka ignores it"),
        ((1, 1, 0), "parses it leniently and may still move what it can read"),
        ((0, 10, 0), "parses it leniently and may still move what it can read"),
    ],
)
def test_an_unparseable_reassignment_znode_is_described_as_the_clusters_controller_treats_it(
    line: kafka_lines.KafkaLine, says: str
) -> None:
    effect = kafka_lines.unparseable_reassignment_effect(kafka_lines.ClusterLine(line, declared=True))
    assert says in effect
    if line < (2, 0, 0):
        assert "ignores" not in effect, "1.1 and older run what they can parse of it (defect 4)"


def test_the_refusal_names_both_modes_ranges() -> None:
    with pytest.raises(ValueError) as refused:
        kafka_lines.parse_line("4.2")
    assert str(refused.value) == (
        "Kafka 4.2 is not supported: the operator manages ZooKeeper-mode clusters of Kafka 0.10.0 to 3.9 "
        "and KRaft clusters of Kafka 3.3 to 4.1"
    )


def test_the_4x_lines_are_kraft_only_and_zookeeper_mode_ends_at_3_9() -> None:
    assert kafka_lines.KRAFT_ONLY_LINES == ((4, 0, 0), (4, 1, 0))
    assert kafka_lines.NEWEST_LINE == (4, 1, 0) and kafka_lines.NEWEST_ZK_LINE == (3, 9, 0)
    assert (*kafka_lines.ZK_LINES, *kafka_lines.KRAFT_ONLY_LINES) == kafka_lines.SUPPORTED_LINES
    assert [kafka_lines.runs_zookeeper(line) for line in ((3, 9, 0), (4, 0, 0), (4, 1, 0))] == [
        True,
        False,
        False,
    ]
    assert all(kafka_lines.runs_kraft(line) for line in kafka_lines.KRAFT_ONLY_LINES)
    assert kafka_lines.NEWEST_ZK.line == (3, 9, 0)


@pytest.mark.parametrize("version", [1, 2, 4, 5])
def test_no_registration_allows_a_4x_broker(version: int) -> None:
    """ZooKeeper-mode brokers register /brokers/ids; no 4.x broker runs in that mode."""
    assert kafka_lines.registration_range(version)[1] == (3, 9, 0)
    with pytest.raises(errors.KafkaLineMismatch, match=r"only Kafka 3\.9 or older writes"):
        kafka_lines.cluster_line({1: version}, (4, 0, 0))


@pytest.mark.parametrize(
    ("level", "line"),
    [
        (0, None),
        (1, (3, 0, 0)),  # 3.0-IV1
        (7, (3, 3, 0)),  # 3.3-IV3, the oldest 4.x brokers still run
        (21, (3, 9, 0)),  # 3.9-IV0
        (22, (4, 0, 0)),  # 4.0-IV0
        (25, (4, 0, 0)),  # 4.0-IV3, 4.0's newest production level
        (26, (4, 1, 0)),  # 4.1-IV0
        (27, (4, 1, 0)),  # 4.1-IV1, what a 4.1.2 cluster is formatted with
        (28, (4, 1, 0)),  # 4.2-IV0: a newer Kafka gets the newest rules the operator has
    ],
)
def test_metadata_version_line(level: int, line: kafka_lines.KafkaLine | None) -> None:
    assert kafka_lines.metadata_version_line(level) == line


FALLBACK = kafka_lines.ClusterLine((3, 9, 0), basis="fallback")


def test_kraft_cluster_line_declared_wins_else_metadata_version_else_fallback() -> None:
    declared = kafka_lines.kraft_cluster_line(27, (4, 0, 0), FALLBACK)
    assert declared.line == (4, 0, 0) and declared.declared
    inferred = kafka_lines.kraft_cluster_line(27, None, FALLBACK)
    assert inferred.line == (4, 1, 0) and not inferred.declared
    assert inferred.describe() == (
        "Kafka 4.1 (its finalized metadata.version is level 27, which Kafka 4.1 introduced; set "
        "kafkaVersion in the operator's cluster settings to the oldest line the brokers run to use its rules)"
    )
    assert (
        "newer than Kafka 4.1, the newest line the operator knows"
        in kafka_lines.kraft_cluster_line(30, None, FALLBACK).basis
    )
    assert kafka_lines.kraft_cluster_line(None, None, FALLBACK) is FALLBACK
    assert kafka_lines.kraft_cluster_line(0, None, FALLBACK) is FALLBACK
