"""The PartitionReassignment side of the Kafka Admin API backend (``service.backend.ReassignmentBackend``).

What the ZooKeeper store does with ``/admin/reassign_partitions``, ``/config/<type>/<name>`` and
``/admin/preferred_replica_election``, done with Kafka's own requests (KIP-455, KIP-339, KIP-460)
by the functions of ``adapters.kafka.admin_reassignments``:

* the pending reassignment is ListPartitionReassignments: each partition's target is its replica
  list without the replicas being removed (Kafka lists ``replicas`` = target + removing);
* a batch starts with one AlterPartitionReassignments; several can run at once, so there is no
  "another reassignment is running" refusal (the service still runs one batch at a time);
* entity configs (the four throttle keys) are DescribeConfigs of the entity's own overrides, then
  one IncrementalAlterConfigs with ``SET`` for what the change adds or alters and ``DELETE`` for
  what it removes, nothing when they are equal. There is no compare-and-set: a concurrent writer
  of the same key can be overwritten (the throttle code only touches the operator's own entries);
* a preferred election is ElectLeaders(PREFERRED); Kafka runs it at once, so none is ever pending;
* a running move can be cancelled (AlterPartitionReassignments with no target: Kafka puts back the
  replicas from before it), which ZooKeeper mode cannot do: ``can_cancel`` is True.

A mixin of ``AdminBackend``: it uses the class's client, error mapping and write counter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from kafka_zk_operator.adapters.kafka import admin_reassignments
from kafka_zk_operator.domain import errors, model


class ReassignmentCalls:
    """Reassignment requests; ``AdminBackend`` supplies the plumbing (``admin_reassignments.AdminBackend``)."""

    def _backend(self) -> admin_reassignments.AdminBackend:
        return cast(admin_reassignments.AdminBackend, self)

    def pending_reassignment(self) -> model.Versioned[list[model.PartitionReassignment]] | None:
        """Every partition Kafka is reassigning, with its target; None when none moves."""
        moving = admin_reassignments.ongoing(self._backend())
        entries = [
            model.PartitionReassignment(topic, partition, tuple(b for b in m.replicas if b not in m.removing))
            for (topic, partition), m in sorted(moving.items())
        ]
        return model.Versioned(entries, -1) if entries else None

    def create_reassignment(self, entries: Sequence[model.PartitionReassignment]) -> None:
        """:raises InvalidSpec: Kafka refused some partition (the first refusal says why)."""
        refused = admin_reassignments.submit(
            self._backend(), {(e.topic, e.partition): list(e.replicas) for e in entries}
        )
        if refused:
            (topic, partition), error = sorted(refused.items())[0]
            raise errors.InvalidSpec(
                f"Kafka refused the reassignment of {len(refused)} partition(s), e.g. {topic}-{partition}: "
                f"{error.message}"
            )

    #: AlterPartitionReassignments with no target cancels a running move (KIP-455).
    can_cancel = True

    def cancel_reassignment(self, partitions: Sequence[model.TopicPartition]) -> None:
        """Cancel the moves of ``partitions`` (one request); a partition not moving, or whose topic
        is gone, is skipped.

        :raises ClusterUnavailable: Kafka refused some partition (the first refusal says why; the
            next pass asks again)."""
        refused = admin_reassignments.cancel(self._backend(), [(tp.topic, tp.partition) for tp in partitions])
        if refused:
            (topic, partition), error = sorted(refused.items())[0]
            raise errors.ClusterUnavailable(
                f"cancelling the reassignment of {len(refused)} partition(s) failed, e.g. {topic}-{partition}: "
                f"{error.message}"
            )

    def read_entity_config(self, entity_type: str, name: str) -> model.Versioned[dict[str, str]] | None:
        values = admin_reassignments.read_entity_config(self._backend(), str(entity_type), str(name))
        return model.Versioned(values, -1) if values else None

    def read_topic_config(self, topic: str) -> model.Versioned[dict[str, str]] | None:
        return self.read_entity_config("topics", topic)

    def update_entity_config(
        self, entity_type: str, name: str, change: Callable[[dict[str, str]], dict[str, str]]
    ) -> bool:
        """Only the four throttle keys are written (``admin_reassignments.THROTTLE_KEYS``).

        :raises TopicBeingDeleted: a topic Kafka does not know."""
        return admin_reassignments.update_entity_config(self._backend(), str(entity_type), str(name), change)

    def create_preferred_election(self, partitions: Sequence[model.TopicPartition]) -> bool:
        """ElectLeaders(PREFERRED) now; a partition whose preferred replica cannot lead yet keeps
        its leader (the service checks the leaders afterwards). Always True: nothing is pending."""
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        admin_reassignments.elect_preferred(self._backend(), by_topic)
        return True

    def pending_preferred_election(self) -> tuple[model.TopicPartition, ...] | None:
        return None  # ElectLeaders runs at once: nothing is ever pending
