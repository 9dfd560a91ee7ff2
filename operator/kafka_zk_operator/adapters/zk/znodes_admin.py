"""Codecs for the admin request znodes: ``/admin/reassign_partitions``, ``/admin/preferred_replica_election``
and the ``/admin/delete_topics/<t>`` markers.

Called by the ZooKeeper store adapter (through ``znodes``) to submit reassignments and preferred
elections (create only, never set) and to mark topics for deletion, and to watch those requests
drain as the controller processes them. Pure: no ZooKeeper client.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from kafka_zk_operator.adapters.zk import znodes_common as common
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.model import PartitionReassignment as PartitionReassignment
from kafka_zk_operator.domain.model import TopicPartition as TopicPartition

ADMIN_PATH: Final = "/admin"
REASSIGN_PARTITIONS_PATH: Final = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION_PATH: Final = "/admin/preferred_replica_election"
DELETE_TOPICS_PATH: Final = "/admin/delete_topics"
#: A delete marker holds no data.
DELETE_TOPIC_MARKER_DATA: Final = b""

#: Version written to both request znodes; reassignment's ``version`` is optional on read (→ 0).
ADMIN_REQUEST_VERSION: Final = 1
REASSIGNMENT_DEFAULT_VERSION: Final = 0

_REASSIGN_KEYS: Final = frozenset({"version", "partitions"})
_REASSIGN_ENTRY_KEYS: Final = frozenset({"topic", "partition", "replicas"})


def delete_topic_path(topic: str) -> str:
    """``/admin/delete_topics/<t>`` (create it empty with ``DELETE_TOPIC_MARKER_DATA``)."""
    return f"{DELETE_TOPICS_PATH}/{common.topic_segment(topic)}"


class DeleteTopicZNode:
    """``/admin/delete_topics/<t>``: an empty marker; the controller deletes the topic, then the marker.

    Create it only while ``/brokers/topics/<t>`` exists; there is nothing to decode.
    """

    DATA: Final = DELETE_TOPIC_MARKER_DATA

    @staticmethod
    def path(topic: str) -> str:
        return delete_topic_path(topic)


def _decode_topic(value: object, path: str, where: str) -> str:
    topic = common.as_str(value, path, f"{where}'topic'")
    problem = common.check_path_segment(topic, f"{where}'topic'")
    if problem is not None:
        raise errors.MalformedZnode(path, problem)
    return topic


def _coerced_int(value: object, path: str, what: str, *, minimum: int) -> int:
    """Jackson (Kafka 2.0+) coerces numeric strings into ``int`` fields; so do we."""
    if isinstance(value, str):
        parsed = common.parse_canonical_int(value)
        if parsed is None:
            raise errors.MalformedZnode(path, f"{what} is {common.describe(value)}, expected an integer")
        value = parsed
    return common.as_int32(value, path, what, minimum=minimum)


class ReassignPartitionsZNode:
    """``/admin/reassign_partitions`` ↔ ``tuple[PartitionReassignment, ...]`` (``ReassignPartitionsZNode``)::

        {"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[4,5,6]}]}

    Decoding follows Kafka 2.0+'s strict Jackson binding: ``version`` optional (→ 0), ``partitions``
    required, **no other field anywhere** - an unknown one such as ``log_dirs`` makes Kafka ignore the
    whole document, so it is ``MalformedZnode`` here; numeric strings are accepted as numbers.
    Empty replica lists decode (the znode may hold one; Kafka would act on it) but never encode.
    """

    @staticmethod
    def path() -> str:
        return REASSIGN_PARTITIONS_PATH

    @staticmethod
    def encode(reassignments: Iterable[PartitionReassignment]) -> bytes:
        """Version 1, entries in the given order; never ``log_dirs``.

        :raises ValueError: no entries, a partition listed twice, an empty list or a duplicate or
            negative broker in a list, a topic name unusable in a path (reference §13 rule 8).
        """
        entries: list[dict[str, object]] = []
        seen: set[TopicPartition] = set()
        for item in reassignments:
            problem = common.check_path_segment(item.topic, "topic name")
            if problem is not None:
                raise ValueError(problem)
            if item.topic_partition in seen:
                raise ValueError(f"partition {item.topic_partition} is listed twice")
            seen.add(item.topic_partition)
            if item.partition < 0:
                raise ValueError(f"partition {item.topic_partition} has a negative id")
            if not item.replicas:
                raise ValueError(
                    f"partition {item.topic_partition}: an empty replica list deletes every replica"
                )
            if len(set(item.replicas)) != len(item.replicas) or min(item.replicas) < 0:
                raise ValueError(
                    f"partition {item.topic_partition}: replicas {list(item.replicas)} must be "
                    "distinct non-negative broker ids"
                )
            entries.append(
                {"topic": item.topic, "partition": item.partition, "replicas": list(item.replicas)}
            )
        if not entries:
            raise ValueError("a reassignment needs at least one partition")
        return common.dump_json({"version": ADMIN_REQUEST_VERSION, "partitions": entries})

    @staticmethod
    def decode(data: bytes | None, path: str = REASSIGN_PARTITIONS_PATH) -> tuple[PartitionReassignment, ...]:
        """:raises MalformedZnode: unknown fields (e.g. ``log_dirs``), no ``partitions``, mistyped values,
        duplicate brokers in a list, a partition listed twice."""
        obj = common.load_json_object(data, path)
        _refuse_unknown(obj, _REASSIGN_KEYS, path, "")
        if "version" in obj:
            _coerced_int(obj["version"], path, "'version'", minimum=common.INT32_MIN)
        raw_entries = common.require_list(common.field(obj, "partitions", path), path, "'partitions'")
        result: list[PartitionReassignment] = []
        seen: set[TopicPartition] = set()
        for index, raw in enumerate(raw_entries):
            where = f"partitions[{index}] "
            entry = common.require_object(raw, path, f"partitions[{index}]")
            _refuse_unknown(entry, _REASSIGN_ENTRY_KEYS, path, where)
            topic = _decode_topic(common.field(entry, "topic", path, where), path, where)
            partition = _coerced_int(
                common.field(entry, "partition", path, where), path, f"{where}'partition'", minimum=0
            )
            items = common.require_list(
                common.field(entry, "replicas", path, where), path, f"{where}'replicas'"
            )
            replicas = tuple(
                _coerced_int(item, path, f"{where}'replicas' entry", minimum=0) for item in items
            )
            if len(set(replicas)) != len(replicas):
                raise errors.MalformedZnode(path, f"{where}'replicas' {list(replicas)} lists a broker twice")
            reassignment = PartitionReassignment(topic, partition, replicas)
            if reassignment.topic_partition in seen:
                raise errors.MalformedZnode(path, f"partition {reassignment.topic_partition} is listed twice")
            seen.add(reassignment.topic_partition)
            result.append(reassignment)
        return tuple(result)


def _refuse_unknown(obj: Mapping[str, object], allowed: frozenset[str], path: str, where: str) -> None:
    unknown = [key for key in obj if key not in allowed]
    if unknown:
        raise errors.MalformedZnode(
            path,
            f"{where}has unknown field '{unknown[0]}'; Kafka 2.0+ parses this znode strictly and would "
            "ignore the whole reassignment",
        )


class PreferredReplicaElectionZNode:
    """``/admin/preferred_replica_election`` ↔ a tuple of ``TopicPartition``::

        {"version":1,"partitions":[{"topic":"foo","partition":0},{"topic":"foo","partition":1}]}

    Lenient like Kafka's reader: unknown keys are ignored, duplicates collapse (first one kept).
    """

    @staticmethod
    def path() -> str:
        return PREFERRED_REPLICA_ELECTION_PATH

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        """:raises ValueError: no partitions, a negative partition id, a topic unusable in a path."""
        entries: list[dict[str, object]] = []
        seen: set[TopicPartition] = set()
        for item in partitions:
            problem = common.check_path_segment(item.topic, "topic name")
            if problem is not None:
                raise ValueError(problem)
            if item.partition < 0:
                raise ValueError(f"partition {item} has a negative id")
            if item not in seen:
                seen.add(item)
                entries.append({"topic": item.topic, "partition": item.partition})
        if not entries:
            raise ValueError("a preferred replica election needs at least one partition")
        return common.dump_json({"version": ADMIN_REQUEST_VERSION, "partitions": entries})

    @staticmethod
    def decode(data: bytes | None, path: str = PREFERRED_REPLICA_ELECTION_PATH) -> tuple[TopicPartition, ...]:
        """:raises MalformedZnode: version other than 1, no ``partitions`` list, mistyped entries."""
        obj = common.load_json_object(data, path)
        common.version_field(obj, path, (ADMIN_REQUEST_VERSION,))
        raw_entries = common.require_list(common.field(obj, "partitions", path), path, "'partitions'")
        result: dict[TopicPartition, None] = {}
        for index, raw in enumerate(raw_entries):
            where = f"partitions[{index}] "
            entry = common.require_object(raw, path, f"partitions[{index}]")
            topic = _decode_topic(common.field(entry, "topic", path, where), path, where)
            partition = common.int32_field(entry, "partition", path, where=where, minimum=0)
            result.setdefault(TopicPartition(topic, partition), None)
        return tuple(result)
