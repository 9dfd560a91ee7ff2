"""Kafka Admin API answers (kafka-python 3.x result dicts) as the domain's values: pure, no I/O.

The shapes are those kafka-python 3.0 returns (read from its source and seen on Kafka 3.9.2):

* ``describe_topics([t])``: ``[{"name", "error_code", "topic_id" (str or None), "partitions":
  [{"partition_index", "leader_id", "leader_epoch", "replica_nodes", "isr_nodes",
  "offline_replicas", "error_code"}]}]``; an unknown topic has ``error_code`` 3 and no partitions.
* ``describe_configs([topic])``: ``{"topic": {t: {key: {"value", "config_source", ...}}}}``
  (``config_source`` a name such as ``"DYNAMIC_TOPIC_CONFIG"``).
* ``list_partition_reassignments``: ``{TopicPartition: {"replicas", "adding_replicas",
  "removing_replicas"}}`` (``replicas``: the target first, then the replicas being removed).
* ``describe_cluster()``: ``{"brokers": [{"broker_id", "host", "port", "rack", "is_fenced" (v2+)}],
  "controller_id", "cluster_id"}``.

Used by ``adapters.kafka.admin_backend``; unit-tested on recorded answers (``tests/unit``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from kafka_zk_operator.adapters.zk import topic_ids
from kafka_zk_operator.domain import model
from kafka_zk_operator.domain.topic.plan import ObservedTopic

#: Kafka's UNKNOWN_TOPIC_OR_PARTITION: a topic that does not exist (or a broker that has not
#: learned of it yet).
UNKNOWN_TOPIC_OR_PARTITION = 3
#: The source of a topic's own overrides in DescribeConfigs (``/config/topics/<t>`` in ZooKeeper
#: mode, the topic's ConfigRecords in KRaft); broker-wide dynamic defaults have other sources.
TOPIC_OVERRIDE_SOURCE = "DYNAMIC_TOPIC_CONFIG"
#: Admin results carry no controller epoch (a ZooKeeper state znode's field): this stands for it.
NO_CONTROLLER_EPOCH = -1


@dataclass(frozen=True, slots=True)
class AdminBroker:
    """A broker as DescribeCluster lists it (``service.backend.BrokerRecord``)."""

    broker: model.Broker
    host: str = ""
    port: int = 0
    #: KRaft: registered but fenced (not alive). ZooKeeper mode lists only live brokers.
    fenced: bool = False


@dataclass(frozen=True, slots=True)
class PartitionMoves:
    """One partition of an ongoing reassignment as ListPartitionReassignments reports it."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


def topic_entry(described: Sequence[Mapping[str, Any]], topic: str) -> Mapping[str, Any] | None:
    """The entry of ``topic`` in a ``describe_topics`` answer; None when Kafka does not know it."""
    for entry in described:
        if entry.get("name") == topic:
            return None if int(entry.get("error_code") or 0) == UNKNOWN_TOPIC_OR_PARTITION else entry
    return None


def entry_error(entry: Mapping[str, Any]) -> tuple[int, str | None]:
    """(error code, message) of one answer entry (topic or partition); code 0: no error."""
    return int(entry.get("error_code") or 0), entry.get("error_message")


