"""Fixtures of the real-node tests: a stack with a kubelet (``kzo dev up --node``), images built
from the project's Dockerfile, and kubectl/helm against it.

The stack (ZooKeeper, three racked Kafka brokers, etcd, kube-apiserver, containerd, kubelet,
kube-controller-manager, kube-scheduler, kube-proxy) is started once for these tests, apart from the
session's other stack: its API server runs with the Node authorizer and ServiceAccount tokens, and
its namespaces really finish deleting. Nothing here is mocked: pods run from images built on this
machine (``devstack.images``), and Kafka's view is read with a Kafka client.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafka_zk_operator.devstack import images, tools
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec
from tests.conftest import KafkaCluster

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "kafka-zk-operator"
RESTRICTED = {f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "warn", "audit")}
#: Spark resources that fit a 2-core node beside the operator: the driver and two executors.
SMALL_SPARK = {
    "pullPolicy": "Never",
    "driverRequestCores": "250m",
    "executorRequestCores": "250m",
    "driverMemory": "768m",
    "executorMemory": "768m",
}


@dataclass
class NodeCluster:
    """The node stack as the tests use it: kubectl, helm, and the address pods reach the stack on."""

    cluster: KafkaCluster
    workdir: Path

    @property
    def stack(self) -> LocalStack:
        return self.cluster.stack

    @property
    def address(self) -> str:
        assert self.stack.node_address is not None
        return self.stack.node_address

    @property
    def zk_connect_for_pods(self) -> str:
        assert self.stack.zookeeper is not None
        return f"{self.address}:{self.stack.zookeeper.port}{self.stack.spec.chroot}"

    @property
    def bootstrap_for_pods(self) -> str:
        return ",".join(f"{self.address}:{broker.port}" for broker in self.stack.brokers.values())

    def kubectl(self, *args: str, check: bool = True, timeout: float = 120) -> str:
        return _run(
            [str(tools.kubectl_binary()), f"--kubeconfig={self.cluster.kubeconfig}", *args], check, timeout
        )

    def kubectl_json(self, *args: str) -> Any:
        return json.loads(self.kubectl(*args, "-o", "json"))

    def helm(self, *args: str, check: bool = True, timeout: float = 300) -> str:
        return _run(
            [str(tools.helm_binary()), f"--kubeconfig={self.cluster.kubeconfig}", *args], check, timeout
        )

    def load_image(self, image: images.BuiltImage) -> None:
        assert self.stack.node is not None
        self.stack.node.import_image(image.archive)

    def clusters_values(self) -> dict[str, Any]:
        """The chart's ``clusters`` value for this stack, as pods reach it."""
        main = {
            "name": "main",
            "zookeeper": self.zk_connect_for_pods,
            "bootstrapServers": self.bootstrap_for_pods,
        }
        return {"config": {"clusters": [main], "defaultCluster": "main"}}

    def pods_with_event(self, namespace: str, prefix: str, reason: str) -> set[str]:
        """Names of the pods starting with ``prefix`` that have an Event ``reason`` (e.g. Started):
        evidence that outlives the pods themselves."""
        events = self.kubectl_json("get", "events", "--namespace", namespace)["items"]
        return {
            e["involvedObject"]["name"]
            for e in events
            if e["involvedObject"].get("kind") == "Pod"
            and e["involvedObject"]["name"].startswith(prefix)
            and e.get("reason") == reason
        }

    def restricted_namespace(self, name: str) -> None:
        self.kubectl("create", "namespace", name)
        self.kubectl("label", "namespace", name, *(f"{k}={v}" for k, v in RESTRICTED.items()))


def _run(argv: list[str], check: bool, timeout: float) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv[:3])} ... failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


@pytest.fixture(scope="session")
def node_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeCluster]:
    workdir = tmp_path_factory.mktemp("node-stack")
    stack = LocalStack(
        StackSpec(with_node=True), workdir, progress=lambda message: print(f"[node stack] {message}")
    )
    stack.up()
    try:
        yield NodeCluster(KafkaCluster(stack, stack.spec.kafka_version), workdir)
    finally:
        stack.down()


@pytest.fixture(scope="session")
def operator_image(node_cluster: NodeCluster) -> images.BuiltImage:
    """The Dockerfile's ``runtime`` target built from this tree, in the node's containerd."""
    image = images.project_image("runtime")
    node_cluster.load_image(image)
    return image


@pytest.fixture(scope="session")
def spark_image(node_cluster: NodeCluster) -> images.BuiltImage:
    """The Dockerfile's ``spark`` target built from this tree, in the node's containerd."""
    image = images.project_image("spark")
    node_cluster.load_image(image)
    return image
