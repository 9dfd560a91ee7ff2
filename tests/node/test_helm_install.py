"""``helm install`` for real: the chart runs the operator image on a kubelet, under the chart's
restricted security settings (non-root, read-only root filesystem, no capabilities, RuntimeDefault
seccomp), and the operator in its pods creates topics Kafka then serves.

One release goes through its life in file order: install (the Deployment becomes Available with its
probes passing), a KafkaTopic applied with kubectl reaches Kafka (read with a Kafka client), the
metrics answer through the chart's Service (from a pod, through kube-proxy), ``helm upgrade``
replaces the pods and writes nothing to the topic's znodes again, ``helm uninstall`` removes the
operator and keeps the CRDs and the topic.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafka_zk_operator.devstack import images
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for
from tests.node.conftest import CHART, NodeCluster

NAMESPACE = "kzo-system"
RELEASE = "kzo"
DEPLOYMENT = "kzo-kafka-zk-operator"
TOPICS_NAMESPACE = "kzo-topics"


def _values(node_cluster: NodeCluster, image: images.BuiltImage, resync: int) -> dict[str, Any]:
    return {
        "image": {"repository": image.repository, "tag": image.tag, "pullPolicy": "Never"},
        "clusters": node_cluster.clusters_values(),
        "operator": {"resyncSeconds": resync},
    }


@pytest.fixture(scope="module")
def release(
    node_cluster: NodeCluster, operator_image: images.BuiltImage, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """The chart installed with the local image; uninstalled at the end if a test left it."""
    values = tmp_path_factory.mktemp("helm") / "values.yaml"
    values.write_text(yaml.safe_dump(_values(node_cluster, operator_image, resync=30)))
    node_cluster.helm(
        "install",
        RELEASE,
        str(CHART),
        "--namespace",
        NAMESPACE,
        "--create-namespace",
        "--values",
        str(values),
        "--wait",
        "--timeout",
        "240s",
    )
    node_cluster.kubectl("create", "namespace", TOPICS_NAMESPACE)
    try:
        yield values
    finally:
        node_cluster.helm("uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", check=False)


def _pods(node_cluster: NodeCluster) -> list[dict[str, Any]]:
    listed = node_cluster.kubectl_json(
        "get", "pods", "--namespace", NAMESPACE, "--selector", "app.kubernetes.io/name=kafka-zk-operator"
    )
    return list(listed["items"])


def _pod_metrics(node_cluster: NodeCluster, pod: str) -> dict[str, float]:
    """One operator pod's Prometheus metrics (samples without their # lines), through the API server."""
    text = node_cluster.kubectl(
        "get", "--raw", f"/api/v1/namespaces/{NAMESPACE}/pods/{pod}:9090/proxy/metrics"
    )
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            samples[key] = float(value)
    return samples


def _ready(pod: dict[str, Any]) -> bool:
    conditions = pod.get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def test_the_deployment_becomes_available_with_probes_passing_under_the_restricted_settings(
    node_cluster: NodeCluster, release: Path
) -> None:
    deployment = node_cluster.kubectl_json("get", "deployment", DEPLOYMENT, "--namespace", NAMESPACE)
    available = {c["type"]: c["status"] for c in deployment["status"]["conditions"]}
    assert available.get("Available") == "True", deployment["status"]
    pods = _pods(node_cluster)
    assert len(pods) == 2 and all(_ready(pod) for pod in pods), [p["status"] for p in pods]
    for pod in pods:
        container = pod["spec"]["containers"][0]
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
        assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
        status = pod["status"]["containerStatuses"][0]
        assert status["restartCount"] == 0, status
        # The kubelet ran the probes: a container is Ready only after its readiness probe passed.
        assert status["ready"] is True
    # The user the container really runs as, asked of the running process itself.
    uid = node_cluster.kubectl(
        "exec", "--namespace", NAMESPACE, pods[0]["metadata"]["name"], "--", "id", "-u"
    )
    assert uid.strip() == "10001"


def test_helm_test_checks_zookeeper_kafka_and_the_api_from_a_pod(
    node_cluster: NodeCluster, release: Path
) -> None:
    """The chart's test pod runs ``kzo check`` with the operator's settings and ServiceAccount."""
    output = node_cluster.helm("test", RELEASE, "--namespace", NAMESPACE, "--logs", "--timeout", "180s")
    assert_checks_passed(output)
    node_cluster.kubectl("delete", "pod", f"{DEPLOYMENT}-check", "--namespace", NAMESPACE, "--wait=false")


