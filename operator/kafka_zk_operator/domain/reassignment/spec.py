"""The fields of a PartitionReassignment spec that every mode shares, and how each is read: the
batch limits, the approval and rack policies, an explicit partition list, Kafka's reassignment
JSON. :func:`parse_reassignment_json` reads the embedded document of ``spec.reassignmentJson``
exactly as ``kafka-reassign-partitions.sh --execute`` reads its ``--reassignment-json-file`` (3.x
``parsePartitionReassignmentData``): ``version`` 1 (optional), a non-empty ``partitions`` list, no
partition twice, no broker twice in a list, no empty list. ``log_dirs`` is accepted only when
every entry is ``"any"`` (what ``--generate`` prints); a real log directory asks for an
intra-broker move, which ZooKeeper mode cannot do.

The modes and the request itself are ``domain.reassignment.request``. Pure: no I/O. Every problem
raises :class:`~kafka_zk_operator.domain.errors.InvalidSpec` with a sentence naming the field.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.model import BrokerId, PartitionId, TopicName

#: Kafka's replica lists use 32-bit ids.
_INT32_MAX = 2**31 - 1
#: ``kafka-reassign-partitions`` prints this log directory for "wherever the broker likes".
ANY_LOG_DIR = "any"
DEFAULT_MAX_PARTITIONS = 50
DEFAULT_MAX_MOVES_PER_BROKER = 5
#: The most partitions an explicit request lists, and replicas one partition lists: the CRD's
#: ``spec.partitions`` ``maxItems`` and its ``replicas`` ``maxItems`` (a unit test checks they agree),
#: applied to ``spec.reassignmentJson`` too before its entries are built.
MAX_REQUESTED_PARTITIONS = 20_000
MAX_REPLICAS = 32


class Approval(enum.StrEnum):
    MANUAL = "Manual"
    AUTO = "Auto"


class RackPolicy(enum.StrEnum):
    ENFORCE = "Enforce"
    WARN = "Warn"


@dataclass(frozen=True, slots=True)
class RequestedPartition:
    """One entry of an explicit request: the wanted replica list, preferred leader first."""

    topic: TopicName
    partition: PartitionId
    replicas: tuple[BrokerId, ...]

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class BatchLimits:
    """How much moves at once: partitions per znode write, replica moves in/out of a broker."""

    max_partitions: int = DEFAULT_MAX_PARTITIONS
    max_moves_per_broker: int = DEFAULT_MAX_MOVES_PER_BROKER


def enum_field(value: object, kind: type[enum.StrEnum], where: str, default: enum.StrEnum) -> Any:
    if value is None:
        return default
    try:
        return kind(str(value))
    except ValueError:
        allowed = ", ".join(member.value for member in kind)
        raise errors.InvalidSpec(f"{where} is {value!r}; expected one of: {allowed}") from None


def int_field(value: object, where: str, *, minimum: int, maximum: int = _INT32_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise errors.InvalidSpec(f"{where} must be an integer, got {value!r}")
    if not minimum <= value <= maximum:
        raise errors.InvalidSpec(f"{where} must be between {minimum} and {maximum}, got {value}")
    return value


def int_list_field(value: object, where: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise errors.InvalidSpec(f"{where} must be a list of broker ids, got {value!r}")
    return tuple(int_field(item, f"{where}[{i}]", minimum=0) for i, item in enumerate(value))


def partition_list_field(raw: object, where: str) -> tuple[RequestedPartition, ...]:
    if not isinstance(raw, list) or not raw:
        raise errors.InvalidSpec(f"{where} must be a non-empty list")
    result: list[RequestedPartition] = []
    for index, entry in enumerate(raw):
        here = f"{where}[{index}]"
        if not isinstance(entry, Mapping):
            raise errors.InvalidSpec(f"{here} must be an object with topic, partition and replicas")
        topic = entry.get("topic")
        if not isinstance(topic, str) or not topic:
            raise errors.InvalidSpec(f"{here}.topic must be a non-empty string")
        partition = int_field(entry.get("partition"), f"{here}.partition", minimum=0)
        replicas = int_list_field(entry.get("replicas"), f"{here}.replicas")
        result.append(RequestedPartition(topic, partition, replicas))
    _refuse_structural_problems(result, where)
    return tuple(result)


def _refuse_structural_problems(entries: Sequence[RequestedPartition], where: str) -> None:
    """Kafka's own tool refusals (3.x ``parseExecuteAssignmentArgs``), all reported at once."""
    problems: list[str] = []
    seen: set[tuple[str, int]] = set()
    for entry in entries:
        key = (entry.topic, entry.partition)
        if key in seen:
            problems.append(f"partition {entry.name} is listed twice")
        seen.add(key)
        if not entry.replicas:
            problems.append(
                f"partition {entry.name} has an empty replica list (it would delete every replica)"
            )
        duplicates = sorted(_duplicates(entry.replicas))
        if duplicates:
            problems.append(
                f"partition {entry.name} lists broker {', '.join(map(str, duplicates))} more than once "
                f"in {list(entry.replicas)}"
            )
    if problems:
        raise errors.InvalidSpec(f"{where}: " + "; ".join(problems[:20]) + _more(problems, 20))


