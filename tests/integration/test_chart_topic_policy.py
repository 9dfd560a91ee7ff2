"""The chart's KafkaTopic guardrails (``topicPolicy``: a ValidatingAdmissionPolicy and its binding)
enforced by the real kube-apiserver of the session's stack.

Each test installs the policy with ``helm template`` + server-side apply, bound through a
namespace label unique to the test, so that no other test's KafkaTopics are affected. The
KafkaTopics name a cluster no operator serves; only admission is under test here.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from kafka_zk_operator.devstack import tools
from tests.conftest import KafkaCluster
from tests.integration.test_chart import CHART, FIELD_MANAGER, GROUP, apply_crds, render, run

VERSION = "v1alpha1"
PLURAL = "kafkatopics"
#: Seven days, the limit of the extra CEL rule below.
WEEK_MS = 604_800_000

POLICY: dict[str, Any] = {
    "enabled": True,
    "minReplicationFactor": 2,
    "maxReplicationFactor": 5,
    "maxPartitions": 100,
    "requiredConfigs": ["min.insync.replicas"],
    "forbiddenConfigs": ["unclean.leader.election.enable"],
    "namespacePrefix": {"enabled": True, "separator": "."},
    "extraValidations": [
        {
            "expression": (
                "!has(object.spec.config) || !('retention.ms' in object.spec.config) || "
                f"int(object.spec.config['retention.ms']) <= {WEEK_MS}"
            ),
            "message": "retention.ms may be at most 7 days",
        }
    ],
}


@pytest.fixture(scope="module")
def helm_bin() -> Path:
    return tools.helm_binary()


@pytest.fixture(scope="module")
def kubectl_bin() -> Path:
    return tools.kubectl_binary()


@pytest.fixture(scope="module")
def api(kafka_cluster: KafkaCluster) -> Iterator[k8s.ApiClient]:
    api_client: k8s.ApiClient = k8s_config.new_client_from_config(  # type: ignore[no-untyped-call]
        config_file=str(kafka_cluster.kubeconfig)
    )
    yield api_client
    api_client.close()  # type: ignore[no-untyped-call]  # kubernetes is untyped


class Policy:
    """One installed policy: its objects and the label a namespace needs to be under it."""

    def __init__(self, docs: list[dict[str, Any]], label: dict[str, str], manifest: Path) -> None:
        self.docs = docs
        self.label = label
        self.manifest = manifest
        self.name = docs[0]["metadata"]["name"]


def install_policy(
    helm: Path, kubectl: Path, kubeconfig: Path, tmp_path: Path, policy: dict[str, Any]
) -> Policy:
    # A letter first: helm reads an unquoted 214216e5 as a number (YAML 1.2), PyYAML does not quote it.
    label = {"kzo-policy-test": f"p{uuid.uuid4().hex[:8]}"}
    values = {"topicPolicy": {**policy, "namespaceSelector": {"matchLabels": label}}}
    values_path = tmp_path / f"values-{label['kzo-policy-test']}.yaml"
    values_path.write_text(yaml.safe_dump(values))
    release = f"kzo-{label['kzo-policy-test']}"
    docs = [
        d
        for d in render(helm, values_path, release=release)
        if d["kind"].startswith("ValidatingAdmissionPolicy")
    ]
    manifest = tmp_path / f"policy-{label['kzo-policy-test']}.yaml"
    manifest.write_text(yaml.safe_dump_all(docs))
    apply_crds(kubectl, kubeconfig)
    base: list[str | Path] = [kubectl, "--kubeconfig", kubeconfig]
    run([*base, "apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "-f", manifest])
    return Policy(docs, label, manifest)


def namespace(api: k8s.ApiClient, labels: dict[str, str] | None = None) -> str:
    name = f"kzo-policy-{uuid.uuid4().hex[:6]}"
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name, labels=labels)))
    return name


def topic(
    name: str, *, partitions: int = 3, rf: int = 3, config: dict[str, str] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"cluster": "no-such-cluster", "partitions": partitions, "replicationFactor": rf}
    if config:
        spec["config"] = config
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "KafkaTopic",
        "metadata": {"name": name},
        "spec": spec,
    }


def create(api: k8s.ApiClient, ns: str, body: dict[str, Any], *, dry_run: bool = False) -> None:
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(
        GROUP, VERSION, ns, PLURAL, cast(Any, body), dry_run="All" if dry_run else None
    )


def refusal(api: k8s.ApiClient, ns: str, body: dict[str, Any]) -> str:
    """The API server's message for a refused create (fails if it is accepted)."""
    with pytest.raises(k8s.ApiException) as refused:
        create(api, ns, body)
    assert refused.value.status == 422, refused.value.body
    return str(json.loads(refused.value.body or "{}").get("message"))


def wait_enforced(api: k8s.ApiClient, ns: str) -> None:
    """Policies take effect once the API server has loaded them (about a second)."""
    probe = topic(f"{ns}.probe", rf=1, config={"min.insync.replicas": "1"})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            create(api, ns, probe, dry_run=True)
        except k8s.ApiException as exc:
            if exc.status == 422:
                return
            raise
        time.sleep(0.25)
    pytest.fail("the topic policy was not enforced within 30 s")


