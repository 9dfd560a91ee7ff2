"""The level-based reconcile of ``service.reassignment`` against in-memory stand-ins.

``FakeZk`` holds topic assignments, configs and the admin znodes the way ZooKeeper would, and
``finish_reassignment`` plays Kafka's controller; ``FakeApi`` is the API server (status merge
patches, annotations, a journal of every call). Every reconcile starts from the stored body only,
as after an operator restart, so these tests also check that nothing is carried in memory. The
real-cluster behaviour is covered end to end in ``tests/e2e/test_partitionreassignment.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any, cast

import pytest

from kafka_zk_operator.adapters.zk import znodes_admin
from kafka_zk_operator.adapters.zk.store import Versioned, ZkStore
from kafka_zk_operator.adapters.zk.znodes_config import ConfigEntityType
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.model import Broker, PartitionState, TopicAssignment
from kafka_zk_operator.service import plan_offload
from kafka_zk_operator.service import reassignment as reassignments
from kafka_zk_operator.service.reassignment import offload as reassignment_offload
from tests.unit.test_reassignment_offload import FakeOffload

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
RATE = "leader.replication.throttled.rate"
FRATE = "follower.replication.throttled.rate"
LEADERS = "leader.replication.throttled.replicas"
FOLLOWERS = "follower.replication.throttled.replicas"


class FakeZk:
    def __init__(self, journal: list[str]) -> None:
        self.journal = journal
        self.brokers = {1: "a", 2: "b", 3: "c"}
        self.topics: dict[str, dict[int, tuple[int, ...]]] = {}
        self.adding: dict[str, dict[int, tuple[int, ...]]] = {}
        self.configs: dict[tuple[str, str], dict[str, str]] = {}
        self.reassign: list[znodes_admin.PartitionReassignment] | None = None
        self.elections: list[list[znodes_admin.TopicPartition]] = []
        self.pending_election: tuple[znodes_admin.TopicPartition, ...] | None = None
        self.lose_election_reply = False
        self.leaders: dict[tuple[str, int], int] = {}
        self.writes = 0
        self.line = kafka_lines.NEWEST_ZK

    #: ZooKeeper mode: ``/admin/reassign_partitions`` runs to its end.
    can_cancel = False

    def cancel_reassignment(self, partitions: Sequence[znodes_admin.TopicPartition]) -> None:
        raise errors.NotSupported("ZooKeeper mode cannot cancel")

    # reads
    def live_brokers(self) -> list[Broker]:
        return [Broker(b, r) for b, r in sorted(self.brokers.items())]

    def broker_ids(self) -> list[int]:
        return sorted(self.brokers)

    def topic_names(self) -> list[str]:
        return sorted(self.topics)

    def topics_marked_for_deletion(self) -> list[str]:
        return []

    def is_marked_for_deletion(self, topic: str) -> bool:
        return False

    def cluster_line(self) -> kafka_lines.ClusterLine:
        return self.line

    def read_assignment(self, topic: str) -> Versioned[TopicAssignment] | None:
        if topic not in self.topics:
            return None
        adding = self.adding.get(topic, {})
        return Versioned(
            TopicAssignment(
                partitions=dict(self.topics[topic]), adding_replicas=MappingProxyType(dict(adding))
            ),
            1,
        )

    def partition_states(self, topic: str, partitions: Sequence[int]) -> dict[int, PartitionState]:
        states = {}
        for p in partitions:
            replicas = self.topics.get(topic, {}).get(p)
            if replicas is not None:
                leader = self.leaders.setdefault((topic, p), replicas[0])
                states[p] = PartitionState(leader=leader, isr=replicas, leader_epoch=1, controller_epoch=1)
        return states

    def pending_reassignment(self) -> Versioned[list[znodes_admin.PartitionReassignment]] | None:
        return None if self.reassign is None else Versioned(list(self.reassign), 0)

    def read_entity_config(self, entity_type: str, name: str) -> Versioned[dict[str, str]] | None:
        found = self.configs.get((entity_type, name))
        return None if found is None else Versioned(dict(found), 0)

    def read_topic_config(self, topic: str) -> Versioned[dict[str, str]] | None:
        return self.read_entity_config(ConfigEntityType.TOPICS, topic)

    def pending_preferred_election(self) -> tuple[znodes_admin.TopicPartition, ...] | None:
        return self.pending_election

    # writes
    def update_entity_config(
        self, entity_type: str, name: str, change: Callable[[dict[str, str]], dict[str, str]]
    ) -> bool:
        before = dict(self.configs.get((entity_type, name), {}))
        after = change(dict(before))
        if after == before:
            return False
        self.configs[(entity_type, name)] = after
        self.journal.append(f"zk config {entity_type}/{name}")
        self.writes += 1
        return True

    def create_reassignment(self, entries: Sequence[znodes_admin.PartitionReassignment]) -> None:
        if self.reassign is not None:
            raise errors.ReassignmentInProgress("exists")
        self.reassign = list(entries)
        for entry in entries:
            current = self.topics[entry.topic][entry.partition]
            self.adding.setdefault(entry.topic, {})[entry.partition] = tuple(
                b for b in entry.replicas if b not in current
            )
            self.topics[entry.topic][entry.partition] = (
                *entry.replicas,
                *(b for b in current if b not in entry.replicas),
            )
        self.journal.append("zk reassign " + ",".join(f"{e.topic}-{e.partition}" for e in entries))
        self.writes += 1

    def create_preferred_election(self, partitions: Sequence[znodes_admin.TopicPartition]) -> bool:
        if self.pending_election is not None:
            return False
        self.elections.append(list(partitions))
        self.writes += 1
        if self.lose_election_reply:  # ZooKeeper applied it; the connection dropped before the reply
            self.pending_election = tuple(partitions)
            self.lose_election_reply = False
            raise errors.ZooKeeperError("/admin/preferred_replica_election: connection lost")
        return True

    # the controller
    def finish_reassignment(self) -> None:
        assert self.reassign is not None
        for entry in self.reassign:
            self.topics[entry.topic][entry.partition] = tuple(entry.replicas)
            leader = self.leaders.get((entry.topic, entry.partition))
            if leader not in entry.replicas:  # Kafka keeps a leader that stays, else the first live one
                self.leaders[(entry.topic, entry.partition)] = entry.replicas[0]
            self.adding.get(entry.topic, {}).pop(entry.partition, None)
        self.reassign = None


class FakeApi:
    def __init__(self, body: dict[str, Any], journal: list[str]) -> None:
        self.body = body
        self.journal = journal

    def get(self, ref: tuple[str, str]) -> dict[str, Any] | None:
        return copy.deepcopy(self.body)

    def list_all(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(self.body)]

    def patch_status(self, ref: tuple[str, str], fields: Mapping[str, Any]) -> None:
        status = self.body.setdefault("status", {})
        for key, value in fields.items():
            if value is None:
                status.pop(key, None)
            elif isinstance(value, dict) and isinstance(status.get(key), dict):
                merged = {**status[key], **value}
                status[key] = {k: v for k, v in merged.items() if v is not None}
            else:
                status[key] = value
        self.journal.append("api status " + ",".join(sorted(fields)))

    def patch_annotations(self, ref: tuple[str, str], annotations: Mapping[str, str | None]) -> None:
        current = self.body["metadata"].setdefault("annotations", {})
        for key, value in annotations.items():
            if value is None:
                current.pop(key, None)
            else:
                current[key] = value

    def spark_jobs(self) -> None:
        return None

    def write_plan(self, owner: Any, proposal_id: str, entries: Sequence[Mapping[str, Any]]) -> list[str]:
        raise AssertionError("small plans stay in the status")

    def read_plan(self, namespace: str, names: Sequence[str], proposal_id: str) -> list[dict[str, Any]]:
        raise AssertionError("small plans stay in the status")

    def delete_configmaps(self, namespace: str, names: Sequence[str]) -> None:
        pass


def body(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "namespace": "ns",
            "name": "r",
            "uid": "u1",
            "generation": 1,
            "creationTimestamp": "2025-01-01T00:00:00Z",
        },
        "spec": {"mode": "Explicit", **spec},
    }


@pytest.fixture
def journal() -> list[str]:
    return []


@pytest.fixture
def zk(journal: list[str]) -> FakeZk:
    fake = FakeZk(journal)
    fake.topics["t"] = {0: (1, 2), 1: (1, 2), 2: (2, 1)}
    fake.configs[("brokers", "1")] = {RATE: "777"}
    fake.configs[("topics", "t")] = {LEADERS: "9:9", "retention.ms": "1"}
    return fake


def step(api: FakeApi, zk: FakeZk, queue: Sequence[Any] = ()) -> reassignments.Result:
    return reassignments.reconcile(
        ("ns", "r"), cast(Any, api), lambda: cast(ZkStore, zk), cluster="c", queue=queue,
        cluster_of=lambda b: "c", settings=reassignments.Settings(), now=NOW,
    )  # fmt: skip


MOVES = [{"topic": "t", "partition": p, "replicas": [3, 1]} for p in range(3)]


def test_batches_run_one_at_a_time_throttled_then_everything_is_restored(
    zk: FakeZk, journal: list[str]
) -> None:
    api = FakeApi(body(partitions=MOVES, throttle=100, batch={"maxPartitions": 2}), journal)
    result = step(api, zk)
    status = api.body["status"]
    assert status["phase"] == "Running" and status["progress"]["batchesTotal"] == 2
    assert zk.reassign is not None and [e.partition for e in zk.reassign] == [0, 1]
    assert zk.configs[("topics", "t")][LEADERS] == "9:9,0:1,0:2,1:1,1:2"
    assert zk.configs[("topics", "t")][FOLLOWERS] == "0:3,1:3"
    assert zk.configs[("brokers", "3")] == {RATE: "100", FRATE: "100"}
    assert [e.reason for e in result.events] == [
        "ProposalReady",
        "Started",
        "ThrottleApplied",
        "BatchStarted",
    ]
    # The throttle record reached the status before the first config write (write-ahead).
    assert journal.index("api status throttle") < journal.index("zk config brokers/1")

    step(api, zk)  # nothing changed: in flight, no new write
    assert zk.writes == 4 + 1  # three brokers + one topic + the znode
    zk.finish_reassignment()
    result = step(api, zk)
    assert [e.partition for e in zk.reassign or []] == [2], "batch 2 runs, batch 1 is never re-submitted"
    assert zk.configs[("topics", "t")][LEADERS] == "9:9,2:1,2:2", "batch 1 entries removed, batch 2 added"
    assert "BatchCompleted" in [e.reason for e in result.events]
    assert zk.elections and {tp.partition for tp in zk.elections[0]} == {0, 1}, "leader 1 stays: elect 3"

    zk.finish_reassignment()
    result = step(api, zk)
    status = api.body["status"]
    assert status["phase"] == "Completed" and status["progressText"] == "3/3"
    assert zk.topics["t"] == {0: (3, 1), 1: (3, 1), 2: (3, 1)}
    assert zk.configs[("brokers", "1")] == {RATE: "777"}, "the previous rate is back"
    assert zk.configs[("brokers", "3")] == {} and zk.configs[("brokers", "2")] == {}
    assert zk.configs[("topics", "t")] == {LEADERS: "9:9", "retention.ms": "1"}
    assert status["throttle"]["applied"] is False and "previousRates" not in status["throttle"]
    assert result.replicas_moved == 1


def test_demote_brokers_reorders_without_throttles_then_elects(zk: FakeZk, journal: list[str]) -> None:
    api = FakeApi(body(mode="DemoteBrokers", approval="Auto", brokers=[1]), journal)
    result = step(api, zk)
    status = api.body["status"]
    assert status["phase"] == "Running" and status["proposal"]["moves"] == 0
    assert zk.reassign is not None and {(e.partition, tuple(e.replicas)) for e in zk.reassign} == {
        (0, (2, 1)),
        (1, (2, 1)),
    }
    assert "ThrottleApplied" not in [e.reason for e in result.events]
    assert zk.configs[("brokers", "1")] == {RATE: "777"} and ("brokers", "2") not in zk.configs
    zk.finish_reassignment()
    result = step(api, zk)
    assert api.body["status"]["phase"] == "Completed"
    assert zk.topics["t"] == {0: (2, 1), 1: (2, 1), 2: (2, 1)}
    assert zk.elections and {tp.partition for tp in zk.elections[0]} == {0, 1}
    assert result.replicas_moved == 0


def test_a_lost_reply_to_the_election_request_is_not_taken_for_someone_elses_election(
    zk: FakeZk, journal: list[str]
) -> None:
    api = FakeApi(body(partitions=MOVES[:1]), journal)
    step(api, zk)
    zk.finish_reassignment()
    zk.leaders[("t", 0)] = 1  # Kafka kept leader 1 (it stays a replica): 3 must be elected
    zk.lose_election_reply = True
    result = step(api, zk)
    assert [e.reason for e in result.events] == ["BatchCompleted", "ZooKeeperError"]
    assert api.body["status"]["phase"] == "Running", "the election request is not known to have landed"
    result = step(api, zk)  # the retry finds the znode it wrote, still pending
    reasons = [e.reason for e in result.events]
    assert "LeaderElection" in reasons and "LeaderElectionSkipped" not in reasons
    assert api.body["status"]["phase"] == "Completed" and len(zk.elections) == 1


def test_a_pending_election_that_leaves_partitions_out_is_reported_as_skipped(
    zk: FakeZk, journal: list[str]
) -> None:
    api = FakeApi(body(partitions=MOVES[:1]), journal)
    step(api, zk)
    zk.finish_reassignment()
    zk.leaders[("t", 0)] = 1
    zk.pending_election = (znodes_admin.TopicPartition("other", 0),)
    result = step(api, zk)
    assert "LeaderElectionSkipped" in [e.reason for e in result.events] and not zk.elections
    assert api.body["status"]["phase"] == "Completed"


def test_a_crash_after_the_write_ahead_reapplies_the_recorded_throttle_not_a_fresh_reading(
    zk: FakeZk, journal: list[str]
) -> None:
    api = FakeApi(body(partitions=MOVES[:1], throttle=100), journal)
    step(api, zk)
    status = api.body["status"]
    # Simulate the crash: ZooKeeper keeps the operator's throttle, the status only the write-ahead
    # (applied: false) and the batch not yet submitted.
    zk.reassign = None
    zk.topics["t"][0] = (1, 2)
    zk.adding.clear()
    status["throttle"]["applied"] = False
    status["progress"]["batchStartedAt"] = None
    step(api, zk)
    assert api.body["status"]["throttle"]["previousRates"][0] == {"broker": 1, "leaderRate": "777"}
    zk.finish_reassignment()
    step(api, zk)
    assert zk.configs[("brokers", "1")] == {RATE: "777"}, "restored from the record, not from our own value"


def test_a_batch_submitted_just_before_a_crash_is_announced_once_by_the_next_run(
    zk: FakeZk, journal: list[str]
) -> None:
    """The operator died after writing the batch's znode and before its status and Events: the
    run that finds the batch moving posts the BatchStarted nobody saw, and later polls do not."""
    api = FakeApi(body(partitions=MOVES[:1]), journal)
    first = step(api, zk)
    assert [e.reason for e in first.events].count("BatchStarted") == 1 and zk.reassign is not None
    api.body["status"]["progress"]["batchStartedAt"] = None  # the crash: only the write-ahead landed
    adopted = step(api, zk)
    assert [e.reason for e in adopted.events] == ["BatchStarted"]
    assert "before the operator restarted" in adopted.events[0].message
    assert zk.reassign is not None and api.body["status"]["progress"]["batchStartedAt"]
    assert "BatchStarted" not in [e.reason for e in step(api, zk).events]


def test_manual_approval_writes_nothing_until_approved(zk: FakeZk, journal: list[str]) -> None:
    api = FakeApi(body(partitions=MOVES[:1], approval="Manual", throttle=100), journal)
    step(api, zk)
    step(api, zk)
    assert api.body["status"]["phase"] == "ProposalReady" and zk.writes == 0
    api.body["metadata"]["annotations"] = {"kafka.zk-operator.io/approve": "true"}
    step(api, zk)
    assert api.body["status"]["phase"] == "Running" and zk.reassign is not None


def test_queued_behind_an_earlier_reassignment_writes_nothing(zk: FakeZk, journal: list[str]) -> None:
    api = FakeApi(body(partitions=MOVES[:1]), journal)
    step(api, zk, queue=[(0, "2024-12-31T00:00:00Z", "other", "ns/first")])
    status = api.body["status"]
    assert status["phase"] == "Queued" and "ns/first" in status["message"] and zk.writes == 0


def test_a_foreign_znode_is_waited_for(zk: FakeZk, journal: list[str]) -> None:
    zk.reassign = [znodes_admin.PartitionReassignment("other", 0, (1,))]
    api = FakeApi(body(partitions=MOVES[:1]), journal)
    step(api, zk)
    assert api.body["status"]["phase"] == "Queued"
    assert api.body["status"]["conditions"][0]["reason"] == "WaitingForExternalReassignment"
    assert zk.writes == 0


def test_invalid_input_fails_and_writes_nothing(zk: FakeZk, journal: list[str]) -> None:
    api = FakeApi(
        body(partitions=[{"topic": "t", "partition": 0, "replicas": [1, 9]}], throttle=100), journal
    )
    result = step(api, zk)
    status = api.body["status"]
    assert status["phase"] == "Failed" and status["conditions"][0]["reason"] == "InvalidSpec"
    assert zk.writes == 0 and [e.reason for e in result.events] == ["Refused"]
    step(api, zk)
    assert [e.reason for e in step(api, zk).events] == [], "refused once, not at every poll"


def test_stop_waits_for_the_batch_in_flight(zk: FakeZk, journal: list[str]) -> None:
    api = FakeApi(body(partitions=MOVES, throttle=100, batch={"maxPartitions": 1}), journal)
    step(api, zk)
    api.body["metadata"]["annotations"] = {"kafka.zk-operator.io/stop": "true"}
    step(api, zk)
    assert (
        api.body["status"]["phase"] == "Running"
        and api.body["status"]["conditions"][0]["reason"] == "Stopping"
    )
    zk.finish_reassignment()
    step(api, zk)
    assert api.body["status"]["phase"] == "Stopped" and zk.reassign is None
    assert zk.topics["t"] == {0: (3, 1), 1: (1, 2), 2: (2, 1)}
    assert zk.configs[("brokers", "3")] == {}


def test_deleting_waits_for_the_batch_then_removes_throttles(zk: FakeZk, journal: list[str]) -> None:
    api = FakeApi(body(partitions=MOVES[:1], throttle=100), journal)
    step(api, zk)
    api.body["metadata"]["deletionTimestamp"] = "2025-06-01T12:00:00Z"
    delete: Callable[[], reassignments.Result] = lambda: reassignments.delete(  # noqa: E731
        ("ns", "r"), cast(Any, api), lambda: cast(ZkStore, zk), settings=reassignments.Settings(), now=NOW
    )
    assert delete().done is False
    zk.finish_reassignment()
    assert delete().done is True
    assert zk.configs[("brokers", "1")] == {RATE: "777"} and zk.configs[("brokers", "3")] == {}


def test_rack_warnings_stay_in_the_status_for_the_whole_run(zk: FakeZk, journal: list[str]) -> None:
    zk.brokers = {1: "a", 2: "b", 3: "a"}
    api = FakeApi(body(partitions=MOVES[:1], rackPolicy="Warn"), journal)
    for _ in range(2):
        step(api, zk)
        kinds = {c["type"]: c for c in api.body["status"]["conditions"]}
        assert kinds["Warning"]["status"] == "True" and "span 1 rack(s)" in kinds["Warning"]["message"]
    assert api.body["status"]["proposal"]["warnings"]


def test_rack_enforce_policy_refuses_the_same_request(zk: FakeZk, journal: list[str]) -> None:
    zk.brokers = {1: "a", 2: "b", 3: "a"}
    api = FakeApi(body(partitions=MOVES[:1]), journal)
    step(api, zk)
    assert api.body["status"]["phase"] == "Failed" and zk.writes == 0


@pytest.mark.parametrize("poll_in_between", [True, False], ids=["polled-again", "batch-ended-first"])
def test_a_throttle_change_cut_short_is_completed_and_then_fully_restored(
    zk: FakeZk, journal: list[str], poll_in_between: bool
) -> None:
    """spec.throttle 100 -> 200 reached the status (applied: false) and broker 1 only, then the
    operator died. Every broker must end at 200 while the batch runs and back at its previous
    value afterwards - not 100 left behind on brokers 2 and 3."""
    api = FakeApi(body(partitions=MOVES[:1], throttle=100), journal)
    step(api, zk)
    assert all(zk.configs[("brokers", str(b))][RATE] == "100" for b in (1, 2, 3))
    api.body["spec"]["throttle"] = 200
    api.body["status"]["throttle"].update(rate=200, applied=False)
    zk.configs[("brokers", "1")].update({RATE: "200", FRATE: "200"})
    if poll_in_between:
        step(api, zk)
        assert all(zk.configs[("brokers", str(b))][RATE] == "200" for b in (1, 2, 3))
        assert api.body["status"]["throttle"]["applied"] is True
    zk.finish_reassignment()
    step(api, zk)
    assert api.body["status"]["phase"] == "Completed"
    assert zk.configs[("brokers", "1")] == {RATE: "777"}
    assert zk.configs[("brokers", "2")] == {} and zk.configs[("brokers", "3")] == {}
    assert zk.configs[("topics", "t")] == {LEADERS: "9:9", "retention.ms": "1"}


def test_killed_right_after_submitting_the_first_batch_it_resumes_as_the_owner(
    zk: FakeZk, journal: list[str]
) -> None:
    """The final status patch of the run that created the znode never happens (operator killed)."""

    class KilledBeforeTheFinalPatch(FakeApi):
        def patch_status(self, ref: tuple[str, str], fields: Mapping[str, Any]) -> None:
            if zk.reassign is not None:
                raise RuntimeError("killed")
            super().patch_status(ref, fields)

    api = KilledBeforeTheFinalPatch(body(partitions=MOVES[:1], throttle=100), journal)
    with pytest.raises(RuntimeError, match="killed"):
        step(api, zk)
    assert zk.reassign is not None
    resumed = FakeApi(api.body, journal)
    step(resumed, zk)
    status = resumed.body["status"]
    assert status["phase"] == "Running" and "in flight" in status["message"], status["message"]
    zk.finish_reassignment()
    step(resumed, zk)
    assert resumed.body["status"]["phase"] == "Completed"
    assert zk.configs[("brokers", "1")] == {RATE: "777"} and zk.configs[("brokers", "3")] == {}


def test_an_auto_proposal_gone_stale_and_recomputed_by_spark_waits_for_the_job(
    zk: FakeZk, journal: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeApi(body(mode="Rebalance", approval="Auto"), journal)
    zk.reassign = [znodes_admin.PartitionReassignment("other", 0, (1,))]  # someone else's: wait
    step(api, zk)
    assert api.body["status"]["phase"] == "Queued" and api.body["status"]["proposal"]["id"]
    zk.reassign = None
    zk.topics["t"][0] = (2, 1)  # the cluster moved on: the proposal is stale

    def still_planning(*_: Any) -> Any:
        raise reassignment_offload.StillPlanning("The plan is being computed by Spark job ns/kzo-plan-x")

    monkeypatch.setattr(reassignment_offload, "plan", still_planning)
    step(api, zk)
    status = api.body["status"]
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (status["phase"], ready["reason"]) == ("Pending", "Planning"), status
    assert zk.reassign is None


def test_a_spark_job_that_ended_without_a_plan_is_reported_and_submitted_again(
    zk: FakeZk, journal: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeApi(body(mode="Rebalance", approval="Auto"), journal)
    failure = "Spark job ns/kzo-plan-x has no result: Failed: BackoffLimitExceeded"

    def failed(*_: Any) -> Any:
        raise plan_offload.OffloadFailed(failure)

    monkeypatch.setattr(reassignment_offload, "plan", failed)
    result = step(api, zk)
    status = api.body["status"]
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (status["phase"], ready["reason"]) == ("Pending", "PlanJobFailed"), status
    assert status["message"].startswith(failure) and "submitted again" in status["message"]
    assert [(e.type, e.reason) for e in result.events] == [("Warning", "PlanJobFailed")]
    assert zk.reassign is None

    def still_planning(*_: Any) -> Any:
        raise reassignment_offload.StillPlanning("The plan is being computed by Spark job ns/kzo-plan-x")

    monkeypatch.setattr(reassignment_offload, "plan", still_planning)  # the next pass: submitted again
    step(api, zk)
    ready = next(c for c in api.body["status"]["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "Planning"


def test_a_batch_moved_by_someone_else_is_waited_for_not_taken_for_ours(
    zk: FakeZk, journal: list[str]
) -> None:
    """kafka-reassign-partitions 3.x (Admin API, no znode) moves partition 0 of our first batch."""
    zk.topics["t"][0] = (1, 2, 3)
    zk.adding["t"] = {0: (3,)}  # in flight to [1, 3], someone else's target
    api = FakeApi(body(partitions=MOVES[:1], throttle=100), journal)
    step(api, zk)
    status = api.body["status"]
    assert status["phase"] == "Running" and "not started by this resource" in status["message"], status
    assert zk.reassign is None and zk.configs[("brokers", "1")] == {RATE: "777"}, "no throttle, no znode"
    assert ("brokers", "3") not in zk.configs

    zk.topics["t"][0] = (1, 3)  # their move is done
    zk.adding.clear()
    step(api, zk)
    assert zk.reassign is not None and [list(e.replicas) for e in zk.reassign] == [[3, 1]]
    assert api.body["status"]["progress"]["batchSubmitted"] == 1


def test_a_spark_planned_proposal_is_saved_before_its_job_is_deleted(
    zk: FakeZk, journal: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's result is expensive: a failed status save must not throw it away."""
    fake = FakeOffload(threshold=1, monkeypatch=monkeypatch)
    fake.finished = True
    zk.topics["t"] = {p: (1, 2) for p in range(6)}
    api = FakeApi(body(mode="Rebalance", approval="Manual"), journal)
    monkeypatch.setattr(api, "spark_jobs", lambda: object())
    real_patch = api.patch_status
    failures = iter([True, True])

    def flaky_patch(ref: tuple[str, str], fields: Mapping[str, Any]) -> None:
        if "proposal" in fields and next(failures, False):
            raise errors.ClusterUnavailable("the API server timed out")
        real_patch(ref, fields)

    monkeypatch.setattr(api, "patch_status", flaky_patch)
    with pytest.raises(errors.ClusterUnavailable):
        step(api, zk)
    assert fake.cleaned == [] and len(fake.submitted) == 1, "the job and its result are kept"

    result = step(api, zk)
    status = api.body["status"]
    assert status["phase"] == "ProposalReady" and status["proposal"]["id"]
    assert len(fake.submitted) == 1, "the same job's result, not a new job"
    assert fake.cleaned == [f"spark-ns/{fake.submitted[0]}"]
    assert "ProposalReady" in [e.reason for e in result.events]

    step(api, zk)  # the saved proposal is used from now on: no job again
    assert len(fake.submitted) == 1 and len(fake.cleaned) == 1


