"""The life of one offloaded plan's runs (``service.plan_offload`` through
``service.reassignment.offload.plan``), on an in-memory stand-in for the Kubernetes calls.

What the node tests found hard to see: a Job deleted mid-run must be reported, not quietly
created again, and a new run must not start while pods of the earlier one are still there (the
driver keeps its name across runs, and the earlier spark-submit deletes "its" driver by name).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kafka_zk_operator.adapters.k8s import spark_submit
from kafka_zk_operator.adapters.k8s.spark_submit import SparkSettings
from kafka_zk_operator.domain import placement
from kafka_zk_operator.domain.documents import plan_result as plan_document
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.reassignment.plan import ClusterView
from kafka_zk_operator.domain.reassignment.request import ReassignmentRequest, engine_inputs, plan_request
from kafka_zk_operator.service import plan_offload
from kafka_zk_operator.service.reassignment import offload

NAMESPACE = "spark-ns"
KEY = ("uid-1", "1")
NAME = plan_offload.job_name(*KEY)
VIEW = ClusterView(
    brokers={1: "a", 2: "b", 3: "c", 4: "a", 5: "b", 6: "c"},
    assignments={"orders": {p: tuple(1 + (p + j) % 3 for j in range(3)) for p in range(30)}},
)
ADD = ReassignmentRequest(mode=Mode.ADD_BROKERS, brokers=(4, 5, 6))


class MemoryJobs:
    """The ``SparkJobs`` calls the operator makes, on dicts; deleted pods linger for one listing
    (they terminate), as real ones do for their grace period."""

    def __init__(self) -> None:
        self.configmaps_by_name: dict[str, dict[str, Any]] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.pod_labels: dict[str, Mapping[str, str]] = {}
        self.terminating: set[str] = set()
        self.jobs_created = 0

    def create(self, body: Mapping[str, Any], *, dry_run: bool = False) -> dict[str, Any] | None:
        store = self.jobs if body["kind"] == "Job" else self.configmaps_by_name
        name = body["metadata"]["name"]
        if name in store:
            return None
        store[name] = dict(body)
        self.jobs_created += body["kind"] == "Job"
        return dict(body)

    def select_configmaps(self, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        return [
            cm
            for cm in self.configmaps_by_name.values()
            if _matches(cm["metadata"]["labels"], label_selector)
        ]

    def configmaps(self, namespace: str, job: str, role: str) -> list[dict[str, Any]]:
        return self.select_configmaps(namespace, spark_submit.selector(job, role))

    def job(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.jobs.get(name)

    def delete(self, namespace: str, name: str) -> None:
        self.jobs.pop(name, None)
        for cm in self.select_configmaps(namespace, spark_submit.selector(name)):
            del self.configmaps_by_name[cm["metadata"]["name"]]

    def pods(self, namespace: str, label_selector: str) -> list[str]:
        found = [name for name, labels in self.pod_labels.items() if _matches(labels, label_selector)]
        for name in set(found) & self.terminating:  # seen terminating once: gone next time
            del self.pod_labels[name]
        return found

    def delete_pods(self, namespace: str, label_selector: str) -> list[str]:
        names = [name for name, labels in self.pod_labels.items() if _matches(labels, label_selector)]
        self.terminating.update(names)
        return names

    # What the cluster does -------------------------------------------------------------------------
    def start_pods(self, job: str) -> None:
        self.pod_labels[f"{job}-submit-x7k2p"] = spark_submit.labels(job, "submit")
        self.pod_labels[f"{job}-driver"] = spark_submit.labels(job)
        self.pod_labels[f"{job}-exec-1"] = spark_submit.labels(job)
        self.jobs[job]["status"] = {"active": 1}

    def write_result(self, job: str) -> None:
        snapshot = spark_submit.unpack(self.configmaps(NAMESPACE, job, spark_submit.INPUT))
        assert snapshot is not None
        inputs = engine_inputs(ADD, VIEW)
        assert inputs is not None
        plan = placement.plan(inputs.arrays, inputs.requests[0])
        document = plan_document.plan_document(
            plan, request=inputs.requests[0], input_sha256=plan_document.digest(snapshot)
        )
        for body in spark_submit.chunk_configmaps(
            job, NAMESPACE, spark_submit.RESULT, plan_document.dump(document)
        ):
            self.create(body)


def _matches(labels: Mapping[str, str], label_selector: str) -> bool:
    wanted = dict(term.split("=", 1) for term in label_selector.split(","))
    return all(labels.get(k) == v for k, v in wanted.items())


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> MemoryJobs:
    settings = plan_offload.OffloadSettings(10, SparkSettings("img", "sa", NAMESPACE))
    monkeypatch.setattr(plan_offload, "load_settings", lambda jobs: settings)
    return MemoryJobs()


def _plan(jobs: MemoryJobs) -> Any:
    return offload.plan(jobs, ADD, VIEW, KEY, [])  # type: ignore[arg-type]


def test_a_submitted_job_is_followed_not_created_again(jobs: MemoryJobs) -> None:
    with pytest.raises(offload.StillPlanning, match="being computed"):
        _plan(jobs)
    assert plan_offload.submitted(jobs, NAMESPACE, NAME)  # type: ignore[arg-type]
    jobs.start_pods(NAME)
    with pytest.raises(offload.StillPlanning, match="being computed"):
        _plan(jobs)
    assert jobs.jobs_created == 1
    jobs.write_result(NAME)
    assert _plan(jobs).moves == plan_request(ADD, VIEW).moves


def test_a_job_deleted_mid_run_is_reported_its_pods_deleted_and_it_is_resubmitted_once_they_are_gone(
    jobs: MemoryJobs,
) -> None:
    with pytest.raises(offload.StillPlanning):
        _plan(jobs)
    jobs.start_pods(NAME)
    del jobs.jobs[NAME]  # kubectl delete job: its pod terminates, the driver may still run

    with pytest.raises(plan_offload.OffloadFailed, match=f"{NAMESPACE}/{NAME} has no result: Missing"):
        _plan(jobs)
    assert jobs.jobs_created == 1, "a deleted Job is reported, not created again"
    assert jobs.configmaps_by_name == {}, "its ConfigMaps are deleted"
    assert jobs.terminating == {f"{NAME}-submit-x7k2p", f"{NAME}-driver", f"{NAME}-exec-1"}

    # Its pods are still terminating: nothing is submitted, the status says why.
    with pytest.raises(
        offload.StillPlanning, match=r"submitted again once its earlier run has stopped \(3 pods"
    ):
        _plan(jobs)
    assert jobs.jobs_created == 1 and jobs.configmaps_by_name == {}

    # They are gone: the job is submitted again, and its result is used.
    with pytest.raises(offload.StillPlanning, match="being computed"):
        _plan(jobs)
    assert jobs.jobs_created == 2
    jobs.write_result(NAME)
    assert _plan(jobs).moves == plan_request(ADD, VIEW).moves


def test_a_job_being_deleted_counts_as_gone(jobs: MemoryJobs) -> None:
    with pytest.raises(offload.StillPlanning):
        _plan(jobs)
    jobs.jobs[NAME]["metadata"] = {**jobs.jobs[NAME]["metadata"], "deletionTimestamp": "2026-11-28T10:00:00Z"}
    assert plan_offload.state(jobs, NAMESPACE, NAME) == (  # type: ignore[arg-type]
        plan_offload.JobState.MISSING,
        "the Job is being deleted",
    )
    with pytest.raises(plan_offload.OffloadFailed, match="being deleted"):
        _plan(jobs)


def test_a_failed_job_is_reported_once_then_submitted_again(jobs: MemoryJobs) -> None:
    with pytest.raises(offload.StillPlanning):
        _plan(jobs)
    jobs.jobs[NAME]["status"] = {"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]}  # fmt: skip
    with pytest.raises(plan_offload.OffloadFailed, match="Failed: BackoffLimitExceeded"):
        _plan(jobs)
    assert jobs.job(NAMESPACE, NAME) is None
    with pytest.raises(offload.StillPlanning, match="being computed"):  # no pod was left
        _plan(jobs)
    assert jobs.jobs_created == 2


def test_an_interrupted_submission_is_completed(jobs: MemoryJobs) -> None:
    """Inputs created, the operator stopped before the pod template and the Job: submit again."""
    inputs = engine_inputs(ADD, VIEW)
    assert inputs is not None
    objects = plan_offload.prepare(
        NAME, SparkSettings("img", "sa", NAMESPACE), inputs.arrays, inputs.requests[0]
    )
    for body in objects.input_configmaps:
        jobs.create(body)
    with pytest.raises(offload.StillPlanning, match="being computed"):
        _plan(jobs)
    assert jobs.jobs_created == 1 and plan_offload.submitted(jobs, NAMESPACE, NAME)  # type: ignore[arg-type]
