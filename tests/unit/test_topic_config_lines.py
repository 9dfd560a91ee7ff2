"""Topic configs by the rules of the cluster's Kafka line (the generated ``kafka_topic_configs.json``).

A broker builds every topic's LogConfig from ``/config/topics/<t>`` when it starts and fails on a
value its own line does not accept, so what matters is what each line accepts, not Kafka 3.9.
"""

from __future__ import annotations

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.kafka.lines import ClusterLine, KafkaLine
from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.topic import config as tc
from kafka_zk_operator.domain.topic.planning import DesiredTopic, plan_topic


def problems(config: dict[str, str], line: KafkaLine | ClusterLine) -> list[str]:
    return [str(p) for p in tc.find_config_problems(config, 3, line=line)]


def test_the_table_has_every_supported_line() -> None:
    for line in kafka_lines.SUPPORTED_LINES:
        assert "retention.ms" in tc.keys_of(line), kafka_lines.line_name(line)


@pytest.mark.parametrize("line", kafka_lines.SUPPORTED_LINES, ids=kafka_lines.line_name)
def test_every_default_passes_its_own_lines_validator(line: KafkaLine) -> None:
    for name, key in tc.keys_of(line).items():
        if name == "message.format.version":
            continue  # its default is computed from inter.broker.protocol.version, not a literal
        if name == "internal.segment.bytes":
            continue  # 4.1's internal override has no default: segment.bytes applies
        assert key.problem_with(key.default) is None, (name, key.default)


@pytest.mark.parametrize(
    ("config", "refused_before", "first_line"),
    [
        ({"compression.type": "zstd"}, (2, 0, 0), (2, 1, 0)),
        ({"cleanup.policy": "compact,delete"}, (0, 10, 0), (0, 10, 1)),
        ({"message.format.version": "2.1"}, (2, 0, 0), (2, 1, 0)),
        ({"message.format.version": "1.0-IV0"}, (0, 11, 0), (1, 0, 0)),
    ],
)
def test_value_only_newer_lines_accept_is_refused_naming_the_line(
    config: dict[str, str], refused_before: KafkaLine, first_line: KafkaLine
) -> None:
    ((name, value),) = config.items()
    assert problems(config, first_line) == []
    assert problems(config, kafka_lines.NEWEST_ZK_LINE) == []
    found = problems(config, refused_before)
    assert len(found) == 1
    assert found[0].startswith(f"{name}={value!r}: ")
    assert found[0].endswith(
        f"; it needs Kafka {kafka_lines.line_name(first_line)} or later, and this cluster runs "
        f"Kafka {kafka_lines.line_name(refused_before)}"
    )


def test_key_a_line_does_not_know_is_refused_naming_the_first_line_with_it() -> None:
    assert problems({"max.compaction.lag.ms": "1000"}, (2, 0, 0)) == [
        "max.compaction.lag.ms: needs Kafka 2.3 or later (older brokers ignore it, and Kafka's own tools "
        "refuse it); this cluster runs Kafka 2.0"
    ]
    assert problems({"max.compaction.lag.ms": "1000"}, (2, 3, 0)) == []


def test_the_refusal_says_why_the_operator_chose_the_line() -> None:
    inferred = kafka_lines.cluster_line({1: 4, 2: 4, 3: 4}, None)
    (found,) = problems({"compression.type": "zstd"}, inferred)
    assert "and this cluster runs Kafka 0.10.2 (brokers 1, 2, 3 register /brokers/ids v4" in found
    assert "set kafkaVersion in the operator's cluster settings" in found
    declared = kafka_lines.cluster_line({1: 4}, (2, 1, 0))
    assert problems({"compression.type": "zstd"}, declared) == []


def test_operator_owned_keys_stay_refused_on_lines_without_throttles() -> None:
    assert problems({"leader.replication.throttled.replicas": "*"}, (0, 10, 0)) == [
        "leader.replication.throttled.replicas: owned by the operator, which sets it during a "
        "PartitionReassignment"
    ]


def test_deprecation_warnings_follow_the_line() -> None:
    assert tc.config_warnings({"message.format.version": "2.0"}, line=(2, 8, 0)) == []
    (warning,) = tc.config_warnings({"message.format.version": "2.0"}, line=(3, 0, 0))
    assert warning.startswith("Config message.format.version is deprecated since Kafka 3.0")


def test_planning_refuses_a_config_the_clusters_line_would_fail_on() -> None:
    desired = DesiredTopic(
        name="orders", partitions=1, replication_factor=1, config={"compression.type": "zstd"}
    )
    brokers = [Broker(1, "rack-a")]
    line = kafka_lines.cluster_line({1: 4}, (2, 0, 0))
    with pytest.raises(
        errors.InvalidConfig, match=r"it needs Kafka 2\.1 or later, and this cluster runs Kafka 2\.0"
    ):
        plan_topic(desired, None, brokers, cluster_line=line)
    plan = plan_topic(desired, None, brokers, cluster_line=kafka_lines.cluster_line({1: 4}, (2, 1, 0)))
    assert plan.create is not None
    assert plan.create.config == {"compression.type": "zstd"}


