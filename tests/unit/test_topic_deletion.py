"""service.topics.delete_topic: which step of Kafka's deletion comes next, and what is reported."""

from __future__ import annotations

from typing import Any

from kafka_zk_operator.domain.topic.resource import parse_resource
from kafka_zk_operator.service.topics import delete_topic

RESOURCE = parse_resource(
    {
        "metadata": {"name": "orders", "namespace": "ns", "uid": "u", "generation": 1},
        "spec": {"partitions": 1, "replicationFactor": 1},
    }
)


class FakeStore:
    """The four ZooKeeper reads/writes deletion uses, over in-memory flags."""

    def __init__(self, *, topic: bool, marker: bool = False, config: bool = True) -> None:
        self.topic, self.marker, self.config = topic, marker, config
        self.markers_written = 0

    def read_assignment(self, topic: str) -> Any:
        return object() if self.topic else None

    def is_marked_for_deletion(self, topic: str) -> bool:
        return self.marker

    def topic_fully_deleted(self, topic: str) -> bool:
        return not (self.topic or self.marker or self.config)

    def mark_topic_for_deletion(self, topic: str) -> bool:
        self.marker = True
        self.markers_written += 1
        return True


def test_the_first_call_writes_the_marker_and_says_so() -> None:
    store = FakeStore(topic=True)
    progress = delete_topic(RESOURCE, store, marker_written_before=False)  # type: ignore[arg-type]
    assert (progress.done, progress.marker_written, store.markers_written) == (False, True, 1)
    assert progress.event is not None and progress.event.reason == "TopicDeletionRequested"


def test_a_topic_without_marker_is_marked_again_when_no_marker_was_written_before() -> None:
    """A first attempt that failed before writing must not read as Kafka refusing the deletion."""
    store = FakeStore(topic=True)
    progress = delete_topic(RESOURCE, store, marker_written_before=False)  # type: ignore[arg-type]
    assert not progress.done and store.markers_written == 1


def test_our_marker_gone_and_the_topic_still_there_is_a_refusal_that_releases_the_resource() -> None:
    store = FakeStore(topic=True)
    progress = delete_topic(RESOURCE, store, marker_written_before=True)  # type: ignore[arg-type]
    assert progress.done and store.markers_written == 0
    assert progress.event is not None and progress.event.reason == "DeletionRefusedByKafka"
    assert "delete.topic.enable=false" in progress.event.message


def test_waits_while_kafka_works_and_reports_deleted_once_every_znode_is_gone() -> None:
    marked = delete_topic(RESOURCE, FakeStore(topic=True, marker=True), marker_written_before=True)  # type: ignore[arg-type]
    assert not marked.done and marked.event is None
    finishing = delete_topic(RESOURCE, FakeStore(topic=False, marker=True), marker_written_before=True)  # type: ignore[arg-type]
    assert not finishing.done and finishing.event is None
    gone = delete_topic(RESOURCE, FakeStore(topic=False, config=False), marker_written_before=True)  # type: ignore[arg-type]
    assert gone.done and gone.event is not None and gone.event.reason == "TopicDeleted"