def _duplicates(items: Sequence[int]) -> set[int]:
    """Items listed more than once (linear: a list may be long before it is refused)."""
    seen: set[int] = set()
    twice: set[int] = set()
    for item in items:
        (twice if item in seen else seen).add(item)
    return twice


def _more(items: Sequence[object], shown: int) -> str:
    return f" (and {len(items) - shown} more)" if len(items) > shown else ""


def parse_reassignment_json(text: object) -> tuple[RequestedPartition, ...]:
    """Kafka's reassignment JSON (``--reassignment-json-file``) as requested partitions.

    :raises InvalidSpec: not JSON, not version 1, no partitions, mistyped fields, log
        directories other than ``"any"``, a partition twice, an empty or duplicate replica list.
    """
    where = "spec.reassignmentJson"
    if not isinstance(text, str):
        raise errors.InvalidSpec(f"{where} must be a string holding Kafka's reassignment JSON")
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise errors.InvalidSpec(f"{where} is not valid JSON: {exc}") from None
    except RecursionError:  # e.g. [[[[...]]]] nested a hundred thousand times
        raise errors.InvalidSpec(
            f"{where} nests arrays or objects too deeply to be Kafka's reassignment JSON"
        ) from None
    if not isinstance(document, dict):
        raise errors.InvalidSpec(f'{where} must be a JSON object like {{"version":1,"partitions":[...]}}')
    version = document.get("version", 1)
    if isinstance(version, bool) or version != 1:
        raise errors.InvalidSpec(
            f"{where}: version {version!r} is not supported (Kafka's tools accept only 1)"
        )
    raw_partitions = document.get("partitions")
    if raw_partitions is None or raw_partitions == []:
        raise errors.InvalidSpec(f"{where}: the partition reassignment list cannot be empty")
    if not isinstance(raw_partitions, list):
        raise errors.InvalidSpec(f"{where}: 'partitions' must be a list")
    if len(raw_partitions) > MAX_REQUESTED_PARTITIONS:
        raise errors.InvalidSpec(
            f"{where} lists {len(raw_partitions):,} partitions; at most {MAX_REQUESTED_PARTITIONS:,} (as "
            "spec.partitions): split the move into several PartitionReassignments"
        )
    entries: list[RequestedPartition] = []
    for index, raw in enumerate(raw_partitions):
        here = f"{where} partitions[{index}]"
        if not isinstance(raw, dict):
            raise errors.InvalidSpec(f"{here} must be an object with topic, partition and replicas")
        topic = raw.get("topic")
        if not isinstance(topic, str) or not topic:
            raise errors.InvalidSpec(f"{here}: 'topic' must be a non-empty string")
        partition = _json_int(raw.get("partition"), f"{here} 'partition'")
        replicas_raw = raw.get("replicas")
        if not isinstance(replicas_raw, list):
            raise errors.InvalidSpec(f"{here}: 'replicas' must be a list of broker ids")
        if len(replicas_raw) > MAX_REPLICAS:
            raise errors.InvalidSpec(
                f"{here} lists {len(replicas_raw):,} replicas; at most {MAX_REPLICAS} (as spec.partitions)"
            )
        replicas = tuple(_json_int(b, f"{here} 'replicas'") for b in replicas_raw)
        log_dirs = raw.get("log_dirs")
        if log_dirs is not None:
            if not isinstance(log_dirs, list) or len(log_dirs) != len(replicas):
                raise errors.InvalidSpec(
                    f"{here}: 'log_dirs' must list one directory per replica ({len(replicas)})"
                )
            if any(d != ANY_LOG_DIR for d in log_dirs):
                raise errors.InvalidSpec(
                    f'{here}: log directories other than "any" ask for an intra-broker move, which '
                    "a ZooKeeper-mode reassignment cannot do; remove 'log_dirs' or set each to \"any\""
                )
        entries.append(RequestedPartition(topic, partition, replicas))
    _refuse_structural_problems(entries, where)
    return tuple(entries)


def _json_int(value: object, where: str) -> int:
    """An int as Kafka's JSON reader takes it: a JSON number (integral) or a numeric string."""
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise errors.InvalidSpec(f"{where} must be an integer, got {value!r}")
    if not 0 <= value <= _INT32_MAX:
        raise errors.InvalidSpec(f"{where} must be a non-negative 32-bit integer, got {value}")
    return value
