"""Spark on Kubernetes for real: an offloaded plan runs as spark-submit in a Job's pod, a driver pod
and executor pods from the image's ``spark`` target, on the node's kubelet.

The chart's ``spark.enabled`` objects (ServiceAccount, Role, settings) are rendered by the real
helm into a namespace that enforces the ``restricted`` Pod Security level; the operator-side
service (``service.plan_offload``) submits the job with only that RBAC; spark-submit (cluster mode)
starts the driver, which starts two executors (their pods' Events prove they ran) and writes the
result ConfigMaps; the collected plan equals the in-process core's plan on the same snapshot.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from kafka_zk_operator.adapters.k8s import spark_submit
from kafka_zk_operator.adapters.k8s.spark_jobs import SparkJobs
from kafka_zk_operator.devstack import images
from kafka_zk_operator.domain.documents.plan_result import plan_differences
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement import PlanRequest, plan
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster
from kafka_zk_operator.service import plan_offload
from tests.integration.helpers import apply_chart_spark_objects, wait_for
from tests.node.conftest import SMALL_SPARK, NodeCluster


@pytest.fixture(scope="module")
def api(node_cluster: NodeCluster) -> client.ApiClient:
    api_client: client.ApiClient = config.new_client_from_config(  # type: ignore[no-untyped-call]  # untyped
        config_file=str(node_cluster.cluster.kubeconfig)
    )
    return api_client


@pytest.fixture
def spark_namespace(
    node_cluster: NodeCluster, spark_image: images.BuiltImage, tmp_path: Path
) -> Iterator[str]:
    """A restricted namespace holding the chart's Spark objects (as ``helm install`` renders them)."""
    namespace = f"spark-{uuid.uuid4().hex[:6]}"
    node_cluster.restricted_namespace(namespace)
    spark = {"offloadAbovePartitions": 1000, "image": spark_image.reference, **SMALL_SPARK}
    apply_chart_spark_objects(node_cluster.cluster.kubeconfig, namespace, spark, tmp_path)
    try:
        yield namespace
    finally:
        node_cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def _job_pods(node_cluster: NodeCluster, namespace: str, name: str) -> list[dict[str, Any]]:
    selector = f"{spark_submit.JOB_LABEL}={name}"
    return list(
        node_cluster.kubectl_json("get", "pods", "--namespace", namespace, "--selector", selector)["items"]
    )


def test_an_offloaded_plan_runs_as_driver_and_executor_pods_and_equals_the_core_plan(
    node_cluster: NodeCluster, api: client.ApiClient, spark_namespace: str
) -> None:
    jobs = SparkJobs(api)
    settings = plan_offload.load_settings(jobs, spark_namespace)
    assert settings is not None and settings.spark.executors == 2
    cluster = synthetic_cluster(12, 3, 6000, seed=21, layout="kafka").with_brokers(
        make_brokers(3, 3, first_id=90)
    )
    request = PlanRequest(Mode.ADD_BROKERS, brokers=(90, 91, 92), n_groups=4)
    assert plan_offload.should_offload(cluster.n_partitions, settings.offload_above_partitions)
    name = plan_offload.job_name("node", spark_namespace)
    objects = plan_offload.prepare(name, settings.spark, cluster, request)
    assert plan_offload.submit(jobs, objects) is True

    def finished() -> tuple[plan_offload.JobState, str] | None:
        state = plan_offload.state(jobs, spark_namespace, name)
        return state if state[0] in (plan_offload.JobState.SUCCEEDED, plan_offload.JobState.FAILED) else None

    final, message = wait_for(finished, timeout=600, interval=2.0, what=f"Spark job {name} to end")
    logs = node_cluster.kubectl(
        "logs", "--namespace", spark_namespace, f"job/{name}", "--tail=40", check=False
    )
    assert final is plan_offload.JobState.SUCCEEDED, f"{message}\n{logs}"

    # spark-submit ran in the Job's pod, the driver and two executors in pods of their own.
    started = node_cluster.pods_with_event(spark_namespace, name, "Started")
    assert f"{name}-driver" in started, started
    executors = {pod for pod in started if "-exec-" in pod}
    assert len(executors) >= 2, started

    collected = plan_offload.collect(jobs, spark_namespace, name, cluster)
    assert collected is not None, "the job succeeded but left no result"
    core = plan(cluster, request)
    assert plan_differences(core, collected) == []
    assert collected.reassignment() == core.reassignment()
    assert core.report.moves == core.report.m_lb > 0

    plan_offload.cleanup(jobs, spark_namespace, name)
    wait_for(
        lambda: not _job_pods(node_cluster, spark_namespace, name), timeout=120, what="the job's pods to go"
    )
    assert jobs.job(spark_namespace, name) is None
    for role in (spark_submit.INPUT, spark_submit.RESULT):
        assert jobs.configmaps(spark_namespace, name, role) == []
