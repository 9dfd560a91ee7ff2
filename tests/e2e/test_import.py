"""``kzo import`` end to end: existing topics -> KafkaTopic YAML -> real API server -> the operator
adopts every topic **without writing to ZooKeeper**.

Topics are created with Kafka's own Admin API (kafka-python), with config overrides and a
replication throttle (operator-owned keys the import must leave out). The YAML from ``kzo import``
is applied with the real ``kubectl apply -f`` (as a GitOps tool would) or the Python client; each
resource must become Ready with reason Adopted (then InSync), and the operator must have written
nothing, shown three ways:

* the operator's ``kzo_zookeeper_writes_total{cluster="local"}`` is unchanged from before the
  apply until every resource is Ready and has been resynced once more (reason Adopted, then
  InSync); the counter is first waited on to be quiet: earlier tests share the operator, none
  runs concurrently;
* the data version, child version and mzxid of ``/brokers/topics/<t>``, its partitions and
  ``/config/topics/<t>`` are unchanged;
* the operator posted a ``TopicAdopted`` event and no create, config or partition event.
"""

from __future__ import annotations

import random
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml
from kafka.admin import ConfigResource, ConfigResourceType
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kubernetes import client as k8s

from kafka_zk_operator.cli import main as cli_main
from kafka_zk_operator.devstack import tools
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for

RESYNC_SECONDS = 5  # KZO_RESYNC_SECONDS of the operator fixture (checked below)
WRITING_EVENTS = {"TopicCreated", "ConfigChanged", "PartitionsAdded", "TopicDeletionRequested"}


def zookeeper_writes(operator: OperatorProcess) -> float:
    """The operator's ZooKeeper write counter for the test cluster (0 before its first write)."""
    cluster = re.escape(operator.env["KZO_CLUSTER_NAME"])
    pattern = rf'^kzo_zookeeper_writes_total\{{cluster="{cluster}"\}} (\S+)$'
    match = re.search(pattern, operator.metrics(), re.MULTILINE)
    return float(match.group(1)) if match else 0.0


def quiet_writes(operator: OperatorProcess, timeout: float = 90) -> float:
    """The write counter once it has not moved for longer than one resync period."""
    deadline = time.monotonic() + timeout
    last = zookeeper_writes(operator)
    while time.monotonic() < deadline:
        time.sleep(RESYNC_SECONDS + 1)
        now = zookeeper_writes(operator)
        if now == last:
            return now
        last = now
    raise AssertionError(
        "the operator kept writing to ZooKeeper before the import (resources of earlier tests still "
        "reconciling); cannot measure the import's writes"
    )


def create_topics(kafka: KafkaView, specs: dict[str, tuple[int, int, dict[str, str]]]) -> dict[str, Any]:
    """Create with Kafka's Admin API; return Kafka's description once every partition has a leader."""
    for name, (partitions, rf, config) in specs.items():
        kafka.create_topic(name, partitions, rf, config)

    def described(name: str, partitions: int) -> dict[int, dict[str, Any]] | None:
        view = kafka.describe(name)
        ok = view and len(view) == partitions and all(p["leader"] >= 0 for p in view.values())
        return view if ok else None

    return {
        name: wait_for(lambda n=name, c=count: described(n, c), what=f"leaders of {name}")  # type: ignore[misc]
        for name, (count, _, _) in specs.items()
    }


def znode_stats(client: KazooClient, topics: list[str]) -> dict[str, tuple[int, ...]]:
    """(version, cversion, mzxid, pzxid) of each topic's znodes (partition state znodes excluded:
    the controller owns them and may bump ISR/leader epochs at any time)."""
    stats: dict[str, tuple[int, ...]] = {}
    for topic in topics:
        paths = [f"/brokers/topics/{topic}", f"/brokers/topics/{topic}/partitions", f"/config/topics/{topic}"]
        for path in paths:
            try:
                stat = client.exists(path)
            except NoNodeError:
                stat = None
            stats[path] = (-1,) if stat is None else (stat.version, stat.cversion, stat.mzxid, stat.pzxid)
    return stats


def run_import(*args: str) -> None:
    code = cli_main.main(["import", *args])
    assert code == 0


def events_of(api_client: k8s.ApiClient, namespace: str, name: str) -> set[str]:
    events = k8s.CoreV1Api(api_client).list_namespaced_event(
        namespace, field_selector=f"involvedObject.name={name}"
    )
    return {str(event.reason) for event in events.items}


def wait_adopted_and_resynced(
    topics: Resources, api_client: k8s.ApiClient, namespace: str, name: str
) -> dict[str, Any]:
    """Ready after an adoption (a ``TopicAdopted`` event), then resynced once more.

    The first reconcile of an existing topic reports reason Adopted; the next one (the resync
    timer) finds the resource already Ready and reports InSync. Reaching InSync therefore proves
    that a further reconcile ran and planned nothing.
    """
    topics.wait_ready(namespace, name, timeout=90)
    wait_for(
        lambda: "TopicAdopted" in events_of(api_client, namespace, name), what=f"TopicAdopted for {name}"
    )
    topics.wait_reason(namespace, name, "InSync", timeout=4 * RESYNC_SECONDS + 60)
    body = topics.get(namespace, name)
    assert body is not None
    return body