def assert_checks_passed(output: str) -> None:
    """``helm test --logs`` output (helm exits non-zero when the pod fails): each check passed."""
    assert "Succeeded" in output, output
    for check in ("zookeeper main:", "kafka main:", "kubernetes api: CRDs installed"):
        assert f"ok    {check}" in output, output


def test_a_kafkatopic_applied_with_kubectl_reaches_kafka_and_becomes_ready(
    node_cluster: NodeCluster, release: Path, tmp_path: Path
) -> None:
    name = f"node-{uuid.uuid4().hex[:8]}"
    manifest = tmp_path / "topic.yaml"
    manifest.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kafka.zk-operator.io/v1alpha1",
                "kind": "KafkaTopic",
                "metadata": {"name": name, "namespace": TOPICS_NAMESPACE},
                "spec": {"partitions": 3, "replicationFactor": 3, "config": {"retention.ms": "3600000"}},
            }
        )
    )
    node_cluster.kubectl("apply", "-f", str(manifest))

    def ready() -> bool:
        topic = node_cluster.kubectl_json("get", "kafkatopic", name, "--namespace", TOPICS_NAMESPACE)
        conditions = topic.get("status", {}).get("conditions", [])
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    wait_for(ready, timeout=120, what=f"KafkaTopic {name} to be Ready")
    kafka = KafkaView(node_cluster.cluster.bootstrap_servers)
    try:
        # Ready means the controller elected the leaders; the broker answering metadata learns of
        # them from the controller's UpdateMetadata a moment later, so wait for its view.
        described = wait_for(
            lambda: kafka.describe(name), timeout=30, what=f"Kafka's metadata to show {name}"
        )
        assert sorted(described) == [0, 1, 2]
        assert all(len(p["replicas"]) == 3 for p in described.values())
        assert kafka.configs(name)["retention.ms"] == "3600000"
    finally:
        kafka.close()
    _TOPIC["name"] = name


_TOPIC: dict[str, str] = {}


def _python_in_pod(node_cluster: NodeCluster, image: images.BuiltImage, name: str, script: str) -> str:
    """Run ``python3 -c script`` in a pod of ``image`` until it ends; its output (it must succeed)."""
    container = {
        "name": name,
        "image": image.reference,
        "imagePullPolicy": "Never",
        "command": ["python3", "-c", script],
    }
    node_cluster.kubectl(
        "run", name, "--namespace", NAMESPACE, "--image", image.reference, "--restart=Never",
        "--overrides", json.dumps({"spec": {"containers": [container]}}),
    )  # fmt: skip
    try:

        def finished() -> bool:
            pod = node_cluster.kubectl_json("get", "pod", name, "--namespace", NAMESPACE)
            return pod["status"].get("phase") in ("Succeeded", "Failed")

        wait_for(finished, timeout=120, what=f"pod {name} to finish")
        output = node_cluster.kubectl("logs", name, "--namespace", NAMESPACE)
        pod = node_cluster.kubectl_json("get", "pod", name, "--namespace", NAMESPACE)
        assert pod["status"]["phase"] == "Succeeded", output
        return output
    finally:
        node_cluster.kubectl("delete", "pod", name, "--namespace", NAMESPACE, "--wait=false", check=False)


def test_the_metrics_answer_through_the_charts_service_from_a_pod(
    node_cluster: NodeCluster, release: Path, operator_image: images.BuiltImage
) -> None:
    service = node_cluster.kubectl_json("get", "service", f"{DEPLOYMENT}-metrics", "--namespace", NAMESPACE)
    url = f"http://{service['spec']['clusterIP']}:{service['spec']['ports'][0]['port']}/metrics"
    script = f"import urllib.request; print(urllib.request.urlopen({url!r}, timeout=10).read().decode())"
    output = _python_in_pod(node_cluster, operator_image, "scrape", script)
    assert "kzo_leader" in output and "kzo_zookeeper_writes_total" in output, output[:2000]


