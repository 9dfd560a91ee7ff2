"""Deleting a KafkaTopic's Kafka topic: the deletion marker, waiting for Kafka, and the lines and
settings (``delete.topic.enable=false``) where Kafka keeps the topic."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kafka_zk_operator.domain import model
from kafka_zk_operator.domain.topic import deletion as topic_deletion
from kafka_zk_operator.domain.topic.resource import KafkaTopicResource
from kafka_zk_operator.service.backend import TopicBackend
from kafka_zk_operator.service.events import Event


@dataclass(frozen=True)
class DeletionProgress:
    done: bool
    message: str
    event: Event | None = None
    #: this call wrote the deletion marker; the caller records that (``status.deletionRequestedAt``).
    marker_written: bool = False


def delete_topic(
    resource: KafkaTopicResource,
    store: TopicBackend,
    *,
    marker_written_before: bool,
    requested_at: datetime | None = None,
    now: datetime | None = None,
) -> DeletionProgress:
    """Drive the deletion of a KafkaTopic's Kafka topic; ``done`` once Kafka has removed it all.

    :param marker_written_before: an earlier call wrote the deletion marker (recorded by the
        caller; a failed earlier attempt that wrote nothing must not count).
    :param requested_at: when that marker was written (``status.deletionRequestedAt``).
    With ``delete.topic.enable=false`` Kafka removes the marker but keeps the topic: once the
    marker we wrote is gone and the topic is still there, that is reported (Warning event
    ``DeletionRefusedByKafka``) and the resource is released; the topic stays. Kafka 0.10.0 and
    0.10.1 leave the marker instead; when their controller ignores it (``domain.topic.deletion``)
    the operator withdraws it and reports the same.
    """
    topic = resource.topic_name
    assignment = store.read_assignment(topic)
    if assignment is None:
        if store.topic_fully_deleted(topic):
            message = f"Kafka topic '{topic}' is deleted"
            return DeletionProgress(True, message, Event("Normal", "TopicDeleted", message))
        return DeletionProgress(False, f"waiting for Kafka to finish deleting '{topic}'")
    if store.is_marked_for_deletion(topic):
        if marker_written_before and _deletion_ignored(store, topic, assignment, requested_at, now):
            store.withdraw_deletion_marker(topic)
            message = (
                f"Kafka did not act on the deletion of topic '{topic}' for "
                f"{topic_deletion.IGNORED_AFTER_S:.0f} s, all partitions still led: its 0.10.0/0.10.1 "
                "controller ignores deletion requests when the brokers run with "
                "delete.topic.enable=false. The operator withdrew its request, as newer Kafka does; "
                "the resource is released and the topic stays in Kafka."
            )
            return DeletionProgress(True, message, Event("Warning", "DeletionRefusedByKafka", message))
        return DeletionProgress(False, f"waiting for Kafka to delete '{topic}'")
    if marker_written_before:
        message = (
            f"Kafka removed the deletion marker of topic '{topic}' but kept the topic: the brokers run "
            "with delete.topic.enable=false. The resource is released and the topic stays in Kafka."
        )
        return DeletionProgress(True, message, Event("Warning", "DeletionRefusedByKafka", message))
    store.mark_topic_for_deletion(topic)
    return DeletionProgress(
        False,
        f"asked Kafka to delete topic '{topic}'",
        Event("Normal", "TopicDeletionRequested", f"Marked Kafka topic '{topic}' for deletion"),
        marker_written=True,
    )


def _deletion_ignored(
    store: TopicBackend,
    topic: str,
    versioned: model.Versioned[model.TopicAssignment],
    requested_at: datetime | None,
    now: datetime | None,
) -> bool:
    if requested_at is None or now is None:
        return False
    version = store.controller_registration_version()
    if version != topic_deletion.MARKER_IGNORING_REGISTRATION_VERSION:
        return False  # the cheap check first: every other line removes markers itself
    assignment = versioned.value
    partitions = sorted(assignment.partitions)
    facts = topic_deletion.DeletionFacts(
        controller_registration_version=version,
        requested_at=requested_at,
        in_reassignment=store.maybe_in_reassignment(topic)[0],
        replica_brokers=frozenset(b for replicas in assignment.partitions.values() for b in replicas),
        live_brokers=frozenset(store.broker_ids()),
        states=store.partition_states(topic, partitions),
        partitions=partitions,
    )
    return topic_deletion.deletion_ignored(facts, now)
