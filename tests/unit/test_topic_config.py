"""Kafka 3.9 topic-config validation: key catalogue, per-type parsing, ranges, cross-key checks."""

from __future__ import annotations

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.topic import config as tc


def problems(config: dict[str, str], replication_factor: int | None = None) -> list[str]:
    return [str(p) for p in tc.find_config_problems(config, replication_factor)]


# --- catalogue --------------------------------------------------------------------------------------

KAFKA_39_TOPIC_CONFIGS = {
    "cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
    "compression.zstd.level", "delete.retention.ms", "file.delete.delay.ms", "flush.messages", "flush.ms",
    "follower.replication.throttled.replicas", "index.interval.bytes",
    "leader.replication.throttled.replicas",
    "local.retention.bytes", "local.retention.ms", "max.compaction.lag.ms", "max.message.bytes",
    "message.downconversion.enable", "message.format.version", "message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms", "message.timestamp.difference.max.ms", "message.timestamp.type",
    "min.cleanable.dirty.ratio", "min.compaction.lag.ms", "min.insync.replicas", "preallocate",
    "remote.log.copy.disable", "remote.log.delete.on.disable", "remote.storage.enable", "retention.bytes",
    "retention.ms", "segment.bytes", "segment.index.bytes", "segment.jitter.ms", "segment.ms",
    "unclean.leader.election.enable",
}  # fmt: skip


def test_catalogue_holds_exactly_kafka_39s_topic_configs() -> None:
    assert set(tc.TOPIC_CONFIG_KEYS) == KAFKA_39_TOPIC_CONFIGS


def test_every_kafka_default_passes_its_own_validator() -> None:
    for name, key in tc.TOPIC_CONFIG_KEYS.items():
        assert key.problem_with(key.default) is None, name


def test_operator_owns_only_the_throttle_lists() -> None:
    assert {
        "leader.replication.throttled.replicas",
        "follower.replication.throttled.replicas",
    } == tc.OPERATOR_OWNED_KEYS
    assert tc.is_operator_owned("leader.replication.throttled.replicas")
    assert not tc.is_operator_owned("retention.ms")


def test_without_operator_owned_drops_only_throttle_keys() -> None:
    config = {"retention.ms": "1", "leader.replication.throttled.replicas": "0:1", "cleanup.policy": "delete"}
    assert tc.without_operator_owned(config) == {"retention.ms": "1", "cleanup.policy": "delete"}


def test_broker_level_names_map_to_topic_keys() -> None:
    assert tc.BROKER_NAME_TO_TOPIC_KEY["log.retention.hours"] == "retention.ms"
    assert tc.BROKER_NAME_TO_TOPIC_KEY["message.max.bytes"] == "max.message.bytes"
    assert tc.BROKER_NAME_TO_TOPIC_KEY["log.cleaner.min.cleanable.ratio"] == "min.cleanable.dirty.ratio"


# --- accepted configs -----------------------------------------------------------------------------


def test_empty_config_is_valid() -> None:
    tc.validate_topic_config({}, 3)


def test_realistic_config_is_valid() -> None:
    tc.validate_topic_config(
        {
            "cleanup.policy": "compact,delete",
            "retention.ms": "604800000",
            "retention.bytes": "-1",
            "min.insync.replicas": "2",
            "compression.type": "zstd",
            "compression.zstd.level": "-5",
            "unclean.leader.election.enable": "False",
            "min.cleanable.dirty.ratio": "0.1",
            "message.timestamp.type": "LogAppendTime",
            "max.message.bytes": "2097152",
            "segment.bytes": "14",
        },
        3,
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("retention.ms", "-1"),
        ("retention.ms", " 1000 "),  # ConfigDef trims
        ("retention.ms", "+1000"),  # Long.parseLong accepts a sign
        ("retention.bytes", "-5"),  # no range on retention.bytes
        ("segment.bytes", "2147483647"),
        ("cleanup.policy", ""),  # an empty list: neither delete nor compact
        ("cleanup.policy", "compact , delete"),
        ("unclean.leader.election.enable", "TRUE"),
        ("min.cleanable.dirty.ratio", "1"),
        ("min.cleanable.dirty.ratio", "5e-1"),
        ("compression.gzip.level", "-1"),
        ("compression.gzip.level", "9"),
        ("compression.lz4.level", "17"),
        ("compression.zstd.level", "-131072"),
        ("message.format.version", "2.8"),
        ("message.format.version", "2.8.1"),
        ("message.format.version", "0.10.2-IV0"),
        ("message.format.version", "3.0-IV1"),
        ("local.retention.ms", "-2"),
    ],
)
def test_value_accepted_by_kafka(name: str, value: str) -> None:
    assert tc.TOPIC_CONFIG_KEYS[name].problem_with(value) is None


