"""This project's CRDs next to Strimzi's KafkaTopic CRD, on a real kube-apiserver with a real kubectl.

Strimzi's ``kafkatopics.kafka.strimzi.io`` has the same plural and singular as ours and the short
name ``kt`` this project used before. The module runs a control plane of its own
(``own_control_plane``), so the other tests' API server never serves Strimzi's names:

* Upgrade: ``helm install`` of the chart as released before (its KafkaTopic CRD had the short name
  ``kt``), a KafkaTopic and a PartitionReassignment; then the new CRDs applied as docs/install.md says.
  The resources are the same objects afterwards, ``kzt`` finds them with a discovery cache kubectl
  filled before the upgrade, and ``kt`` is gone. A plain server-side apply is refused with a
  conflict on ``.spec.names.shortNames`` (helm, which created it, owns it), hence ``--force-conflicts``.
* With Strimzi's CRD and one of its KafkaTopics installed: ``kzt``, ``kpr``, the category
  ``kafka-zk`` and the fully qualified names list this project's resources only; ``kt`` and
  ``strimzi`` list Strimzi's; and the bare ``kafkatopics`` / ``kafkatopic`` / ``KafkaTopic`` resolve
  to Strimzi's (measured: what docs/install.md#sharing-a-cluster-with-strimzi tells users).
* ``kubectl explain``: the OpenAPI schema the server publishes for both kinds, which kubectl
  explain reads, has a description for every field.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from kafka_zk_operator.devstack import tools
from tests.integration.own_control_plane import CRDS, ROOT, OwnControlPlane, own_control_plane

CHART = ROOT / "charts" / "kafka-zk-operator"
OUR_TOPICS = "kafkatopics.kafka.zk-operator.io"
OUR_REASSIGNMENTS = "partitionreassignments.kafka.zk-operator.io"
STRIMZI_TOPICS = "kafkatopics.kafka.strimzi.io"
NAMESPACE = "team-a"

#: A stand-in for Strimzi's KafkaTopic CRD with exactly its names (group, kind, plural, singular,
#: short name, category); the schema does not matter for name resolution.
STRIMZI_TOPIC_CRD = f"""
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {STRIMZI_TOPICS}
spec:
  group: kafka.strimzi.io
  scope: Namespaced
  names:
    kind: KafkaTopic
    listKind: KafkaTopicList
    plural: kafkatopics
    singular: kafkatopic
    shortNames: [kt]
    categories: [strimzi]
  versions:
    - name: v1beta2
      served: true
      storage: true
      subresources: {{status: {{}}}}
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
"""

RESOURCES = f"""
apiVersion: kafka.zk-operator.io/v1alpha1
kind: KafkaTopic
metadata: {{name: orders, namespace: {NAMESPACE}}}
spec: {{partitions: 3, replicationFactor: 3, config: {{retention.ms: "86400000"}}}}
---
apiVersion: kafka.zk-operator.io/v1alpha1
kind: PartitionReassignment
metadata: {{name: drain-broker-3, namespace: {NAMESPACE}}}
spec: {{mode: RemoveBrokers, brokers: [3], approval: Manual}}
"""

STRIMZI_TOPIC = f"""
apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaTopic
metadata: {{name: payments, namespace: {NAMESPACE}, labels: {{strimzi.io/cluster: my-cluster}}}}
spec: {{partitions: 1, replicas: 3}}
"""

OURS = {"kafkatopic.kafka.zk-operator.io/orders", "partitionreassignment.kafka.zk-operator.io/drain-broker-3"}
OUR_TOPIC = {"kafkatopic.kafka.zk-operator.io/orders"}
STRIMZIS = {"kafkatopic.kafka.strimzi.io/payments"}


@dataclass
class Upgrade:
    before: dict[str, Any]
    after: dict[str, Any]
    plain_apply_stderr: str
    plain_apply_code: int


def names(plane: OwnControlPlane, what: str) -> set[str]:
    out = plane.kubectl("get", what, "-n", NAMESPACE, "-o", "name").stdout
    return set(out.split())


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnControlPlane]:
    with own_control_plane(tmp_path_factory.mktemp("crd-coexistence")) as own:
        yield own


@pytest.fixture(scope="module")
def upgrade(plane: OwnControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Upgrade:
    # The chart as released before: its KafkaTopic CRD had the short name kt. helm install creates
    # the CRDs of crds/ (helm then owns their fields).
    chart = tmp_path_factory.mktemp("released-chart") / "kafka-zk-operator"
    shutil.copytree(CHART, chart)
    released = yaml.safe_load((CRDS / "kafkatopics.yaml").read_text())
    released["spec"]["names"]["shortNames"] = ["kt"]
    (chart / "crds" / "kafkatopics.yaml").write_text(yaml.safe_dump(released))
    helm = [str(tools.helm_binary()), f"--kubeconfig={plane.kubeconfig}"]
    subprocess.run(
        [*helm, "install", "kzo", str(chart), "-n", "kzo-system", "--create-namespace"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    plane.wait_established(OUR_TOPICS, OUR_REASSIGNMENTS)
    plane.kubectl("create", "namespace", NAMESPACE)
    plane.apply(RESOURCES)
    assert names(plane, "kt") == OUR_TOPIC  # and kubectl's discovery cache knows the old names
    before = plane.kubectl_json("get", OUR_TOPICS, "orders", "-n", NAMESPACE)

    plain = plane.kubectl("apply", "--server-side", "-f", CRDS, check=False)
    plane.apply(CRDS, "--force-conflicts")
    plane.wait_established(OUR_TOPICS, OUR_REASSIGNMENTS)
    after = plane.kubectl_json("get", OUR_TOPICS, "orders", "-n", NAMESPACE)
    return Upgrade(before, after, plain.stderr, plain.returncode)


@pytest.fixture(scope="module")
def with_strimzi(plane: OwnControlPlane, upgrade: Upgrade) -> OwnControlPlane:
    plane.apply(STRIMZI_TOPIC_CRD)
    plane.wait_established(STRIMZI_TOPICS)
    plane.apply(STRIMZI_TOPIC)
    return plane


def test_the_upgrade_keeps_existing_resources(plane: OwnControlPlane, upgrade: Upgrade) -> None:
    for key in ("uid", "creationTimestamp", "generation"):
        assert upgrade.after["metadata"][key] == upgrade.before["metadata"][key]
    assert upgrade.after["spec"] == upgrade.before["spec"]
    assert names(plane, "kzt") == OUR_TOPIC, "kubectl re-discovers the new short name from a warm cache"
    assert names(plane, "kpr") == {"partitionreassignment.kafka.zk-operator.io/drain-broker-3"}
    crd = plane.kubectl_json("get", "crd", OUR_TOPICS)
    assert crd["status"]["acceptedNames"]["shortNames"] == ["kzt"]
    assert crd["status"]["storedVersions"] == ["v1alpha1"]


def test_the_old_short_name_is_gone(plane: OwnControlPlane, upgrade: Upgrade) -> None:
    proc = plane.kubectl("get", "kt", "-n", NAMESPACE, check=False)
    assert proc.returncode != 0 and 'the server doesn\'t have a resource type "kt"' in proc.stderr


def test_a_plain_apply_over_created_crds_needs_force_conflicts(upgrade: Upgrade) -> None:
    assert upgrade.plain_apply_code != 0
    assert 'conflict with "helm"' in upgrade.plain_apply_stderr
    assert ".spec.names.shortNames" in upgrade.plain_apply_stderr


def test_our_short_names_and_category_list_only_this_projects_resources(
    with_strimzi: OwnControlPlane,
) -> None:
    assert names(with_strimzi, "kzt") == OUR_TOPIC
    assert names(with_strimzi, "kpr") == {"partitionreassignment.kafka.zk-operator.io/drain-broker-3"}
    assert names(with_strimzi, "kafka-zk") == OURS
    assert names(with_strimzi, "kzt,kpr") == OURS


def test_fully_qualified_names_reach_this_projects_topics(with_strimzi: OwnControlPlane) -> None:
    for what in (OUR_TOPICS, "kafkatopic.kafka.zk-operator.io", "kafkatopics.v1alpha1.kafka.zk-operator.io"):
        assert names(with_strimzi, what) == OUR_TOPIC, what
    topic = with_strimzi.kubectl_json("get", "kafkatopic.kafka.zk-operator.io/orders", "-n", NAMESPACE)
    assert topic["spec"]["partitions"] == 3


def test_strimzis_names_reach_strimzis_topics(with_strimzi: OwnControlPlane) -> None:
    assert names(with_strimzi, "kt") == STRIMZIS
    assert names(with_strimzi, "strimzi") == STRIMZIS
    assert names(with_strimzi, STRIMZI_TOPICS) == STRIMZIS


def test_the_bare_plural_and_kind_resolve_to_strimzi(with_strimzi: OwnControlPlane) -> None:
    """What kubectl does with a name two groups share: it takes the first group of the server's
    discovery, where groups of equal priority (every CRD's) are in name order, kafka.strimzi.io
    before kafka.zk-operator.io. No warning is printed."""
    for what in ("kafkatopics", "kafkatopic", "KafkaTopic"):
        proc = with_strimzi.kubectl("get", what, "-n", NAMESPACE, "-o", "name")
        assert set(proc.stdout.split()) == STRIMZIS, what
        assert proc.stderr == "", what


def undescribed(schema: dict[str, Any], path: str = "") -> Iterator[str]:
    for name, child in (schema.get("properties") or {}).items():
        if not child.get("description"):
            yield f"{path}.{name}"
        yield from undescribed(child, f"{path}.{name}")
        for key, suffix in (("items", "[]"), ("additionalProperties", "[*]")):
            if isinstance(child.get(key), dict):
                yield from undescribed(child[key], f"{path}.{name}{suffix}")


def test_kubectl_explain_has_a_description_for_every_field(with_strimzi: OwnControlPlane) -> None:
    raw = with_strimzi.kubectl("get", "--raw", "/openapi/v3/apis/kafka.zk-operator.io/v1alpha1").stdout
    schemas = yaml.safe_load(raw)["components"]["schemas"]
    for kind in ("KafkaTopic", "PartitionReassignment"):
        schema = schemas[f"io.zk-operator.kafka.v1alpha1.{kind}"]
        assert schema.get("description")
        assert list(undescribed(schema)) == [], kind
    explained = with_strimzi.kubectl("explain", "kpr.status.throttle.rate").stdout
    assert "KIND:       PartitionReassignment" in explained and "bytes per second" in explained
    explained = with_strimzi.kubectl("explain", "kzt.status.conditions").stdout
    assert "GROUP:      kafka.zk-operator.io" in explained
    assert "lastTransitionTime" in explained and "When status last changed" in explained