def test_a_spark_job_that_cannot_be_deleted_is_reported_and_the_proposal_kept(
    zk: FakeZk, journal: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeOffload(threshold=1, monkeypatch=monkeypatch)
    fake.finished = True

    def refuse(jobs: object, namespace: str, name: str) -> None:
        raise errors.ClusterUnavailable(f"deleting Job {namespace}/{name} failed: 403 Forbidden")

    monkeypatch.setattr(plan_offload, "cleanup", refuse)
    zk.topics["t"] = {p: (1, 2) for p in range(6)}
    api = FakeApi(body(mode="Rebalance", approval="Manual"), journal)
    monkeypatch.setattr(api, "spark_jobs", lambda: object())
    result = step(api, zk)
    assert api.body["status"]["phase"] == "ProposalReady"
    warning = next(e for e in result.events if e.reason == "SparkJobNotDeleted")
    assert (
        "403 Forbidden" in warning.message
        and "kubectl delete job,configmap,pod -n spark-ns" in warning.message
    )


def test_the_estimated_completion_follows_completed_batches_and_goes_when_done(
    zk: FakeZk, journal: list[str]
) -> None:
    api = FakeApi(body(partitions=MOVES, batch={"maxPartitions": 2}), journal)

    def poll(minutes: int) -> dict[str, Any]:
        reassignments.reconcile(
            ("ns", "r"), cast(Any, api), lambda: cast(ZkStore, zk), cluster="c", queue=(),
            cluster_of=lambda b: "c", settings=reassignments.Settings(), now=NOW + timedelta(minutes=minutes),
        )  # fmt: skip
        return dict(api.body["status"]["progress"])

    assert "estimatedCompletionAt" not in poll(0), "nothing done yet: no estimate"
    zk.finish_reassignment()
    # 2 of 3 partitions in 10 min: the last one in 5 more.
    assert poll(10)["estimatedCompletionAt"] == "2025-06-01T12:15:00Z"
    poll(11)  # batch 2 is seen in flight
    journal.clear()
    assert poll(12)["estimatedCompletionAt"] == "2025-06-01T12:15:00Z", "kept while nothing completes"
    assert not [line for line in journal if line.startswith("api status")], "a no-change poll writes nothing"
    zk.finish_reassignment()
    progress = poll(14)
    assert progress["completedAt"] == "2025-06-01T12:14:00Z" and "estimatedCompletionAt" not in progress


def test_an_approval_of_an_earlier_proposal_does_not_start_a_new_one(zk: FakeZk, journal: list[str]) -> None:
    api = FakeApi(body(partitions=MOVES, approval="Manual", batch={"maxPartitions": 2}), journal)
    step(api, zk)
    first = api.body["status"]["proposal"]["id"]
    # The user approves while the spec changes (a new batch limit): the next pass plans anew.
    api.body["metadata"]["annotations"] = {"kafka.zk-operator.io/approve": "true"}
    api.body["metadata"]["generation"] = 2
    api.body["spec"]["batch"] = {"maxPartitions": 1}
    result = step(api, zk)
    status = api.body["status"]
    assert status["proposal"]["id"] != first
    assert status["phase"] == "ProposalReady" and "waits for approval" in status["message"]
    assert "kafka.zk-operator.io/approve" not in api.body["metadata"]["annotations"]
    assert zk.writes == 0 and zk.reassign is None
    assert "Started" not in [e.reason for e in result.events]
    # Approving the new proposal starts it.
    api.body["metadata"]["annotations"] = {"kafka.zk-operator.io/approve": status["proposal"]["id"]}
    step(api, zk)
    assert api.body["status"]["phase"] == "Running" and zk.reassign is not None


def test_a_refresh_of_a_failed_reassignment_is_answered_and_consumed(zk: FakeZk, journal: list[str]) -> None:
    api = FakeApi(body(partitions=[{"topic": "t", "partition": 0, "replicas": [1, 9]}]), journal)
    step(api, zk)
    assert api.body["status"]["phase"] == "Failed"
    api.body["metadata"]["annotations"] = {"kafka.zk-operator.io/refresh": "true"}
    step(api, zk)  # broker 9 still does not exist: refused again
    assert api.body["status"]["phase"] == "Failed" and zk.writes == 0
    assert "kafka.zk-operator.io/refresh" not in api.body["metadata"]["annotations"], "answered, so removed"
    # Once broker 9 is there, a refresh plans again and the reassignment runs.
    zk.brokers[9] = "c"
    api.body["metadata"]["annotations"] = {"kafka.zk-operator.io/refresh": "true"}
    step(api, zk)
    assert api.body["status"]["phase"] == "Running" and zk.reassign is not None


def test_an_approval_naming_another_proposal_is_pointed_out(zk: FakeZk, journal: list[str]) -> None:
    api = FakeApi(body(partitions=MOVES[:1], approval="Manual"), journal)
    step(api, zk)
    proposal = api.body["status"]["proposal"]["id"]
    api.body["metadata"]["annotations"] = {"kafka.zk-operator.io/approve": "0123abcd"}
    step(api, zk)
    message = api.body["status"]["message"]
    assert api.body["status"]["phase"] == "ProposalReady" and zk.writes == 0
    assert "kafka.zk-operator.io/approve=0123abcd names another proposal" in message
    assert f"kafka.zk-operator.io/approve={proposal}" in message and "1 replica move)" in message


def test_a_throttle_on_a_line_without_throttles_waits_for_the_spec_and_writes_nothing(
    zk: FakeZk, journal: list[str]
) -> None:
    """Kafka 0.10.0 has no replication throttles and dies on a v2 notification for broker configs."""
    zk.line = kafka_lines.cluster_line({1: 3, 2: 3, 3: 3}, None)
    configs_before = dict(zk.configs)
    api = FakeApi(body(partitions=MOVES, throttle=100), journal)
    result = step(api, zk)
    status = api.body["status"]
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["reason"], status["progress"].get("batchStartedAt")) == ("NotSupported", None), status
    assert "spec.throttle needs Kafka 0.10.1 or later" in ready["message"]
    assert "Remove spec.throttle to move without one." in ready["message"]
    assert "NotSupported" in [e.reason for e in result.events]
    assert zk.writes == 0 and zk.reassign is None and zk.configs == configs_before
    del api.body["spec"]["throttle"]  # what the message asks for
    step(api, zk)
    assert zk.reassign is not None and zk.configs == configs_before


