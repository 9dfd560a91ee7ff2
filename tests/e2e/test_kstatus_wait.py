"""``kubectl wait --for=condition=…`` on the kstatus conditions, with the real kubectl against the
real API server and operator: it returns for a KafkaTopic the operator refuses (``Stalled``), for a
PartitionReassignment that failed (``Stalled``) and for a Manual proposal (``ProposalReady``),
each within a bound, and a KafkaTopic that is Ready carries neither ``Stalled`` nor ``Reconciling``.
Kafka's view is read with a Kafka client.
"""

from __future__ import annotations

import subprocess
import time

import pytest
from kubernetes import client

from kafka_zk_operator.devstack import tools
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from kafka_zk_operator.domain.crd_identity import GROUP, KAFKA_TOPIC, PARTITION_REASSIGNMENT
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import explicit_moves
from tests.integration.helpers import wait_for

#: How long each ``kubectl wait`` may take: the operator acts on a create within seconds.
BOUND_SECONDS = 60.0


def kubectl_wait(cluster: KafkaCluster, namespace: str, resource: str, condition: str) -> float:
    """Run ``kubectl wait --for=condition=<condition>``; the seconds it took. Fails on a timeout."""
    started = time.monotonic()
    done = subprocess.run(
        [
            str(tools.kubectl_binary()), "--kubeconfig", str(cluster.kubeconfig), "-n", namespace,
            "wait", f"--for=condition={condition}", f"--timeout={int(BOUND_SECONDS)}s", resource,
        ],
        capture_output=True, text=True, timeout=BOUND_SECONDS + 30, check=False,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    print(f"kubectl wait --for=condition={condition} {resource}: {elapsed:.1f} s")
    assert done.returncode == 0, f"kubectl wait {condition} failed: {done.stdout}{done.stderr}"
    assert "condition met" in done.stdout
    return elapsed


@pytest.fixture
def kprs(api_client: client.ApiClient, operator: OperatorProcess) -> Resources:
    return Resources(api_client, PARTITION_REASSIGNMENT.plural)


def test_kubectl_wait_stalled_returns_for_a_topic_the_operator_refuses(
    kafka_cluster: KafkaCluster, topics: Resources, namespace: str, kafka: KafkaView, unique_topic: str
) -> None:
    """The schema admits any config key; a key unknown to the cluster's Kafka is refused for good."""
    topics.create(namespace, kafkatopic(unique_topic, partitions=1, rf=1, config={"retention.mss": "1"}))
    elapsed = kubectl_wait(
        kafka_cluster, namespace, f"{KAFKA_TOPIC.plural}.{GROUP}/{unique_topic}", "Stalled"
    )
    assert elapsed < BOUND_SECONDS
    stalled = topics.condition(namespace, unique_topic, "Stalled")
    assert (
        stalled is not None and stalled["reason"] == "InvalidSpec" and "retention.mss" in stalled["message"]
    )
    assert topics.condition(namespace, unique_topic, "Reconciling") is None
    assert unique_topic not in kafka.topic_names()
    # Fixed in place: Ready, and the Stalled condition goes.
    topics.patch(
        namespace, unique_topic, {"spec": {"config": {"retention.mss": None, "retention.ms": "60000"}}}
    )
    kubectl_wait(kafka_cluster, namespace, f"{KAFKA_TOPIC.plural}.{GROUP}/{unique_topic}", "Ready")
    body = topics.wait_ready(namespace, unique_topic)
    kinds = {c["type"] for c in body["status"]["conditions"]}
    assert "Stalled" not in kinds and "Reconciling" not in kinds
    wait_for(lambda: unique_topic in kafka.topic_names(), timeout=30, what=f"topic {unique_topic} in Kafka")


def test_kubectl_wait_stalled_returns_for_a_failed_reassignment_and_proposal_ready_for_a_manual_one(
    kafka_cluster: KafkaCluster, topics: Resources, kprs: Resources, namespace: str, unique_topic: str
) -> None:
    topics.create(namespace, kafkatopic(unique_topic, partitions=1, rf=1))
    topics.wait_ready(namespace, unique_topic)
    # Broker 99 is not registered: the operator refuses the moves (Failed), it does not wait.
    kprs.create(namespace, explicit_moves("to-nowhere", unique_topic, {0: [99]}))
    resource = f"{PARTITION_REASSIGNMENT.plural}.{GROUP}/to-nowhere"
    assert kubectl_wait(kafka_cluster, namespace, resource, "Stalled") < BOUND_SECONDS
    failed = kprs.get(namespace, "to-nowhere") or {}
    assert failed["status"]["phase"] == "Failed"
    stalled = kprs.condition(namespace, "to-nowhere", "Stalled")
    assert stalled is not None and stalled["reason"] == "InvalidSpec" and "99" in stalled["message"]

    # Two replicas where there is one: a real move, which waits for approval.
    two = sorted(b.id for b in kafka_cluster.brokers)[:2]
    kprs.create(namespace, explicit_moves("manual", unique_topic, {0: two}, approval="Manual"))
    resource = f"{PARTITION_REASSIGNMENT.plural}.{GROUP}/manual"
    assert kubectl_wait(kafka_cluster, namespace, resource, "ProposalReady") < BOUND_SECONDS
    body = kprs.get(namespace, "manual") or {}
    assert body["status"]["phase"] == "ProposalReady"
    kinds = {c["type"]: c["status"] for c in body["status"]["conditions"]}
    assert "Reconciling" not in kinds and "Stalled" not in kinds, (
        "waiting for a person is not work in progress"
    )
    assert kinds["Ready"] == "False" and kinds["Running"] == "False"
