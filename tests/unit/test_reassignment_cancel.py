"""A stop or a deletion on a backend that can cancel (the Admin API): the batch in flight is cancelled
at once, throttles removed, and a crash part-way converges on the next pass.

``FakeAdmin`` is the in-memory cluster of ``test_reassignment_service`` with Kafka's KIP-455
cancel: a cancelled partition gets back its replicas from before the move. The ZooKeeper side
(stop and delete wait for the batch) is covered there; the real cluster in
``tests/e2e/test_kraft_cancel.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import pytest

from kafka_zk_operator.adapters.zk import znodes_admin
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.service import reassignment as reassignments
from tests.unit.test_reassignment_service import LEADERS, MOVES, NOW, RATE, FakeApi, FakeZk, body

STOP = {"kafka.zk-operator.io/stop": "true"}
ORIGINAL = {0: (1, 2), 1: (1, 2), 2: (2, 1)}


class Crash(Exception):
    """The operator killed part-way (nothing of the pass is flushed)."""


class FakeAdmin(FakeZk):
    can_cancel = True

    def __init__(self, journal: list[str]) -> None:
        super().__init__(journal)
        self.before: dict[tuple[str, int], tuple[int, ...]] = {}
        self.cancelled: list[list[tuple[str, int]]] = []
        #: the next config write after a cancel raises :class:`Crash`
        self.crash_after_cancel = False

    def create_reassignment(self, entries: Sequence[znodes_admin.PartitionReassignment]) -> None:
        for entry in entries:
            self.before[(entry.topic, entry.partition)] = self.topics[entry.topic][entry.partition]
        super().create_reassignment(entries)

    def cancel_reassignment(self, partitions: Sequence[znodes_admin.TopicPartition]) -> None:
        asked = [(tp.topic, tp.partition) for tp in partitions]
        self.cancelled.append(asked)
        kept = []
        for entry in self.reassign or []:
            key = (entry.topic, entry.partition)
            if key in asked:
                self.topics[entry.topic][entry.partition] = self.before[key]
                self.adding.get(entry.topic, {}).pop(entry.partition, None)
            else:
                kept.append(entry)
        self.reassign = kept or None
        self.journal.append("kafka cancel " + ",".join(f"{t}-{p}" for t, p in asked))
        self.writes += 1

    def update_entity_config(
        self, entity_type: str, name: str, change: Callable[[dict[str, str]], dict[str, str]]
    ) -> bool:
        if self.crash_after_cancel and self.cancelled:
            self.crash_after_cancel = False
            raise Crash("killed between the cancel and the throttle removal")
        return super().update_entity_config(entity_type, name, change)

    def finish_partition(self, topic: str, partition: int) -> None:
        """Kafka completes one partition's move (the rest of the batch still moves)."""
        entry = next(e for e in self.reassign or [] if (e.topic, e.partition) == (topic, partition))
        self.topics[topic][partition] = tuple(entry.replicas)
        self.adding.get(topic, {}).pop(partition, None)
        self.reassign = [e for e in self.reassign or [] if e is not entry] or None


@pytest.fixture
def journal() -> list[str]:
    return []


@pytest.fixture
def kafka(journal: list[str]) -> FakeAdmin:
    fake = FakeAdmin(journal)
    fake.topics["t"] = dict(ORIGINAL)
    fake.configs[("brokers", "1")] = {RATE: "777"}
    fake.configs[("topics", "t")] = {LEADERS: "9:9", "retention.ms": "1"}
    return fake


def step(api: FakeApi, kafka: FakeAdmin) -> reassignments.Result:
    return reassignments.reconcile(
        ("ns", "r"), cast(Any, api), lambda: cast(ZkStore, kafka), cluster="c", queue=(),
        cluster_of=lambda b: "c", settings=reassignments.Settings(), now=NOW,
    )  # fmt: skip


def delete(api: FakeApi, kafka: FakeAdmin) -> reassignments.Result:
    return reassignments.delete(
        ("ns", "r"), cast(Any, api), lambda: cast(ZkStore, kafka), settings=reassignments.Settings(), now=NOW
    )


