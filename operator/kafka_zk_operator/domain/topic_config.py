"""Kafka 3.9 topic-level configuration: every key, its type and validator, and cross-key checks.

Writing ``/config/topics/<t>`` directly skips the broker's ``LogConfig.validate``, and a broker that
reads a bad value fails log creation or the change notification (reference §5.3, §13 rule 7), so
the operator validates every config itself before writing. Callers: topic planning (validates
``spec.config``; compares configs without :data:`OPERATOR_OWNED_KEYS`), the reassignment throttle
writer (owns the throttle keys), and the CLI.

Ported from apache/kafka 3.9 (``storage/.../log/LogConfig.java`` for types, defaults and ranges;
``clients/.../config/TopicConfig.java`` for names; ``ConfigDef.parseType`` for parsing;
``ThrottledReplicaListValidator``, ``CompressionType`` level validators,
``MetadataVersion.fromVersionString``; ``ServerTopicConfigSynonyms`` for broker-level names).
Parsing follows ``ConfigDef``: values are trimmed; booleans are ``true``/``false`` in any case;
lists split on commas with surrounding whitespace, and an empty string is the empty list; choice
values are case-sensitive.

Beyond Kafka: non-ASCII digits and NaN are refused; ``min.insync.replicas`` above the replication
factor is refused (Kafka accepts it, but then no ``acks=all`` write can succeed); the operator-owned
throttle keys may not be set in a spec; cross-key checks that need broker defaults (tiered storage
retention) run only when both keys are given.

Pure: no I/O.
"""

from __future__ import annotations

import difflib
import enum
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kafka_zk_operator.domain import errors

KafkaVersion = tuple[int, int, int]
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
    """One topic-level config as Kafka 3.9 defines it."""

    name: str
    type: ConfigType
    #: Kafka's built-in default as Kafka prints it (brokers may override it with ``server_synonym``).
    default: str
    #: First Kafka release that knows the key (older brokers ignore it).
    since: KafkaVersion = (0, 10, 0)
    minimum: int | float | None = None
    maximum: int | float | None = None
    choices: tuple[str, ...] = ()
    check: ValueCheck | None = None
    #: Broker-level config that provides the cluster default, if any.
    server_synonym: str | None = None
    #: Why the key is deprecated, when it is.
    deprecated: str | None = None

    def problem_with(self, raw: str) -> str | None:
        """Why Kafka 3.9 would refuse ``raw`` for this key, or ``None`` when it accepts it."""
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


def _metadata_versions() -> frozenset[str]:
    """Strings ``MetadataVersion.fromVersionString`` (3.9) resolves: releases and release-IVn."""
    # fmt: off
    ivs = {
        "0.8.0": 0, "0.8.1": 0, "0.8.2": 0, "0.9.0": 0, "0.10.0": 2, "0.10.1": 3, "0.10.2": 1,
        "0.11.0": 3, "1.0": 1, "1.1": 1, "2.0": 2, "2.1": 3, "2.2": 2, "2.3": 2, "2.4": 2, "2.5": 1,
        "2.6": 1, "2.7": 3, "2.8": 2, "3.0": 2, "3.1": 1, "3.2": 1, "3.3": 4, "3.4": 1, "3.5": 3,
        "3.6": 3, "3.7": 5, "3.8": 1, "3.9": 1,
    }  # release -> number of IVn sub-versions (0 = none, e.g. "0.9.0")
    # fmt: on
    known = set(ivs)  # every release up to 3.9 is a production release, so its bare name resolves
    known.update(f"{release}-IV{i}" for release, count in ivs.items() for i in range(count))
    known.update({"4.0-IV0", "4.0-IV1"})
    return frozenset(known)


_METADATA_VERSIONS = _metadata_versions()


def _message_format_version(value: ParsedValue) -> str | None:
    assert isinstance(value, str)
    segments = value.split(".")
    wanted = 3 if value.startswith("0.") else 2
    key = value if wanted >= len(segments) else ".".join(segments[:wanted])
    return None if key in _METADATA_VERSIONS else "is not a valid Kafka version (e.g. 2.8, 0.10.2-IV0)"


_B, _I, _L, _D = ConfigType.BOOLEAN, ConfigType.INT, ConfigType.LONG, ConfigType.DOUBLE
_S, _LS = ConfigType.STRING, ConfigType.LIST
_WEEK_MS, _DAY_MS, _LONG_MAX_TEXT = "604800000", "86400000", str(_LONG_MAX)
_K = TopicConfigKey

