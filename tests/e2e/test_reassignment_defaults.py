"""The safe defaults of a PartitionReassignment that leaves ``approval`` out, on the real stack: a
computed mode (here DemoteBrokers, which moves no data) waits for approval and Kafka's leaders stay
where they were until it is approved; an explicit ``approval: Auto`` keeps the old behaviour
(tests/e2e/test_partitionreassignment.py). Kafka's view is read with Kafka's own client."""

from __future__ import annotations

import time

import pytest
from kubernetes import client

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.e2e.conftest import Resources
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import APPROVE, create_topic, ready_reason, reassignment, wait_phase
from tests.integration.helpers import wait_for


@pytest.fixture
def kprs(api_client: client.ApiClient, operator: OperatorProcess) -> Resources:
    return Resources(api_client, "partitionreassignments")


def _leaders(kafka: KafkaView, topic: str) -> dict[int, int]:
    return {p: info["leader"] for p, info in (kafka.describe(topic) or {}).items()}


def test_a_computed_mode_without_approval_waits_for_a_person(
    kprs: Resources, namespace: str, kafka: KafkaView, unique_topic: str
) -> None:
    create_topic(kafka, unique_topic, {0: [2, 1], 1: [2, 3]})
    wait_for(lambda: _leaders(kafka, unique_topic) == {0: 2, 1: 2}, what="broker 2 to lead both partitions")
    kprs.create(namespace, reassignment("demote-default", mode="DemoteBrokers", brokers=[2]))
    body = wait_phase(kprs, namespace, "demote-default", "ProposalReady", timeout=60)
    assert body["status"]["defaults"] == {"computedApproval": "Manual"}
    assert "approval" not in body["spec"], "no schema default is written into the spec"
    assert ready_reason(kprs, namespace, "demote-default") == "AwaitingApproval"
    time.sleep(3)  # several poll periods: still waiting, nothing moved in Kafka
    assert (kprs.get(namespace, "demote-default") or {})["status"]["phase"] == "ProposalReady"
    assert _leaders(kafka, unique_topic) == {0: 2, 1: 2}

    kprs.patch(namespace, "demote-default", {"metadata": {"annotations": {APPROVE: "true"}}})
    wait_phase(kprs, namespace, "demote-default", "Completed", timeout=90)
    wait_for(
        lambda: all(leader != 2 for leader in _leaders(kafka, unique_topic).values()),
        timeout=60,
        what="Kafka to move the leaders off broker 2 once approved",
    )