def test_kafka_3_0_to_3_5_check_local_retention_when_a_broker_starts() -> None:
    """Found by the JVM probes: 3.0-3.5's LogConfig constructor compares local.retention.* with the
    effective retention.* (the broker's default when the topic has none) whether or not tiered
    storage is on, so a broker would not start with local.retention.ms=-1 under a finite default."""
    for line in ((3, 0, 0), (3, 5, 0)):
        (alone,) = problems({"local.retention.ms": "-1"}, line)
        assert "set retention.ms too, or leave local.retention.ms at -2" in alone
        assert problems({"local.retention.ms": "-1", "retention.ms": "-1"}, line) == []
        assert problems({"local.retention.bytes": "100", "retention.bytes": "1000"}, line) == []
        assert problems({"local.retention.bytes": "2000", "retention.bytes": "1000"}, line) == [
            "local.retention.bytes: 2000 is larger than retention.bytes (1000)"
        ]
        assert problems({"local.retention.bytes": "5", "retention.bytes": "-1"}, line) == [
            "local.retention.bytes: 5 is larger than retention.bytes (-1)"
        ]
        assert problems({"local.retention.ms": "-2"}, line) == []
    assert problems({"local.retention.ms": "-1"}, (3, 6, 0)) == []  # 3.6 checks it only with remote storage


@pytest.mark.parametrize("line", [(0, 10, 0), (2, 0, 0), (3, 3, 0), (3, 9, 0)], ids=kafka_lines.line_name)
def test_an_index_smaller_than_one_entry_is_refused_on_every_line(line: KafkaLine) -> None:
    """Kafka's validators accept segment.index.bytes=0 (4 from 3.3), but its log layer refuses to
    create an index smaller than one 12-byte time-index entry, and a restarted broker then exits
    ('Invalid max index size: 0', seen on real 2.0.1 brokers)."""
    (found,) = problems({"segment.index.bytes": "11"}, line)
    assert found.startswith("segment.index.bytes='11': must be at least 12")
    assert problems({"segment.index.bytes": "12"}, line) == []


KAFKA_4_REMOVED = (
    "message.format.version",
    "message.downconversion.enable",
    "message.timestamp.difference.max.ms",
)


@pytest.mark.parametrize("line", kafka_lines.KRAFT_ONLY_LINES, ids=kafka_lines.line_name)
def test_kafka_4_has_no_message_format_downconversion_or_timestamp_difference(line: KafkaLine) -> None:
    """Kafka 4.0 removed them (KIP-724, KIP-896; KAFKA-17393): its LogConfig.validate refuses them
    as "Unknown topic config name" (the generator's JVM probe on 4.0.2 and 4.1.2)."""
    keys = tc.keys_of(line)
    for name in KAFKA_4_REMOVED:
        assert name in tc.keys_of((3, 9, 0)) and name not in keys
    assert problems({"message.format.version": "3.0"}, line) == [
        f"message.format.version: Kafka 3.9 was the last line with this config; this cluster runs Kafka "
        f"{kafka_lines.line_name(line)}"
    ]
    assert problems({"message.format.version": "3.0"}, (3, 9, 0)) == []


def test_kafka_4_1_needs_segments_of_a_mebibyte_and_has_internal_segment_bytes() -> None:
    assert problems({"segment.bytes": "1000"}, (4, 0, 0)) == []
    assert problems({"segment.bytes": "1000"}, (4, 1, 0)) == [
        "segment.bytes='1000': must be at least 1048576"
    ]
    assert problems({"segment.bytes": "1048576"}, (4, 1, 0)) == []
    assert problems({"internal.segment.bytes": "1000"}, (4, 1, 0)) == []
    (too_old,) = problems({"internal.segment.bytes": "1000"}, (4, 0, 0))
    assert too_old.startswith("internal.segment.bytes: needs Kafka 4.1 or later")


def test_kafka_4_defaults_and_the_zookeeper_line_for_hints() -> None:
    assert tc.keys_of((4, 0, 0))["message.timestamp.after.max.ms"].default == "3600000"
    assert tc.keys_of((3, 9, 0))["message.timestamp.after.max.ms"].default == "9223372036854775807"
    assert tc.keys_of((4, 1, 0))["remote.log.copy.disable"].since == (3, 9, 0)
    assert set(tc.TOPIC_CONFIG_KEYS) == set(tc.keys_of(kafka_lines.NEWEST_ZK_LINE))
    assert tc.config_warnings({"message.timestamp.difference.max.ms": "1"}) != []  # 3.9's rules by default
    assert tc.keys_unknown_to({"message.format.version": "3.0"}, (4, 1, 2)) == ["message.format.version"]
