"""Static checks of the CRD YAML in ``crds/``: structural schemas, subresources, columns, CEL rules.

The real kube-apiserver exercises the CEL rules in the integration tests; these tests catch the
mistakes that make an API server reject the CRD (non-structural schema, missing types) and guard
the parts of the API that handlers and users rely on (field names, printer columns, rules).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

CRD_DIR = Path(__file__).resolve().parents[2] / "crds"
GROUP = "kafka.zk-operator.io"
VERSION = "v1alpha1"

Schema = dict[str, Any]


def load_crd(file_name: str) -> dict[str, Any]:
    documents = list(yaml.safe_load_all((CRD_DIR / file_name).read_text()))
    assert len(documents) == 1, f"{file_name} must hold exactly one document"
    crd = documents[0]
    assert isinstance(crd, dict)
    return crd


@pytest.fixture(scope="module", params=["kafkatopics.yaml", "partitionreassignments.yaml"])
def crd(request: pytest.FixtureRequest) -> dict[str, Any]:
    return load_crd(request.param)


@pytest.fixture(scope="module")
def topic_crd() -> dict[str, Any]:
    return load_crd("kafkatopics.yaml")


@pytest.fixture(scope="module")
def reassignment_crd() -> dict[str, Any]:
    return load_crd("partitionreassignments.yaml")


def only_version(crd: dict[str, Any]) -> dict[str, Any]:
    versions = crd["spec"]["versions"]
    assert len(versions) == 1
    version: dict[str, Any] = versions[0]
    return version


def root_schema(crd: dict[str, Any]) -> Schema:
    schema: Schema = only_version(crd)["schema"]["openAPIV3Schema"]
    return schema


def walk(schema: Schema, path: str = "") -> Iterator[tuple[str, Schema]]:
    """Every schema node with a readable path (``.spec.config[*]``, ``.status.plan[]``)."""
    yield path, schema
    for name, child in schema.get("properties", {}).items():
        yield from walk(child, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from walk(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from walk(schema["additionalProperties"], f"{path}[*]")


def rules_at(schema: Schema) -> list[str]:
    return [" ".join(v["rule"].split()) for v in schema.get("x-kubernetes-validations", [])]


def all_rules(crd: dict[str, Any]) -> dict[str, list[str]]:
    return {path: rules_at(node) for path, node in walk(root_schema(crd)) if rules_at(node)}


def node(crd: dict[str, Any], dotted: str) -> Schema:
    for path, schema in walk(root_schema(crd)):
        if path == dotted:
            return schema
    raise AssertionError(f"no schema node at {dotted}")


def columns(crd: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["jsonPath"] for c in only_version(crd)["additionalPrinterColumns"]}


# --- both CRDs ---------------------------------------------------------------------------------


def test_crd_is_apiextensions_v1_namespaced_in_the_project_group(crd: dict[str, Any]) -> None:
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["kind"] == "CustomResourceDefinition"
    assert crd["spec"]["group"] == GROUP
    assert crd["spec"]["scope"] == "Namespaced"
    assert crd["metadata"]["name"] == f"{crd['spec']['names']['plural']}.{GROUP}"


def test_single_version_is_served_and_stored(crd: dict[str, Any]) -> None:
    version = only_version(crd)
    assert version["name"] == VERSION
    assert version["served"] is True
    assert version["storage"] is True


def test_status_subresource_is_enabled(crd: dict[str, Any]) -> None:
    assert only_version(crd)["subresources"] == {"status": {}}


def test_every_schema_node_is_structural(crd: dict[str, Any]) -> None:
    untyped = [
        path or "<root>"
        for path, schema in walk(root_schema(crd))
        if "type" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
        and not schema.get("x-kubernetes-int-or-string")
    ]
    assert untyped == []


def test_preserve_unknown_fields_only_on_the_kopf_storage(crd: dict[str, Any]) -> None:
    open_ended = [path for path, s in walk(root_schema(crd)) if s.get("x-kubernetes-preserve-unknown-fields")]
    assert open_ended == [".status.kopf"]
    assert "preserveUnknownFields" not in crd["spec"] or crd["spec"]["preserveUnknownFields"] is False


def test_status_lists_its_fields(crd: dict[str, Any]) -> None:
    status = node(crd, ".status")
    assert status["type"] == "object"
    assert {"observedGeneration", "conditions", "kopf"} <= set(status["properties"])


def test_conditions_follow_the_kubernetes_condition_shape(crd: dict[str, Any]) -> None:
    conditions = node(crd, ".status.conditions")
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]
    item = conditions["items"]
    assert set(item["properties"]) == {
        "type",
        "status",
        "reason",
        "message",
        "lastTransitionTime",
        "observedGeneration",
    }
    assert set(item["required"]) == {"type", "status"}
    assert item["properties"]["status"]["enum"] == ["True", "False", "Unknown"]
    assert item["properties"]["lastTransitionTime"]["format"] == "date-time"


def test_spec_is_required(crd: dict[str, Any]) -> None:
    assert root_schema(crd)["required"] == ["spec"]


def test_crds_share_the_kafka_zk_category(crd: dict[str, Any]) -> None:
    assert crd["spec"]["names"]["categories"] == ["kafka-zk"]


def test_age_is_the_last_printer_column(crd: dict[str, Any]) -> None:
    last = only_version(crd)["additionalPrinterColumns"][-1]
    assert last == {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}


def test_collections_read_by_cel_rules_are_bounded(crd: dict[str, Any]) -> None:
    """CEL cost estimation rejects rules over unbounded maps, lists or strings."""
    for path, rules in all_rules(crd).items():
        if path in ("", ".spec"):
            continue  # root/spec rules only read bounded fields, checked below by name
        schema = node(crd, path)
        if schema["type"] == "object":
            assert "maxProperties" in schema, path
        if schema["type"] == "array":
            assert "maxItems" in schema, path
        assert rules


# --- KafkaTopic ---------------------------------------------------------------------------------


def test_kafkatopic_names(topic_crd: dict[str, Any]) -> None:
    names = topic_crd["spec"]["names"]
    assert names["kind"] == "KafkaTopic"
    assert names["plural"] == "kafkatopics"
    assert names["singular"] == "kafkatopic"
    assert names["shortNames"] == ["kzt"]


def test_kafkatopic_spec_fields(topic_crd: dict[str, Any]) -> None:
    spec = node(topic_crd, ".spec")
    assert set(spec["properties"]) == {
        "cluster",
        "topicName",
        "partitions",
        "replicationFactor",
        "config",
        "assignment",
        "placement",
        "deletionPolicy",
    }
    assert set(spec["required"]) == {"partitions", "replicationFactor"}


def test_kafkatopic_numeric_bounds(topic_crd: dict[str, Any]) -> None:
    assert node(topic_crd, ".spec.partitions")["minimum"] == 1
    replication_factor = node(topic_crd, ".spec.replicationFactor")
    assert (replication_factor["minimum"], replication_factor["maximum"]) == (1, 32767)
    assert node(topic_crd, ".spec.topicName")["maxLength"] == 249


def test_kafkatopic_config_is_a_string_map(topic_crd: dict[str, Any]) -> None:
    config = node(topic_crd, ".spec.config")
    assert config["type"] == "object"
    assert config["additionalProperties"]["type"] == "string"


def test_kafkatopic_deletion_policy_defaults_to_delete(topic_crd: dict[str, Any]) -> None:
    policy = node(topic_crd, ".spec.deletionPolicy")
    assert policy["enum"] == ["Delete", "Retain"]
    assert policy["default"] == "Delete"


def test_kafkatopic_assignment_lists_reject_duplicate_brokers(topic_crd: dict[str, Any]) -> None:
    replicas = node(topic_crd, ".spec.assignment[*]")
    assert replicas["type"] == "array"
    assert replicas["x-kubernetes-list-type"] == "set"
    assert replicas["items"]["type"] == "integer"


def test_kafkatopic_topic_name_is_immutable_and_kafka_legal(topic_crd: dict[str, Any]) -> None:
    rules = rules_at(node(topic_crd, ".spec.topicName"))
    assert "self == oldSelf" in rules
    assert "self.matches('^[a-zA-Z0-9._-]+$')" in rules
    assert "self != '.' && self != '..'" in rules
    internal = next(r for r in rules if "__consumer_offsets" in r)
    for name in ("__transaction_state", "__share_group_state", "__cluster_metadata"):
        assert name in internal


def test_kafkatopic_effective_name_rules_sit_at_the_root(topic_crd: dict[str, Any]) -> None:
    rules = rules_at(root_schema(topic_crd))
    assert "has(self.spec.topicName) || size(self.metadata.name) <= 249" in rules
    assert any("oldSelf.metadata.name" in r and "self.metadata.name" in r for r in rules)


def test_kafkatopic_cluster_cannot_be_set_changed_or_removed(topic_crd: dict[str, Any]) -> None:
    """A topic stays in the cluster it was created in: a changed spec.cluster made the operator lose
    it (deleting the resource then left the topic in Kafka; found by the spec fuzzing)."""
    rules = rules_at(node(topic_crd, ".spec"))
    assert "(has(self.cluster) ? self.cluster : '') == (has(oldSelf.cluster) ? oldSelf.cluster : '')" in rules


def test_kafkatopic_partitions_never_decrease(topic_crd: dict[str, Any]) -> None:
    assert rules_at(node(topic_crd, ".spec.partitions")) == ["self >= oldSelf"]


def test_kafkatopic_config_keys_are_checked(topic_crd: dict[str, Any]) -> None:
    assert rules_at(node(topic_crd, ".spec.config")) == ["self.all(k, k.matches('^[a-z0-9.]+$'))"]


def test_kafkatopic_assignment_must_match_partitions_and_rf(topic_crd: dict[str, Any]) -> None:
    rules = rules_at(node(topic_crd, ".spec"))
    assert "!has(self.assignment) || size(self.assignment) == self.partitions" in rules
    assert any("size(self.assignment[p]) == self.replicationFactor" in r for r in rules)
    assert any("int(p) < self.partitions" in r for r in rules)


def test_kafkatopic_status_fields(topic_crd: dict[str, Any]) -> None:
    status = node(topic_crd, ".status")
    assert set(status["properties"]) == {
        "observedGeneration",
        "conditions",
        "topicName",
        "topicId",
        "migrationPhase",
        "backend",
        "partitions",
        "replicationFactor",
        "partitionStates",
        "partitionStatesTruncated",
        "underReplicatedPartitions",
        "underMinIsrPartitions",
        "offlinePartitions",
        "leaderlessPartitions",
        "lastSyncTime",
        "deletionRequestedAt",
        "drift",
        "appliedConfig",
        "kopf",
    }


def test_kafkatopic_partition_states_are_bounded(topic_crd: dict[str, Any]) -> None:
    states = node(topic_crd, ".status.partitionStates")
    assert states["maxItems"] == 1000
    assert set(states["items"]["properties"]) == {"partition", "leader", "isr", "replicas"}


def test_kafkatopic_printer_columns(topic_crd: dict[str, Any]) -> None:
    cols = columns(topic_crd)
    assert list(cols)[:5] == ["Topic", "Partitions", "RF", "Ready", "Under-replicated"]
    assert cols["Ready"] == '.status.conditions[?(@.type=="Ready")].status'
    assert cols["Under-replicated"] == ".status.underReplicatedPartitions"
    assert cols["Topic"] == ".status.topicName"


def test_kafkatopic_description_documents_the_annotations(topic_crd: dict[str, Any]) -> None:
    description = root_schema(topic_crd)["description"]
    assert 'kafka.zk-operator.io/paused: "true"' in description
    assert 'kafka.zk-operator.io/managed: "false"' in description
    assert "InvalidSpec" in description  # the operator's own name checks are documented


# --- PartitionReassignment ------------------------------------------------------------------------


def test_partitionreassignment_names_avoid_tektons_pr(reassignment_crd: dict[str, Any]) -> None:
    names = reassignment_crd["spec"]["names"]
    assert names["kind"] == "PartitionReassignment"
    assert names["plural"] == "partitionreassignments"
    assert names["shortNames"] == ["kpr"]


def test_partitionreassignment_modes(reassignment_crd: dict[str, Any]) -> None:
    assert node(reassignment_crd, ".spec.mode")["enum"] == [
        "Explicit",
        "AddBrokers",
        "RemoveBrokers",
        "Rebalance",
        "ReplicationFactor",
        "DemoteBrokers",
    ]
    assert node(reassignment_crd, ".spec")["required"] == ["mode"]


def test_partitionreassignment_defaults(reassignment_crd: dict[str, Any]) -> None:
    # No schema default for approval: the API server would apply it to every stored object, and
    # the operator defaults it by mode (domain/reassignment/defaults.py, recorded in status.defaults).
    assert "default" not in node(reassignment_crd, ".spec.approval")
    assert "default" not in node(reassignment_crd, ".spec.throttle")
    assert set(node(reassignment_crd, ".status.defaults")["properties"]) == {"computedApproval", "throttle"}
    assert node(reassignment_crd, ".spec.preferredLeaderElection")["default"] is True
    assert node(reassignment_crd, ".spec.rackPolicy")["default"] == "Enforce"
    assert node(reassignment_crd, ".spec.tolerance")["default"] == 0
    assert node(reassignment_crd, ".spec.batch")["default"] == {}
    assert node(reassignment_crd, ".spec.batch.maxPartitions")["default"] == 50
    assert node(reassignment_crd, ".spec.batch.maxMovesPerBroker")["default"] == 5
    throttle = node(reassignment_crd, ".spec.throttle")
    assert (throttle["format"], throttle["minimum"]) == ("int64", 1)


def test_partitionreassignment_explicit_partitions_are_keyed_by_topic_partition(
    reassignment_crd: dict[str, Any],
) -> None:
    partitions = node(reassignment_crd, ".spec.partitions")
    assert partitions["x-kubernetes-list-type"] == "map"
    assert partitions["x-kubernetes-list-map-keys"] == ["topic", "partition"]
    assert node(reassignment_crd, ".spec.partitions[].replicas")["x-kubernetes-list-type"] == "set"


def test_partitionreassignment_mode_rules(reassignment_crd: dict[str, Any]) -> None:
    rules = rules_at(node(reassignment_crd, ".spec"))
    assert "self.mode != 'Explicit' || (has(self.partitions) != has(self.reassignmentJson))" in rules
    assert "!(self.mode in ['AddBrokers', 'RemoveBrokers', 'DemoteBrokers']) || has(self.brokers)" in rules
    assert "(self.mode == 'ReplicationFactor') == has(self.replicationFactors)" in rules
    assert "self.mode == 'Rebalance' || (!has(self.topics) && !has(self.topicsRegex))" in rules


def test_partitionreassignment_status_fields(reassignment_crd: dict[str, Any]) -> None:
    status = node(reassignment_crd, ".status")
    assert {
        "phase",
        "observedGeneration",
        "conditions",
        "proposal",
        "plan",
        "planConfigMaps",
        "progress",
        "throttle",
        "stuck",
        "message",
        "progressText",
        "kopf",
    } <= set(status["properties"])
    assert node(reassignment_crd, ".status.phase")["enum"] == [
        "Pending",
        "ProposalReady",
        "Queued",
        "Running",
        "Completed",
        "Failed",
        "Stopped",
    ]
    assert node(reassignment_crd, ".status.plan")["maxItems"] == 500
    assert set(node(reassignment_crd, ".status.plan[]")["properties"]) == {
        "topic",
        "partition",
        "from",
        "to",
        "bytes",
    }
    assert set(node(reassignment_crd, ".status.proposal.brokers[]")["properties"]) == {
        "id",
        "rack",
        "replicasBefore",
        "replicasAfter",
        "leadersBefore",
        "leadersAfter",
    }


def test_partitionreassignment_printer_columns(reassignment_crd: dict[str, Any]) -> None:
    cols = columns(reassignment_crd)
    assert cols["Mode"] == ".spec.mode"
    assert cols["Phase"] == ".status.phase"
    assert cols["Progress"] == ".status.progressText"
    assert cols["Moves"] == ".status.proposal.moves"
    assert cols["ETA"] == ".status.progress.estimatedCompletionAt"


def test_partitionreassignment_progress_fields_written_by_the_operator_are_in_the_schema(
    reassignment_crd: dict[str, Any],
) -> None:
    # A field missing here would be pruned by the API server from every status patch.
    assert {
        "partitionsDone",
        "partitionsTotal",
        "currentBatch",
        "batchesDone",
        "batchesTotal",
        "leadersElected",
        "startedAt",
        "batchStartedAt",
        "batchSubmitted",
        "completedAt",
        "estimatedCompletionAt",
        "startedSpec",
    } <= set(node(reassignment_crd, ".status.progress")["properties"])
    assert node(reassignment_crd, ".status.progress.estimatedCompletionAt")["format"] == "date-time"


def test_partitionreassignment_description_documents_the_annotations(
    reassignment_crd: dict[str, Any],
) -> None:
    description = root_schema(reassignment_crd)["description"]
    for annotation in ("approve", "refresh", "stop"):
        assert f"kafka.zk-operator.io/{annotation}" in description
