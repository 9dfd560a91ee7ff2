"""kstatus-compliant conditions of both kinds (``Stalled``, ``Reconciling``, and the
PartitionReassignment's ``ProposalReady`` / ``Running`` / ``Ready``): each outcome's conditions,
what kstatus (Flux's health checks) makes of them, and that they do not flap.

:func:`kstatus` restates the generic rules of kstatus (sigs.k8s.io/cli-utils ``pkg/kstatus``) for
a resource of a kind it has no rules for: being deleted is Terminating; ``status.observedGeneration``
behind ``metadata.generation`` is InProgress; then the first ``Reconciling=True`` or
``Stalled=True`` condition decides (InProgress / Failed); anything else is Current.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.reassignment.status import Phase, Verdict, Why, verdict_fields
from kafka_zk_operator.domain.topic import status as ts
from kafka_zk_operator.service import plan_offload
from tests.unit.test_argocd_health import _error_classes, _instance
from tests.unit.test_reassignment_service import MOVES, FakeApi, FakeZk, body, step

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
LATER = NOW + timedelta(minutes=5)


def kstatus(generation: int, status: dict[str, Any]) -> str:
    observed = status.get("observedGeneration")
    if observed is not None and observed != generation:
        return "InProgress"
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Reconciling" and condition.get("status") == "True":
            return "InProgress"
        if condition.get("type") == "Stalled" and condition.get("status") == "True":
            return "Failed"
    return "Current"


def by_type(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in status["conditions"]}


# --- KafkaTopic --------------------------------------------------------------------------------------


def topic_status(
    outcome: ts.Outcome | None, previous: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    return ts.build_topic_status(
        topic_name="orders", generation=4, now=kw.pop("now", NOW), outcome=outcome, previous=previous, **kw
    )


PERMANENT: set[type[errors.KzoError]] = {
    errors.InvalidSpec, errors.InvalidTopicName, errors.InvalidReplicationFactor, errors.InvalidPartitions,
    errors.InvalidConfig, errors.NotSupported, errors.RequestTooLarge,
    errors.ResourceConflict, errors.TopicDeletedInKafka, errors.MalformedZnode, errors.KzoError,
}  # fmt: skip
TRANSIENT: set[type[errors.KzoError]] = {
    errors.ClusterUnavailable, errors.KafkaLineMismatch, errors.ZooKeeperError, errors.VersionConflict,
    errors.LeadershipLost, errors.ReassignmentInProgress, errors.TopicBeingDeleted,
    errors.ReplicationFactorChanging, errors.KRaftMigrationDetected, plan_offload.OffloadFailed,
}  # fmt: skip


def _by_name(classes: set[type[errors.KzoError]]) -> list[type[errors.KzoError]]:
    return sorted(classes, key=lambda cls: cls.__name__)


def test_every_error_class_is_either_permanent_or_transient_here() -> None:
    """A new error class must be placed: a test below then pins its conditions."""
    known = PERMANENT | TRANSIENT
    assert {c for c in _error_classes() if c.__module__ == errors.__name__} <= known


@pytest.mark.parametrize("cls", _by_name(PERMANENT))
def test_a_permanent_failure_is_stalled_for_kstatus(cls: type[errors.KzoError]) -> None:
    error = _instance(cls)
    status = topic_status(error)
    assert [c["type"] for c in status["conditions"]] == ["Ready", "Stalled"]
    ready, stalled = status["conditions"]
    assert ready["status"] == "False"
    assert stalled == {**ready, "type": "Stalled", "status": "True"}
    assert stalled["reason"] == error.reason.value and stalled["message"] == str(error)
    assert kstatus(4, status) == "Failed"


@pytest.mark.parametrize("cls", _by_name(TRANSIENT))
def test_an_error_the_operator_retries_is_reconciling_for_kstatus(cls: type[errors.KzoError]) -> None:
    error = _instance(cls)
    status = topic_status(error)
    assert [c["type"] for c in status["conditions"]] == ["Ready", "Reconciling"]
    reconciling = by_type(status)["Reconciling"]
    assert reconciling["status"] == "True" and reconciling["reason"] == error.reason.value
    assert kstatus(4, status) == "InProgress"


def test_malformed_znode_is_stalled_although_its_reason_is_zookeeper_error() -> None:
    status = topic_status(errors.MalformedZnode("/brokers/topics/orders", "not JSON"))
    assert by_type(status)["Stalled"]["reason"] == "ZooKeeperError"


@pytest.mark.parametrize("reason", sorted(ts.SUCCESS_REASONS))
def test_success_carries_ready_alone_and_is_current(reason: errors.Reason) -> None:
    status = topic_status(reason)
    assert [(c["type"], c["status"]) for c in status["conditions"]] == [("Ready", "True")]
    assert kstatus(4, status) == "Current"


def test_recovery_removes_stalled_and_reconciling_and_a_stale_generation_is_in_progress() -> None:
    stalled = topic_status(errors.InvalidConfig("bad key"))
    assert kstatus(5, stalled) == "InProgress", "a newer spec is not judged by the old status"
    retrying = topic_status(
        errors.ClusterUnavailable("ZooKeeper is unreachable"), previous=stalled, now=LATER
    )
    assert [c["type"] for c in retrying["conditions"]] == ["Ready", "Reconciling"]
    assert by_type(retrying)["Ready"]["lastTransitionTime"] == by_type(stalled)["Ready"]["lastTransitionTime"]
    fixed = topic_status(errors.Reason.CREATED, previous=retrying, now=LATER)
    assert [c["type"] for c in fixed["conditions"]] == ["Ready"]


def test_the_same_failure_again_rebuilds_the_same_conditions() -> None:
    """No flapping: a resync that finds the same failure has no status change to write."""
    for error in (errors.InvalidSpec("bad"), errors.ClusterUnavailable("down")):
        first = topic_status(error)
        again = topic_status(error, previous=first, now=LATER)
        assert again["conditions"] == first["conditions"]
        assert "conditions" not in ts.status_changes(first, again, now=LATER, heartbeat_seconds=3600)


def test_paused_keeps_stalled_drops_reconciling_and_unmanaged_has_neither() -> None:
    stalled = topic_status(errors.NotSupported("Decreasing partitions is not supported."))
    paused = topic_status(None, previous=stalled, mode=ts.ReconcileMode.PAUSED)
    assert [c["type"] for c in paused["conditions"]] == ["Ready", "Stalled", "ReconciliationPaused"]
    assert by_type(paused)["Stalled"] == by_type(stalled)["Stalled"]
    retrying = topic_status(errors.ZooKeeperError("connection loss"))
    paused = topic_status(None, previous=retrying, mode=ts.ReconcileMode.PAUSED)
    assert [c["type"] for c in paused["conditions"]] == ["Ready", "ReconciliationPaused"]
    unmanaged = topic_status(None, previous=stalled, mode=ts.ReconcileMode.UNMANAGED)
    assert [c["type"] for c in unmanaged["conditions"]] == ["Unmanaged"]


# --- PartitionReassignment ---------------------------------------------------------------------------


def reassignment_status(
    phase: Phase, why: Why | str, previous: dict[str, Any] | None = None
) -> dict[str, Any]:
    verdict = Verdict(phase, why, f"{phase.value}: {why}.")
    return verdict_fields(
        verdict, generation=2, now=NOW if previous is None else LATER, previous=previous or {}
    )


@pytest.mark.parametrize(
    ("phase", "why", "true", "kstatus_result"),
    [
        (Phase.PENDING, Why.PENDING, {"Reconciling"}, "InProgress"),
        (Phase.PENDING, Why.PLANNING, {"Reconciling"}, "InProgress"),
        (Phase.PENDING, "PlanJobFailed", {"Reconciling"}, "InProgress"),
        (Phase.PENDING, Why.CLUSTER_UNAVAILABLE, {"Reconciling"}, "InProgress"),
        (Phase.PROPOSAL_READY, Why.AWAITING_APPROVAL, {"ProposalReady"}, "Current"),
        (Phase.PROPOSAL_READY, Why.PROPOSAL_STALE, {"ProposalReady"}, "Current"),
        (Phase.PROPOSAL_READY, Why.PENDING, {"ProposalReady", "Reconciling"}, "InProgress"),
        (Phase.QUEUED, Why.QUEUED, {"ProposalReady", "Reconciling"}, "InProgress"),
        (Phase.QUEUED, Why.WAITING_FOR_EXTERNAL, {"ProposalReady", "Reconciling"}, "InProgress"),
        (Phase.RUNNING, Why.RUNNING, {"ProposalReady", "Running", "Reconciling"}, "InProgress"),
        (Phase.RUNNING, Why.WAITING_FOR_BROKERS, {"ProposalReady", "Running", "Reconciling"}, "InProgress"),
        (Phase.RUNNING, Why.STOPPING, {"ProposalReady", "Running", "Reconciling"}, "InProgress"),
        (Phase.RUNNING, Why.ZOOKEEPER_ERROR, {"ProposalReady", "Running", "Reconciling"}, "InProgress"),
        (Phase.COMPLETED, Why.COMPLETED, {"ProposalReady", "Ready"}, "Current"),
        (Phase.FAILED, Why.FAILED, {"Stalled"}, "Failed"),
        (Phase.FAILED, Why.INVALID_SPEC, {"Stalled"}, "Failed"),
        (Phase.FAILED, Why.NOT_SUPPORTED, {"Stalled"}, "Failed"),
        (Phase.STOPPED, Why.STOPPED, {"Stalled"}, "Failed"),
    ],
)
def test_each_phase_has_its_conditions(
    phase: Phase, why: Why | str, true: set[str], kstatus_result: str
) -> None:
    status = reassignment_status(phase, why)
    kinds = by_type(status)
    assert {"Ready", "ProposalReady", "Running"} <= set(kinds), "state conditions are always written"
    assert {kind for kind, c in kinds.items() if c["status"] == "True"} == true
    assert {kind for kind, c in kinds.items() if c["status"] != "True"} <= {
        "Ready",
        "ProposalReady",
        "Running",
    }
    assert all(c["reason"] == str(why) and c["observedGeneration"] == 2 for c in kinds.values())
    assert kstatus(2, status) == kstatus_result


def test_transition_times_follow_each_condition_through_a_run() -> None:
    proposal = reassignment_status(Phase.PROPOSAL_READY, Why.AWAITING_APPROVAL)
    running = reassignment_status(Phase.RUNNING, Why.RUNNING, previous=proposal)
    kinds, before = by_type(running), by_type(proposal)
    assert kinds["ProposalReady"]["lastTransitionTime"] == before["ProposalReady"]["lastTransitionTime"]
    assert kinds["Ready"]["lastTransitionTime"] == before["Ready"]["lastTransitionTime"]
    assert kinds["Running"]["lastTransitionTime"] == "2025-03-01T12:05:00Z"
    assert kinds["Reconciling"]["lastTransitionTime"] == "2025-03-01T12:05:00Z"
    again = reassignment_status(Phase.RUNNING, Why.RUNNING, previous=running)
    assert again["conditions"] == running["conditions"], "the same verdict again: nothing to write"
    failed = reassignment_status(Phase.FAILED, Why.FAILED, previous=running)
    assert [c["type"] for c in failed["conditions"]] == ["Ready", "ProposalReady", "Running", "Stalled"]


def test_a_refused_reassignment_is_stalled_and_a_manual_proposal_waits_without_reconciling() -> None:
    journal: list[str] = []
    zk = FakeZk(journal)
    zk.topics["t"] = {0: (1, 2), 1: (1, 2), 2: (2, 1)}
    refused = FakeApi(body(partitions=[{"topic": "t", "partition": 0, "replicas": [1, 9]}]), journal)
    step(refused, zk)
    assert kstatus(1, refused.body["status"]) == "Failed"
    assert by_type(refused.body["status"])["Stalled"]["reason"] == "InvalidSpec"
    manual = FakeApi(body(partitions=MOVES[:1], approval="Manual"), journal)
    step(manual, zk)
    assert by_type(manual.body["status"])["ProposalReady"]["status"] == "True"
    assert kstatus(1, manual.body["status"]) == "Current", "a Flux health check does not wait for a person"
    manual.body["metadata"]["annotations"] = {"kafka.zk-operator.io/approve": "true"}
    step(manual, zk)
    assert kstatus(1, manual.body["status"]) == "InProgress"
    assert by_type(manual.body["status"])["Running"]["status"] == "True"


def test_an_ended_reassignment_from_an_older_operator_gets_its_conditions_once() -> None:
    journal: list[str] = []
    zk = FakeZk(journal)
    old = body(partitions=MOVES[:1])
    old["status"] = {
        "phase": "Failed", "observedGeneration": 1, "message": "Batch 1 cannot run: topic 't' no longer exists.",
        "conditions": [{
            "type": "Ready", "status": "False", "reason": "Failed", "observedGeneration": 1,
            "message": "Batch 1 cannot run: topic 't' no longer exists.", "lastTransitionTime": "2025-01-01T00:00:00Z",
        }],
        "progress": {"startedAt": "2025-01-01T00:00:00Z", "completedAt": "2025-01-01T00:01:00Z"},
    }  # fmt: skip
    api = FakeApi(old, journal)
    step(api, zk)
    status = api.body["status"]
    assert status["phase"] == "Failed" and kstatus(1, status) == "Failed"
    stalled = by_type(status)["Stalled"]
    assert stalled["reason"] == "Failed" and "no longer exists" in stalled["message"]
    assert by_type(status)["Ready"]["lastTransitionTime"] == "2025-01-01T00:00:00Z", "Ready did not flip"
    writes = list(journal)
    step(api, zk)
    assert journal == writes, "stated once: the next reconcile writes nothing"
    api.body["metadata"]["generation"] = 2  # a spec edited after the end changes nothing ...
    step(api, zk)
    status = api.body["status"]
    assert status["phase"] == "Failed" and status["observedGeneration"] == 2  # ... and kstatus sees it read
    assert kstatus(2, status) == "Failed"
