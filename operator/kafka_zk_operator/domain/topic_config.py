"""Topic-level configuration per Kafka line: every key, its type and validator, and cross-key checks.

Writing ``/config/topics/<t>`` directly skips the broker's ``LogConfig.validate``, and a broker
builds every topic's ``LogConfig`` from that znode when it starts: a value its own line does not
accept (``compression.type=zstd`` before 2.1, a ``message.format.version`` it does not know,
``cleanup.policy=compact,delete`` on 0.10.0) stops it from coming back (reference §5.3, §13 rule 7).
So the operator validates every config by the rules of the cluster's line
(``domain.kafka_lines``) before writing. Callers: topic planning (validates ``spec.config``;
compares configs without :data:`OPERATOR_OWNED_KEYS`), the reassignment throttle writer (owns the
throttle keys), ``kzo import``.

Keys, types, defaults and validators come from ``kafka_topic_configs.json``, generated from each
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
import enum
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from kafka_zk_operator.domain import errors, kafka_lines
from kafka_zk_operator.domain.kafka_lines import ClusterLine, KafkaLine

ParsedValue = bool | int | float | str | list[str]

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[dDfF]?", re.ASCII)
_LIST_SEPARATOR = re.compile(r"\s*,\s*")
_THROTTLED_REPLICA = re.compile(r"([0-9]+:[0-9]+)?", re.ASCII)

LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
#: Keys the operator writes itself (during a PartitionReassignment): never taken from a spec,
#: ignored when comparing configs, and carried over from Kafka whenever a config is rewritten.
OPERATOR_OWNED_KEYS = frozenset({LEADER_THROTTLED_REPLICAS, FOLLOWER_THROTTLED_REPLICAS})


class ConfigType(enum.StrEnum):
    """``ConfigDef.Type`` values used by topic configs."""

    BOOLEAN = "boolean"
    INT = "int"
    LONG = "long"
    DOUBLE = "double"
    STRING = "string"
    LIST = "list"


#: A check on a parsed value: ``None`` when valid, else why not (completes "value ...").
ValueCheck = Callable[[ParsedValue], str | None]


@dataclass(frozen=True, slots=True)
class TopicConfigKey:
    """One topic-level config as one Kafka line defines it."""

    name: str
    type: ConfigType
    #: Kafka's built-in default as Kafka prints it (brokers may override it with ``server_synonym``).
    default: str
    #: First Kafka line that knows the key (older brokers ignore it).
    since: KafkaLine = kafka_lines.OLDEST_LINE
    minimum: int | float | None = None
    maximum: int | float | None = None
    choices: tuple[str, ...] = ()
    check: ValueCheck | None = None
    #: Broker-level config that provides the cluster default, if any.
    server_synonym: str | None = None
    #: Why the key is deprecated, when it is.
    deprecated: str | None = None

    def problem_with(self, raw: str) -> str | None:
        """Why this key's line would refuse ``raw``, or ``None`` when it accepts it."""
        parsed = _parse(self.type, raw)
        if isinstance(parsed, _ParseError):
            return parsed.message
        return (
            self._range_problem(parsed)
            or self._choice_problem(parsed)
            or (self.check(parsed) if self.check else None)
        )

    def _range_problem(self, value: ParsedValue) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if self.minimum is not None and value < self.minimum:
            if self.maximum is not None:
                return f"must be between {self.minimum} and {self.maximum}"
            return f"must be at least {self.minimum}"
        if self.maximum is not None and value > self.maximum:
            return f"must be between {self.minimum} and {self.maximum}"
        return None

    def _choice_problem(self, value: ParsedValue) -> str | None:
        if not self.choices:
            return None
        values = value if isinstance(value, list) else [value]
        bad = [v for v in values if v not in self.choices]
        if not bad:
            return None
        return f"{', '.join(repr(v) for v in bad)} is not one of {', '.join(self.choices)} (case-sensitive)"


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


@dataclass(frozen=True, slots=True)
class _ParseError:
    message: str


def _java_trim(raw: str) -> str:
    """``String.trim()``: strips characters up to U+0020 at both ends (not other Unicode spaces)."""
    start, end = 0, len(raw)
    while start < end and raw[start] <= " ":
        start += 1
    while end > start and raw[end - 1] <= " ":
        end -= 1
    return raw[start:end]