def test_a_pod_reaches_the_brokers_through_their_advertised_listeners(
    node_cluster: NodeCluster, release: Path, operator_image: images.BuiltImage
) -> None:
    """kafka-python (in the operator image) in a pod: bootstrap on the host's address, then each
    broker on the address it advertises; the topic the operator created is listed."""
    topic = _TOPIC.get("name")
    assert topic, "the KafkaTopic test above did not get its topic Ready"
    script = (
        "from kafka import KafkaAdminClient;"
        f"admin = KafkaAdminClient(bootstrap_servers={node_cluster.bootstrap_for_pods!r}, request_timeout_ms=20000);"
        "print(sorted(admin.list_topics()));"
        # DescribeLogDirs goes to each broker in turn, on the address it advertises.
        "print(sorted(r['broker'] for r in admin.describe_log_dirs()))"
    )
    topics, brokers = (
        _python_in_pod(node_cluster, operator_image, "kafka-client", script).strip().splitlines()[-2:]
    )
    assert repr(topic) in topics, topics
    assert brokers == "[1, 2, 3]", brokers


def _znode_stamps(node_cluster: NodeCluster, topic: str) -> dict[str, tuple[int, int]]:
    """(mzxid, version) of the topic's config and assignment znodes, read with kazoo (not our code)."""
    with node_cluster.cluster.zk_session() as zk:
        stamps = {}
        for path in (f"/config/topics/{topic}", f"/brokers/topics/{topic}"):
            _, stat = zk.get(path)
            stamps[path] = (stat.mzxid, stat.version)
        return stamps


def test_helm_upgrade_replaces_the_pods_and_writes_nothing_again(
    node_cluster: NodeCluster, release: Path, operator_image: images.BuiltImage
) -> None:
    topic = _TOPIC.get("name")
    assert topic, "the KafkaTopic test above did not get its topic Ready"
    before = _znode_stamps(node_cluster, topic)
    old_pods = {pod["metadata"]["name"] for pod in _pods(node_cluster)}
    release.write_text(yaml.safe_dump(_values(node_cluster, operator_image, resync=10)))
    node_cluster.helm(
        "upgrade",
        RELEASE,
        str(CHART),
        "--namespace",
        NAMESPACE,
        "--values",
        str(release),
        "--wait",
        "--timeout",
        "240s",
    )

    def replaced() -> bool:
        pods = _pods(node_cluster)
        names = {pod["metadata"]["name"] for pod in pods}
        return len(pods) == 2 and not names & old_pods and all(_ready(pod) for pod in pods)

    wait_for(replaced, timeout=180, what="the upgrade's pods to replace the old ones")
    env = {e["name"]: e.get("value") for e in _pods(node_cluster)[0]["spec"]["containers"][0]["env"]}
    assert env.get("KZO_RESYNC_SECONDS") == "10", env
    # The new leader adopts the topic and resyncs it (every 10 s now) without writing to ZooKeeper:
    # its own metrics, read through the API server's pod proxy, count the resyncs and the writes.

    def leader_metrics() -> dict[str, float] | None:
        for pod in _pods(node_cluster):
            metrics = _pod_metrics(node_cluster, pod["metadata"]["name"])
            if metrics.get("kzo_leader") == 1:
                return metrics
        return None

    def resynced_by_the_new_leader() -> dict[str, float] | None:
        metrics = leader_metrics()
        unchanged = metrics and metrics.get('kzo_resyncs_unchanged_total{kind="kafkatopic"}', 0)
        return metrics if unchanged else None

    metrics = wait_for(
        resynced_by_the_new_leader, timeout=120, what=f"{topic} to be resynced by the new leader"
    )
    writes = sum(value for key, value in metrics.items() if key.startswith("kzo_zookeeper_writes_total"))
    assert writes == 0, metrics
    assert _znode_stamps(node_cluster, topic) == before


def test_helm_uninstall_removes_the_operator_and_keeps_the_crds_and_the_topic(
    node_cluster: NodeCluster, release: Path
) -> None:
    topic = _TOPIC.get("name")
    assert topic, "the KafkaTopic test above did not get its topic Ready"
    node_cluster.helm("uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", "--timeout", "120s")
    wait_for(lambda: not _pods(node_cluster), timeout=120, what="the operator's pods to go")
    deployments = node_cluster.kubectl_json("get", "deployments", "--namespace", NAMESPACE)["items"]
    assert deployments == []
    crds = {item["metadata"]["name"] for item in node_cluster.kubectl_json("get", "crds")["items"]}
    assert {"kafkatopics.kafka.zk-operator.io", "partitionreassignments.kafka.zk-operator.io"} <= crds
    node_cluster.kubectl("get", "kafkatopic", topic, "--namespace", TOPICS_NAMESPACE)
    kafka = KafkaView(node_cluster.cluster.bootstrap_servers)
    try:
        assert kafka.describe(topic) is not None, f"Kafka lost {topic} when the operator was uninstalled"
    finally:
        kafka.close()
