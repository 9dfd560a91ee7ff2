"""Unit tests for ``domain.topic.importing``: the KafkaTopic manifests and YAML of ``kzo import``.

The manifests must satisfy the KafkaTopic CRD (checked with the CRD's own OpenAPI schema) and state
the topic exactly as ZooKeeper holds it, so that the operator's planner sees nothing to do.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml

from kafka_zk_operator.domain.model import Broker, TopicAssignment
from kafka_zk_operator.domain.topic import importing as topic_import
from kafka_zk_operator.domain.topic.importing import DeletionPolicy, ExistingTopic, ImportOptions
from kafka_zk_operator.domain.topic.planning import DesiredTopic, ObservedTopic, PlanKind, plan_topic

ROOT = Path(__file__).resolve().parents[2]
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
BROKERS = [Broker(1, "a"), Broker(2, "b"), Broker(3, "c")]


def topic(
    name: str,
    partitions: int = 3,
    rf: int = 2,
    config: dict[str, str] | None = None,
    **assignment_fields: Any,
) -> ExistingTopic:
    replicas = {p: tuple((p + i) % 3 + 1 for i in range(rf)) for p in range(partitions)}
    assignment = TopicAssignment(partitions=MappingProxyType(replicas), **assignment_fields)
    return ExistingTopic(name, assignment, config or {})


def test_manifest_fields_and_key_order() -> None:
    existing = topic("Orders_v1", 6, 3, {"retention.ms": "86400000", "cleanup.policy": "compact"})
    [imported] = topic_import.build([existing], ImportOptions(namespace="kafka", cluster="main"))
    assert imported.topic == "Orders_v1" and imported.name.startswith("orders-v1-")
    body = imported.manifest
    assert list(body) == ["apiVersion", "kind", "metadata", "spec"]
    assert body["apiVersion"] == "kafka.zk-operator.io/v1alpha1" and body["kind"] == "KafkaTopic"
    assert body["metadata"] == {"name": imported.name, "namespace": "kafka"}
    assert body["spec"] == {
        "cluster": "main",
        "topicName": "Orders_v1",
        "partitions": 6,
        "replicationFactor": 3,
        "config": {"cleanup.policy": "compact", "retention.ms": "86400000"},
        "deletionPolicy": "Retain",
    }
    assert list(body["spec"]["config"]) == ["cleanup.policy", "retention.ms"], "config keys sorted"


def test_topic_name_is_always_set_and_optional_fields_are_omitted() -> None:
    [imported] = topic_import.build([topic("orders")], ImportOptions())
    assert imported.manifest["metadata"] == {"name": "orders"}
    assert imported.manifest["spec"] == {
        "topicName": "orders",
        "partitions": 3,
        "replicationFactor": 2,
        "deletionPolicy": "Retain",
    }


def test_the_operator_owned_throttle_keys_are_left_out() -> None:
    config = {
        "retention.ms": "1000",
        "leader.replication.throttled.replicas": "0:1,0:2",
        "follower.replication.throttled.replicas": "*",
    }
    [imported] = topic_import.build([topic("t", config=config)], ImportOptions())
    assert imported.manifest["spec"]["config"] == {"retention.ms": "1000"}


def test_deletion_policy_delete_on_request() -> None:
    [imported] = topic_import.build([topic("t")], ImportOptions(deletion_policy=DeletionPolicy.DELETE))
    assert imported.manifest["spec"]["deletionPolicy"] == "Delete"
    assert "DELETES its topic" in topic_import.header("zk:2181", WHEN, 1, DeletionPolicy.DELETE)


def test_a_reassignment_in_flight_uses_the_target_replication_factor() -> None:
    # RF 1 -> 2: partition 0 moves from [1] to [2, 3] (RS = [2, 3, 1]).
    moving = ExistingTopic(
        "moving",
        TopicAssignment(partitions={0: (2, 3, 1)}, adding_replicas={0: (2, 3)}, removing_replicas={0: (1,)}),
    )
    [imported] = topic_import.build([moving], ImportOptions())
    assert imported.manifest["spec"]["replicationFactor"] == 2
    assert any("being reassigned" in note for note in topic_import.topic_notes(moving))


def test_output_is_sorted_by_topic_and_independent_of_input_order() -> None:
    topics = [topic(name) for name in ("zeta", "Alpha", "beta", "alpha")]
    shuffled = topics[:]
    random.Random(7).shuffle(shuffled)
    first = topic_import.build(topics, ImportOptions())
    assert [i.topic for i in first] == ["Alpha", "alpha", "beta", "zeta"]
    assert first == topic_import.build(shuffled, ImportOptions())
    text = topic_import.render_yaml(
        [i.manifest for i in first], topic_import.header("zk:2181/kafka", WHEN, 4)
    )
    again = topic_import.render_yaml(
        [i.manifest for i in topic_import.build(shuffled, ImportOptions())],
        topic_import.header("zk:2181/kafka", WHEN, 4),
    )
    assert text == again


def test_yaml_stream_has_a_header_and_round_trips_with_string_values() -> None:
    topics = [
        topic("a", config={"retention.ms": "7200000", "unclean.leader.election.enable": "true"}),
        topic("b", config={"min.insync.replicas": "1"}),
    ]
    manifests = [i.manifest for i in topic_import.build(topics, ImportOptions(namespace="ns"))]
    text = topic_import.render_yaml(manifests, topic_import.header("zk-0:2181,zk-1:2181/kafka", WHEN, 2))
    lines = text.splitlines()
    assert lines[0] == (
        "# Imported by 'kzo import' from ZooKeeper zk-0:2181,zk-1:2181/kafka at 2026-01-02T03:04:05Z (2 topics)."
    )
    assert text.count("\n---\n") == 2 and "# deletionPolicy Retain" in text
    documents = list(yaml.safe_load_all(text))
    assert documents == manifests
    config = documents[0]["spec"]["config"]
    assert config == {"retention.ms": "7200000", "unclean.leader.election.enable": "true"}
    assert all(isinstance(v, str) for v in config.values()), "numbers and booleans stay strings"


def test_manifests_satisfy_the_crd_schema() -> None:
    """The OpenAPI part of the CRD (the CEL rules run in the real API server in tests/e2e)."""
    crd = yaml.safe_load((ROOT / "crds" / "kafkatopics.yaml").read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    topics = [
        topic("orders", 12, 3, {"retention.ms": "1", "cleanup.policy": "compact,delete"}),
        topic("A_" + "b" * 200),
        topic("x" * 249, 1, 1),
    ]
    for imported in topic_import.build(topics, ImportOptions(namespace="ns", cluster="main")):
        jsonschema.validate(imported.manifest, schema)
        assert len(imported.manifest["metadata"]["name"]) <= 253


def test_an_imported_manifest_plans_no_change_against_the_topic_it_came_from() -> None:
    """The operator's own planner agrees: adopting the imported resource writes nothing."""
    config = {"retention.ms": "86400000", "cleanup.policy": "compact", "min.insync.replicas": "2"}
    existing = topic("orders", 6, 3, config | {"follower.replication.throttled.replicas": "*"})
    [imported] = topic_import.build([existing], ImportOptions())
    spec = imported.manifest["spec"]
    desired = DesiredTopic(
        name=spec["topicName"],
        partitions=spec["partitions"],
        replication_factor=spec["replicationFactor"],
        config=spec.get("config", {}),
    )
    observed = ObservedTopic(assignment=existing.assignment, config=existing.config)
    plan = plan_topic(desired, observed, BROKERS, existing_topics=["orders"])
    assert plan.kind is PlanKind.NO_CHANGE and not plan.drift