def _parse(config_type: ConfigType, raw: str) -> ParsedValue | _ParseError:
    """``ConfigDef.parseType`` for a string value."""
    text = _java_trim(raw)
    if config_type is ConfigType.BOOLEAN:
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        return _ParseError("expected true or false")
    if config_type in (ConfigType.INT, ConfigType.LONG):
        low, high, kind = (
            (_INT_MIN, _INT_MAX, "a 32-bit integer")
            if config_type is ConfigType.INT
            else (_LONG_MIN, _LONG_MAX, "a 64-bit integer")
        )
        if not _INTEGER.fullmatch(text) or not low <= int(text) <= high:
            return _ParseError(f"expected {kind}")
        return int(text)
    if config_type is ConfigType.DOUBLE:
        number = float(text.rstrip("dDfF")) if _DECIMAL.fullmatch(text) else math.nan
        if math.isnan(number):
            return _ParseError("expected a decimal number")
        return number
    if config_type is ConfigType.LIST:
        return [] if not text else _LIST_SEPARATOR.split(text)
    return text


def _gzip_level(value: ParsedValue) -> str | None:
    if value == -1 or (isinstance(value, int) and 1 <= value <= 9):
        return None
    return "must be between 1 and 9 or equal to -1"


def _throttled_replicas(value: ParsedValue) -> str | None:
    assert isinstance(value, list)
    if value == ["*"] or all(_THROTTLED_REPLICA.fullmatch(item) for item in value):
        return None
    return "must be '*' or a comma-separated list of partitionId:brokerId entries, e.g. 0:101,1:102"


def _version_check(known: frozenset[str]) -> ValueCheck:
    """``ApiVersionValidator`` / ``MetadataVersionValidator``: the string names a version the line knows.

    Like ``ApiVersion.apply`` and ``MetadataVersion.fromVersionString``, a version is looked up by
    its first three segments when it starts with ``0.`` and its first two otherwise (``2.8.1`` is 2.8).
    """

    def check(value: ParsedValue) -> str | None:
        assert isinstance(value, str)
        segments = value.split(".")
        wanted = 3 if value.startswith("0.") else 2
        key = value if wanted >= len(segments) else ".".join(segments[:wanted])
        return None if key in known else "is not a valid Kafka version (e.g. 2.8, 0.10.2-IV0)"

    return check


#: Broker-level config that provides each key's cluster default (Kafka 3.9's ``ServerTopicConfigSynonyms``).
_SERVER_SYNONYMS: Mapping[str, str] = {
    "segment.bytes": "log.segment.bytes",
    "segment.ms": "log.roll.ms",
    "segment.jitter.ms": "log.roll.jitter.ms",
    "segment.index.bytes": "log.index.size.max.bytes",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms",
    "max.message.bytes": "message.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "max.compaction.lag.ms": "log.cleaner.max.compaction.lag.ms",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "cleanup.policy": "log.cleanup.policy",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "min.insync.replicas": "min.insync.replicas",
    "compression.type": "compression.type",
    "compression.gzip.level": "compression.gzip.level",
    "compression.lz4.level": "compression.lz4.level",
    "compression.zstd.level": "compression.zstd.level",
    "preallocate": "log.preallocate",
    "message.format.version": "log.message.format.version",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.difference.max.ms": "log.message.timestamp.difference.max.ms",
    "message.timestamp.before.max.ms": "log.message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms": "log.message.timestamp.after.max.ms",
    "message.downconversion.enable": "log.message.downconversion.enable",
    "local.retention.ms": "log.local.retention.ms",
    "local.retention.bytes": "log.local.retention.bytes",
}

#: Deprecated keys: the first line that deprecates each, and why.
_DEPRECATIONS: Mapping[str, tuple[KafkaLine, str]] = {
    "message.format.version": (
        (3, 0, 0),
        "deprecated since Kafka 3.0 and ignored when inter.broker.protocol.version >= 3.0",
    ),
    "message.timestamp.difference.max.ms": (
        (3, 6, 0),
        "deprecated since Kafka 3.6; use message.timestamp.before.max.ms and message.timestamp.after.max.ms",
    ),
}

TABLE_FILE = "kafka_topic_configs.json"


def _validator_fields(name: str, validator: Mapping[str, Any]) -> dict[str, Any]:
    """``TopicConfigKey`` fields for one validator of the generated table."""
    kind = validator.get("kind")
    if kind == "range":
        return {"minimum": _bound(validator.get("min")), "maximum": _bound(validator.get("max"))}
    if kind in ("choices", "list-choices"):
        return {"choices": tuple(validator["values"])}
    if kind == "throttled-replicas":
        return {"check": _throttled_replicas}
    if kind == "versions":
        return {"check": _version_check(frozenset(validator["values"]))}
    if kind == "gzip-level":
        return {"check": _gzip_level}
    if kind == "none":
        return {}
    raise ValueError(f"{TABLE_FILE}: {name} has a validator of unknown kind {kind!r}; map it in topic_config")