def patch(api: k8s.ApiClient, ns: str, name: str, body: dict[str, Any]) -> None:
    k8s.CustomObjectsApi(api).patch_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, name, body)


# --- rendering ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.31", "1.33"])
def test_rendered_policy_passes_kubernetes_schemas(helm_bin: Path, tmp_path: Path, version: str) -> None:
    values_path = tmp_path / "values.yaml"
    values_path.write_text(yaml.safe_dump({"topicPolicy": POLICY}))
    docs = [d for d in render(helm_bin, values_path) if d["kind"].startswith("ValidatingAdmissionPolicy")]
    assert [d["kind"] for d in docs] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    for doc in docs:
        assert kubernetes_validate.validate(doc, version, strict=True) == version
    policy, binding = docs
    assert len(policy["spec"]["validations"]) == 7
    assert binding["spec"]["policyName"] == policy["metadata"]["name"]
    assert binding["spec"]["validationActions"] == ["Deny"]
    assert "matchResources" not in binding["spec"], "no namespaceSelector: every namespace"


def test_policy_is_off_by_default(helm_bin: Path, tmp_path: Path) -> None:
    values_path = tmp_path / "values.yaml"
    values_path.write_text("{}\n")
    assert not [d for d in render(helm_bin, values_path) if "AdmissionPolicy" in d["kind"]]


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ({"enabled": True}, "no rule is set"),
        ({"enabled": True, "maxPartitions": 0}, "maxPartitions"),
        ({"enabled": True, "minReplicationFactor": 3, "maxReplicationFactor": 2}, "above"),
        ({"enabled": True, "maxPartitions": 9, "validationActions": ["Deny", "Warn"]}, "validationActions"),
        ({"enabled": True, "requiredConfigs": ["Retention.MS"]}, "requiredConfigs"),
        ({"enabled": True, "namespacePrefix": {"enabled": True, "separator": "/"}}, "separator"),
        ({"enabled": True, "extraValidations": [{"message": "no expression"}]}, "expression"),
    ],
    ids=[
        "no-rule",
        "zero-partitions",
        "min-above-max",
        "deny-and-warn",
        "bad-config-key",
        "bad-separator",
        "no-expression",
    ],
)
def test_bad_policy_values_are_refused_with_a_pointer(
    helm_bin: Path, tmp_path: Path, policy: dict[str, Any], message: str
) -> None:
    values_path = tmp_path / "values.yaml"
    values_path.write_text(yaml.safe_dump({"topicPolicy": policy}))
    proc = run([helm_bin, "template", "kzo", CHART, "-f", values_path], check=False)
    assert proc.returncode != 0, f"helm accepted {policy}"
    assert message in proc.stderr, proc.stderr


def test_policy_needs_kubernetes_1_30(helm_bin: Path, tmp_path: Path) -> None:
    values_path = tmp_path / "values.yaml"
    values_path.write_text(yaml.safe_dump({"topicPolicy": POLICY}))
    proc = run(
        [helm_bin, "template", "kzo", CHART, "--kube-version", "1.29.0", "-f", values_path], check=False
    )
    assert proc.returncode != 0
    assert "topicPolicy needs Kubernetes 1.30 or later" in proc.stderr, proc.stderr


# --- enforced by the real API server ------------------------------------------------------------------


@pytest.fixture(scope="module")
def denying(
    helm_bin: Path,
    kubectl_bin: Path,
    kafka_cluster: KafkaCluster,
    api: k8s.ApiClient,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Policy, str]:
    """The policy in Deny mode and a namespace under it, once it is enforced."""
    policy = install_policy(
        helm_bin, kubectl_bin, kafka_cluster.kubeconfig, tmp_path_factory.mktemp("policy"), POLICY
    )
    ns = namespace(api, policy.label)
    wait_enforced(api, ns)
    return policy, ns


def test_a_compliant_topic_is_admitted(api: k8s.ApiClient, denying: tuple[Policy, str]) -> None:
    _, ns = denying
    create(api, ns, topic(f"{ns}.orders", partitions=100, rf=3, config={"min.insync.replicas": "2"}))
    got = k8s.CustomObjectsApi(api).get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, f"{ns}.orders")
    assert cast(dict[str, Any], got)["spec"]["partitions"] == 100


