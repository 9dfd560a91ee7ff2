"""Computed proposals planned by the Spark job for large clusters (``service.reassignment_offload``).

``service.plan_offload`` itself (objects, submission, collection) is tested with its own tests;
here it is replaced by a stand-in that runs the in-process engine as "the job", to check the
decisions around it: when to offload, waiting, using the result, cleaning up (only once the
caller has saved the proposal), retrying failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from kafka_zk_operator.adapters.k8s.spark_submit import SparkSettings
from kafka_zk_operator.domain import errors, placement
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.reassignment.plan import ClusterView
from kafka_zk_operator.domain.reassignment.request import ReassignmentRequest, plan_request
from kafka_zk_operator.service import plan_offload
from kafka_zk_operator.service.reassignment import offload as reassignment_offload

RACKS = {1: "a", 2: "b", 3: "c", 4: "a", 5: "b", 6: "c"}
VIEW = ClusterView(
    brokers=RACKS, assignments={"orders": {p: tuple(1 + (p + j) % 3 for j in range(3)) for p in range(30)}}
)
ADD = ReassignmentRequest(mode=Mode.ADD_BROKERS, brokers=(4, 5, 6))


class FakeOffload:
    """Stands in for plan_offload's calls; the "job" is the in-process engine."""

    def __init__(self, threshold: int, monkeypatch: pytest.MonkeyPatch) -> None:
        self.settings = plan_offload.OffloadSettings(threshold, SparkSettings("img", "sa", "spark-ns"))
        self.submitted: list[str] = []
        self.cleaned: list[str] = []
        self.finished = False
        self.fail = False
        self.inputs: dict[str, tuple[Any, Any]] = {}
        self.live: set[str] = set()  # submitted and not cleaned up
        monkeypatch.setattr(plan_offload, "load_settings", lambda jobs: self.settings)
        monkeypatch.setattr(plan_offload, "prepare", lambda name, spark, arrays, req: (name, arrays, req))
        monkeypatch.setattr(plan_offload, "submit", self.submit)
        monkeypatch.setattr(plan_offload, "collect", self.collect)
        monkeypatch.setattr(plan_offload, "cleanup", self.cleanup)
        monkeypatch.setattr(plan_offload, "submitted", lambda jobs, ns, name: name in self.live)
        monkeypatch.setattr(plan_offload, "leftover_pods", lambda jobs, ns, name: [])

    def submit(self, jobs: object, objects: tuple[str, Any, Any]) -> bool:
        name, arrays, request = objects
        self.submitted.append(name)
        self.live.add(name)
        self.inputs.setdefault(name, (arrays, request))
        return True

    def cleanup(self, jobs: object, namespace: str, name: str) -> list[str]:
        self.cleaned.append(f"{namespace}/{name}")
        self.live.discard(name)
        return []

    def collect(self, jobs: object, namespace: str, name: str) -> placement.Plan | None:
        if self.fail:
            raise plan_offload.OffloadFailed(f"Spark job {namespace}/{name} has no result: Failed")
        if not self.finished:
            return None
        arrays, request = self.inputs[name]
        return placement.plan(arrays, request)


def test_small_clusters_are_planned_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeOffload(threshold=1000, monkeypatch=monkeypatch)
    plan = reassignment_offload.plan(object(), ADD, VIEW, ("uid", "1"), [])  # type: ignore[arg-type]
    assert plan.moves == plan_request(ADD, VIEW).moves
    assert fake.submitted == []


def test_without_spark_settings_or_jobs_the_engine_runs_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeOffload(threshold=1, monkeypatch=monkeypatch)
    monkeypatch.setattr(plan_offload, "load_settings", lambda jobs: None)
    assert reassignment_offload.plan(object(), ADD, VIEW, ("uid", "1"), []).moves  # type: ignore[arg-type]
    assert reassignment_offload.plan(None, ADD, VIEW, ("uid", "1"), []).moves
    assert fake.submitted == []


def test_large_clusters_wait_for_the_job_then_use_its_result_and_clean_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeOffload(threshold=10, monkeypatch=monkeypatch)
    with pytest.raises(reassignment_offload.StillPlanning, match="Spark job spark-ns/kzo-plan-"):
        reassignment_offload.plan(object(), ADD, VIEW, ("uid", "1"), [])  # type: ignore[arg-type]
    with pytest.raises(reassignment_offload.StillPlanning):
        reassignment_offload.plan(object(), ADD, VIEW, ("uid", "1"), [])  # type: ignore[arg-type]
    assert len(fake.submitted) == 1, "submitted once, then followed"
    fake.finished = True
    finished: list[reassignment_offload.FinishedJob] = []
    plan = reassignment_offload.plan(object(), ADD, VIEW, ("uid", "1"), finished)  # type: ignore[arg-type]
    expected = plan_request(ADD, VIEW)
    assert plan.moves == expected.moves and plan.lower_bound == expected.lower_bound
    assert plan.notes[-1].startswith("computed by Spark job spark-ns/kzo-plan-")
    assert fake.cleaned == [], "the job and its result stay until the caller saved the proposal"
    assert [job.name for job in finished] == [fake.submitted[0]]
    finished[0].discard()
    assert fake.cleaned == [f"spark-ns/{fake.submitted[0]}"]
    assert finished[0].delete_command() == (
        f"kubectl delete job,configmap,pod -n spark-ns -l kafka.zk-operator.io/spark-job={fake.submitted[0]}"
    )


def test_a_failed_job_is_cleaned_up_so_the_next_attempt_resubmits(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeOffload(threshold=10, monkeypatch=monkeypatch)
    fake.fail = True
    with pytest.raises(plan_offload.OffloadFailed):
        reassignment_offload.plan(object(), ADD, VIEW, ("uid", "1"), [])  # type: ignore[arg-type]
    assert fake.cleaned == [f"spark-ns/{fake.submitted[0]}"]


def test_invalid_requests_fail_before_anything_is_submitted(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeOffload(threshold=10, monkeypatch=monkeypatch)
    with pytest.raises(errors.InvalidSpec, match="broker 9"):
        reassignment_offload.plan(
            object(),  # type: ignore[arg-type]
            ReassignmentRequest(mode=Mode.ADD_BROKERS, brokers=(9,)),
            VIEW,
            ("uid", "1"),
            [],
        )
    assert fake.submitted == []
