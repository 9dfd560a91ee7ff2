"""The PartitionReassignment side of the Kafka Admin API backend (``service.backend.ReassignmentBackend``).

What the ZooKeeper store does with ``/admin/reassign_partitions``, ``/config/<type>/<name>`` and
``/admin/preferred_replica_election``, done with Kafka's own requests (KIP-455, KIP-339, KIP-460):

* the pending reassignment is ListPartitionReassignments: each partition's target is its replica
  list without the replicas being removed (Kafka lists ``replicas`` = current + adding);
* a batch starts with one AlterPartitionReassignments; several can run at once, so there is no
  "another reassignment is running" refusal (the service still runs one batch at a time);
* entity configs (the four throttle keys) are DescribeConfigs of the dynamic overrides, then one
  IncrementalAlterConfigs with ``SET`` for what the change adds or alters and ``DELETE`` for what
  it removes, nothing when they are equal. There is no compare-and-set: a concurrent writer of
  the same key can be overwritten (the throttle code only touches the operator's own entries);
* a preferred election is ElectLeaders(PREFERRED); Kafka runs it at once, so none is ever
  pending.

A mixin of ``AdminBackend``: it uses the class's client, error mapping and write counter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafka.admin import ConfigResource  # type: ignore[import-untyped]
from kafka.admin._configs import AlterConfigOp  # type: ignore[import-untyped]
from kafka.structs import TopicPartition as KafkaTopicPartition  # type: ignore[import-untyped]

from kafka_zk_operator.domain import errors, model

#: Kafka's ConfigResourceType names of the entity types the operator writes.
_RESOURCE_TYPES: Mapping[str, str] = {"topics": "TOPIC", "brokers": "BROKER"}
#: Sources of a dynamic override set on the entity itself (not a default, a static file, a synonym).
_OVERRIDE_SOURCES = frozenset({"DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG"})
_PREFERRED = 0  # ElectionType.PREFERRED


def targets_from_listing(
    listing: Mapping[Any, Mapping[str, Sequence[int]]],
) -> list[model.PartitionReassignment]:
    """ListPartitionReassignments' answer → each partition's target, sorted (pure)."""
    entries = []
    for tp, state in listing.items():
        removing = set(state.get("removing_replicas") or ())
        target = tuple(b for b in state.get("replicas") or () if b not in removing)
        entries.append(model.PartitionReassignment(str(tp.topic), int(tp.partition), target))
    return sorted(entries, key=lambda e: (e.topic, e.partition))


def config_ops(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, tuple[Any, str | None]]:
    """The IncrementalAlterConfigs operations that turn ``before`` into ``after`` (pure)."""
    ops: dict[str, tuple[Any, str | None]] = {
        key: (AlterConfigOp.SET, value) for key, value in after.items() if before.get(key) != value
    }
    ops.update({key: (AlterConfigOp.DELETE, None) for key in before if key not in after})
    return ops


def overrides(described: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """The dynamic overrides among DescribeConfigs' entries of one resource (pure)."""
    return {
        key: str(entry.get("value"))
        for key, entry in described.items()
        if entry.get("config_source") in _OVERRIDE_SOURCES and entry.get("value") is not None
    }


class ReassignmentCalls:
    """Reassignment requests; ``AdminBackend`` supplies ``_call`` and ``_count_write``."""

    def _call(self, action: str, request: Callable[[Any], Any]) -> Any:  # pragma: no cover - supplied
        raise NotImplementedError

    def _count_write(self) -> None:  # pragma: no cover - supplied
        raise NotImplementedError

    def pending_reassignment(self) -> model.Versioned[list[model.PartitionReassignment]] | None:
        listing = self._call(
            "listing the partition reassignments", lambda admin: admin.list_partition_reassignments()
        )
        entries = targets_from_listing(listing)
        return model.Versioned(entries, -1) if entries else None

    def create_reassignment(self, entries: Sequence[model.PartitionReassignment]) -> None:
        request = {KafkaTopicPartition(e.topic, e.partition): list(e.replicas) for e in entries}
        results = self._call(
            "starting a partition reassignment", lambda admin: admin.alter_partition_reassignments(request)
        )
        self._count_write()
        refused = {f"{tp.topic}-{tp.partition}": error for tp, error in results.items() if error is not None}
        if refused:
            name, error = sorted(refused.items())[0]
            raise errors.InvalidSpec(
                f"Kafka refused the reassignment of {len(refused)} partition(s), e.g. {name}: "
                f"{getattr(error, '__name__', error)} (a target broker that does not exist, or a topic deleted meanwhile)"
            )

    def read_entity_config(self, entity_type: str, name: str) -> model.Versioned[dict[str, str]] | None:
        resource = ConfigResource(_RESOURCE_TYPES[str(entity_type)], str(name))
        described = self._call(
            f"reading the config of {entity_type} {name}",
            lambda admin: admin.describe_configs([resource], config_filter="modified"),
        )
        found = next(iter(next(iter(described.values()), {}).values()), {})
        values = overrides(found)
        return model.Versioned(values, -1) if values else None

    def read_topic_config(self, topic: str) -> model.Versioned[dict[str, str]] | None:
        return self.read_entity_config("topics", topic)

    def update_entity_config(
        self, entity_type: str, name: str, change: Callable[[dict[str, str]], dict[str, str]]
    ) -> bool:
        current = self.read_entity_config(entity_type, name)
        before = dict(current.value) if current is not None else {}
        ops = config_ops(before, change(dict(before)))
        if not ops:
            return False
        resource = ConfigResource(_RESOURCE_TYPES[str(entity_type)], str(name), ops)
        answer = self._call(
            f"changing the config of {entity_type} {name}",
            lambda admin: admin.alter_configs([resource], raise_on_unknown=False, incremental=True),
        )
        self._count_write()
        result = next(iter(next(iter(answer.values()), {}).values()), "OK")
        if result != "OK":
            raise errors.InvalidSpec(f"Kafka refused the config change of {entity_type} {name}: {result}")
        return True

    def create_preferred_election(self, partitions: Sequence[model.TopicPartition]) -> bool:
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        self._call(
            "electing preferred leaders",
            lambda admin: admin.elect_leaders(_PREFERRED, by_topic, raise_errors=False),
        )
        self._count_write()
        return True

    def pending_preferred_election(self) -> tuple[model.TopicPartition, ...] | None:
        return None  # ElectLeaders runs at once: nothing is ever pending
