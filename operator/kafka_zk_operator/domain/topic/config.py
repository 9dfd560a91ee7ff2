"""Topic-level configuration per Kafka line: every key, its type and validator, and cross-key checks.

Writing ``/config/topics/<t>`` directly skips the broker's ``LogConfig.validate``, and a broker
builds every topic's ``LogConfig`` from that znode when it starts: a value its own line does not
accept (``compression.type=zstd`` before 2.1, a ``message.format.version`` it does not know,
``cleanup.policy=compact,delete`` on 0.10.0) stops it from coming back (reference §5.3, §13 rule 7).
So the operator validates every config by the rules of the cluster's line
(``domain.kafka.lines``) before writing. Callers: topic planning (validates ``spec.config``;
compares configs without :data:`OPERATOR_OWNED_KEYS`), the reassignment throttle writer (owns the
throttle keys), ``kzo import``.

Keys, types, defaults and validators (``domain.kafka.topic_configs``) come from ``kafka_topic_configs.json``, generated from each
line's own ``LogConfig`` classes by ``scripts/generate-topic-config-table.py`` and compared with
the real JVM validation by ``tests/integration/test_topic_config_table.py``. Parsing follows
``ConfigDef.parseType``: values are trimmed; booleans are ``true``/``false`` in any case; lists
split on commas with surrounding whitespace, and an empty string is the empty list; choice values
are case-sensitive. Broker-level synonyms and deprecation notes are Kafka 3.9's
(``ServerTopicConfigSynonyms``, ``LogConfig`` docs), kept here by hand.

Beyond Kafka: ``segment.index.bytes`` below 12 is refused (every line's validator takes it, but no
broker can create such an index, and a broker restart then fails); a key the cluster's line does
not know is refused (Kafka's own tools refuse it; the
broker would ignore it), naming the first line that has it; non-ASCII digits and NaN are refused;
``min.insync.replicas`` above the replication factor is refused (Kafka accepts it, but then no
``acks=all`` write can succeed); the operator-owned throttle keys may not be set in a spec;
cross-key checks that need broker defaults (tiered storage retention) run only when both keys
are given.

Pure: no I/O but reading the package's own table once.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.kafka.lines import ClusterLine, KafkaLine
from kafka_zk_operator.domain.kafka.topic_configs import (
    ALL_KEYS,
    KEYS_BY_LINE,
    LONG_MAX,
    ParsedValue,
    ParseError,
    parse_value,
)
from kafka_zk_operator.domain.kafka.topic_configs import BROKER_NAME_TO_TOPIC_KEY as BROKER_NAME_TO_TOPIC_KEY
from kafka_zk_operator.domain.kafka.topic_configs import TABLE_FILE as TABLE_FILE
from kafka_zk_operator.domain.kafka.topic_configs import TOPIC_CONFIG_KEYS as TOPIC_CONFIG_KEYS
from kafka_zk_operator.domain.kafka.topic_configs import ConfigType as ConfigType
from kafka_zk_operator.domain.kafka.topic_configs import TopicConfigKey as TopicConfigKey
from kafka_zk_operator.domain.kafka.topic_configs import keys_of as keys_of

LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
#: Keys the operator writes itself (during a PartitionReassignment): never taken from a spec,
#: ignored when comparing configs, and carried over from Kafka whenever a config is rewritten.
OPERATOR_OWNED_KEYS = frozenset({LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS})


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One reason a topic config is refused."""

    key: str
    problem: str
    value: str | None = None
    suggestion: str | None = None

    def __str__(self) -> str:
        shown = self.key if self.value is None else f"{self.key}={self.value!r}"
        hint = f" (did you mean {self.suggestion}?)" if self.suggestion else ""
        return f"{shown}: {self.problem}{hint}"


def is_operator_owned(key: str) -> bool:
    """Whether the operator itself writes ``key`` (the replication-throttle lists)."""
    return key in OPERATOR_OWNED_KEYS


def without_operator_owned(config: Mapping[str, str]) -> dict[str, str]:
    """``config`` minus the operator-owned keys: what a spec is compared with."""
    return {key: value for key, value in config.items() if key not in OPERATOR_OWNED_KEYS}


def suggest_key(name: str) -> str | None:
    """The topic config key a mistyped or broker-level ``name`` most likely meant, or ``None``."""
    if name in BROKER_NAME_TO_TOPIC_KEY:
        return BROKER_NAME_TO_TOPIC_KEY[name]
    normalised = name.strip().lower().replace("_", ".").replace("-", ".")
    if normalised in TOPIC_CONFIG_KEYS:
        return normalised
    close = difflib.get_close_matches(normalised, list(TOPIC_CONFIG_KEYS), n=1, cutoff=0.75)
    return close[0] if close else None


