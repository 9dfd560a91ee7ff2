"""Spark-on-Kubernetes offload against the real API server, and the result collected from it.

The chart's ``spark.enabled`` objects (driver ServiceAccount and Role, settings ConfigMap) are
rendered by the real helm into a fresh namespace that enforces the ``restricted`` Pod Security
level; the operator-side service (``service.plan_offload``) reads its settings from there, builds
a job for a cluster above the threshold and submits it: first as a server-side dry run (all
accepted, nothing stored), then for real (ConfigMaps, pod template, ``batch/v1`` Job).

The last test runs the same path inside the operator process, from a PartitionReassignment to
the moves on the real brokers.

This stack has no kubelet and no controller-manager: the Job is validated, admitted and stored,
but no pod is ever created for it, so spark-submit, the driver and the executors never run here.
What the driver would do runs locally instead: the same driver program with the arguments taken
from the stored Job (``spark_driver``, real Spark ``local[2]``) reads the input
ConfigMaps from the API server and writes the result ConfigMaps there, exactly as in the driver
pod. ``collect()`` then returns a plan identical to the in-process core plan.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from kubernetes import client

from kafka_zk_operator.adapters.k8s import spark_submit
from kafka_zk_operator.adapters.k8s.spark_jobs import SparkJobs
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.documents.plan_result import plan_differences
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement import PlanRequest, plan
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster
from kafka_zk_operator.service import plan_offload
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, scoped_operator
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import create_topic, phase, ready_reason, reassignment, wait_phase
from tests.integration.helpers import apply_chart_spark_objects, wait_for

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "kafka-zk-operator"
RESTRICTED = {f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "warn", "audit")}


def _restricted_namespace_with_chart(
    api_client: client.ApiClient, namespace: str, kubeconfig: Path, tmp: Path, threshold: int = 5000
) -> None:
    client.CoreV1Api(api_client).patch_namespace(namespace, {"metadata": {"labels": RESTRICTED}})
    spark = {"offloadAbovePartitions": threshold, "image": "kzo-spark:e2e"}
    apply_chart_spark_objects(kubeconfig, namespace, spark, tmp)


def _dry_run_pod(
    api_client: client.ApiClient, namespace: str, spec: dict[str, Any], labels: dict[str, str]
) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"dry-{uuid.uuid4().hex[:6]}", "labels": labels},
        "spec": spec,
    }
    client.CoreV1Api(api_client).create_namespaced_pod(namespace, cast(Any, pod), dry_run="All")


def _run_driver(args: list[str], kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "operator")}
    return subprocess.run(
        [sys.executable, "-m", "kafka_zk_operator.spark_driver", *args,
         "--master", "local[2]", "--kubeconfig", str(kubeconfig)],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip


def test_offloaded_plan_is_accepted_by_the_api_server_and_collected_identical_to_the_core(
    api_client: client.ApiClient, namespace: str, kafka_cluster: KafkaCluster, tmp_path: Path
) -> None:
    kubeconfig = kafka_cluster.kubeconfig
    _restricted_namespace_with_chart(api_client, namespace, kubeconfig, tmp_path)
    jobs = SparkJobs(api_client)
    settings = plan_offload.load_settings(jobs, namespace)
    assert settings is not None and settings.spark.namespace == namespace
    assert settings.spark.image == "kzo-spark:e2e" and settings.spark.service_account == "kzo-spark"

    cluster = synthetic_cluster(12, 3, 6000, seed=21, layout="kafka").with_brokers(
        make_brokers(3, 3, first_id=90)
    )
    request = PlanRequest(Mode.ADD_BROKERS, brokers=(90, 91, 92), n_groups=4)
    assert plan_offload.should_offload(cluster.n_partitions, settings.offload_above_partitions)
    name = plan_offload.job_name("e2e", namespace)
    objects = plan_offload.prepare(name, settings.spark, cluster, request, chunk_bytes=4_096)
    assert len(objects.input_configmaps) >= 3, "the snapshot must span several ConfigMaps"

    # Server-side dry run: every object is accepted (admission included), nothing is stored.
    assert plan_offload.submit(jobs, objects, dry_run=True) is True
    assert jobs.job(namespace, name) is None
    assert jobs.configmaps(namespace, name, spark_submit.INPUT) == []

    # The real thing; a second submit finds it and changes nothing.
    assert plan_offload.submit(jobs, objects) is True
    assert plan_offload.submit(jobs, objects) is False
    stored = jobs.job(namespace, name)
    assert stored is not None
    container = stored["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == objects.job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert stored["spec"]["template"]["spec"]["serviceAccountName"] == "kzo-spark"
    assert len(jobs.configmaps(namespace, name, spark_submit.INPUT)) == len(objects.input_configmaps)

    # Restricted Pod Security admits the Job's pod and Spark's driver/executor template.
    job_pod = stored["spec"]["template"]
    _dry_run_pod(api_client, namespace, job_pod["spec"], job_pod["metadata"]["labels"])
    template = yaml.safe_load(objects.pod_template["data"][spark_submit.TEMPLATE_FILE])
    template["spec"]["containers"][0]["image"] = settings.spark.image
    _dry_run_pod(api_client, namespace, template["spec"], template["metadata"]["labels"])
    with pytest.raises(client.ApiException) as refused:  # and the namespace really enforces it
        _dry_run_pod(api_client, namespace, {"containers": [{"name": "c", "image": "x"}]}, {})
    assert refused.value.status == 403

    # No kubelet, no controller-manager: no pod, no result, the Job stays pending.
    assert client.CoreV1Api(api_client).list_namespaced_pod(namespace).items == []
    assert plan_offload.state(jobs, namespace, name)[0] is plan_offload.JobState.PENDING
    assert plan_offload.collect(jobs, namespace, name, cluster) is None

    # The driver program, with the stored Job's own arguments, run locally against the API server.
    proc = _run_driver(spark_submit.app_arguments(stored), kubeconfig)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(jobs.configmaps(namespace, name, spark_submit.RESULT)) >= 2, (
        "the result spans several ConfigMaps"
    )

    core = plan(cluster, request)
    for given in (cluster, None):  # with the cluster, and decoded from the input ConfigMaps
        collected = plan_offload.collect(jobs, namespace, name, given)
        assert collected is not None
        assert plan_differences(core, collected) == []
        assert collected.reassignment() == core.reassignment()
        assert collected.report == core.report
    assert core.report.moves == core.report.m_lb > 0

    plan_offload.cleanup(jobs, namespace, name)
    assert jobs.job(namespace, name) is None
    for role in (spark_submit.INPUT, spark_submit.RESULT):
        assert jobs.configmaps(namespace, name, role) == []


def test_a_refused_request_comes_back_as_an_error_without_starting_spark(
    api_client: client.ApiClient, namespace: str, kafka_cluster: KafkaCluster
) -> None:
    jobs = SparkJobs(api_client)
    settings = spark_submit.SparkSettings(
        image="kzo-spark:e2e", service_account="default", namespace=namespace
    )
    cluster = synthetic_cluster(6, 3, 300, seed=2)
    request = PlanRequest(Mode.REMOVE_BROKERS, brokers=(0, 1, 2, 3, 4, 5))  # every broker: refused
    name = plan_offload.job_name("refused", namespace)
    for body in plan_offload.prepare(name, settings, cluster, request).input_configmaps:
        jobs.create(body)
    with pytest.raises(plan_offload.OffloadFailed, match="Missing"):  # no Job was created
        plan_offload.collect(jobs, namespace, name, cluster)
    proc = _run_driver(spark_submit.driver_args(name, namespace), kafka_cluster.kubeconfig)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "refused: cannot remove every broker" in proc.stderr
    assert "SparkContext" not in proc.stderr and "log4j" not in proc.stderr, "no JVM for a refused request"
    with pytest.raises(errors.InvalidSpec, match="refused the request: cannot remove every broker"):
        plan_offload.collect(jobs, namespace, name, cluster)
    # A result for another input is refused too.
    other = synthetic_cluster(6, 3, 301, seed=2)
    with pytest.raises(errors.InvalidSpec, match="another cluster"):
        plan_offload.collect(jobs, namespace, name, other)
    result = jobs.configmaps(namespace, name, spark_submit.RESULT)
    assert json.loads(spark_submit.unpack(result) or b"{}")["error"].startswith("cannot remove every broker")


def test_the_operator_plans_a_rebalance_with_a_spark_job_and_runs_it_on_kafka(
    api_client: client.ApiClient,
    namespace: str,
    kafka_cluster: KafkaCluster,
    kafka: KafkaView,
    operator: OperatorProcess,
    unique_topic: str,
    tmp_path: Path,
) -> None:
    """The whole path inside the operator process: a PartitionReassignment on a cluster above the
    threshold is planned by a Job it submits; the driver runs here with that Job's arguments (as
    the pod would); the operator takes the result as its proposal, deletes the job and runs the
    moves on the real brokers."""
    _restricted_namespace_with_chart(api_client, namespace, kafka_cluster.kubeconfig, tmp_path, threshold=1)
    skewed = {p: [1, 2] if p % 2 == 0 else [2, 1] for p in range(6)}
    create_topic(kafka, unique_topic, skewed)
    jobs = SparkJobs(api_client)
    kprs = Resources(api_client, "partitionreassignments")
    env = {"KZO_OPERATOR_NAMESPACE": namespace, "KZO_REASSIGNMENT_POLL_SECONDS": "1"}
    clusters = {"main": kafka_cluster.zk_connect}
    with scoped_operator(kafka_cluster, operator, namespace, tmp_path, clusters, env):
        created = kprs.create(
            namespace, reassignment("spread", mode="Rebalance", approval="Auto", topics=[unique_topic])
        )
        name = plan_offload.job_name(created["metadata"]["uid"], str(created["metadata"]["generation"]))
        stored = wait_for(lambda: jobs.job(namespace, name), timeout=90, what=f"Spark job {name}")
        # The job is submitted during the reconcile; the status follows when it ends.
        wait_for(lambda: ready_reason(kprs, namespace, "spread") == "Planning", timeout=30, what="Planning")
        assert phase(kprs, namespace, "spread") == "Pending", "nothing runs before the job's result"
        assert (
            kafka.describe(unique_topic)
            and {p: d["replicas"] for p, d in (kafka.describe(unique_topic) or {}).items()} == skewed
        )

        proc = _run_driver(spark_submit.app_arguments(stored), kafka_cluster.kubeconfig)
        assert proc.returncode == 0, proc.stderr[-3000:]

        body = wait_phase(kprs, namespace, "spread", "Completed", timeout=180)
        proposal = body["status"]["proposal"]
        assert f"computed by Spark job {namespace}/{name}" in proposal["notes"]
        assert proposal["moves"] == proposal["lowerBound"] > 0
        targets = {(e["topic"], e["partition"]): e["to"] for e in body["status"]["plan"]}
        assert {topic for topic, _ in targets} == {unique_topic}, "only spec.topics move"
        described = kafka.describe(unique_topic) or {}
        for (_, partition), target in targets.items():
            assert described[partition]["replicas"] == target, "Kafka holds the proposal's targets"
        assert 3 in {b for d in described.values() for b in d["replicas"]}, "broker 3 got replicas"
        assert jobs.job(namespace, name) is None, "the job is deleted once the proposal is saved"
        for role in (spark_submit.INPUT, spark_submit.RESULT):
            assert jobs.configmaps(namespace, name, role) == []