#: Every topic-level config key of Kafka 3.9, in ``LogConfig`` order.
# fmt: off
TOPIC_CONFIG_KEYS: Mapping[str, TopicConfigKey] = {
    key.name: key
    for key in (
        _K("segment.bytes", _I, "1073741824", minimum=14, server_synonym="log.segment.bytes"),
        _K("segment.ms", _L, _WEEK_MS, minimum=1, server_synonym="log.roll.ms"),
        _K("segment.jitter.ms", _L, "0", minimum=0, server_synonym="log.roll.jitter.ms"),
        _K("segment.index.bytes", _I, "10485760", minimum=4, server_synonym="log.index.size.max.bytes"),
        _K("flush.messages", _L, _LONG_MAX_TEXT, minimum=1, server_synonym="log.flush.interval.messages"),
        _K("flush.ms", _L, _LONG_MAX_TEXT, minimum=0, server_synonym="log.flush.interval.ms"),
        _K("retention.bytes", _L, "-1", server_synonym="log.retention.bytes"),
        _K("retention.ms", _L, _WEEK_MS, minimum=-1, server_synonym="log.retention.ms"),
        _K("max.message.bytes", _I, "1048588", minimum=0, server_synonym="message.max.bytes"),
        _K("index.interval.bytes", _I, "4096", minimum=0, server_synonym="log.index.interval.bytes"),
        _K("delete.retention.ms", _L, _DAY_MS, minimum=0, server_synonym="log.cleaner.delete.retention.ms"),
        _K("min.compaction.lag.ms", _L, "0", since=(0, 10, 1), minimum=0,
           server_synonym="log.cleaner.min.compaction.lag.ms"),
        _K("max.compaction.lag.ms", _L, _LONG_MAX_TEXT, since=(2, 3, 0), minimum=1,
           server_synonym="log.cleaner.max.compaction.lag.ms"),
        _K("file.delete.delay.ms", _L, "60000", minimum=0, server_synonym="log.segment.delete.delay.ms"),
        _K("min.cleanable.dirty.ratio", _D, "0.5", minimum=0, maximum=1,
           server_synonym="log.cleaner.min.cleanable.ratio"),
        _K("cleanup.policy", _LS, "delete", choices=("compact", "delete"),
           server_synonym="log.cleanup.policy"),
        _K("unclean.leader.election.enable", _B, "false", server_synonym="unclean.leader.election.enable"),
        _K("min.insync.replicas", _I, "1", minimum=1, server_synonym="min.insync.replicas"),
        _K("compression.type", _S, "producer",
           choices=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
           server_synonym="compression.type"),
        _K("compression.gzip.level", _I, "-1", since=(3, 8, 0), check=_gzip_level,
           server_synonym="compression.gzip.level"),
        _K("compression.lz4.level", _I, "9", since=(3, 8, 0), minimum=1, maximum=17,
           server_synonym="compression.lz4.level"),
        _K("compression.zstd.level", _I, "3", since=(3, 8, 0), minimum=-131072, maximum=22,
           server_synonym="compression.zstd.level"),
        _K("preallocate", _B, "false", server_synonym="log.preallocate"),
        _K("message.format.version", _S, "3.0-IV1", check=_message_format_version,
           server_synonym="log.message.format.version",
           deprecated="deprecated since Kafka 3.0 and ignored when inter.broker.protocol.version >= 3.0"),
        _K("message.timestamp.type", _S, "CreateTime", choices=("CreateTime", "LogAppendTime"),
           server_synonym="log.message.timestamp.type"),
        _K("message.timestamp.difference.max.ms", _L, _LONG_MAX_TEXT, minimum=0,
           server_synonym="log.message.timestamp.difference.max.ms",
           deprecated="deprecated since Kafka 3.6; use message.timestamp.before.max.ms "
           "and message.timestamp.after.max.ms"),
        _K("message.timestamp.before.max.ms", _L, _LONG_MAX_TEXT, since=(3, 6, 0), minimum=0,
           server_synonym="log.message.timestamp.before.max.ms"),
        _K("message.timestamp.after.max.ms", _L, _LONG_MAX_TEXT, since=(3, 6, 0), minimum=0,
           server_synonym="log.message.timestamp.after.max.ms"),
        _K(LEADER_THROTTLED_REPLICAS, _LS, "", since=(0, 10, 1), check=_throttled_replicas),
        _K(FOLLOWER_THROTTLED_REPLICAS, _LS, "", since=(0, 10, 1), check=_throttled_replicas),
        _K("message.downconversion.enable", _B, "true", since=(2, 0, 0),
           server_synonym="log.message.downconversion.enable"),
        _K("remote.storage.enable", _B, "false", since=(3, 0, 0)),
        _K("local.retention.ms", _L, "-2", since=(3, 0, 0), minimum=-2,
           server_synonym="log.local.retention.ms"),
        _K("local.retention.bytes", _L, "-2", since=(3, 0, 0), minimum=-2,
           server_synonym="log.local.retention.bytes"),
        _K("remote.log.copy.disable", _B, "false", since=(3, 9, 0)),
        _K("remote.log.delete.on.disable", _B, "false", since=(3, 9, 0)),
    )
}
# fmt: on

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
    config: Mapping[str, str], replication_factor: int | None = None
) -> list[ConfigProblem]:
    """Every reason Kafka 3.9 (or the operator's policy) refuses ``config``, keys in sorted order.

    :param replication_factor: when given, ``min.insync.replicas`` may not exceed it.
    """
    problems: list[ConfigProblem] = []
    parsed: dict[str, ParsedValue] = {}
    for name in sorted(config):
        raw = config[name]
        key = TOPIC_CONFIG_KEYS.get(name)
        if key is None:
            problems.append(ConfigProblem(name, "not a Kafka topic config", suggestion=suggest_key(name)))
        elif name in OPERATOR_OWNED_KEYS:
            problems.append(
                ConfigProblem(name, "owned by the operator, which sets it during a PartitionReassignment")
            )
        elif (why := key.problem_with(raw)) is not None:
            problems.append(ConfigProblem(name, why, value=raw))
        else:
            value = _parse(key.type, raw)
            assert not isinstance(value, _ParseError)
            parsed[name] = value
    problems.extend(_cross_key_problems(parsed, replication_factor))
    return problems