def find_config_problems(
    config: Mapping[str, str],
    replication_factor: int | None = None,
    *,
    line: ClusterLine | KafkaLine = kafka_lines.NEWEST_ZK,
) -> list[ConfigProblem]:
    """Every reason the cluster's line (or the operator's policy) refuses ``config``, keys in sorted order.

    :param replication_factor: when given, ``min.insync.replicas`` may not exceed it.
    :param line: the cluster's line (``ZkStore.cluster_line``), or a bare line; Kafka 3.9 by default.
    """
    cluster = line if isinstance(line, ClusterLine) else ClusterLine(line)
    keys = keys_of(cluster.line)
    problems: list[ConfigProblem] = []
    parsed: dict[str, ParsedValue] = {}
    for name in sorted(config):
        raw = config[name]
        key = keys.get(name)
        if name in OPERATOR_OWNED_KEYS:
            problems.append(
                ConfigProblem(name, "owned by the operator, which sets it during a PartitionReassignment")
            )
        elif key is None and name in ALL_KEYS:
            problems.append(ConfigProblem(name, _not_in_line(name, cluster)))
        elif key is None:
            problems.append(ConfigProblem(name, "not a Kafka topic config", suggestion=suggest_key(name)))
        elif (why := key.problem_with(raw)) is not None:
            newer = _first_line_accepting(name, raw, cluster.line)
            if newer is not None:
                why += (
                    f"; it needs Kafka {kafka_lines.line_name(newer)} or later, and this cluster runs "
                    f"{cluster.describe()}"
                )
            problems.append(ConfigProblem(name, why, value=raw))
        else:
            value = parse_value(key.type, raw)
            assert not isinstance(value, ParseError)
            parsed[name] = value
    problems.extend(_cross_key_problems(parsed, replication_factor, cluster.line))
    problems.extend(_log_creation_problems(parsed))
    return problems


def _not_in_line(name: str, cluster: ClusterLine) -> str:
    """Why a key some other line has is refused on ``cluster``'s line."""
    later = [
        line for line in kafka_lines.SUPPORTED_LINES if line > cluster.line and name in KEYS_BY_LINE[line]
    ]
    if later:
        return (
            f"needs Kafka {kafka_lines.line_name(later[0])} or later (older brokers ignore it, and Kafka's "
            f"own tools refuse it); this cluster runs {cluster.describe()}"
        )
    last = max(line for line in kafka_lines.SUPPORTED_LINES if name in KEYS_BY_LINE[line])
    return (
        f"Kafka {kafka_lines.line_name(last)} was the last line with this config; this cluster runs "
        f"{cluster.describe()}"
    )


def _first_line_accepting(name: str, raw: str, after: KafkaLine) -> KafkaLine | None:
    """The first line newer than ``after`` that accepts ``raw`` for ``name``, if any."""
    for line in kafka_lines.SUPPORTED_LINES:
        key = KEYS_BY_LINE[line].get(name)
        if line > after and key is not None and key.problem_with(raw) is None:
            return line
    return None


def validate_topic_config(
    config: Mapping[str, str],
    replication_factor: int | None = None,
    *,
    line: ClusterLine | KafkaLine = kafka_lines.NEWEST_ZK,
) -> None:
    """Raise :class:`~kafka_zk_operator.domain.errors.InvalidConfig` unless ``config`` can be written.

    :raises InvalidConfig: the message names every bad key and why, with the likely intended key
        for unknown ones and the first line that accepts what the cluster's line does not.
    """
    problems = find_config_problems(config, replication_factor, line=line)
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        raise errors.InvalidConfig(
            f"Invalid topic config ({len(problems)} {noun}): " + "; ".join(str(p) for p in problems) + "."
        )


def config_warnings(config: Mapping[str, str], *, line: KafkaLine = kafka_lines.NEWEST_ZK_LINE) -> list[str]:
    """Sentences about valid but questionable keys (deprecated on ``line``), keys in sorted order."""
    keys = keys_of(line)
    return [
        f"Config {name} is {key.deprecated}."
        for name in sorted(config)
        if (key := keys.get(name)) is not None and key.deprecated
    ]


def keys_unknown_to(config: Mapping[str, str], kafka_version: tuple[int, ...]) -> list[str]:
    """Keys of ``config`` that a broker of ``kafka_version`` does not know (it would ignore them)."""
    line = max(line for line in kafka_lines.SUPPORTED_LINES if line <= kafka_version)
    return sorted(name for name in config if name in ALL_KEYS and name not in KEYS_BY_LINE[line])


