"""Codecs for the topic znodes: ``/brokers/topics/<t>`` (v1-v3) and its read-only partition ``state``.

Called by the ZooKeeper store adapter (through the ``znodes`` re-exports) to read and rewrite topic
assignments and to read partition leadership; ``topic_ids`` supplies the topic id rules. Pure: no
ZooKeeper client. Decoders raise ``MalformedZnode``; encoders raise ``ValueError`` when asked to
write something that would lose data or that Kafka could not read.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from kafka_zk_operator.adapters.zk import topic_ids
from kafka_zk_operator.adapters.zk import znodes_common as common
from kafka_zk_operator.domain import errors, model

TOPICS_PATH: Final = "/brokers/topics"

#: ``/brokers/topics/<t>`` versions: v1 by 0.8.0-2.3.x, v2 (+adding/removing replicas) by 2.4-2.7,
#: v3 (+``topic_id``) by 2.8-3.9. The format version does not depend on the IBP.
TOPIC_ZNODE_V1: Final = 1
TOPIC_ZNODE_V2: Final = 2
TOPIC_ZNODE_V3: Final = 3
TOPIC_ZNODE_VERSIONS: Final = (TOPIC_ZNODE_V1, TOPIC_ZNODE_V2, TOPIC_ZNODE_V3)

#: A leaderless partition's ``leader`` in its state znode.
NO_LEADER: Final = -1
#: ``leader_recovery_state`` (KIP-704): absent means RECOVERED; 1 is written only while RECOVERING.
LEADER_RECOVERED: Final = 0
LEADER_RECOVERING: Final = 1
PARTITION_STATE_VERSION: Final = 1

_TOPIC_KEYS: Final = ("version", "topic_id", "partitions", "adding_replicas", "removing_replicas")


def topic_path(topic: str) -> str:
    """``/brokers/topics/<t>``; raises ``InvalidTopicName`` for names that would escape the path."""
    return f"{TOPICS_PATH}/{common.topic_segment(topic)}"


def topic_partitions_path(topic: str) -> str:
    """``/brokers/topics/<t>/partitions`` (controller-owned: never write below it)."""
    return f"{topic_path(topic)}/partitions"


def partition_path(topic: str, partition: int) -> str:
    return f"{topic_partitions_path(topic)}/{common.partition_segment(partition)}"


def partition_state_path(topic: str, partition: int) -> str:
    """``/brokers/topics/<t>/partitions/<p>/state``."""
    return f"{partition_path(topic, partition)}/state"


def topic_of_path(path: str) -> str | None:
    """The topic of ``/brokers/topics/<t>`` or of one of its partition ``state`` znodes (the
    paths built above); ``None`` for any other path."""
    parts = path.split("/")
    if parts[:3] != ["", "brokers", "topics"] or not parts[3:4] or not parts[3]:
        return None
    if len(parts) == 4 or (len(parts) == 7 and parts[4] == "partitions" and parts[6] == "state"):
        return parts[3]
    return None


def topic_znode_version_for(kafka_version: tuple[int, ...]) -> int:
    """The topic znode version a cluster of this Kafka version writes itself (§3.4: mirror it)."""
    if kafka_version >= (2, 8):
        return TOPIC_ZNODE_V3
    if kafka_version >= (2, 4):
        return TOPIC_ZNODE_V2
    return TOPIC_ZNODE_V1


class TopicZNode:
    """``/brokers/topics/<t>`` ↔ ``model.TopicAssignment``.

    Versions (``ZkData :: TopicZNode``)::

        v1 {"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]}}
        v2 {"version":2,"partitions":{...},"adding_replicas":{},"removing_replicas":{}}
        v3 {"version":3,"topic_id":"fuxffnL_TWKJE99B8vHPmQ","partitions":{"0":[4,5,6,1,2,3]},
            "adding_replicas":{"0":[4,5,6]},"removing_replicas":{"0":[1,2,3]}}

    ``topic_id`` is optional in v3 (written only once known). Unknown keys are kept in
    ``TopicAssignment.extra`` and written back after the known ones, so a rewrite loses nothing.
    Decoding refuses what no Kafka wrote: other versions, ``topic_id`` before v3, reassignment maps
    in v1, malformed ids, non-canonical partition keys, duplicate replicas, reassignment entries for
    unknown partitions or replicas outside the partition's replica set.
    """

    @staticmethod
    def path(topic: str) -> str:
        return topic_path(topic)

    @staticmethod
    def encode(assignment: model.TopicAssignment, *, version: int | None = None) -> bytes:
        """Compact JSON of ``version`` (default: ``assignment.version``), keys ordered as above.

        :raises ValueError: unknown version; a ``topic_id`` with a version < 3 or reassignment maps
            with version 1 (writing them would drop data, cf. KAFKA-14190); a malformed topic id;
            reassignment entries for partitions not in ``partitions``; extra keys shadowing ours.
        """
        target = assignment.version if version is None else version
        if target not in TOPIC_ZNODE_VERSIONS:
            raise ValueError(f"topic znode version {target} is not one Kafka writes {TOPIC_ZNODE_VERSIONS}")
        if assignment.topic_id is not None:
            if target < TOPIC_ZNODE_V3:
                raise ValueError(
                    f"topic znode version {target} cannot carry topic_id {assignment.topic_id!r}; "
                    "dropping it would make the controller generate a new one (KAFKA-14190)"
                )
            problem = topic_ids.topic_id_problem(assignment.topic_id)
            if problem is not None:
                raise ValueError(problem)
        if target < TOPIC_ZNODE_V2 and assignment.is_reassigning:
            raise ValueError("topic znode version 1 cannot carry adding_replicas/removing_replicas")
        for name, moving in (
            ("adding_replicas", assignment.adding_replicas),
            ("removing_replicas", assignment.removing_replicas),
        ):
            unknown = sorted(set(moving) - set(assignment.partitions))
            if unknown:
                raise ValueError(f"{name} names partitions {unknown} that are not in partitions")
        common.check_no_collision(assignment.extra, _TOPIC_KEYS, "topic znode")

        document: dict[str, object] = {"version": target}
        if target >= TOPIC_ZNODE_V3 and assignment.topic_id is not None:
            document["topic_id"] = assignment.topic_id
        document["partitions"] = common.encode_partition_map(assignment.partitions)
        if target >= TOPIC_ZNODE_V2:
            document["adding_replicas"] = common.encode_partition_map(
                {p: r for p, r in assignment.adding_replicas.items() if r}
            )
            document["removing_replicas"] = common.encode_partition_map(
                {p: r for p, r in assignment.removing_replicas.items() if r}
            )
        document.update(assignment.extra)
        return common.dump_json(document)

    @staticmethod
    def decode(data: bytes | None, path: str) -> model.TopicAssignment:
        """:raises MalformedZnode: see the class docstring."""
        obj = common.load_json_object(data, path)
        version = common.version_field(obj, path, TOPIC_ZNODE_VERSIONS)
        partitions = common.decode_partition_map(common.field(obj, "partitions", path), path, "partitions")

        topic_id: str | None = None
        if "topic_id" in obj:
            if version < TOPIC_ZNODE_V3:
                raise errors.MalformedZnode(
                    path, f"version {version} has a 'topic_id'; Kafka writes topic ids only in version 3"
                )
            topic_id = common.as_str(obj["topic_id"], path, "'topic_id'")
            problem = topic_ids.topic_id_problem(topic_id)
            if problem is not None:
                raise errors.MalformedZnode(path, problem)

        moving: dict[str, dict[int, tuple[int, ...]]] = {}
        for key in ("adding_replicas", "removing_replicas"):
            moving[key] = {}
            if key not in obj:
                continue
            if version < TOPIC_ZNODE_V2:
                raise errors.MalformedZnode(path, f"version 1 has '{key}'; Kafka writes it from version 2")
            decoded = common.decode_partition_map(obj[key], path, key)
            for partition, replicas in decoded.items():
                if partition not in partitions:
                    raise errors.MalformedZnode(
                        path, f"'{key}' names partition '{partition}', which is not in 'partitions'"
                    )
                outside = [r for r in replicas if r not in partitions[partition]]
                if outside:
                    raise errors.MalformedZnode(
                        path,
                        f"'{key}' partition '{partition}' has replicas {outside} outside the partition's "
                        f"replica list {list(partitions[partition])}",
                    )
                if replicas:  # Kafka omits empty entries; an empty one means the same as none
                    moving[key][partition] = replicas

        return model.TopicAssignment(
            partitions=MappingProxyType(partitions),
            topic_id=topic_id,
            adding_replicas=MappingProxyType(moving["adding_replicas"]),
            removing_replicas=MappingProxyType(moving["removing_replicas"]),
            version=version,
            extra=MappingProxyType(common.extra_fields(obj, _TOPIC_KEYS)),
        )


class PartitionStateZNode:
    """``/brokers/topics/<t>/partitions/<p>/state`` → ``model.PartitionState``. **Decode only.**

    The controller (and, at IBP < 2.7-IV2, the partition leader) owns this znode; an external
    writer must never create or modify it (reference §13 rule 1), so there is deliberately no
    ``encode``. Format (``ZkData :: TopicPartitionStateZNode``, key order as Kafka's hash map)::

        {"controller_epoch":12,"leader":2,"version":1,"leader_epoch":7,"isr":[2,3,1]}
        ... plus "leader_recovery_state":1 only while RECOVERING (KIP-704, 3.2+)

    The partition epoch is the znode's zkVersion, which the caller passes from the ``Stat``.
    Unknown keys are ignored.
    """

    @staticmethod
    def path(topic: str, partition: int) -> str:
        return partition_state_path(topic, partition)

    @staticmethod
    def decode(data: bytes | None, path: str, *, zk_version: int) -> model.PartitionState:
        """:param zk_version: ``stat.version`` of the znode read (Kafka's partition epoch).

        :raises MalformedZnode: missing or mistyped fields, a leader below -1, a recovery state other
            than 0/1, duplicate ISR members, a version other than 1.
        """
        if zk_version < 0:
            raise ValueError(f"zk_version must be a znode's stat.version (>= 0), got {zk_version}")
        obj = common.load_json_object(data, path)
        common.version_field(obj, path, (PARTITION_STATE_VERSION,))
        recovery = LEADER_RECOVERED
        if "leader_recovery_state" in obj:
            recovery = common.as_int32(obj["leader_recovery_state"], path, "'leader_recovery_state'")
            if recovery not in (LEADER_RECOVERED, LEADER_RECOVERING):
                raise errors.MalformedZnode(
                    path, f"'leader_recovery_state' is {recovery}, expected 0 (recovered) or 1 (recovering)"
                )
        return model.PartitionState(
            leader=common.int32_field(obj, "leader", path, minimum=NO_LEADER),
            isr=common.as_int32_list(common.field(obj, "isr", path), path, "'isr'", minimum=0),
            leader_epoch=common.int32_field(obj, "leader_epoch", path, minimum=0),
            controller_epoch=common.int32_field(obj, "controller_epoch", path, minimum=0),
            leader_recovery_state=recovery,
            partition_epoch=zk_version,
        )
