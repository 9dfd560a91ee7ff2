"""A KafkaTopic's replication-factor change is carried out by a PartitionReassignment it owns."""

from __future__ import annotations

from kubernetes import client

from kafka_zk_operator.adapters.k8s import rf_reassignments
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for


def test_raising_the_replication_factor_hands_over_to_an_owned_rack_aware_reassignment(
    topics: Resources,
    namespace: str,
    api_client: client.ApiClient,
    kafka_cluster: KafkaCluster,
    unique_topic: str,
) -> None:
    topics.create(namespace, kafkatopic(unique_topic, partitions=3, rf=2))
    created = topics.wait_ready(namespace, unique_topic)
    topics.patch(
        namespace, unique_topic, {"spec": {"replicationFactor": 3, "config": {"retention.ms": "7200000"}}}
    )

    cond = topics.wait_reason(namespace, unique_topic, "ReplicationFactorChanging")
    assert cond["status"] == "False" and "PartitionReassignment" in cond["message"]
    reassignments = Resources(api_client, "partitionreassignments")
    name = rf_reassignments.reassignment_name(unique_topic, 3)
    owned = wait_for(lambda: reassignments.get(namespace, name), what="the owned PartitionReassignment")
    owner = owned["metadata"]["ownerReferences"][0]
    assert owner["kind"] == "KafkaTopic" and owner["uid"] == created["metadata"]["uid"]
    assert owner["blockOwnerDeletion"] is False
    assert owned["spec"]["mode"] == "ReplicationFactor"
    assert owned["spec"]["replicationFactors"] == {unique_topic: 3}

    ready = topics.wait_ready(namespace, unique_topic, timeout=240)
    assert ready["status"]["replicationFactor"] == 3
    racks = {b.id: b.rack for b in kafka_cluster.brokers}
    view = KafkaView(kafka_cluster.bootstrap_servers)
    try:
        described = wait_for(
            lambda: (
                d
                if (d := view.describe(unique_topic)) and all(len(p["replicas"]) == 3 for p in d.values())
                else None
            )
        )
        for partition in described.values():
            assert len({racks[b] for b in partition["replicas"]}) == 3
        assert view.configs(unique_topic).get("retention.ms") == "7200000", (
            "the rest of the spec applied meanwhile"
        )
    finally:
        view.close()
    # the reassignment finishes its own work (preferred election, throttle cleanup) and completes
    wait_for(
        lambda: (reassignments.get(namespace, name) or {}).get("status", {}).get("phase") == "Completed",
        timeout=120,
        what="the owned PartitionReassignment to complete",
    )