def test_a_throttled_plan_with_sizes_keeps_them_and_balances_bytes_per_batch(
    zk: FakeZk, journal: list[str]
) -> None:
    """Brokers 3 and 4 each receive one big and one small partition, in that plan order: by
    counts, batch 1 would be {0, 1} (broker 3's two) and batch 2 {2, 3}, each as long as a big one;
    by bytes, the two big ones copy side by side, then the two small ones."""
    zk.topics["t"] = {0: (1, 2), 1: (2, 1), 2: (2, 1), 3: (1, 2)}
    zk.brokers[4] = "d"
    wanted = {0: [3, 2], 1: [3, 1], 2: [4, 1], 3: [4, 2]}
    sizes = {("t", 0): 900, ("t", 1): 100, ("t", 2): 1000, ("t", 3): 90}
    partitions = [{"topic": "t", "partition": p, "replicas": r} for p, r in wanted.items()]
    api = FakeApi(body(partitions=partitions, throttle=100, batch={"maxPartitions": 2}), journal)

    def run() -> reassignments.Result:
        return reassignments.reconcile(
            ("ns", "r"), cast(Any, api), lambda: cast(ZkStore, zk), cluster="c", queue=(),
            cluster_of=lambda b: "c", settings=reassignments.Settings(), now=NOW, sizes_for=lambda: sizes,
        )  # fmt: skip

    result = run()
    status = api.body["status"]
    # Broker 2 leads partitions 1 and 2: it sends 1,100 bytes, more than broker 4 receives.
    assert status["proposal"]["bytesMoved"] == 2090 and status["proposal"]["busiestBrokerBytes"] == 1100
    assert [entry["bytes"] for entry in status["plan"]] == [900, 100, 1000, 90]
    assert result.batch_in_flight
    assert [e.partition for e in zk.reassign or []] == [0, 2]
    zk.finish_reassignment()
    assert run().batch_in_flight  # batch 2 submitted in the same pass
    zk.finish_reassignment()
    finished = run()
    assert not finished.batch_in_flight and api.body["status"]["phase"] == "Completed"


def test_without_a_throttle_no_sizes_are_read(zk: FakeZk, journal: list[str]) -> None:
    api = FakeApi(body(partitions=MOVES[:1]), journal)

    def unreadable() -> dict[tuple[str, int], int]:
        raise AssertionError("sizes read for an unthrottled Explicit plan")

    reassignments.reconcile(
        ("ns", "r"), cast(Any, api), lambda: cast(ZkStore, zk), cluster="c", queue=(),
        cluster_of=lambda b: "c", settings=reassignments.Settings(), now=NOW, sizes_for=unreadable,
    )  # fmt: skip
    assert "bytesMoved" not in api.body["status"]["proposal"]
    assert "bytes" not in api.body["status"]["plan"][0]