def partitions_of(entry: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    """Partition id → its metadata entry (kafka-python keeps Kafka's order, which is not sorted)."""
    return {int(p["partition_index"]): p for p in entry.get("partitions") or []}


def moves_of(listing: Mapping[Any, Mapping[str, Any]], topic: str) -> dict[int, PartitionMoves]:
    """The partitions of ``topic`` in a ``list_partition_reassignments`` answer (keys: anything
    with ``.topic`` and ``.partition``, kafka-python's ``TopicPartition``)."""
    moves: dict[int, PartitionMoves] = {}
    for key, entry in listing.items():
        if key.topic != topic:
            continue
        moves[int(key.partition)] = PartitionMoves(
            replicas=tuple(int(b) for b in entry.get("replicas") or ()),
            adding=tuple(int(b) for b in entry.get("adding_replicas") or ()),
            removing=tuple(int(b) for b in entry.get("removing_replicas") or ()),
        )
    return moves


def topic_assignment(entry: Mapping[str, Any], moves: Mapping[int, PartitionMoves]) -> model.TopicAssignment:
    """The topic's replicas per partition as ZooKeeper's topic znode would hold them: during a
    reassignment the full replica set (target first, then the replicas being removed) with the
    adding and removing replicas, as the controller reports them."""
    partitions: dict[int, tuple[int, ...]] = {}
    adding: dict[int, tuple[int, ...]] = {}
    removing: dict[int, tuple[int, ...]] = {}
    for index, partition in sorted(partitions_of(entry).items()):
        replicas = tuple(int(b) for b in partition.get("replica_nodes") or ())
        moving = moves.get(index)
        if moving is not None:
            partitions[index] = moving.replicas or replicas
            if moving.adding:
                adding[index] = moving.adding
            if moving.removing:
                removing[index] = moving.removing
        else:
            partitions[index] = replicas
    topic_id = entry.get("topic_id")
    return model.TopicAssignment(
        partitions=MappingProxyType(partitions),
        topic_id=kafka_topic_id(topic_id) if topic_id else None,
        adding_replicas=MappingProxyType(adding),
        removing_replicas=MappingProxyType(removing),
    )


def partition_states(
    entry: Mapping[str, Any], partitions: Iterable[int] | None = None
) -> dict[int, model.PartitionState]:
    """Leader, ISR and leader epoch of the partitions (all when ``partitions`` is None) that the
    answer holds; a leader of -1 means none (offline, or not elected yet)."""
    by_index = partitions_of(entry)
    wanted = sorted(by_index) if partitions is None else [p for p in partitions if p in by_index]
    states: dict[int, model.PartitionState] = {}
    for index in wanted:
        partition = by_index[index]
        states[index] = model.PartitionState(
            leader=int(partition.get("leader_id", -1)),
            isr=tuple(int(b) for b in partition.get("isr_nodes") or ()),
            leader_epoch=int(partition.get("leader_epoch", -1)),
            controller_epoch=NO_CONTROLLER_EPOCH,
        )
    return states


def leaders_elected(entry: Mapping[str, Any] | None, partitions: int) -> bool:
    """Every one of the first ``partitions`` partitions is known and has a leader."""
    if entry is None:
        return False
    by_index = partitions_of(entry)
    return all(
        index in by_index
        and int(by_index[index].get("error_code") or 0) == 0
        and int(by_index[index].get("leader_id", -1)) >= 0
        for index in range(partitions)
    )


def topic_overrides(described: Mapping[str, Any], topic: str) -> dict[str, str]:
    """The topic's own overrides in a ``describe_configs`` answer (source ``DYNAMIC_TOPIC_CONFIG``),
    exactly what ZooKeeper's ``/config/topics/<t>`` holds; a null value (sensitive) is left out."""
    configs = (described.get("topic") or {}).get(topic) or {}
    return {
        str(key): str(data["value"])
        for key, data in configs.items()
        if isinstance(data, Mapping)
        and data.get("config_source") == TOPIC_OVERRIDE_SOURCE
        and data.get("value") is not None
    }


def config_operations(
    current: Mapping[str, str], wanted: Mapping[str, str]
) -> dict[str, tuple[str, str | None]]:
    """IncrementalAlterConfigs operations turning the overrides ``current`` into exactly ``wanted``:
    ``("SET", value)`` for new and differing keys, ``("DELETE", None)`` for overrides not wanted.
    Empty when they are equal (then nothing is sent)."""
    operations: dict[str, tuple[str, str | None]] = {
        key: ("SET", value) for key, value in sorted(wanted.items()) if current.get(key) != value
    }
    operations.update({key: ("DELETE", None) for key in sorted(current) if key not in wanted})
    return operations


def observed_topic(
    entry: Mapping[str, Any] | None,
    *,
    overrides: Mapping[str, str],
    moves: Mapping[int, PartitionMoves],
    marked_for_deletion: bool = False,
    with_states: bool = True,
    reassignment_note: str | None = None,
) -> ObservedTopic:
    """One Admin read of a topic as the planner's ``ObservedTopic``.

    The Admin API has no versions: ``config_version`` is None, and ``assignment_version`` -1 for
    an existing topic (the "any version" of ``model.Versioned``; ``service.topics`` needs a number
    there to add partitions). An unknown topic: no assignment, no overrides. ``reassignment_note``:
    why the reassignments could not be listed (the topic then counts as moving, as in ZooKeeper)."""
    if entry is None:
        return ObservedTopic(assignment=None, config={})
    return ObservedTopic(
        assignment=topic_assignment(entry, moves),
        config=dict(overrides),
        marked_for_deletion=marked_for_deletion,
        in_reassignment=bool(moves) or reassignment_note is not None,
        reassignment_note=reassignment_note,
        partition_states=partition_states(entry) if with_states else {},
        config_version=None,
        assignment_version=-1,
    )


def brokers_of(described_cluster: Mapping[str, Any]) -> list[AdminBroker]:
    """The brokers of a ``describe_cluster`` answer, sorted by id, fenced ones included."""
    brokers = [
        AdminBroker(
            broker=model.Broker(int(b["broker_id"]), b.get("rack") or None),
            host=str(b.get("host") or ""),
            port=int(b.get("port") or 0),
            fenced=bool(b.get("is_fenced", False)),
        )
        for b in described_cluster.get("brokers") or []
    ]
    return sorted(brokers, key=lambda b: b.broker.id)


def kafka_topic_id(value: object) -> str:
    """Kafka's own text of a topic id (``Uuid.toString``: 22 characters of URL-safe base64, as
    in the topic znode and Kafka's tools) from kafka-python's UUID (``uuid.UUID`` or its text):
    the same id reads the same through either backend, so ``status.topicId`` survives a migration."""
    raw = value.bytes if isinstance(value, uuid.UUID) else uuid.UUID(str(value)).bytes
    return topic_ids.topic_id_from_bytes(raw)
