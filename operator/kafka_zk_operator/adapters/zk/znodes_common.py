"""Shared building blocks of the znode codecs: strict JSON in and out, typed field readers, path guards.

Used only by the ``znodes_*`` codec modules of this package (re-exported through ``znodes``). Nothing
here touches a ZooKeeper client. Readers raise ``MalformedZnode(path, problem)`` with a precise
problem; path guards raise domain ``InvalidSpec`` errors, because path segments come from user input.

JSON output mirrors Kafka's Jackson ``ObjectMapper``: compact (no spaces), UTF-8, non-ASCII unescaped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Final, TypeGuard

from kafka_zk_operator.domain import errors

#: ZooKeeper's "any version" for conditional setData/delete (Kafka's ``ZkVersion.MatchAnyVersion``).
ANY_VERSION: Final = -1

#: Kafka reads ids, epochs and ports with Jackson ``isInt``: they must fit a signed 32-bit integer.
INT32_MIN: Final = -(2**31)
INT32_MAX: Final = 2**31 - 1
#: Kafka's timestamps (``"timestamp":"1700000000000"``) are Java longs written as decimal strings.
INT64_MAX: Final = 2**63 - 1

#: Longest value rendered inside an error message before it is cut.
_MAX_RENDERED = 60

_CANONICAL_NON_NEGATIVE = re.compile(r"0|[1-9][0-9]*")
_CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)")
#: Characters ZooKeeper refuses in a path (``org.apache.zookeeper.common.PathUtils.validatePath``).
_ZK_ILLEGAL_CHARS = re.compile("[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]")

JsonObject = dict[str, object]


# --------------------------------------------------------------------------- JSON in/out


def dump_json(document: object) -> bytes:
    """Serialise like Kafka: compact separators, UTF-8, no NaN/Infinity."""
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def load_json(data: bytes | None, path: str) -> object:
    """Parse znode data as UTF-8 JSON, refusing empty data, NaN/Infinity and trailing garbage."""
    if not data:
        raise errors.MalformedZnode(path, "has no data, expected JSON")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise errors.MalformedZnode(path, f"not valid UTF-8: {exc}") from exc
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise errors.MalformedZnode(path, f"not valid JSON: {exc}") from exc


def load_json_object(data: bytes | None, path: str) -> JsonObject:
    """Parse znode data that must be one JSON object."""
    document = load_json(data, path)
    return require_object(document, path, "the znode data")


def decode_text(data: bytes | None, path: str) -> str:
    """Decode plain UTF-8 text data (``/controller_epoch``)."""
    if not data:
        raise errors.MalformedZnode(path, "has no data, expected text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise errors.MalformedZnode(path, f"not valid UTF-8: {exc}") from exc


# --------------------------------------------------------------------------- describing values


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def render(value: object) -> str:
    """Short human rendering of a JSON value: strings in single quotes, others as JSON; always one
    printable line (control characters escaped, so a damaged znode cannot split a status message)."""
    if isinstance(value, str):
        text = f"'{value}'" if value.isprintable() else repr(value)
    else:
        try:
            text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) > _MAX_RENDERED:
        text = text[: _MAX_RENDERED - 3] + "..."
    return text


def describe(value: object) -> str:
    """``'x' (a string)``, ``null``, ``1.5 (a number)`` ... for error messages."""
    if value is None:
        return "null"
    return f"{render(value)} ({_kind(value)})"


# --------------------------------------------------------------------------- typed readers


def require_object(value: object, path: str, what: str) -> JsonObject:
    if not isinstance(value, dict):
        raise errors.MalformedZnode(path, f"{what} is {describe(value)}, expected a JSON object")
    return value


def require_list(value: object, path: str, what: str) -> list[object]:
    if not isinstance(value, list):
        raise errors.MalformedZnode(path, f"{what} is {describe(value)}, expected a JSON list")
    return value


def is_json_int(value: object) -> TypeGuard[int]:
    """True for JSON integers (Python ``bool`` is not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def as_int32(value: object, path: str, what: str, *, minimum: int = INT32_MIN) -> int:
    """A JSON integer that fits Kafka's ``Int`` and is at least ``minimum``."""
    if not is_json_int(value):
        raise errors.MalformedZnode(path, f"{what} is {describe(value)}, expected an integer")
    if not INT32_MIN <= value <= INT32_MAX:
        raise errors.MalformedZnode(path, f"{what} is {value}, outside the 32-bit integer range")
    if value < minimum:
        raise errors.MalformedZnode(path, f"{what} is {value}, expected at least {minimum}")
    return value


def as_int64(value: object, path: str, what: str, *, minimum: int = -INT64_MAX - 1) -> int:
    """A JSON integer that fits Kafka's ``Long`` and is at least ``minimum``."""
    if not is_json_int(value):
        raise errors.MalformedZnode(path, f"{what} is {describe(value)}, expected an integer")
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise errors.MalformedZnode(path, f"{what} is {value}, outside the 64-bit integer range")
    if value < minimum:
        raise errors.MalformedZnode(path, f"{what} is {value}, expected at least {minimum}")
    return value


def as_str(value: object, path: str, what: str) -> str:
    if not isinstance(value, str):
        raise errors.MalformedZnode(path, f"{what} is {describe(value)}, expected a string")
    return value


def as_int32_list(value: object, path: str, what: str, *, minimum: int = INT32_MIN) -> tuple[int, ...]:
    """A JSON list of distinct 32-bit integers, each at least ``minimum``."""
    items = require_list(value, path, what)
    result: list[int] = []
    for item in items:
        if not is_json_int(item):
            raise errors.MalformedZnode(path, f"{what} contains {render(item)}, expected integers")
        if not INT32_MIN <= item <= INT32_MAX or item < minimum:
            bound = f"at least {minimum}" if item < minimum else "32-bit integers"
            raise errors.MalformedZnode(path, f"{what} contains {item}, expected {bound}")
        if item in result:
            raise errors.MalformedZnode(path, f"{what} contains {item} twice")
        result.append(item)
    return tuple(result)


def field(obj: Mapping[str, object], key: str, path: str, where: str = "") -> object:
    """The value of a required key; ``where`` prefixes the message (``"partitions[2] "``)."""
    if key not in obj:
        raise errors.MalformedZnode(path, f"{where}has no '{key}'")
    return obj[key]


def int32_field(
    obj: Mapping[str, object], key: str, path: str, *, where: str = "", minimum: int = INT32_MIN
) -> int:
    return as_int32(field(obj, key, path, where), path, f"{where}'{key}'", minimum=minimum)


def int64_field(obj: Mapping[str, object], key: str, path: str, *, minimum: int = -INT64_MAX - 1) -> int:
    return as_int64(field(obj, key, path), path, f"'{key}'", minimum=minimum)


def str_field(obj: Mapping[str, object], key: str, path: str, *, where: str = "") -> str:
    return as_str(field(obj, key, path, where), path, f"{where}'{key}'")


def optional_str_field(obj: Mapping[str, object], key: str, path: str) -> str | None:
    """Absent or JSON null → ``None``; otherwise a string."""
    value = obj.get(key)
    return None if value is None else as_str(value, path, f"'{key}'")


def version_field(obj: Mapping[str, object], path: str, known: Iterable[int]) -> int:
    """The required integer ``version``, which must be one Kafka writes for this znode."""
    allowed = tuple(known)
    version = int32_field(obj, "version", path)
    if version not in allowed:
        listed = ", ".join(str(v) for v in allowed)
        raise errors.MalformedZnode(path, f"version {version} is not one Kafka writes here ({listed})")
    return version


def timestamp_field(obj: Mapping[str, object], path: str, key: str = "timestamp") -> int:
    """Kafka's ``"timestamp":"<epoch ms>"``: a decimal string holding a non-negative long."""
    text = str_field(obj, key, path)
    if not _CANONICAL_NON_NEGATIVE.fullmatch(text) or int(text) > INT64_MAX:
        raise errors.MalformedZnode(path, f"'{key}' is {render(text)}, expected epoch milliseconds as digits")
    return int(text)


def parse_canonical_int(text: str) -> int | None:
    """``int(text)`` if ``text`` is how Java's ``Integer.toString`` writes a 32-bit int, else ``None``."""
    if not _CANONICAL_INT.fullmatch(text):
        return None
    value = int(text)
    return value if INT32_MIN <= value <= INT32_MAX else None


def extra_fields(obj: Mapping[str, object], known: Iterable[str]) -> dict[str, object]:
    """The keys this codec does not know, in document order (kept for rewrites)."""
    known_keys = frozenset(known)
    return {key: value for key, value in obj.items() if key not in known_keys}


def check_no_collision(extra: Mapping[str, object], known: Iterable[str], what: str) -> None:
    """Encoder guard: ``extra`` must not shadow a field the codec writes itself."""
    clash = sorted(frozenset(known) & extra.keys())
    if clash:
        raise ValueError(f"{what}: extra fields {clash} collide with fields the codec writes")


# --------------------------------------------------------------------------- partition maps


def decode_partition_map(value: object, path: str, what: str) -> dict[int, tuple[int, ...]]:
    """``{"0":[1,2],"1":[2,3]}`` → ``{0: (1, 2), 1: (2, 3)}``, sorted by partition id.

    Keys must be canonical non-negative decimals (Kafka writes ``partition.toString``); lists must
    hold distinct broker ids (non-negative 32-bit integers), possibly none.
    """
    obj = require_object(value, path, f"'{what}'")
    result: dict[int, tuple[int, ...]] = {}
    for key, replicas in obj.items():
        partition = parse_canonical_int(key)
        if partition is None or partition < 0:
            raise errors.MalformedZnode(
                path, f"'{what}' has key {render(key)}, expected a partition id (a non-negative integer)"
            )
        result[partition] = as_int32_list(
            replicas, path, f"'{what}' partition '{key}' replica list", minimum=0
        )
    return dict(sorted(result.items()))


def encode_partition_map(mapping: Mapping[int, Iterable[int]]) -> dict[str, list[int]]:
    """``{1: (2, 3), 0: (1, 2)}`` → ``{"0":[1,2],"1":[2,3]}`` with keys sorted numerically."""
    return {str(partition): list(mapping[partition]) for partition in sorted(mapping)}


# --------------------------------------------------------------------------- path guards


def check_path_segment(segment: str, what: str) -> str | None:
    """Why ``segment`` cannot be one znode name, or ``None`` if it can."""
    if not segment:
        return f"{what} is empty"
    if segment in (".", ".."):
        return f"{what} {render(segment)} is a relative path element"
    if "/" in segment:
        return f"{what} {render(segment)} contains '/'"
    bad = _ZK_ILLEGAL_CHARS.search(segment)
    if bad:
        code = f"U+{ord(bad.group()):04X}"
        return f"{what} {render(segment)} contains the character {code}, illegal in znode names"
    return None


def topic_segment(topic: str) -> str:
    """Guard a topic name used in a path against path injection; raises ``InvalidTopicName``.

    Only what would break the path is refused here ('/', '.', '..', empty, ZooKeeper-illegal
    characters); Kafka's full naming rules (legal characters, length, collisions) are the
    domain's topic-name validation.
    """
    problem = check_path_segment(topic, "topic name")
    if problem is not None:
        raise errors.InvalidTopicName(f"Cannot build a znode path: {problem}.")
    return topic


def entity_segment(name: str, what: str) -> str:
    """Guard any other name used in a path (config entity names); raises ``InvalidSpec``."""
    problem = check_path_segment(name, what)
    if problem is not None:
        raise errors.InvalidSpec(f"Cannot build a znode path: {problem}.")
    return name


def broker_id_segment(broker_id: int) -> str:
    if isinstance(broker_id, bool) or not isinstance(broker_id, int) or not 0 <= broker_id <= INT32_MAX:
        raise errors.InvalidSpec(
            f"Cannot build a znode path: broker id {broker_id!r} is not a non-negative int."
        )
    return str(broker_id)


def partition_segment(partition: int) -> str:
    if isinstance(partition, bool) or not isinstance(partition, int) or not 0 <= partition <= INT32_MAX:
        raise errors.InvalidPartitions(
            f"Cannot build a znode path: partition id {partition!r} is not a non-negative int."
        )
    return str(partition)