# --- refused values -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("retention.ms", "abc", "expected a 64-bit integer"),
        ("retention.ms", "1.5", "expected a 64-bit integer"),
        ("retention.ms", "", "expected a 64-bit integer"),
        ("retention.ms", "9223372036854775808", "expected a 64-bit integer"),
        ("retention.ms", "-2", "must be at least -1"),
        ("retention.ms", "1_000", "expected a 64-bit integer"),
        ("retention.ms", "\u0661\u0660", "expected a 64-bit integer"),  # Arabic-Indic digits
        ("segment.bytes", "13", "must be at least 14"),
        ("segment.bytes", "2147483648", "expected a 32-bit integer"),
        ("segment.ms", "0", "must be at least 1"),
        ("min.insync.replicas", "0", "must be at least 1"),
        ("max.compaction.lag.ms", "0", "must be at least 1"),
        ("cleanup.policy", "Compact", "'Compact' is not one of compact, delete"),
        ("cleanup.policy", "compact,", "'' is not one of compact, delete"),
        ("cleanup.policy", "compact;delete", "is not one of compact, delete"),
        ("compression.type", "GZIP", "is not one of uncompressed, zstd, lz4, snappy, gzip, producer"),
        ("compression.type", "none", "is not one of"),
        ("message.timestamp.type", "createtime", "is not one of CreateTime, LogAppendTime"),
        ("unclean.leader.election.enable", "yes", "expected true or false"),
        ("preallocate", "1", "expected true or false"),
        ("min.cleanable.dirty.ratio", "1.01", "must be between 0 and 1"),
        ("min.cleanable.dirty.ratio", "NaN", "expected a decimal number"),
        ("min.cleanable.dirty.ratio", "half", "expected a decimal number"),
        ("compression.gzip.level", "0", "must be between 1 and 9 or equal to -1"),
        ("compression.gzip.level", "10", "must be between 1 and 9 or equal to -1"),
        ("compression.lz4.level", "0", "must be between 1 and 17"),
        ("compression.zstd.level", "23", "must be between -131072 and 22"),
        ("message.format.version", "2.9", "is not a valid Kafka version"),
        ("message.format.version", "latest", "is not a valid Kafka version"),
        ("leader.replication.throttled.replicas", "0-101", "partitionId:brokerId"),
        ("follower.replication.throttled.replicas", "*,0:1", "partitionId:brokerId"),
        ("local.retention.bytes", "-3", "must be at least -2"),
    ],
)
def test_value_refused_with_reason(name: str, value: str, why: str) -> None:
    problem = tc.TOPIC_CONFIG_KEYS[name].problem_with(value)
    assert problem is not None
    assert why in problem


def test_throttle_lists_accept_kafkas_formats() -> None:
    key = tc.TOPIC_CONFIG_KEYS["leader.replication.throttled.replicas"]
    for value in ("*", "", "0:101", "0:101,0:102, 1:103"):
        assert key.problem_with(value) is None, value


# --- find_config_problems / validate_topic_config -------------------------------------------------


def test_unknown_key_is_refused_with_the_closest_valid_key() -> None:
    assert problems({"retnetion.ms": "1"}) == [
        "retnetion.ms: not a Kafka topic config (did you mean retention.ms?)"
    ]


def test_broker_level_key_suggests_the_topic_key() -> None:
    assert problems({"log.retention.hours": "24"}) == [
        "log.retention.hours: not a Kafka topic config (did you mean retention.ms?)"
    ]


def test_unrelated_unknown_key_gets_no_suggestion() -> None:
    assert problems({"banana": "1"}) == ["banana: not a Kafka topic config"]


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("Retention.MS", "retention.ms"),
        ("retention_ms", "retention.ms"),
        ("min-insync-replicas", "min.insync.replicas"),
        ("cleanup.polcy", "cleanup.policy"),
        ("message.max.bytes", "max.message.bytes"),
        ("segment.byte", "segment.bytes"),
    ],
)
def test_suggest_key_finds_the_intended_key(typo: str, meant: str) -> None:
    assert tc.suggest_key(typo) == meant


def test_operator_owned_keys_cannot_be_set_in_a_spec() -> None:
    assert problems({"follower.replication.throttled.replicas": "0:1"}) == [
        "follower.replication.throttled.replicas: owned by the operator, "
        "which sets it during a PartitionReassignment"
    ]


