"""What a PartitionReassignment asks for: its ``spec`` as one typed, validated value.

:func:`parse_request` turns the resource's ``spec`` (already checked by the CRD's OpenAPI schema
and CEL rules, but re-checked here because old CRD versions or hand-written bodies may slip
through) into a :class:`ReassignmentRequest`. :func:`parse_reassignment_json` reads the embedded
document of ``spec.reassignmentJson`` exactly as ``kafka-reassign-partitions.sh --execute``
reads its ``--reassignment-json-file`` (3.x ``parsePartitionReassignmentData``): ``version`` 1
(optional), a non-empty ``partitions`` list, no partition twice, no broker twice in a list, no
empty list. ``log_dirs`` is accepted only when every entry is ``"any"`` (what ``--generate``
prints); a real log directory asks for an intra-broker move, which ZooKeeper mode cannot do.

Pure: no I/O. Every problem raises :class:`~kafka_zk_operator.domain.errors.InvalidSpec` with a
sentence that names the offending field.
"""

from __future__ import annotations

import enum
import json
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.model import BrokerId, PartitionId, TopicName

#: Kafka's replica lists use 32-bit ids.
_INT32_MAX = 2**31 - 1
#: ``kafka-reassign-partitions`` prints this log directory for "wherever the broker likes".
ANY_LOG_DIR = "any"
DEFAULT_MAX_PARTITIONS = 50
DEFAULT_MAX_MOVES_PER_BROKER = 5


class Mode(enum.StrEnum):
    EXPLICIT = "Explicit"
    ADD_BROKERS = "AddBrokers"
    REMOVE_BROKERS = "RemoveBrokers"
    REBALANCE = "Rebalance"
    REPLICATION_FACTOR = "ReplicationFactor"


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


@dataclass(frozen=True)
class ReassignmentRequest:
    mode: Mode
    cluster: str | None = None
    partitions: tuple[RequestedPartition, ...] = ()
    brokers: tuple[BrokerId, ...] = ()
    topics: tuple[TopicName, ...] = ()
    topics_regex: str | None = None
    replication_factors: Mapping[TopicName, int] = field(default_factory=dict)
    approval: Approval = Approval.AUTO
    throttle: int | None = None
    batch: BatchLimits = BatchLimits()
    preferred_leader_election: bool = True
    rack_policy: RackPolicy = RackPolicy.ENFORCE
    tolerance: int = 0


def _enum(value: object, kind: type[enum.StrEnum], where: str, default: enum.StrEnum) -> Any:
    if value is None:
        return default
    try:
        return kind(str(value))
    except ValueError:
        allowed = ", ".join(member.value for member in kind)
        raise errors.InvalidSpec(f"{where} is {value!r}; expected one of: {allowed}") from None