def _bound(value: object) -> int | float | None:
    """A range bound as Kafka prints it: whole numbers as ints (``0``, not ``0.0``)."""
    if value is None:
        return None
    assert isinstance(value, int | float)
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _load_table() -> dict[KafkaLine, dict[str, TopicConfigKey]]:
    raw = json.loads(resources.files(__package__).joinpath(TABLE_FILE).read_text(encoding="utf-8"))
    by_line: dict[KafkaLine, dict[str, TopicConfigKey]] = {}
    since: dict[str, KafkaLine] = {}
    for name in sorted(raw["lines"], key=kafka_lines.parse_line):
        line = kafka_lines.parse_line(name)
        keys: dict[str, TopicConfigKey] = {}
        for key, spec in raw["lines"][name]["configs"].items():
            since.setdefault(key, line)
            deprecated = _DEPRECATIONS.get(key)
            keys[key] = TopicConfigKey(
                name=key,
                type=ConfigType(spec["type"]),
                default="" if spec["default"] is None else str(spec["default"]),
                since=since[key],
                server_synonym=_SERVER_SYNONYMS.get(key),
                deprecated=deprecated[1] if deprecated is not None and line >= deprecated[0] else None,
                **_validator_fields(key, spec["validator"]),
            )
        by_line[line] = keys
    missing = set(kafka_lines.SUPPORTED_LINES) - set(by_line)
    if missing:
        raise ValueError(f"{TABLE_FILE} lacks lines {sorted(map(kafka_lines.line_name, missing))}")
    return by_line


_BY_LINE = _load_table()


def keys_of(line: KafkaLine) -> Mapping[str, TopicConfigKey]:
    """Every topic-level config key of ``line``, in ``LogConfig`` order."""
    return _BY_LINE[line]


#: Every topic-level config key of the newest line (Kafka 3.9), in ``LogConfig`` order.
TOPIC_CONFIG_KEYS: Mapping[str, TopicConfigKey] = keys_of(kafka_lines.NEWEST_LINE)
#: Every key some supported line knows (for "did you mean" hints).
_ALL_KEYS: frozenset[str] = frozenset(k for keys in _BY_LINE.values() for k in keys)


#: Broker-level config names (``ServerTopicConfigSynonyms``, incl. hour/minute variants) → topic key.
BROKER_NAME_TO_TOPIC_KEY: Mapping[str, str] = {
    **{key.server_synonym: name for name, key in TOPIC_CONFIG_KEYS.items() if key.server_synonym},
    "log.roll.hours": "segment.ms",
    "log.roll.jitter.hours": "segment.jitter.ms",
    "log.flush.scheduler.interval.ms": "flush.ms",
    "log.retention.minutes": "retention.ms",
    "log.retention.hours": "retention.ms",
}


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
    line: ClusterLine | KafkaLine = kafka_lines.NEWEST,
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
        elif key is None and name in _ALL_KEYS:
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
            value = _parse(key.type, raw)
            assert not isinstance(value, _ParseError)
            parsed[name] = value
    problems.extend(_cross_key_problems(parsed, replication_factor, cluster.line))
    problems.extend(_log_creation_problems(parsed))
    return problems


def _not_in_line(name: str, cluster: ClusterLine) -> str:
    """Why a key some other line has is refused on ``cluster``'s line."""
    later = [line for line in kafka_lines.SUPPORTED_LINES if line > cluster.line and name in _BY_LINE[line]]
    if later:
        return (
            f"needs Kafka {kafka_lines.line_name(later[0])} or later (older brokers ignore it, and Kafka's "
            f"own tools refuse it); this cluster runs {cluster.describe()}"
        )
    last = max(line for line in kafka_lines.SUPPORTED_LINES if name in _BY_LINE[line])
    return (
        f"Kafka {kafka_lines.line_name(last)} was the last line with this config; this cluster runs "
        f"{cluster.describe()}"
    )


def _first_line_accepting(name: str, raw: str, after: KafkaLine) -> KafkaLine | None:
    """The first line newer than ``after`` that accepts ``raw`` for ``name``, if any."""
    for line in kafka_lines.SUPPORTED_LINES:
        key = _BY_LINE[line].get(name)
        if line > after and key is not None and key.problem_with(raw) is None:
            return line
    return None


def validate_topic_config(
    config: Mapping[str, str],
    replication_factor: int | None = None,
    *,
    line: ClusterLine | KafkaLine = kafka_lines.NEWEST,
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


def config_warnings(config: Mapping[str, str], *, line: KafkaLine = kafka_lines.NEWEST_LINE) -> list[str]:
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
    return sorted(name for name in config if name in _ALL_KEYS and name not in _BY_LINE[line])


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
    max_lag = _as_int(parsed.get("max.compaction.lag.ms"), _LONG_MAX)
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
