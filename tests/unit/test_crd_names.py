"""The CRDs' names do not collide with those of the Kafka operators a cluster may also run.

kubectl resolves a short name, a category, a plural or a singular that two API groups share to one
of them only (docs/install.md#sharing-a-cluster-with-strimzi). The one shared pair is deliberate:
the plural ``kafkatopics`` names the CRD (``kafkatopics.kafka.zk-operator.io``) and cannot change
without orphaning every existing KafkaTopic; the integration test
``tests/integration/test_crd_coexistence.py`` shows that kubectl users still reach this project's
topics by short name, category and fully qualified name with Strimzi's CRD installed.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.test_crds import load_crd

#: Names that resolve in kubectl, by API group: plurals, singulars, short names and categories.
OTHER_OPERATORS: dict[str, set[str]] = {
    # Strimzi: Kafka, KafkaTopic, KafkaUser, KafkaConnect, KafkaConnector, KafkaMirrorMaker(2),
    # KafkaBridge, KafkaRebalance, KafkaNodePool, StrimziPodSet; category "strimzi".
    "kafka.strimzi.io": {
        *("kafkas", "kafka", "k"),
        *("kafkatopics", "kafkatopic", "kt"),
        *("kafkausers", "kafkauser", "ku"),
        *("kafkaconnects", "kafkaconnect", "kc"),
        *("kafkaconnectors", "kafkaconnector", "kctr"),
        *("kafkamirrormakers", "kafkamirrormaker", "kmm"),
        *("kafkamirrormaker2s", "kafkamirrormaker2", "kmm2"),
        *("kafkabridges", "kafkabridge", "kb"),
        *("kafkarebalances", "kafkarebalance", "kr"),
        *("kafkanodepools", "kafkanodepool", "knp"),
        *("strimzipodsets", "strimzipodset", "sps"),
        "strimzi",
    },
    # Confluent for Kubernetes: its KafkaTopic, and the short names a topic kind is likely to take.
    "platform.confluent.io": {"kafkatopics", "kafkatopic", "kt", "topic", "topics", "confluent"},
    # Koperator (Banzai Cloud): KafkaCluster, KafkaTopic, KafkaUser, CruiseControlOperation.
    "kafka.banzaicloud.io": {
        *("kafkaclusters", "kafkacluster"),
        *("kafkatopics", "kafkatopic"),
        *("kafkausers", "kafkauser"),
        *("cruisecontroloperations", "cruisecontroloperation"),
    },
    # Tekton's PipelineRun and TaskRun, in many clusters.
    "tekton.dev": {"pipelineruns", "pipelinerun", "pr", "prs", "taskruns", "taskrun", "tr", "trs"},
}


def resolvable_names(crd: dict[str, Any]) -> set[str]:
    names = crd["spec"]["names"]
    return {
        names["plural"],
        names["singular"],
        *names.get("shortNames", []),
        *names.get("categories", []),
    }


@pytest.mark.parametrize(
    ("crd_file", "shared_on_purpose"),
    [("kafkatopics.yaml", {"kafkatopics", "kafkatopic"}), ("partitionreassignments.yaml", set())],
)
def test_no_name_collides_with_another_kafka_operator(crd_file: str, shared_on_purpose: set[str]) -> None:
    ours = resolvable_names(load_crd(crd_file))
    for group, theirs in OTHER_OPERATORS.items():
        assert ours & theirs <= shared_on_purpose, f"{crd_file} shares {sorted(ours & theirs)} with {group}"


def test_both_kinds_share_the_category_and_nothing_else() -> None:
    topic, reassignment = (
        resolvable_names(load_crd(f)) for f in ("kafkatopics.yaml", "partitionreassignments.yaml")
    )
    assert topic & reassignment == {"kafka-zk"}