def _int(value: object, where: str, *, minimum: int, maximum: int = _INT32_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise errors.InvalidSpec(f"{where} must be an integer, got {value!r}")
    if not minimum <= value <= maximum:
        raise errors.InvalidSpec(f"{where} must be between {minimum} and {maximum}, got {value}")
    return value


def _int_list(value: object, where: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise errors.InvalidSpec(f"{where} must be a list of broker ids, got {value!r}")
    return tuple(_int(item, f"{where}[{i}]", minimum=0) for i, item in enumerate(value))


def parse_request(spec: Mapping[str, Any]) -> ReassignmentRequest:
    """The request a ``spec`` makes. :raises InvalidSpec: with the field path."""
    mode = _enum(spec.get("mode"), Mode, "spec.mode", Mode.EXPLICIT) if "mode" in spec else None
    if mode is None:
        raise errors.InvalidSpec("spec.mode is required")
    partitions: tuple[RequestedPartition, ...] = ()
    if mode is Mode.EXPLICIT:
        has_list, has_json = spec.get("partitions") is not None, spec.get("reassignmentJson") is not None
        if has_list == has_json:
            raise errors.InvalidSpec(
                "Explicit mode needs exactly one of spec.partitions and spec.reassignmentJson"
            )
        if has_list:
            partitions = _partition_list(spec["partitions"], "spec.partitions")
        else:
            partitions = parse_reassignment_json(spec["reassignmentJson"])
    brokers = _int_list(spec.get("brokers") or [], "spec.brokers")
    if mode in (Mode.ADD_BROKERS, Mode.REMOVE_BROKERS) and not brokers:
        raise errors.InvalidSpec(f"{mode.value} mode needs spec.brokers")
    if len(set(brokers)) != len(brokers):
        raise errors.InvalidSpec(f"spec.brokers lists a broker twice: {list(brokers)}")
    raw_topics = spec.get("topics") or []
    if not isinstance(raw_topics, list) or not all(isinstance(t, str) and t for t in raw_topics):
        raise errors.InvalidSpec(f"spec.topics must be a list of topic names, got {raw_topics!r}")
    topics = tuple(raw_topics)
    regex = spec.get("topicsRegex")
    if regex is not None:
        if not isinstance(regex, str):
            raise errors.InvalidSpec(f"spec.topicsRegex must be a string (a regular expression), got {regex!r}")
        try:
            with warnings.catch_warnings():  # e.g. FutureWarning "Possible nested set": valid, say nothing
                warnings.simplefilter("ignore")
                re.compile(regex)
        except re.error as exc:
            raise errors.InvalidSpec(
                f"spec.topicsRegex {regex!r} is not a valid regular expression: {exc}"
            ) from None
    rfs_raw = spec.get("replicationFactors") or {}
    if not isinstance(rfs_raw, Mapping):
        raise errors.InvalidSpec("spec.replicationFactors must map topic names to replication factors")
    rfs = {
        str(t): _int(v, f"spec.replicationFactors[{t}]", minimum=1, maximum=32767) for t, v in rfs_raw.items()
    }
    if mode is Mode.REPLICATION_FACTOR and not rfs:
        raise errors.InvalidSpec("ReplicationFactor mode needs spec.replicationFactors")
    batch = spec.get("batch") or {}
    if not isinstance(batch, Mapping):
        raise errors.InvalidSpec(
            f"spec.batch must be an object with maxPartitions and maxMovesPerBroker, got {batch!r}"
        )
    throttle = spec.get("throttle")
    return ReassignmentRequest(
        mode=mode,
        cluster=spec.get("cluster") or None,
        partitions=partitions,
        brokers=brokers,
        topics=topics,
        topics_regex=None if regex is None else str(regex),
        replication_factors=rfs,
        approval=_enum(spec.get("approval"), Approval, "spec.approval", Approval.AUTO),
        throttle=None if throttle is None else _int(throttle, "spec.throttle", minimum=1, maximum=2**63 - 1),
        batch=BatchLimits(
            max_partitions=_int(
                batch.get("maxPartitions", DEFAULT_MAX_PARTITIONS), "spec.batch.maxPartitions", minimum=1
            ),
            max_moves_per_broker=_int(
                batch.get("maxMovesPerBroker", DEFAULT_MAX_MOVES_PER_BROKER),
                "spec.batch.maxMovesPerBroker",
                minimum=1,
            ),
        ),
        preferred_leader_election=bool(spec.get("preferredLeaderElection", True)),
        rack_policy=_enum(spec.get("rackPolicy"), RackPolicy, "spec.rackPolicy", RackPolicy.ENFORCE),
        tolerance=_int(spec.get("tolerance", 0), "spec.tolerance", minimum=0),
    )


def _partition_list(raw: object, where: str) -> tuple[RequestedPartition, ...]:
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
        partition = _int(entry.get("partition"), f"{here}.partition", minimum=0)
        replicas = _int_list(entry.get("replicas"), f"{here}.replicas")
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
        duplicates = sorted({b for b in entry.replicas if entry.replicas.count(b) > 1})
        if duplicates:
            problems.append(
                f"partition {entry.name} lists broker {', '.join(map(str, duplicates))} more than once "
                f"in {list(entry.replicas)}"
            )
    if problems:
        raise errors.InvalidSpec(f"{where}: " + "; ".join(problems[:20]) + _more(problems, 20))


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
