"""Deletion requests ignored by Kafka 0.10.0/0.10.1 controllers (``domain.topic.deletion``) and the
operator's answer (``service.topics.delete_topic`` withdraws its marker and reports the refusal)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from kafka_zk_operator.domain import model
from kafka_zk_operator.domain.topic.deletion import IGNORED_AFTER_S, DeletionFacts, deletion_ignored
from kafka_zk_operator.domain.topic.resource import parse_resource
from kafka_zk_operator.service.topics import delete_topic

REQUESTED = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LATER = REQUESTED + timedelta(seconds=IGNORED_AFTER_S)


def _state(leader: int) -> model.PartitionState:
    return model.PartitionState(
        leader=leader, isr=(leader,) if leader >= 0 else (), leader_epoch=0, controller_epoch=1
    )


FACTS = DeletionFacts(
    controller_registration_version=3,
    requested_at=REQUESTED,
    in_reassignment=False,
    replica_brokers=frozenset({1, 2}),
    live_brokers=frozenset({1, 2, 3}),
    states={0: _state(1), 1: _state(2)},
    partitions=(0, 1),
)


def test_a_v3_controller_that_leaves_every_leader_in_place_for_a_minute_ignores_the_request() -> None:
    assert deletion_ignored(FACTS, LATER)


@pytest.mark.parametrize(
    ("change", "now"),
    [
        ({}, LATER - timedelta(seconds=1)),  # not long enough yet
        ({"controller_registration_version": 4}, LATER),  # 0.10.2+: removes markers itself
        ({"controller_registration_version": 2}, LATER),  # ambiguous (0.9, or a newer broker, old IBP)
        ({"controller_registration_version": None}, LATER),  # no controller right now
        ({"requested_at": None}, LATER),  # we do not know when we asked
        ({"in_reassignment": True}, LATER),  # Kafka defers deleting a topic being reassigned
        ({"live_brokers": frozenset({1})}, LATER),  # ... or one with a replica on a dead broker
        ({"states": {0: _state(-1), 1: _state(2)}}, LATER),  # the controller took a replica offline
        ({"states": {0: _state(1)}}, LATER),  # a state znode missing: not conclusive
    ],
    ids=[
        "too-soon",
        "v4",
        "v2",
        "no-controller",
        "no-time",
        "reassigning",
        "dead-replica",
        "deleting",
        "no-state",
    ],
)
def test_anything_that_could_make_kafka_wait_is_not_taken_for_ignoring(
    change: dict[str, Any], now: datetime
) -> None:
    assert not deletion_ignored(dataclasses.replace(FACTS, **change), now)


class IgnoringStore:
    """A 0.10.0-like cluster in which our marker sits untouched."""

    def __init__(self, controller_version: int) -> None:
        self.controller_version = controller_version
        self.marker = True
        self.withdrawn = 0

    def read_assignment(self, topic: str) -> Any:
        return SimpleNamespace(value=model.TopicAssignment(partitions={0: (1, 2), 1: (2, 1)}))

    def is_marked_for_deletion(self, topic: str) -> bool:
        return self.marker

    def controller_registration_version(self) -> int:
        return self.controller_version

    def pending_reassignment(self) -> None:
        return None

    def maybe_in_reassignment(self, topic: str) -> tuple[bool, str | None]:
        return False, None

    def broker_ids(self) -> list[int]:
        return [1, 2]

    def partition_states(self, topic: str, partitions: list[int]) -> dict[int, model.PartitionState]:
        return {0: _state(1), 1: _state(2)}

    def withdraw_deletion_marker(self, topic: str) -> bool:
        self.marker = False
        self.withdrawn += 1
        return True


RESOURCE = parse_resource(
    {
        "metadata": {"name": "orders", "namespace": "ns", "uid": "u", "generation": 1},
        "spec": {"partitions": 2, "replicationFactor": 2},
    }
)


def test_an_ignored_request_is_withdrawn_and_reported_as_refused() -> None:
    store = IgnoringStore(controller_version=3)
    progress = delete_topic(RESOURCE, store, marker_written_before=True, requested_at=REQUESTED, now=LATER)  # type: ignore[arg-type]
    assert progress.done and store.withdrawn == 1 and not store.marker
    assert progress.event is not None and progress.event.reason == "DeletionRefusedByKafka"
    assert "delete.topic.enable=false" in progress.event.message and "0.10.0/0.10.1" in progress.event.message


def test_newer_controllers_and_early_calls_just_wait() -> None:
    for store, now in ((IgnoringStore(4), LATER), (IgnoringStore(3), REQUESTED + timedelta(seconds=5))):
        progress = delete_topic(RESOURCE, store, marker_written_before=True, requested_at=REQUESTED, now=now)  # type: ignore[arg-type]
        assert not progress.done and store.withdrawn == 0 and progress.message.startswith("waiting for Kafka")


def test_a_marker_someone_else_wrote_is_never_withdrawn() -> None:
    store = IgnoringStore(controller_version=3)
    progress = delete_topic(RESOURCE, store, marker_written_before=False, requested_at=None, now=LATER)  # type: ignore[arg-type]
    assert not progress.done and store.withdrawn == 0