def running(kafka: FakeAdmin, journal: list[str], **spec: Any) -> FakeApi:
    """Batch 1 of 2 (partitions 0 and 1) submitted, throttled; partition 0 already moved."""
    api = FakeApi(body(partitions=MOVES, throttle=100, batch={"maxPartitions": 2}, **spec), journal)
    step(api, kafka)
    assert [e.partition for e in kafka.reassign or []] == [0, 1]
    kafka.finish_partition("t", 0)
    return api


def assert_no_throttle_left(kafka: FakeAdmin) -> None:
    assert kafka.configs[("brokers", "1")] == {RATE: "777"}, "the previous rate is back"
    assert kafka.configs[("brokers", "2")] == {} and kafka.configs[("brokers", "3")] == {}
    assert kafka.configs[("topics", "t")] == {LEADERS: "9:9", "retention.ms": "1"}


def stopped(status: Mapping[str, Any]) -> None:
    assert status["phase"] == "Stopped", status["message"]
    assert status["message"].startswith(
        "Stopped on request during batch 1 of 2: the move of 1 partition of the batch was cancelled"
    ), status["message"]
    assert "1 had already moved; 1 of 3 partitions moved" in status["message"]
    assert status["progress"]["partitionsDone"] == 1


def test_a_stop_cancels_the_batch_in_flight_at_once_and_removes_the_throttles(
    kafka: FakeAdmin, journal: list[str]
) -> None:
    api = running(kafka, journal)
    api.body["metadata"]["annotations"] = STOP
    journal.clear()
    result = step(api, kafka)
    assert kafka.cancelled == [[("t", 1)]], "only the partition still moving, not the one done"
    assert kafka.reassign is None
    assert kafka.topics["t"] == {**ORIGINAL, 0: (3, 1)}, "the moved one keeps its move, 1 goes back"
    assert journal[0] == "kafka cancel t-1" and "zk config brokers/1" in journal, (
        "cancelled, then unthrottled"
    )
    assert_no_throttle_left(kafka)
    stopped(api.body["status"])
    assert [e.reason for e in result.events] == ["BatchCancelled", "ThrottleRemoved", "Stopped"]
    assert step(api, kafka).events == [] and kafka.cancelled == [[("t", 1)]], "a further pass does nothing"


def test_a_crash_between_the_cancel_and_the_throttle_removal_converges_on_the_next_pass(
    kafka: FakeAdmin, journal: list[str]
) -> None:
    api = running(kafka, journal)
    api.body["metadata"]["annotations"] = STOP
    kafka.crash_after_cancel = True
    with pytest.raises(Crash):
        step(api, kafka)
    assert api.body["status"]["phase"] == "Running" and kafka.reassign is None
    step(api, kafka)
    assert kafka.cancelled == [[("t", 1)]], "nothing moves any more: nothing to cancel again"
    assert_no_throttle_left(kafka)
    stopped(api.body["status"])


def test_deleting_a_running_reassignment_cancels_its_batch_and_releases_at_once(
    kafka: FakeAdmin, journal: list[str]
) -> None:
    api = running(kafka, journal)
    api.body["metadata"]["deletionTimestamp"] = "2025-06-01T12:00:00Z"
    result = delete(api, kafka)
    assert result.done is True, result.message
    assert kafka.cancelled == [[("t", 1)]] and kafka.reassign is None
    assert kafka.topics["t"] == {**ORIGINAL, 0: (3, 1)}
    assert_no_throttle_left(kafka)
    assert [e.reason for e in result.events] == ["BatchCancelled", "ThrottleRemoved"]


def test_a_deletion_cut_short_after_the_cancel_is_finished_by_the_next_call(
    kafka: FakeAdmin, journal: list[str]
) -> None:
    api = running(kafka, journal)
    api.body["metadata"]["deletionTimestamp"] = "2025-06-01T12:00:00Z"
    kafka.crash_after_cancel = True
    with pytest.raises(Crash):
        delete(api, kafka)
    assert delete(api, kafka).done is True
    assert kafka.cancelled == [[("t", 1)]]
    assert_no_throttle_left(kafka)


def test_a_stop_before_anything_moves_cancels_nothing(kafka: FakeAdmin, journal: list[str]) -> None:
    api = FakeApi(body(partitions=MOVES, throttle=100, approval="Manual"), journal)
    api.body["metadata"]["annotations"] = STOP
    step(api, kafka)
    assert kafka.cancelled == [] and kafka.reassign is None