def test_imported_topics_are_adopted_with_zero_zookeeper_writes(
    topics: Resources,
    namespace: str,
    kafka: KafkaView,
    kafka_cluster: KafkaCluster,
    operator: OperatorProcess,
    api_client: k8s.ApiClient,
    unique_topic: str,
    tmp_path: Path,
) -> None:
    assert operator.env["KZO_RESYNC_SECONDS"] == str(RESYNC_SECONDS)
    specs = {
        f"{unique_topic}.orders": (6, 3, {"retention.ms": "86400000", "cleanup.policy": "compact"}),
        f"{unique_topic}.Payments_EU": (3, 2, {"min.insync.replicas": "2", "max.message.bytes": "2000000"}),
        f"{unique_topic}.plain": (1, 1, {}),
    }
    described = create_topics(kafka, specs)
    throttled = f"{unique_topic}.orders"
    kafka.admin.alter_configs(
        [
            ConfigResource(
                ConfigResourceType.TOPIC, throttled, configs={"follower.replication.throttled.replicas": "*"}
            )
        ],
        raise_on_unknown=False,
    )
    wait_for(
        lambda: kafka.configs(throttled).get("follower.replication.throttled.replicas") == "*",
        what="the throttle config",
    )
    configs_before = {name: kafka.configs(name) for name in specs}
    with kafka_cluster.zk_session() as zk:
        stats_before = znode_stats(zk, sorted(specs))

    out = tmp_path / "topics.yaml"
    run_import(
        "--zookeeper", kafka_cluster.zk_connect, "--topics", re.escape(unique_topic) + r"\..*",
        "--namespace", namespace, "--cluster", operator.env["KZO_CLUSTER_NAME"], "-o", str(out),
    )  # fmt: skip
    documents = list(yaml.safe_load_all(out.read_text()))
    assert [d["spec"]["topicName"] for d in documents] == sorted(specs)
    orders = next(d for d in documents if d["spec"]["topicName"] == throttled)
    assert orders["spec"]["config"] == {"cleanup.policy": "compact", "retention.ms": "86400000"}

    writes_before = quiet_writes(operator)
    applied = subprocess.run(
        [str(tools.kubectl_binary()), "--kubeconfig", str(kafka_cluster.kubeconfig), "apply", "-f", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.count(" created") == len(specs), applied.stdout

    for document in documents:
        name = document["metadata"]["name"]
        body = wait_adopted_and_resynced(topics, api_client, namespace, name)
        status = body["status"]
        topic = document["spec"]["topicName"]
        assert status["topicName"] == topic
        assert status["partitions"] == specs[topic][0] and status["replicationFactor"] == specs[topic][1]
        assert not status.get("drift"), status.get("drift")
        assert not events_of(api_client, namespace, name) & WRITING_EVENTS

    assert zookeeper_writes(operator) == writes_before, "the operator wrote to ZooKeeper while adopting"
    with kafka_cluster.zk_session() as zk:
        assert znode_stats(zk, sorted(specs)) == stats_before
    for name, before in described.items():
        assert {p: v["replicas"] for p, v in (kafka.describe(name) or {}).items()} == {
            p: v["replicas"] for p, v in before.items()
        }
        assert kafka.configs(name) == configs_before[name], "the throttle key is kept: the operator owns it"

    # Control: the counter does see this operator's writes (a spec change is one config write).
    changed = next(d for d in documents if d["spec"]["topicName"] == throttled)["metadata"]["name"]
    topics.patch(namespace, changed, {"spec": {"config": {"retention.ms": "3600000"}}})
    wait_for(lambda: kafka.configs(throttled).get("retention.ms") == "3600000", what="the changed config")
    wait_for(lambda: zookeeper_writes(operator) > writes_before, what="the write counter to move")
    assert kafka.configs(throttled).get("follower.replication.throttled.replicas") == "*"


def test_one_file_per_topic_applies_with_kubectl_and_retain_keeps_the_topics(
    topics: Resources,
    namespace: str,
    kafka: KafkaView,
    kafka_cluster: KafkaCluster,
    api_client: k8s.ApiClient,
    unique_topic: str,
    tmp_path: Path,
) -> None:
    """A directory of files applied with kubectl. One topic is named like a number and has a config
    value Go's YAML would read as a float (``5e-1``, a valid Kafka double): quoting must keep both
    strings, or the API server rejects the resource."""
    numeric = f"{random.randrange(10**8, 10**9)}e1"
    specs = {
        f"{unique_topic}.Events_V2": (4, 3, {"retention.bytes": "1073741824"}),
        f"{unique_topic}.events-v2": (2, 1, {}),
        numeric: (1, 2, {"min.cleanable.dirty.ratio": "5e-1"}),
    }
    create_topics(kafka, specs)
    out = tmp_path / "kafkatopics"
    run_import(
        "--zookeeper", kafka_cluster.zk_connect, "--topics", f"{re.escape(unique_topic)}\\..*|{numeric}",
        "--namespace", namespace, "--output-dir", str(out),
    )  # fmt: skip
    files = sorted(out.iterdir())
    assert len(files) == len(specs)
    names = []
    for path in files:
        [document] = list(yaml.safe_load_all(path.read_text()))
        assert document["spec"]["deletionPolicy"] == "Retain"
        names.append(document["metadata"]["name"])
    assert len(set(names)) == len(specs), "names that sanitise alike stay distinct"
    assert numeric in names

    applied = subprocess.run(
        [str(tools.kubectl_binary()), "--kubeconfig", str(kafka_cluster.kubeconfig), "apply", "-f", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert applied.returncode == 0, applied.stderr
    for name in names:
        body = wait_adopted_and_resynced(topics, api_client, namespace, name)
        assert isinstance(body["spec"]["topicName"], str)
    numeric_body = topics.get(namespace, numeric)
    assert numeric_body is not None
    assert numeric_body["spec"]["topicName"] == numeric
    assert numeric_body["spec"]["config"] == {"min.cleanable.dirty.ratio": "5e-1"}

    for name in names:
        topics.delete(namespace, name)
        wait_for(lambda n=name: topics.get(namespace, n) is None, what=f"{name} to go")  # type: ignore[misc]
    assert set(specs) <= kafka.topic_names(), "deletionPolicy Retain keeps the topics in Kafka"
