"""The operator, installed with helm and running in a pod, offloads a PartitionReassignment's plan to
Spark on the node, with only the chart's RBAC: spark-submit in the Job's pod, the driver and two
executors in theirs, the result back through the ConfigMaps, then the moves on the real brokers.
And the faults: the driver pod killed mid-run, then the Job deleted mid-run: each time the
resource says so (a ``PlanJobFailed`` Warning event and status message), the job is submitted
again, and in the end it completes the work and no pod, Job or ConfigMap of any run is left behind.

Kafka's view is read with a Kafka client (kafka-python), never with the project's code.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka.admin import NewTopic

from kafka_zk_operator.adapters.k8s import spark_submit
from kafka_zk_operator.devstack import images
from kafka_zk_operator.service import plan_offload
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for
from tests.node.conftest import CHART, SMALL_SPARK, NodeCluster

OPERATOR_NAMESPACE = "kzo-spark-op"
WORK_NAMESPACE = "kzo-spark-work"
RELEASE = "kzs"


@pytest.fixture(scope="module")
def release(
    node_cluster: NodeCluster,
    operator_image: images.BuiltImage,
    spark_image: images.BuiltImage,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """The chart with Spark enabled (every plan offloaded), in a namespace enforcing ``restricted``."""
    node_cluster.restricted_namespace(OPERATOR_NAMESPACE)
    node_cluster.kubectl("create", "namespace", WORK_NAMESPACE)
    values = {
        "image": {"repository": operator_image.repository, "tag": operator_image.tag, "pullPolicy": "Never"},
        "replicas": 1,
        "watchNamespaces": [WORK_NAMESPACE],
        "clusters": node_cluster.clusters_values(),
        "operator": {"extraEnv": [{"name": "KZO_REASSIGNMENT_POLL_SECONDS", "value": "1"}]},
        "spark": {
            "enabled": True,
            "image": spark_image.reference,
            "offloadAbovePartitions": 1,
            **SMALL_SPARK,
        },
    }
    values_path = tmp_path_factory.mktemp("spark-release") / "values.yaml"
    values_path.write_text(yaml.safe_dump(values))
    node_cluster.helm(
        "install", RELEASE, str(CHART), "--namespace", OPERATOR_NAMESPACE, "--values", str(values_path),
        "--wait", "--timeout", "240s",
    )  # fmt: skip
    try:
        yield
    finally:
        node_cluster.helm("uninstall", RELEASE, "--namespace", OPERATOR_NAMESPACE, "--wait", check=False)


@pytest.fixture
def kafka(node_cluster: NodeCluster) -> Iterator[KafkaView]:
    view = KafkaView(node_cluster.cluster.bootstrap_servers)
    try:
        yield view
    finally:
        view.close()


def _skewed_topic(kafka: KafkaView) -> tuple[str, dict[int, list[int]]]:
    """A topic whose replicas all sit on brokers 1 and 2 (broker 3 has none)."""
    topic = f"spark-{uuid.uuid4().hex[:8]}"
    skewed = {p: [1, 2] if p % 2 == 0 else [2, 1] for p in range(6)}
    kafka.admin.create_topics([NewTopic(topic, replica_assignments=skewed)])
    wait_for(lambda: kafka.describe(topic), what=f"topic {topic} in Kafka")
    return topic, skewed


def _apply_reassignment(node_cluster: NodeCluster, name: str, topic: str, tmp_path: Path) -> dict[str, Any]:
    manifest = tmp_path / f"{name}.yaml"
    manifest.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kafka.zk-operator.io/v1alpha1",
                "kind": "PartitionReassignment",
                "metadata": {"name": name, "namespace": WORK_NAMESPACE},
                "spec": {"mode": "Rebalance", "approval": "Auto", "topics": [topic]},
            }
        )
    )
    node_cluster.kubectl("apply", "-f", str(manifest))
    return dict(
        node_cluster.kubectl_json("get", "partitionreassignment", name, "--namespace", WORK_NAMESPACE)
    )


def _resource(node_cluster: NodeCluster, name: str) -> dict[str, Any]:
    return dict(
        node_cluster.kubectl_json("get", "partitionreassignment", name, "--namespace", WORK_NAMESPACE)
    )


def _completed(node_cluster: NodeCluster, name: str) -> dict[str, Any] | None:
    body = _resource(node_cluster, name)
    status = body.get("status") or {}
    assert status.get("phase") != "Failed", status
    return body if status.get("phase") == "Completed" else None


def _job_name(resource: dict[str, Any]) -> str:
    return plan_offload.job_name(resource["metadata"]["uid"], str(resource["metadata"]["generation"]))


def _warnings(node_cluster: NodeCluster, name: str, reason: str) -> list[str]:
    events = node_cluster.kubectl_json(
        "get", "events", "--namespace", WORK_NAMESPACE, "--field-selector", f"involvedObject.name={name}"
    )["items"]
    return [e["message"] for e in events if e.get("reason") == reason]


def _assert_nothing_left(node_cluster: NodeCluster, job: str) -> None:
    selector = spark_submit.selector(job)

    def leftovers() -> list[str]:
        found = node_cluster.kubectl(
            "get", "pods,jobs,configmaps", "--namespace", OPERATOR_NAMESPACE, "--selector", selector,
            "--output", "name",
        )  # fmt: skip
        # The driver's own ConfigMap and Service carry Spark's labels, not ours: owned by the driver pod.
        spark_owned = node_cluster.kubectl(
            "get", "configmaps,services", "--namespace", OPERATOR_NAMESPACE, "--output", "name"
        )
        return found.split() + [n for n in spark_owned.split() if job in n or "spark-drv" in n]

    wait_for(lambda: not leftovers(), timeout=120, interval=2.0, what=f"every object of {job} to be deleted")


def _assert_kafka_holds_the_plan(kafka: KafkaView, topic: str, body: dict[str, Any]) -> None:
    targets = {e["partition"]: e["to"] for e in body["status"]["plan"] if e["topic"] == topic}
    assert targets, body["status"]
    described = kafka.describe(topic) or {}
    for partition, target in targets.items():
        assert described[partition]["replicas"] == target, "Kafka holds the proposal's targets"
    assert 3 in {b for d in described.values() for b in d["replicas"]}, "broker 3 got replicas"


def test_the_operator_in_a_pod_plans_with_spark_pods_and_kafka_ends_with_the_plan(
    node_cluster: NodeCluster, release: None, kafka: KafkaView, tmp_path: Path
) -> None:
    topic, _ = _skewed_topic(kafka)
    job = _job_name(_apply_reassignment(node_cluster, "spread", topic, tmp_path))
    body = wait_for(
        lambda: _completed(node_cluster, "spread"), timeout=300, interval=2.0, what="spread Completed"
    )
    proposal = body["status"]["proposal"]
    assert f"computed by Spark job {OPERATOR_NAMESPACE}/{job}" in proposal["notes"]
    assert proposal["moves"] == proposal["lowerBound"] > 0
    started = node_cluster.pods_with_event(OPERATOR_NAMESPACE, job, "Started")
    assert f"{job}-driver" in started and len({p for p in started if "-exec-" in p}) >= 2, started
    _assert_kafka_holds_the_plan(kafka, topic, body)
    _assert_nothing_left(node_cluster, job)


def test_a_killed_driver_and_a_deleted_job_are_reported_retried_and_leave_nothing_behind(
    node_cluster: NodeCluster, release: None, kafka: KafkaView, tmp_path: Path
) -> None:
    topic, _ = _skewed_topic(kafka)
    job = _job_name(_apply_reassignment(node_cluster, "retry", topic, tmp_path))
    driver = f"{job}-driver"

    def driver_running() -> bool:
        pods = node_cluster.kubectl_json("get", "pods", "--namespace", OPERATOR_NAMESPACE)["items"]
        return any(p["metadata"]["name"] == driver and p["status"].get("phase") == "Running" for p in pods)

    # 1. The driver pod is killed while it runs.
    wait_for(driver_running, timeout=180, interval=0.5, what=f"{driver} to run")
    node_cluster.kubectl(
        "delete", "pod", driver, "--namespace", OPERATOR_NAMESPACE, "--grace-period=0", "--force"
    )
    first = wait_for(
        lambda: _warnings(node_cluster, "retry", "PlanJobFailed"), timeout=180, what="a PlanJobFailed event"
    )
    assert f"Spark job {OPERATOR_NAMESPACE}/{job}" in first[0] and "submitted again" in first[0], first

    # 2. Submitted again; this time its Job is deleted while the driver runs. The operator must
    # report it, not quietly create the Job again (it did: the first cold-cache run found that).
    wait_for(driver_running, timeout=240, interval=0.5, what=f"{driver} to run again")
    node_cluster.kubectl("delete", "job", job, "--namespace", OPERATOR_NAMESPACE, "--wait=false")
    second = wait_for(
        lambda: [m for m in _warnings(node_cluster, "retry", "PlanJobFailed") if m not in first],
        timeout=180,
        what="a PlanJobFailed event for the deleted Job",
    )
    assert "has no result: Missing" in second[0] and "submitted again" in second[0], second

    # 3. Submitted again, it ends the work; nothing of any run stays.
    body = wait_for(
        lambda: _completed(node_cluster, "retry"), timeout=420, interval=2.0, what="retry Completed"
    )
    _assert_kafka_holds_the_plan(kafka, topic, body)
    _assert_nothing_left(node_cluster, job)