def test_notes_for_topics_the_operator_would_not_adopt_as_is() -> None:
    assert topic_import.topic_notes(topic("fine", config={"retention.ms": "1000"})) == []
    [bad_config] = topic_import.topic_notes(topic("t", config={"retention.msec": "5"}))
    assert "refuses this config" in bad_config and "retention.msec" in bad_config
    internal = topic_import.topic_notes(topic("__consumer_offsets"))
    assert any("Kafka-internal" in n for n in internal)
    uneven = ExistingTopic("u", TopicAssignment(partitions={0: (1, 2), 1: (1,)}))
    assert any("different replication factors (1, 2)" in n for n in topic_import.topic_notes(uneven))
    gaps = ExistingTopic("g", TopicAssignment(partitions={0: (1,), 2: (1,)}))
    assert any("not 0..1" in n for n in topic_import.topic_notes(gaps))
    too_long = ExistingTopic("L" * 250, TopicAssignment(partitions={0: (1,)}))
    assert any("CRD rejects this topic name" in n for n in topic_import.topic_notes(too_long))


@pytest.mark.parametrize(
    "value",
    ["1e3", "5e-1", "0o17", "0x1F", "1_000", "86400000", "0.5", "y", "N", "yes", "on", "Off", "true",
     "null", "~", "", " lead", "a: b", "#x", "compact,delete", "line\nbreak", "-1", ".inf"],
)  # fmt: skip
def test_strings_another_yaml_reader_could_misread_are_quoted(value: str) -> None:
    """Go's YAML (kubectl, Argo CD, Flux) reads plain 1e3/0o17 as numbers and y/n as booleans."""
    text = topic_import.render_yaml([{"spec": {"topicName": value, "config": {"k": value}}}])
    assert f"topicName: {value}\n" not in text
    assert list(yaml.safe_load_all(text)) == [{"spec": {"topicName": value, "config": {"k": value}}}]


@pytest.mark.parametrize(
    "value", ["orders", "compact", "CreateTime", "kafka.zk-operator.io/v1alpha1", "my-topic.v2"]
)
def test_unambiguous_strings_stay_plain(value: str) -> None:
    assert topic_import.render_yaml([{"name": value}]) == f"---\nname: {value}\n"
