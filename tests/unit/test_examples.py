"""The YAML in ``examples/`` stays valid: against the CRD schemas and against the domain rules.

The CEL rules themselves need a real API server (integration tests); here the OpenAPI part of each
CRD is checked with jsonschema, and every KafkaTopic example goes through the same validation and
planning the operator runs before creating a topic.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafka_zk_operator.adapters.k8s.rf_reassignments import reassignment_name
from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.topic.planning import DesiredTopic, PlanKind, plan_topic

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
CRD_FILES = {"KafkaTopic": "kafkatopics.yaml", "PartitionReassignment": "partitionreassignments.yaml"}


def load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text())
    assert isinstance(document, dict)
    return document


def schema_for(kind: str) -> dict[str, Any]:
    crd = load(ROOT / "crds" / CRD_FILES[kind])
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def test_the_expected_examples_exist() -> None:
    assert {path.name for path in EXAMPLES} >= {
        "kafkatopic-orders.yaml",
        "kafkatopic-compacted.yaml",
        "partitionreassignment-add-brokers.yaml",
        "partitionreassignment-explicit.yaml",
    }


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_matches_its_crd_schema(path: Path) -> None:
    document = load(path)
    assert document["apiVersion"] == "kafka.zk-operator.io/v1alpha1"
    jsonschema.validate(document, schema_for(document["kind"]))


@pytest.mark.parametrize(
    "path", [p for p in EXAMPLES if load(p)["kind"] == "KafkaTopic"], ids=lambda p: p.name
)
def test_topic_example_passes_the_operators_planning(path: Path) -> None:
    document = load(path)
    spec = document["spec"]
    assignment = spec.get("assignment")
    desired = DesiredTopic(
        name=spec.get("topicName", document["metadata"]["name"]),
        partitions=spec["partitions"],
        replication_factor=spec["replicationFactor"],
        config=spec.get("config", {}),
        assignment={int(p): tuple(r) for p, r in assignment.items()} if assignment else None,
    )
    brokers = [Broker(broker_id, f"rack-{broker_id % 3}") for broker_id in range(1, 7)]
    plan = plan_topic(desired, None, brokers, rng=random.Random(0))
    assert plan.kind is PlanKind.CREATE
    assert plan.warnings == ()


def test_explicit_example_uses_the_partition_list_not_json() -> None:
    spec = load(ROOT / "examples" / "partitionreassignment-explicit.yaml")["spec"]
    assert spec["mode"] == "Explicit"
    assert "partitions" in spec and "reassignmentJson" not in spec


def test_add_brokers_example_waits_for_approval_and_is_throttled() -> None:
    spec = load(ROOT / "examples" / "partitionreassignment-add-brokers.yaml")["spec"]
    assert spec["mode"] == "AddBrokers"
    assert spec["approval"] == "Manual"
    assert spec["throttle"] > 0
    assert spec["brokers"]


def comment_of(path: Path, key: str) -> str:
    """The end-of-line comment of the first ``key:`` line of ``path`` ('' without one)."""
    for line in path.read_text().splitlines():
        if re.match(rf"\s*{re.escape(key)}:", line) and "#" in line:
            return " ".join(line.split("#", 1)[1].split())
    return ""


@pytest.mark.parametrize(
    "path", [p for p in EXAMPLES if load(p)["kind"] == "KafkaTopic"], ids=lambda p: p.name
)
def test_replication_factor_comments_name_the_owned_reassignment(path: Path) -> None:
    """A KafkaTopic's replicationFactor is changed in the KafkaTopic: the operator creates the owned
    PartitionReassignment ``<name>-rf<N>`` itself (docs/kafkatopic.md)."""
    comment = comment_of(path, "replicationFactor")
    if comment:
        name = load(path)["metadata"]["name"]
        assert reassignment_name(name, 99).replace("rf99", "rf<N>") in comment, comment
        assert "not here" not in comment


@pytest.mark.parametrize(
    "path", [p for p in EXAMPLES if load(p)["kind"] == "PartitionReassignment"], ids=lambda p: p.name
)
def test_rack_policy_comments_say_what_the_crd_says(path: Path) -> None:
    comment = comment_of(path, "rackPolicy")
    if comment:
        value = load(path)["spec"]["rackPolicy"]
        rack_policy = schema_for("PartitionReassignment")["properties"]["spec"]["properties"]["rackPolicy"]
        description = " ".join(rack_policy["description"].split())
        said = re.search(rf"{value}: ([^.]*)\.", description)
        assert said is not None
        assert comment.lower() == said.group(1).lower(), (comment, said.group(1))