def test_every_bad_key_is_reported_in_sorted_order() -> None:
    found = tc.find_config_problems({"segment.ms": "0", "retention.ms": "x", "cleanup.policy": "delete"})
    assert [p.key for p in found] == ["retention.ms", "segment.ms"]
    assert found[0].value == "x"


def test_min_insync_replicas_cannot_exceed_replication_factor() -> None:
    assert problems({"min.insync.replicas": "3"}, 2) == [
        "min.insync.replicas: 3 is larger than the replication factor (2), "
        "so no acks=all write could ever succeed"
    ]
    assert problems({"min.insync.replicas": "2"}, 2) == []
    assert problems({"min.insync.replicas": "3"}) == []  # replication factor unknown: not checked


def test_min_compaction_lag_cannot_exceed_max() -> None:
    assert problems({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}) == [
        "min.compaction.lag.ms: 10 is larger than max.compaction.lag.ms (5)"
    ]
    assert problems({"min.compaction.lag.ms": "10"}) == []  # max defaults to Long.MAX_VALUE


@pytest.mark.parametrize("name", ["remote.log.copy.disable", "remote.log.delete.on.disable"])
def test_kraft_only_remote_log_switches_cannot_be_enabled_in_zookeeper_mode(name: str) -> None:
    assert problems({name: "true"}) == [f"{name}='true': cannot be true in a ZooKeeper-mode cluster"]
    assert problems({name: "false"}) == []


def test_tiered_storage_is_refused_for_compacted_topics() -> None:
    assert problems({"remote.storage.enable": "true", "cleanup.policy": "delete,compact"}) == [
        "remote.storage.enable: is not supported for compacted topics"
    ]
    assert problems({"remote.storage.enable": "false", "cleanup.policy": "compact"}) == []


def test_tiered_storage_local_retention_cannot_exceed_total_retention() -> None:
    config = {"remote.storage.enable": "true", "retention.bytes": "100", "local.retention.bytes": "200"}
    assert problems(config) == ["local.retention.bytes: 200 is larger than retention.bytes (100)"]
    config = {"remote.storage.enable": "true", "retention.ms": "1000", "local.retention.ms": "-1"}
    assert problems(config) == ["local.retention.ms='-1': cannot be -1 when retention.ms is 1000"]
    config = {"remote.storage.enable": "true", "retention.ms": "-1", "local.retention.ms": "5000"}
    assert problems(config) == []  # unlimited total retention: any local retention


def test_validate_raises_invalid_config_naming_every_problem() -> None:
    with pytest.raises(errors.InvalidConfig) as caught:
        tc.validate_topic_config(
            {"retention.ms": "soon", "retnetion.bytes": "1", "min.insync.replicas": "4"}, 3
        )
    message = str(caught.value)
    assert message.startswith("Invalid topic config (3 problems): ")
    assert "retention.ms='soon': expected a 64-bit integer" in message
    assert "retnetion.bytes: not a Kafka topic config (did you mean retention.bytes?)" in message
    assert "min.insync.replicas: 4 is larger than the replication factor (3)" in message
    assert caught.value.reason is errors.Reason.INVALID_SPEC


def test_validate_singular_wording_for_one_problem() -> None:
    with pytest.raises(errors.InvalidConfig, match=r"^Invalid topic config \(1 problem\): "):
        tc.validate_topic_config({"segment.bytes": "1"}, 1)


# --- warnings and version support -------------------------------------------------------------------


def test_deprecated_keys_produce_warnings() -> None:
    warnings = tc.config_warnings(
        {"message.format.version": "2.8", "message.timestamp.difference.max.ms": "1", "retention.ms": "1"}
    )
    assert len(warnings) == 2
    assert warnings[0].startswith("Config message.format.version is deprecated since Kafka 3.0")
    assert "message.timestamp.before.max.ms" in warnings[1]


def test_keys_unknown_to_an_older_broker() -> None:
    config = {"max.compaction.lag.ms": "1", "retention.ms": "1", "compression.zstd.level": "3"}
    assert tc.keys_unknown_to(config, (2, 2, 1)) == ["compression.zstd.level", "max.compaction.lag.ms"]
    assert tc.keys_unknown_to(config, (3, 8, 0)) == []
    assert tc.keys_unknown_to({"min.compaction.lag.ms": "1"}, (0, 10, 0)) == ["min.compaction.lag.ms"]
