"""Topic config keys per Kafka line: each key's type, default, validator and first line, loaded
once from ``kafka_topic_configs.json`` (generated from each line's own ``LogConfig`` by
``scripts/generate-topic-config-table.py``), and how a string value parses (``ConfigDef.parseType``).

``domain.topic.config`` validates configs with these; nothing here decides whether a whole config
is acceptable. Pure: no I/O but reading the package's own table once.
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.kafka.lines import KafkaLine

ParsedValue = bool | int | float | str | list[str]

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[dDfF]?", re.ASCII)
_LIST_SEPARATOR = re.compile(r"\s*,\s*")
_THROTTLED_REPLICA = re.compile(r"([0-9]+:[0-9]+)?", re.ASCII)


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
        parsed = parse_value(self.type, raw)
        if isinstance(parsed, ParseError):
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
class ParseError:
    message: str


def _java_trim(raw: str) -> str:
    """``String.trim()``: strips characters up to U+0020 at both ends (not other Unicode spaces)."""
    start, end = 0, len(raw)
    while start < end and raw[start] <= " ":
        start += 1
    while end > start and raw[end - 1] <= " ":
        end -= 1
    return raw[start:end]


def parse_value(config_type: ConfigType, raw: str) -> ParsedValue | ParseError:
    """``ConfigDef.parseType`` for a string value."""
    text = _java_trim(raw)
    if config_type is ConfigType.BOOLEAN:
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        return ParseError("expected true or false")
    if config_type in (ConfigType.INT, ConfigType.LONG):
        low, high, kind = (
            (_INT_MIN, _INT_MAX, "a 32-bit integer")
            if config_type is ConfigType.INT
            else (LONG_MIN, LONG_MAX, "a 64-bit integer")
        )
        if not _INTEGER.fullmatch(text) or not low <= int(text) <= high:
            return ParseError(f"expected {kind}")
        return int(text)
    if config_type is ConfigType.DOUBLE:
        number = float(text.rstrip("dDfF")) if _DECIMAL.fullmatch(text) else math.nan
        if math.isnan(number):
            return ParseError("expected a decimal number")
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
    raise ValueError(
        f"{TABLE_FILE}: {name} has a validator of unknown kind {kind!r}; map it in domain.kafka.topic_configs"
    )


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


KEYS_BY_LINE = _load_table()


def keys_of(line: KafkaLine) -> Mapping[str, TopicConfigKey]:
    """Every topic-level config key of ``line``, in ``LogConfig`` order."""
    return KEYS_BY_LINE[line]


#: Every topic-level config key of the newest ZooKeeper-mode line (Kafka 3.9), in ``LogConfig`` order:
#: the keys hints and broker-level synonyms come from (4.0 dropped three of them, added none).
TOPIC_CONFIG_KEYS: Mapping[str, TopicConfigKey] = keys_of(kafka_lines.NEWEST_ZK_LINE)
#: Every key some supported line knows (for "did you mean" hints).
ALL_KEYS: frozenset[str] = frozenset(k for keys in KEYS_BY_LINE.values() for k in keys)


#: Broker-level config names (``ServerTopicConfigSynonyms``, incl. hour/minute variants) → topic key.
BROKER_NAME_TO_TOPIC_KEY: Mapping[str, str] = {
    **{key.server_synonym: name for name, key in TOPIC_CONFIG_KEYS.items() if key.server_synonym},
    "log.roll.hours": "segment.ms",
    "log.roll.jitter.hours": "segment.jitter.ms",
    "log.flush.scheduler.interval.ms": "flush.ms",
    "log.retention.minutes": "retention.ms",
    "log.retention.hours": "retention.ms",
}