def validate_topic_config(config: Mapping[str, str], replication_factor: int | None = None) -> None:
    """Raise :class:`~kafka_zk_operator.domain.errors.InvalidConfig` unless ``config`` can be written.

    :raises InvalidConfig: the message names every bad key and why, with the likely intended key
        for unknown ones.
    """
    problems = find_config_problems(config, replication_factor)
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        raise errors.InvalidConfig(
            f"Invalid topic config ({len(problems)} {noun}): " + "; ".join(str(p) for p in problems) + "."
        )


def config_warnings(config: Mapping[str, str]) -> list[str]:
    """Sentences about valid but questionable keys (deprecated ones), keys in sorted order."""
    return [
        f"Config {name} is {key.deprecated}."
        for name in sorted(config)
        if (key := TOPIC_CONFIG_KEYS.get(name)) is not None and key.deprecated
    ]


def keys_unknown_to(config: Mapping[str, str], kafka_version: KafkaVersion) -> list[str]:
    """Keys of ``config`` that a broker of ``kafka_version`` does not know (it would ignore them)."""
    return sorted(
        name
        for name in config
        if (key := TOPIC_CONFIG_KEYS.get(name)) is not None and key.since > kafka_version
    )


def _cross_key_problems(
    parsed: Mapping[str, ParsedValue], replication_factor: int | None
) -> list[ConfigProblem]:
    """``LogConfig.validateValues`` plus the ZooKeeper-mode checks of ``validateTopicLogConfigValues``."""
    problems: list[ConfigProblem] = []
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
        problems.extend(_tiered_storage_problems(parsed))
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


def _tiered_storage_problems(parsed: Mapping[str, ParsedValue]) -> list[ConfigProblem]:
    problems: list[ConfigProblem] = []
    policy = parsed.get("cleanup.policy")
    if isinstance(policy, list) and any("compact" in item.lower() for item in policy):
        problems.append(ConfigProblem("remote.storage.enable", "is not supported for compacted topics"))
    pairs = (("local.retention.bytes", "retention.bytes"), ("local.retention.ms", "retention.ms"))
    for local_name, total_name in pairs:
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


def _as_int(value: ParsedValue | None, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