def _cross_key_problems(
    parsed: Mapping[str, ParsedValue], replication_factor: int | None, line: KafkaLine
) -> list[ConfigProblem]:
    """``LogConfig.validateValues`` plus the ZooKeeper-mode checks of ``validateTopicLogConfigValues``,
    and the local-retention checks the 3.0 to 3.5 ``LogConfig`` constructor makes at broker start."""
    problems: list[ConfigProblem] = []
    checked_at_start = _LOCAL_RETENTION_AT_START[0] <= line <= _LOCAL_RETENTION_AT_START[1]
    if checked_at_start:
        problems.extend(_local_retention_at_start(parsed))
    min_lag = _as_int(parsed.get("min.compaction.lag.ms"), 0)
    max_lag = _as_int(parsed.get("max.compaction.lag.ms"), LONG_MAX)
    if min_lag > max_lag:
        problems.append(
            ConfigProblem(
                "min.compaction.lag.ms", f"{min_lag} is larger than max.compaction.lag.ms ({max_lag})"
            )
        )
    for name in ("remote.log.copy.disable", "remote.log.delete.on.disable"):
        if parsed.get(name) is True:
            problems.append(ConfigProblem(name, "cannot be true in a ZooKeeper-mode cluster", value="true"))
    if parsed.get("remote.storage.enable") is True:
        problems.extend(_tiered_storage_problems(parsed, retention_checked=checked_at_start))
    min_isr = parsed.get("min.insync.replicas")
    if replication_factor is not None and isinstance(min_isr, int) and min_isr > replication_factor:
        problems.append(
            ConfigProblem(
                "min.insync.replicas",
                f"{min_isr} is larger than the replication factor ({replication_factor}), "
                "so no acks=all write could ever succeed",
            )
        )
    return problems


def _tiered_storage_problems(
    parsed: Mapping[str, ParsedValue], *, retention_checked: bool
) -> list[ConfigProblem]:
    problems: list[ConfigProblem] = []
    policy = parsed.get("cleanup.policy")
    if isinstance(policy, list) and any("compact" in item.lower() for item in policy):
        problems.append(ConfigProblem("remote.storage.enable", "is not supported for compacted topics"))
    pairs = (("local.retention.bytes", "retention.bytes"), ("local.retention.ms", "retention.ms"))
    for local_name, total_name in () if retention_checked else pairs:
        local, total = parsed.get(local_name), parsed.get(total_name)
        if not isinstance(local, int) or not isinstance(total, int) or total < 0 or local == -2:
            continue  # Kafka's defaults (known only to the brokers) decide; the brokers check those
        if local == -1:
            problems.append(
                ConfigProblem(local_name, f"cannot be -1 when {total_name} is {total}", value="-1")
            )
        elif local > total:
            problems.append(ConfigProblem(local_name, f"{local} is larger than {total_name} ({total})"))
    return problems


#: The largest index entry (a time-index entry: 8-byte timestamp + 4-byte offset). Kafka refuses to
#: create an index file smaller than one entry ("Invalid max index size"), although its config
#: validator accepts 0 (before 3.3) or 4 (3.3+).
_MIN_INDEX_BYTES = 12


def _log_creation_problems(parsed: Mapping[str, ParsedValue]) -> list[ConfigProblem]:
    """Values every line's ConfigDef accepts but its log layer refuses when it creates a log, so a
    broker fails the topic's partitions and, after a restart, does not start at all (seen on 2.0.1
    with segment.index.bytes=0 by tests/integration/test_kafka_line_matrix.py)."""
    index_bytes = parsed.get("segment.index.bytes")
    if isinstance(index_bytes, int) and not isinstance(index_bytes, bool) and index_bytes < _MIN_INDEX_BYTES:
        return [
            ConfigProblem(
                "segment.index.bytes",
                f"must be at least {_MIN_INDEX_BYTES}: a broker refuses to create an index smaller than one "
                "time-index entry ('Invalid max index size') and, after a restart, does not start",
                value=str(index_bytes),
            )
        ]
    return []


#: Lines whose ``LogConfig`` constructor checks local.retention.* against retention.* whenever a
#: broker loads a topic, tiered storage enabled or not (3.6 moved the check to validation).
_LOCAL_RETENTION_AT_START: tuple[KafkaLine, KafkaLine] = ((3, 0, 0), (3, 5, 0))


def _local_retention_at_start(parsed: Mapping[str, ParsedValue]) -> list[ConfigProblem]:
    """Kafka 3.0-3.5 ``LogConfig.localRetentionMs/Bytes``: a local value other than -2 must not be -1
    unless the total is, and must not exceed the total. The total is the topic's own or else the
    broker's default, which the operator cannot read, so it must be given alongside."""
    problems: list[ConfigProblem] = []
    pairs = (("local.retention.bytes", "retention.bytes"), ("local.retention.ms", "retention.ms"))
    for local_name, total_name in pairs:
        local, total = parsed.get(local_name), parsed.get(total_name)
        if not isinstance(local, int) or local == -2:
            continue
        if not isinstance(total, int):
            problems.append(
                ConfigProblem(
                    local_name,
                    f"Kafka 3.0 to 3.5 brokers check it against {total_name} when they start, and "
                    f"without {total_name} in spec.config that is the brokers' own default, which the "
                    f"operator cannot see: set {total_name} too, or leave {local_name} at -2",
                    value=str(local),
                )
            )
        elif local == -1 and total != -1:
            problems.append(
                ConfigProblem(local_name, f"cannot be -1 when {total_name} is {total}", value="-1")
            )
        elif local > total:
            problems.append(ConfigProblem(local_name, f"{local} is larger than {total_name} ({total})"))
    return problems


def _as_int(value: ParsedValue | None, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