MIN_ISR = {"min.insync.replicas": "2"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"replicationFactor": 1},
            "spec.replicationFactor 1 is below 2, the minimum of the Kafka topic policy",
        ),
        (
            {"replicationFactor": 6},
            "spec.replicationFactor 6 is above 5, the maximum of the Kafka topic policy",
        ),
        ({"partitions": 101}, "spec.partitions 101 is above 100, the maximum of the Kafka topic policy"),
        ({"config": {}}, "spec.config must set min.insync.replicas (required by"),
        (
            {"config": {**MIN_ISR, "unclean.leader.election.enable": "true"}},
            "spec.config must not set unclean.leader.election.enable",
        ),
        ({"config": {**MIN_ISR, "retention.ms": str(WEEK_MS + 1)}}, "retention.ms may be at most 7 days"),
        ({"metadata.name": "orders"}, "the Kafka topic name orders must start with {ns}. (the namespace;"),
        ({"topicName": "other.orders"}, "the Kafka topic name other.orders must start with {ns}."),
    ],
    ids=[
        "rf-low",
        "rf-high",
        "partitions",
        "required-config",
        "forbidden-config",
        "extra-cel",
        "prefix",
        "topic-name",
    ],
)
def test_a_topic_breaking_a_rule_is_refused_with_the_rule(
    api: k8s.ApiClient, denying: tuple[Policy, str], change: dict[str, Any], message: str
) -> None:
    policy, ns = denying
    body = topic(f"{ns}.t-{uuid.uuid4().hex[:6]}", config=MIN_ISR)
    for key, value in change.items():
        if key == "metadata.name":
            body["metadata"]["name"] = value
        else:
            body["spec"][key] = value
    text = refusal(api, ns, body)
    assert message.format(ns=ns) in text, text
    assert policy.name in text, "the message names the policy"


def test_the_policy_binds_only_the_selected_namespaces(
    api: k8s.ApiClient, denying: tuple[Policy, str]
) -> None:
    other = namespace(api)
    create(api, other, topic("orders", rf=1), dry_run=True)  # breaks four rules, not bound here


def test_existing_topics_are_grandfathered_but_cannot_get_worse(
    api: k8s.ApiClient, denying: tuple[Policy, str]
) -> None:
    policy, _ = denying
    # Created before its namespace came under the policy: RF 1, 150 partitions, no
    # min.insync.replicas, no namespace prefix.
    ns = namespace(api)
    create(api, ns, topic("legacy", partitions=150, rf=1))
    k8s.CoreV1Api(api).patch_namespace(ns, {"metadata": {"labels": policy.label}})
    wait_enforced(api, ns)

    # What the operator and users do with an existing resource still works...
    patch(
        api, ns, "legacy", {"metadata": {"finalizers": ["kafka.zk-operator.io/topic"], "labels": {"a": "b"}}}
    )
    patch(api, ns, "legacy", {"metadata": {"finalizers": None}})
    patch(api, ns, "legacy", {"spec": {"config": {"retention.ms": "3600000"}}})
    patch(api, ns, "legacy", {"spec": {"replicationFactor": 2}})  # better, though not compliant... yet
    # ... but it cannot get worse.
    for change, message in [
        ({"partitions": 160}, "spec.partitions 160 is above 100"),
        ({"replicationFactor": 1}, "spec.replicationFactor 1 is below 2"),
        (
            {"config": {"unclean.leader.election.enable": "true"}},
            "must not set unclean.leader.election.enable",
        ),
    ]:
        with pytest.raises(k8s.ApiException) as refused:
            patch(api, ns, "legacy", {"spec": change})
        assert refused.value.status == 422 and message in str(refused.value.body), refused.value.body
    # And it can be deleted.
    k8s.CustomObjectsApi(api).delete_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "legacy")


def test_warn_mode_admits_with_a_kubectl_warning(
    helm_bin: Path,
    kubectl_bin: Path,
    kafka_cluster: KafkaCluster,
    api: k8s.ApiClient,
    tmp_path: Path,
) -> None:
    policy = install_policy(
        helm_bin,
        kubectl_bin,
        kafka_cluster.kubeconfig,
        tmp_path,
        {"enabled": True, "minReplicationFactor": 3, "validationActions": ["Warn", "Audit"]},
    )
    ns = namespace(api, policy.label)
    manifest = tmp_path / "topic.yaml"
    manifest.write_text(yaml.safe_dump(topic("weak", rf=1)))
    base: list[str | Path] = [kubectl_bin, "--kubeconfig", kafka_cluster.kubeconfig, "-n", ns]
    deadline = time.monotonic() + 30
    while True:
        proc = run([*base, "apply", "--dry-run=server", "-f", manifest])
        if "Warning" in proc.stderr or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert "spec.replicationFactor 1 is below 3, the minimum of the Kafka topic policy" in proc.stderr
    applied = run([*base, "apply", "-f", manifest])
    assert "kafkatopic.kafka.zk-operator.io/weak created" in applied.stdout
    assert "Warning:" in applied.stderr, applied.stderr


def test_kubectl_apply_shows_the_refusal(
    kubectl_bin: Path, kafka_cluster: KafkaCluster, denying: tuple[Policy, str], tmp_path: Path
) -> None:
    policy, ns = denying
    manifest = tmp_path / "topic.yaml"
    manifest.write_text(yaml.safe_dump(topic(f"{ns}.orders-rf1", rf=1, config=MIN_ISR)))
    proc = run(
        [kubectl_bin, "--kubeconfig", kafka_cluster.kubeconfig, "-n", ns, "apply", "-f", manifest],
        check=False,
    )
    assert proc.returncode == 1
    assert (
        f"ValidatingAdmissionPolicy '{policy.name}' with binding '{policy.name}' denied request: "
        f"spec.replicationFactor 1 is below 2, the minimum of the Kafka topic policy ({policy.name})"
    ) in proc.stderr, proc.stderr
