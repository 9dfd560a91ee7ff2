"""The Helm chart with a real helm and kubectl (npm layer, see ``devstack/tools.py``) and a real API server.

* ``helm lint`` (also ``--strict``) is clean for every values set, and bad values are refused.
* ``helm template`` output for each values set passes ``kubernetes-validate --strict`` against the
  oldest supported and two recent Kubernetes minors (the ServiceMonitor against a small schema of
  our own, since no Kubernetes schema covers it); what it renders is checked field by field.
* The rendered manifests and the CRDs go into the session's kube-apiserver with server-side
  apply; a second apply changes nothing (same resourceVersions, empty ``kubectl diff``). The
  Deployment passes the ``restricted`` Pod Security level (no warnings; a Pod made from its
  template is admitted by a server-side dry run in an enforcing namespace).
* ``helm install`` / ``helm upgrade`` against the same server work and an unchanged upgrade
  leaves the chart's objects alone.
* The ServiceAccount's permissions are exactly those the operator needs: SubjectAccessReviews
  (user ``system:serviceaccount:<ns>:<sa>`` with the groups a token carries) for what must be
  allowed and a list of things that must be denied, in both RBAC modes.
"""

from __future__ import annotations

import base64
import json
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import jsonschema  # type: ignore[import-untyped]
import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from kafka_zk_operator.devstack import tools
from tests.conftest import KafkaCluster

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "kafka-zk-operator"
CHART_CRDS = CHART / "crds"
#: The chart's kubeVersion floor and two recent minors.
K8S_VERSIONS = ("1.27", "1.31", "1.33")
FIELD_MANAGER = "kzo-chart-test"
GROUP = "kafka.zk-operator.io"

VALUE_SETS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "namespaced": {"rbac": {"scope": "namespaced"}, "watchNamespaces": ["team-a", "team-b"]},
    "existing-secret": {"clusters": {"existingSecret": "my-kafka-clusters"}},
    "tenant-rbac": {"rbac": {"aggregateToDefaultRoles": True}},
    "service-monitor": {"metrics": {"serviceMonitor": {"enabled": True, "labels": {"release": "prom"}}}},
    "sasl-peering": {
        "peering": {"enabled": True},
        "watchNamespaces": ["kafka"],
        "clusters": {
            "config": {
                "clusters": [
                    {
                        "name": "main",
                        "zookeeper": "zk-0.zk:2181,zk-1.zk:2181/kafka",
                        "secureAcls": True,
                        "sasl": {
                            "mechanism": "DIGEST-MD5",
                            "usernameFile": "/etc/kzo/zk-username",
                            "passwordFile": "/etc/kzo/zk-password",
                        },
                    }
                ],
                "defaultCluster": "main",
            },
            "files": {"zk-username": "kafka", "zk-password": "s3cret"},
        },
        "operator": {
            "configDrift": "report",
            "resyncSeconds": 120,
            "extraEnv": [{"name": "X", "value": "1"}],
        },
        "metrics": {"enabled": False},
    },
    "kerberos": {
        "clusters": {
            "config": {
                "clusters": [
                    {
                        "name": "main",
                        "zookeeper": "zk-0.zk:2181,zk-1.zk:2181/kafka",
                        "secureAcls": True,
                        "sasl": {
                            "mechanism": "GSSAPI",
                            "principal": "kafka/kafka-zk-operator@EXAMPLE.COM",
                            "keytab": "/etc/kzo-krb5/operator.keytab",
                        },
                        # The same keytab for the Kafka listeners' GSSAPI (docs/install.md).
                        "bootstrapServers": "kafka-0.kafka:9093",
                        "kafkaSecurity": {
                            "protocol": "SASL_PLAINTEXT",
                            "sasl": {
                                "mechanism": "GSSAPI",
                                "principal": "kafka-zk-operator@EXAMPLE.COM",
                                "keytab": "/etc/kzo-krb5/operator.keytab",
                                "service": "kafka",
                                "domainName": "kafka.example.com",
                            },
                        },
                    }
                ]
            }
        },
        "kerberos": {
            "keytabSecret": "kzo-keytab",
            "krb5Conf": "[libdefaults]\n default_realm = EXAMPLE.COM\n",
        },
    },
    "spark": {
        "spark": {
            "enabled": True,
            "image": "registry.example/kzo-spark:1.2",
            "offloadAbovePartitions": 100000,
        }
    },
    "spark-namespaced": {
        "rbac": {"scope": "namespaced"},
        "watchNamespaces": ["team-a"],
        "spark": {"enabled": True, "serviceAccount": {"create": False, "name": "existing-spark"}},
    },
}

# A ServiceMonitor is not a Kubernetes kind: check the fields prometheus-operator needs.
SERVICE_MONITOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "ServiceMonitor"},
        "metadata": {
            "type": "object",
            "required": ["name", "namespace"],
            "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}}},
        },
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["selector", "endpoints"],
            "properties": {
                "namespaceSelector": {
                    "type": "object",
                    "properties": {"matchNames": {"type": "array", "items": {"type": "string"}}},
                },
                "selector": {
                    "type": "object",
                    "required": ["matchLabels"],
                    "properties": {
                        "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}
                    },
                },
                "endpoints": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["port"],
                        "properties": {
                            "port": {"type": "string"},
                            "path": {"type": "string", "pattern": "^/"},
                            "interval": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                            "scrapeTimeout": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                        },
                    },
                },
            },
        },
    },
}


# --- helpers --------------------------------------------------------------------------------------


def run(cmd: Sequence[str | Path], *, check: bool = True, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=120, **kwargs)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(str(c) for c in cmd)} exited with {proc.returncode}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc


@pytest.fixture(scope="session")
def helm() -> Path:
    return tools.helm_binary()


@pytest.fixture(scope="session")
def kubectl() -> Path:
    return tools.kubectl_binary()


@pytest.fixture
def values_file(tmp_path: Path) -> Iterator[Any]:
    def write(values: dict[str, Any]) -> Path:
        path = tmp_path / f"values-{uuid.uuid4().hex[:6]}.yaml"
        path.write_text(yaml.safe_dump(values))
        return path

    yield write


def render(
    helm: Path, values_path: Path, *, release: str = "kzo", namespace: str = "kzo-system"
) -> list[dict[str, Any]]:
    out = run(
        [
            helm,
            "template",
            release,
            CHART,
            "--namespace",
            namespace,
            "--kube-version",
            "1.33.0",
            "-f",
            values_path,
        ]
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = by_kind(docs, kind)
    assert len(found) == 1, f"expected one {kind}, got {[d['metadata']['name'] for d in found]}"
    return found[0]


def rule_set(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def expand(
    groups: Sequence[str], resources: Sequence[str], verbs: Sequence[str]
) -> set[tuple[str, str, str]]:
    return {(g, r, v) for g in groups for r in resources for v in verbs}


NAMESPACED_RULES = (
    expand([GROUP], ["kafkatopics", "partitionreassignments"], ["get", "list", "watch", "patch", "update"])
    | expand([GROUP], ["partitionreassignments"], ["create"])
    | expand([GROUP], ["kafkatopics/status", "partitionreassignments/status"], ["get", "patch", "update"])
    | expand(["", "events.k8s.io"], ["events"], ["create", "patch"])
    | expand([""], ["configmaps"], ["get", "list", "watch", "create", "update", "patch", "delete"])
)
CRD_RULES = expand(["apiextensions.k8s.io"], ["customresourcedefinitions"], ["get", "list", "watch"])
NAMESPACE_RULES = expand([""], ["namespaces"], ["list", "watch"])


# --- helm lint ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("strict", [False, True], ids=["lint", "lint-strict"])
@pytest.mark.parametrize("name", list(VALUE_SETS))
def test_helm_lint_is_clean(helm: Path, values_file: Any, name: str, strict: bool) -> None:
    cmd: list[str | Path] = [helm, "lint", CHART, "-f", values_file(VALUE_SETS[name])]
    if strict:
        cmd.append("--strict")
    out = run(cmd).stdout
    assert "0 chart(s) failed" in out
    assert "[WARNING]" not in out and "[ERROR]" not in out, out


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"rbac": {"scope": "namespaced"}}, "watchNamespaces"),
        ({"rbac": {"scope": "everything"}}, "scope"),
        ({"operator": {"configDrift": "ignore"}}, "configDrift"),
        ({"typo": True}, "typo"),
        ({"clusters": {"config": {"clusters": []}}}, "clusters"),
        ({"clusters": {"config": {"clusters": [{"name": "main"}]}}}, "zookeeper"),
        ({"watchNamespaces": ["Not_A_Namespace"]}, "watchNamespaces"),
        ({"image": {"digest": "latest"}}, "digest"),
        ({"spark": {"digest": "sha256:abc"}}, "digest"),
        ({"metrics": {"enabled": False, "serviceMonitor": {"enabled": True}}}, "serviceMonitor"),
        ({"spark": {"enabled": True, "offloadAbovePartitions": -1}}, "offloadAbovePartitions"),
        ({"spark": {"executorMemory": "lots"}}, "executorMemory"),
        ({"spark": {"enabled": True, "serviceAccount": {"create": False}}}, "spark.serviceAccount.name"),
        ({"leaderElection": {"enabled": False}}, "replicas > 1 needs leaderElection.enabled=true"),
        ({"podAntiAffinity": "always"}, "podAntiAffinity"),
        ({"leaderElection": {"leaseSeconds": 1}}, "leaseSeconds"),
    ],
    ids=[
        "namespaced-without-namespaces",
        "unknown-scope",
        "bad-drift-policy",
        "unknown-key",
        "no-clusters",
        "cluster-without-zookeeper",
        "bad-namespace-name",
        "bad-digest",
        "bad-spark-digest",
        "servicemonitor-without-metrics",
        "spark-negative-threshold",
        "spark-bad-memory",
        "spark-serviceaccount-without-name",
        "two-replicas-without-leader-election",
        "bad-anti-affinity",
        "lease-too-short",
    ],
)
def test_bad_values_are_refused_with_a_pointer(
    helm: Path, values_file: Any, values: dict[str, Any], message: str
) -> None:
    proc = run([helm, "template", "kzo", CHART, "-f", values_file(values)], check=False)
    assert proc.returncode != 0, f"helm accepted {values}"
    assert message in proc.stderr, proc.stderr


# --- rendered objects ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("name", list(VALUE_SETS))
def test_rendered_objects_pass_kubernetes_schemas(
    helm: Path, values_file: Any, name: str, version: str
) -> None:
    docs = render(helm, values_file(VALUE_SETS[name]))
    assert docs
    for doc in docs:
        where = f"{doc['kind']}/{doc['metadata']['name']}"
        if doc["kind"] == "ServiceMonitor":
            jsonschema.validate(doc, SERVICE_MONITOR_SCHEMA)
            continue
        try:
            used = kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{where} is invalid for Kubernetes {version}: {exc}")
        assert used == version, f"{where}: validated against {used}, not {version}"


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("crd_file", sorted(p.name for p in CHART_CRDS.glob("*.yaml")))
def test_chart_crds_pass_kubernetes_schemas(crd_file: str, version: str) -> None:
    crd = yaml.safe_load((CHART_CRDS / crd_file).read_text())
    assert kubernetes_validate.validate(crd, version, strict=True) == version


def test_default_deployment_is_two_restricted_replicas_electing_a_leader(
    helm: Path, values_file: Any
) -> None:
    docs = render(helm, values_file({}))
    deployment = one(docs, "Deployment")
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    pod = spec["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert "command" not in container, "the image's ENTRYPOINT (kzo operator) starts the operator"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"health": 8080, "metrics": 9090}
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "health"}
    env = {
        e["name"]: e["value"] if "value" in e else e["valueFrom"]["fieldRef"]["fieldPath"]
        for e in container["env"]
    }
    assert env == {
        "KZO_CLUSTERS_FILE": "/etc/kzo/clusters.yaml",
        "KZO_NAMESPACES": "",
        "KZO_RESYNC_SECONDS": "60",
        "KZO_CONFIG_DRIFT": "revert",
        "KZO_DELETED_TOPIC_DRIFT": "recreate",
        "KZO_CREATE_WAIT_SECONDS": "10",
        "KZO_CREATE_BATCH_SECONDS": "0.2",
        "KZO_DEFAULT_THROTTLE": "0",
        "KZO_HEALTH_PORT": "8080",
        "KZO_METRICS_PORT": "9090",
        "KZO_LEADER_ELECTION": "true",
        "KZO_LEADER_ELECTION_LEASE": deployment["metadata"]["name"],
        "KZO_LEADER_ELECTION_LEASE_SECONDS": "10",
        "POD_NAME": "metadata.name",
        "POD_NAMESPACE": "metadata.namespace",
    }
    selector = spec["selector"]["matchLabels"]
    (preferred,) = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred["podAffinityTerm"] == {
        "topologyKey": "kubernetes.io/hostname",
        "labelSelector": {"matchLabels": selector},
    }
    budget = one(docs, "PodDisruptionBudget")
    assert budget["spec"] == {"maxUnavailable": 1, "selector": {"matchLabels": selector}}
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["clusters"] == {"name": "clusters", "mountPath": "/etc/kzo", "readOnly": True}
    assert mounts["tmp"]["mountPath"] == "/tmp"
    secret = one(docs, "Secret")
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["clusters"]["secret"]["secretName"] == secret["metadata"]["name"]
    assert "checksum/clusters" in spec["template"]["metadata"]["annotations"]
    assert pod["serviceAccountName"] == one(docs, "ServiceAccount")["metadata"]["name"]


def test_one_replica_without_leader_election_is_recreated_and_needs_no_lease(
    helm: Path, values_file: Any
) -> None:
    docs = render(helm, values_file({"replicas": 1, "leaderElection": {"enabled": False}}))
    spec = one(docs, "Deployment")["spec"]
    assert (spec["replicas"], spec["strategy"]) == (1, {"type": "Recreate"})
    assert "affinity" not in spec["template"]["spec"]
    env = {e["name"] for e in spec["template"]["spec"]["containers"][0]["env"]}
    assert not {"KZO_LEADER_ELECTION", "POD_NAME"} & env
    assert not by_kind(docs, "PodDisruptionBudget") and not by_kind(docs, "Role")


def test_hard_anti_affinity_and_an_explicit_affinity(helm: Path, values_file: Any) -> None:
    pod = one(render(helm, values_file({"podAntiAffinity": "hard"})), "Deployment")["spec"]["template"][
        "spec"
    ]
    (required,) = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required["topologyKey"] == "kubernetes.io/hostname"
    mine: dict[str, Any] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}
    }
    pod = one(render(helm, values_file({"affinity": mine})), "Deployment")["spec"]["template"]["spec"]
    assert pod["affinity"] == mine


def test_leader_election_role_grants_only_the_release_lease(helm: Path, values_file: Any) -> None:
    docs = render(helm, values_file({}))
    (role,) = by_kind(docs, "Role")
    assert role["metadata"]["namespace"] == "kzo-system"
    lease = one(docs, "Deployment")["metadata"]["name"]
    assert role["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": [lease],
            "verbs": ["get", "update"],
        },
    ]
    (binding,) = by_kind(docs, "RoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]


def test_rendered_clusters_secret_holds_the_clusters_file_and_credential_files(
    helm: Path, values_file: Any
) -> None:
    docs = render(helm, values_file(VALUE_SETS["sasl-peering"]))
    data = one(docs, "Secret")["data"]
    assert set(data) == {"clusters.yaml", "zk-username", "zk-password"}
    clusters = yaml.safe_load(base64.b64decode(data["clusters.yaml"]))
    assert clusters == VALUE_SETS["sasl-peering"]["clusters"]["config"]
    assert base64.b64decode(data["zk-password"]) == b"s3cret"
    container = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["KZO_NAMESPACES"] == "kafka"
    assert env["KZO_CONFIG_DRIFT"] == "report"
    assert env["KZO_RESYNC_SECONDS"] == "120"
    assert env["KZO_METRICS_PORT"] == "0"
    assert env["X"] == "1"
    assert [p["name"] for p in container["ports"]] == ["health"]
    assert not by_kind(docs, "Service")


def test_kerberos_mounts_the_keytab_secret_and_krb5_conf(helm: Path, values_file: Any) -> None:
    values = VALUE_SETS["kerberos"]
    docs = render(helm, values_file(values))
    config_map = next(d for d in by_kind(docs, "ConfigMap") if d["metadata"]["name"].endswith("-krb5"))
    assert config_map["data"] == {"krb5.conf": values["kerberos"]["krb5Conf"]}
    template = one(docs, "Deployment")["spec"]["template"]
    assert "checksum/krb5" in template["metadata"]["annotations"]
    container = template["spec"]["containers"][0]
    assert {"name": "KRB5_CONFIG", "value": "/etc/kzo-krb5-conf/krb5.conf"} in container["env"]
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["krb5-keytab"] == {"name": "krb5-keytab", "mountPath": "/etc/kzo-krb5", "readOnly": True}
    assert mounts["krb5-conf"] == {"name": "krb5-conf", "mountPath": "/etc/kzo-krb5-conf", "readOnly": True}
    volumes = {v["name"]: v for v in template["spec"]["volumes"]}
    assert volumes["krb5-keytab"]["secret"] == {"secretName": "kzo-keytab", "defaultMode": 0o440}
    assert volumes["krb5-conf"]["configMap"] == {"name": config_map["metadata"]["name"]}
    # The clusters file names the mounted keytab.
    secret = yaml.safe_load(base64.b64decode(one(docs, "Secret")["data"]["clusters.yaml"]))
    assert secret["clusters"][0]["sasl"]["keytab"].startswith("/etc/kzo-krb5/")

    # An existing ConfigMap instead: mounted, nothing rendered.
    existing = {**values, "kerberos": {"keytabSecret": "kzo-keytab", "krb5ConfigMap": "site-krb5"}}
    docs = render(helm, values_file(existing))
    assert not [d for d in by_kind(docs, "ConfigMap") if d["metadata"]["name"].endswith("-krb5")]
    volumes = {v["name"]: v for v in one(docs, "Deployment")["spec"]["template"]["spec"]["volumes"]}
    assert volumes["krb5-conf"]["configMap"] == {"name": "site-krb5"}
    # Without kerberos values nothing of it is rendered.
    default = one(render(helm, values_file({})), "Deployment")["spec"]["template"]["spec"]
    assert not {"krb5-keytab", "krb5-conf"} & {v["name"] for v in default["volumes"]}
    assert "KRB5_CONFIG" not in {e["name"] for e in default["containers"][0]["env"]}


def test_existing_secret_is_mounted_and_nothing_is_rendered_for_it(helm: Path, values_file: Any) -> None:
    docs = render(helm, values_file(VALUE_SETS["existing-secret"]))
    assert not by_kind(docs, "Secret")
    template = one(docs, "Deployment")["spec"]["template"]
    volumes = {v["name"]: v for v in template["spec"]["volumes"]}
    assert volumes["clusters"]["secret"]["secretName"] == "my-kafka-clusters"
    assert "checksum/clusters" not in (template["metadata"].get("annotations") or {})


def test_cluster_scope_rbac_is_exactly_what_the_operator_needs(helm: Path, values_file: Any) -> None:
    docs = render(helm, values_file({}))
    role = one(docs, "ClusterRole")
    assert rule_set(role["rules"]) == NAMESPACED_RULES | CRD_RULES | NAMESPACE_RULES
    # the only Role is the Lease's (test_leader_election_role_grants_only_the_release_lease)
    assert [r["metadata"]["name"] for r in by_kind(docs, "Role")] == [
        f"{role['metadata']['name']}-leader-election"
    ]
    binding = one(docs, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": one(docs, "ServiceAccount")["metadata"]["name"],
            "namespace": "kzo-system",
        }
    ]


def test_peering_adds_only_kopf_peering_access(helm: Path, values_file: Any) -> None:
    docs = render(helm, values_file({"peering": {"enabled": True}}))
    extra = rule_set(one(docs, "ClusterRole")["rules"]) - (NAMESPACED_RULES | CRD_RULES | NAMESPACE_RULES)
    assert extra == expand(
        ["kopf.dev"], ["clusterkopfpeerings", "kopfpeerings"], ["get", "list", "watch", "patch"]
    )


def watched_roles(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Roles of rbac.scope=namespaced (not the Lease's)."""
    return [r for r in by_kind(docs, "Role") if not r["metadata"]["name"].endswith("-leader-election")]


def test_namespaced_rbac_has_one_role_per_watched_namespace(helm: Path, values_file: Any) -> None:
    docs = render(helm, values_file(VALUE_SETS["namespaced"]))
    roles = watched_roles(docs)
    assert sorted(r["metadata"]["namespace"] for r in roles) == ["team-a", "team-b"]
    for role in roles:
        assert rule_set(role["rules"]) == NAMESPACED_RULES
    bindings = [
        b for b in by_kind(docs, "RoleBinding") if not b["metadata"]["name"].endswith("-leader-election")
    ]
    assert sorted(b["metadata"]["namespace"] for b in bindings) == ["team-a", "team-b"]
    assert rule_set(one(docs, "ClusterRole")["rules"]) == CRD_RULES
    container = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "KZO_NAMESPACES", "value": "team-a,team-b"} in container["env"]


def test_service_monitor_scrapes_the_metrics_service(helm: Path, values_file: Any) -> None:
    docs = render(helm, values_file(VALUE_SETS["service-monitor"]))
    monitor = one(docs, "ServiceMonitor")
    service = one(docs, "Service")
    assert monitor["metadata"]["labels"]["release"] == "prom"
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"] == "metrics"
    pod_labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert not by_kind(render(helm, values_file({})), "ServiceMonitor")


@pytest.mark.parametrize("name", list(VALUE_SETS))
def test_no_owner_references_and_namespaced_objects_carry_the_release_namespace(
    helm: Path, values_file: Any, name: str
) -> None:
    cluster_scoped = {"ClusterRole", "ClusterRoleBinding"}
    for doc in render(helm, values_file(VALUE_SETS[name])):
        assert "ownerReferences" not in doc["metadata"]
        if doc["kind"] not in cluster_scoped:
            assert doc["metadata"].get("namespace"), f"{doc['kind']} without namespace"


# --- the real API server ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api(kafka_cluster: KafkaCluster) -> k8s.ApiClient:
    api_client: k8s.ApiClient = k8s_config.new_client_from_config(  # type: ignore[no-untyped-call]
        config_file=str(kafka_cluster.kubeconfig)
    )
    return api_client


def fresh_namespace(api: k8s.ApiClient, prefix: str, labels: dict[str, str] | None = None) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name, labels=labels)))
    return name


RESTRICTED = {
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/warn": "restricted",
    "pod-security.kubernetes.io/audit": "restricted",
}


class Installed:
    """Rendered manifests applied to the real API server, and who the operator is there."""

    def __init__(self, namespace: str, docs: list[dict[str, Any]], manifest: Path, apply_stderr: str) -> None:
        self.namespace = namespace
        self.docs = docs
        self.manifest = manifest
        self.apply_stderr = apply_stderr
        self.service_account = one(docs, "ServiceAccount")["metadata"]["name"]

    @property
    def user(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.service_account}"

    @property
    def groups(self) -> list[str]:
        return ["system:serviceaccounts", f"system:serviceaccounts:{self.namespace}", "system:authenticated"]


def apply_crds(kubectl: Path, kubeconfig: Path) -> None:
    run(
        [
            kubectl,
            "--kubeconfig",
            kubeconfig,
            "apply",
            "--server-side",
            f"--field-manager={FIELD_MANAGER}",
            "-f",
            CHART_CRDS,
        ]
    )
    for crd in ("kafkatopics", "partitionreassignments"):
        run(
            [
                kubectl,
                "--kubeconfig",
                kubeconfig,
                "wait",
                "--for=condition=Established",
                "--timeout=60s",
                f"crd/{crd}.{GROUP}",
            ]
        )


def install(
    helm: Path, kubectl: Path, api: k8s.ApiClient, kubeconfig: Path, tmp_path: Path, values: dict[str, Any]
) -> Installed:
    namespace = fresh_namespace(api, "kzo-chart", RESTRICTED)
    values = json.loads(json.dumps(values))
    if values.get("watchNamespaces"):
        values["watchNamespaces"] = [fresh_namespace(api, ns) for ns in values["watchNamespaces"]]
    values_path = tmp_path / "values.yaml"
    values_path.write_text(yaml.safe_dump(values))
    release = f"kzo-{uuid.uuid4().hex[:6]}"
    docs = render(helm, values_path, release=release, namespace=namespace)
    manifest = tmp_path / "rendered.yaml"
    manifest.write_text(yaml.safe_dump_all(docs))
    apply_crds(kubectl, kubeconfig)
    proc = run(
        [
            kubectl,
            "--kubeconfig",
            kubeconfig,
            "apply",
            "--server-side",
            f"--field-manager={FIELD_MANAGER}",
            "-f",
            manifest,
        ]
    )
    return Installed(namespace, docs, manifest, proc.stderr)


def resource_versions(kubectl: Path, kubeconfig: Path, manifest: Path) -> dict[str, str]:
    out = run([kubectl, "--kubeconfig", kubeconfig, "get", "-f", manifest, "-o", "json"]).stdout
    items = json.loads(out).get("items") or [json.loads(out)]
    return {
        f"{i['kind']}/{i['metadata'].get('namespace', '')}/{i['metadata']['name']}": i["metadata"][
            "resourceVersion"
        ]
        for i in items
    }


@pytest.mark.parametrize("name", ["defaults", "namespaced", "existing-secret", "sasl-peering"])
def test_server_side_apply_twice_changes_nothing(
    helm: Path,
    kubectl: Path,
    api: k8s.ApiClient,
    kafka_cluster: KafkaCluster,
    tmp_path: Path,
    name: str,
) -> None:
    kubeconfig = kafka_cluster.kubeconfig
    installed = install(helm, kubectl, api, kubeconfig, tmp_path, VALUE_SETS[name])
    assert "Warning" not in installed.apply_stderr, installed.apply_stderr
    before = resource_versions(kubectl, kubeconfig, installed.manifest)
    assert len(before) == len(installed.docs)
    diff = run(
        [
            kubectl,
            "--kubeconfig",
            kubeconfig,
            "diff",
            "--server-side",
            f"--field-manager={FIELD_MANAGER}",
            "-f",
            installed.manifest,
        ],
        check=False,
    )
    assert diff.returncode == 0, (
        f"kubectl diff found changes before the second apply:\n{diff.stdout}{diff.stderr}"
    )
    run(
        [
            kubectl,
            "--kubeconfig",
            kubeconfig,
            "apply",
            "--server-side",
            f"--field-manager={FIELD_MANAGER}",
            "-f",
            installed.manifest,
        ]
    )
    assert resource_versions(kubectl, kubeconfig, installed.manifest) == before
    # The CRDs too: applied again, unchanged.
    crds_before = resource_versions(kubectl, kubeconfig, CHART_CRDS)
    apply_crds(kubectl, kubeconfig)
    assert resource_versions(kubectl, kubeconfig, CHART_CRDS) == crds_before


def test_operator_pod_is_admitted_under_restricted_pod_security(
    helm: Path, kubectl: Path, api: k8s.ApiClient, kafka_cluster: KafkaCluster, tmp_path: Path
) -> None:
    installed = install(helm, kubectl, api, kafka_cluster.kubeconfig, tmp_path, {})
    # warn=restricted makes the API server warn about a non-compliant Deployment template.
    assert "would violate PodSecurity" not in installed.apply_stderr
    template = one(installed.docs, "Deployment")["spec"]["template"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "operator-dry-run",
            "namespace": installed.namespace,
            "labels": template["metadata"]["labels"],
        },
        "spec": template["spec"],
    }
    k8s.CoreV1Api(api).create_namespaced_pod(installed.namespace, cast(Any, pod), dry_run="All")
    # And the check is real: a root, privileged variant is refused in the same namespace.
    bad = json.loads(json.dumps(pod))
    bad["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    bad["spec"]["securityContext"] = {}
    with pytest.raises(k8s.ApiException) as refused:
        k8s.CoreV1Api(api).create_namespaced_pod(installed.namespace, cast(Any, bad), dry_run="All")
    assert refused.value.status == 403 and "PodSecurity" in str(refused.value.body)


def test_helm_install_and_unchanged_upgrade_against_the_real_server(
    helm: Path, kubectl: Path, api: k8s.ApiClient, kafka_cluster: KafkaCluster, tmp_path: Path
) -> None:
    kubeconfig = kafka_cluster.kubeconfig
    apply_crds(kubectl, kubeconfig)
    namespace = fresh_namespace(api, "kzo-helm", RESTRICTED)
    release = f"kzo-{uuid.uuid4().hex[:6]}"
    base: list[str | Path] = [helm, "--kubeconfig", kubeconfig, "--namespace", namespace]
    installed = run([*base, "install", release, CHART])
    assert "STATUS: deployed" in installed.stdout
    assert "kubectl apply --server-side" in installed.stdout, "NOTES.txt tells how to upgrade the CRDs"
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(run([*base, "get", "manifest", release]).stdout)
    before = resource_versions(kubectl, kubeconfig, manifest)
    assert {key.split("/")[0] for key in before} >= {"Deployment", "ServiceAccount", "Secret", "ClusterRole"}
    run([*base, "upgrade", release, CHART])
    assert resource_versions(kubectl, kubeconfig, manifest) == before
    run([*base, "uninstall", release])


# --- RBAC, checked by the API server -------------------------------------------------------------------


def can(api: k8s.ApiClient, who: Installed, verb: str, resource: str, namespace: str | None = None) -> bool:
    """SubjectAccessReview for ``verb resource[/subresource][.group]`` as the operator's ServiceAccount."""
    return can_named(api, who, verb, resource, namespace, None)


def can_named(
    api: k8s.ApiClient,
    who: Installed,
    verb: str,
    resource: str,
    namespace: str | None,
    object_name: str | None,
) -> bool:
    """:func:`can` for one object by name (``resourceNames`` rules)."""
    name, _, group = resource.partition(".")
    name, _, subresource = name.partition("/")
    review = k8s.V1SubjectAccessReview(
        spec=k8s.V1SubjectAccessReviewSpec(
            user=who.user,
            groups=who.groups,
            resource_attributes=k8s.V1ResourceAttributes(
                verb=verb,
                group=group,
                resource=name,
                subresource=subresource or None,
                namespace=namespace,
                name=object_name,
            ),
        )
    )
    result = k8s.AuthorizationV1Api(api).create_subject_access_review(review)
    assert result.status is not None, f"no status in the SubjectAccessReview for {verb} {resource}"
    return bool(result.status.allowed)


NAMESPACED_ALLOWED = [
    *[(v, f"kafkatopics.{GROUP}") for v in ("get", "list", "watch", "patch", "update")],
    *[(v, f"partitionreassignments.{GROUP}") for v in ("get", "list", "watch", "patch", "update", "create")],
    *[(v, f"kafkatopics/status.{GROUP}") for v in ("get", "patch", "update")],
    *[(v, f"partitionreassignments/status.{GROUP}") for v in ("get", "patch", "update")],
    ("create", "events"),
    ("patch", "events"),
    ("create", "events.events.k8s.io"),
    ("patch", "events.events.k8s.io"),
    *[(v, "configmaps") for v in ("get", "list", "watch", "create", "update", "patch", "delete")],
]
ALWAYS_DENIED_NAMESPACED = [
    ("create", f"kafkatopics.{GROUP}"),
    ("delete", f"kafkatopics.{GROUP}"),
    ("delete", f"partitionreassignments.{GROUP}"),
    ("delete", f"kafkatopics/status.{GROUP}"),
    ("get", "secrets"),
    ("list", "secrets"),
    ("create", "pods"),
    ("delete", "pods"),
    ("get", "pods"),
    ("create", "serviceaccounts/token"),
    ("patch", "deployments.apps"),
    ("create", "roles.rbac.authorization.k8s.io"),
    ("create", "rolebindings.rbac.authorization.k8s.io"),
    ("delete", "events"),
    ("get", "kopfpeerings.kopf.dev"),
]
ALWAYS_DENIED_CLUSTER = [
    ("create", "clusterroles.rbac.authorization.k8s.io"),
    ("create", "clusterrolebindings.rbac.authorization.k8s.io"),
    ("escalate", "clusterroles.rbac.authorization.k8s.io"),
    ("bind", "clusterroles.rbac.authorization.k8s.io"),
    ("impersonate", "users"),
    ("create", "customresourcedefinitions.apiextensions.k8s.io"),
    ("update", "customresourcedefinitions.apiextensions.k8s.io"),
    ("delete", "customresourcedefinitions.apiextensions.k8s.io"),
    ("get", "namespaces"),
    ("create", "namespaces"),
    ("delete", "namespaces"),
    ("list", "nodes"),
    ("list", "secrets"),
    ("get", "clusterkopfpeerings.kopf.dev"),
]


@pytest.fixture(scope="module")
def cluster_install(
    helm: Path,
    kubectl: Path,
    api: k8s.ApiClient,
    kafka_cluster: KafkaCluster,
    tmp_path_factory: pytest.TempPathFactory,
) -> Installed:
    return install(helm, kubectl, api, kafka_cluster.kubeconfig, tmp_path_factory.mktemp("rbac-cluster"), {})


@pytest.fixture(scope="module")
def namespaced_install(
    helm: Path,
    kubectl: Path,
    api: k8s.ApiClient,
    kafka_cluster: KafkaCluster,
    tmp_path_factory: pytest.TempPathFactory,
) -> Installed:
    values = VALUE_SETS["namespaced"]
    return install(helm, kubectl, api, kafka_cluster.kubeconfig, tmp_path_factory.mktemp("rbac-ns"), values)


def test_cluster_scope_allows_what_the_operator_needs_in_any_namespace(
    api: k8s.ApiClient, cluster_install: Installed
) -> None:
    for namespace in ("team-x", cluster_install.namespace, None):
        for verb, resource in NAMESPACED_ALLOWED:
            assert can(api, cluster_install, verb, resource, namespace), f"{verb} {resource} in {namespace}"
    for verb in ("list", "watch"):
        assert can(api, cluster_install, verb, "namespaces")
    for verb in ("get", "list", "watch"):
        assert can(api, cluster_install, verb, "customresourcedefinitions.apiextensions.k8s.io")


def test_the_lease_is_the_only_one_the_operator_may_change(
    api: k8s.ApiClient, cluster_install: Installed
) -> None:
    lease = one(cluster_install.docs, "Deployment")["metadata"]["name"]
    namespace = cluster_install.namespace
    for verb in ("get", "update"):
        assert can_named(api, cluster_install, verb, "leases.coordination.k8s.io", namespace, lease)
        assert not can_named(
            api, cluster_install, verb, "leases.coordination.k8s.io", namespace, "kube-scheduler"
        )
        assert not can_named(api, cluster_install, verb, "leases.coordination.k8s.io", "other", lease)
    assert can(api, cluster_install, "create", "leases.coordination.k8s.io", namespace)
    assert not can(api, cluster_install, "delete", "leases.coordination.k8s.io", namespace)
    assert not can(api, cluster_install, "create", "leases.coordination.k8s.io", "other")


def test_cluster_scope_denies_everything_else(api: k8s.ApiClient, cluster_install: Installed) -> None:
    for namespace in ("other", cluster_install.namespace):
        for verb, resource in ALWAYS_DENIED_NAMESPACED:
            assert not can(api, cluster_install, verb, resource, namespace), (
                f"{verb} {resource} in {namespace}"
            )
    for verb, resource in ALWAYS_DENIED_CLUSTER:
        assert not can(api, cluster_install, verb, resource), f"{verb} {resource}"


def test_namespaced_scope_allows_the_operator_only_in_watched_namespaces(
    api: k8s.ApiClient, namespaced_install: Installed
) -> None:
    role = one(namespaced_install.docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    watched = next(e["value"] for e in role["env"] if e["name"] == "KZO_NAMESPACES").split(",")
    assert len(watched) == 2
    for namespace in watched:
        for verb, resource in NAMESPACED_ALLOWED:
            assert can(api, namespaced_install, verb, resource, namespace), (
                f"{verb} {resource} in {namespace}"
            )
        for verb, resource in ALWAYS_DENIED_NAMESPACED:
            assert not can(api, namespaced_install, verb, resource, namespace), (
                f"{verb} {resource} in {namespace}"
            )
    for verb in ("get", "list", "watch"):
        assert can(api, namespaced_install, verb, "customresourcedefinitions.apiextensions.k8s.io")


def test_namespaced_scope_denies_other_namespaces_and_cluster_wide_access(
    api: k8s.ApiClient, namespaced_install: Installed
) -> None:
    for namespace in ("not-watched", namespaced_install.namespace):
        for verb, resource in NAMESPACED_ALLOWED:
            assert not can(api, namespaced_install, verb, resource, namespace), (
                f"{verb} {resource} in {namespace}"
            )
    for verb, resource in NAMESPACED_ALLOWED:
        assert not can(api, namespaced_install, verb, resource), f"{verb} {resource} cluster-wide"
    for verb in ("list", "watch"):
        assert not can(api, namespaced_install, verb, "namespaces")
    for verb, resource in ALWAYS_DENIED_CLUSTER:
        assert not can(api, namespaced_install, verb, resource), f"{verb} {resource}"


def test_kubectl_auth_can_i_agrees(
    kubectl: Path, kafka_cluster: KafkaCluster, namespaced_install: Installed
) -> None:
    """The same answers through ``kubectl auth can-i --as`` (what an administrator would run)."""
    watched = watched_roles(namespaced_install.docs)[0]["metadata"]["namespace"]
    base: list[str | Path] = [
        kubectl,
        "--kubeconfig",
        kafka_cluster.kubeconfig,
        "auth",
        "can-i",
        f"--as={namespaced_install.user}",
        *[f"--as-group={g}" for g in namespaced_install.groups],
    ]
    assert run([*base, "patch", f"kafkatopics.{GROUP}", "-n", watched], check=False).stdout.strip() == "yes"
    assert (
        run(
            [*base, "patch", f"kafkatopics.{GROUP}", "-n", watched, "--subresource=status"], check=False
        ).stdout.strip()
        == "yes"
    )
    for args in (
        ["patch", f"kafkatopics.{GROUP}", "-n", "not-watched"],
        ["get", "secrets", "-n", "other"],
        ["delete", "pods", "-n", watched],
        ["create", "clusterroles"],
        ["list", "namespaces"],
    ):
        proc = run([*base, *args], check=False)
        assert (proc.returncode, proc.stdout.strip()) == (1, "no"), (
            f"can-i {args}: {proc.stdout}{proc.stderr}"
        )


# --- spark.enabled: the PySpark offload (docs/spark.md) -----------------------------------------------

SPARK_DRIVER_RULES = expand(
    [""],
    ["pods", "services", "configmaps"],
    ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"],
) | expand(  # Spark 4's driver NetworkPolicy (tests/node/test_spark_on_kubernetes.py needs it)
    ["networking.k8s.io"],
    ["networkpolicies"],
    ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"],
)
SPARK_LAUNCHER_RULES = (
    expand(["batch"], ["jobs"], ["get", "list", "watch", "create", "delete"])
    | expand([""], ["configmaps"], ["get", "list", "watch", "create", "update", "patch", "delete"])
    | expand([""], ["pods"], ["get", "list", "delete"])
)


def spark_docs(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if "spark" in d["metadata"]["name"]]


def test_spark_disabled_renders_nothing_for_spark(helm: Path, values_file: Any) -> None:
    for name in ("defaults", "namespaced"):
        assert spark_docs(render(helm, values_file(VALUE_SETS[name]))) == []


def test_spark_enabled_renders_settings_service_account_and_two_roles(helm: Path, values_file: Any) -> None:
    from kafka_zk_operator.service.plan_offload import SETTINGS_KEY, SETTINGS_LABEL, settings_from_json

    docs = render(helm, values_file(VALUE_SETS["spark"]))
    spark = spark_docs(docs)
    assert sorted(d["kind"] for d in spark) == [
        "ConfigMap",
        "Role",
        "Role",
        "RoleBinding",
        "RoleBinding",
        "ServiceAccount",
    ]
    assert all(d["metadata"]["namespace"] == "kzo-system" for d in spark)
    roles = {d["metadata"]["name"].rsplit("-", 1)[-1]: d for d in by_kind(spark, "Role")}
    assert rule_set(roles["driver"]["rules"]) == SPARK_DRIVER_RULES
    assert rule_set(roles["launcher"]["rules"]) == SPARK_LAUNCHER_RULES
    spark_sa = next(d for d in by_kind(docs, "ServiceAccount") if d in spark)["metadata"]["name"]
    operator_sa = next(d for d in by_kind(docs, "ServiceAccount") if d not in spark)["metadata"]["name"]
    bindings = {d["roleRef"]["name"]: d["subjects"] for d in by_kind(spark, "RoleBinding")}
    assert bindings[roles["driver"]["metadata"]["name"]] == [
        {"kind": "ServiceAccount", "name": spark_sa, "namespace": "kzo-system"}
    ]
    assert bindings[roles["launcher"]["metadata"]["name"]] == [
        {"kind": "ServiceAccount", "name": operator_sa, "namespace": "kzo-system"}
    ]
    (settings_cm,) = by_kind(spark, "ConfigMap")
    assert settings_cm["metadata"]["labels"][SETTINGS_LABEL] == "true"
    settings = settings_from_json(settings_cm["data"][SETTINGS_KEY])
    assert settings.offload_above_partitions == 100000
    assert settings.spark.image == "registry.example/kzo-spark:1.2"
    assert (settings.spark.service_account, settings.spark.namespace) == (spark_sa, "kzo-system")
    assert (settings.spark.executors, settings.spark.executor_memory) == (2, "2g")
    # The operator's own Deployment and ClusterRole are unchanged by spark.enabled.
    defaults = render(helm, values_file({}))
    assert one(docs, "Deployment") == one(defaults, "Deployment")
    assert one(docs, "ClusterRole") == one(defaults, "ClusterRole")


def test_spark_image_defaults_to_the_operator_repository_with_a_spark_suffix(
    helm: Path, values_file: Any
) -> None:
    from kafka_zk_operator.service.plan_offload import SETTINGS_KEY, settings_from_json

    values = {"spark": {"enabled": True}, "image": {"repository": "reg.example/kzo", "tag": "9.9"}}
    (settings_cm,) = by_kind(spark_docs(render(helm, values_file(values))), "ConfigMap")
    assert settings_from_json(settings_cm["data"][SETTINGS_KEY]).spark.image == "reg.example/kzo-spark:9.9"


def test_digests_pin_both_images_as_the_released_chart_does(helm: Path, values_file: Any) -> None:
    """image.digest and spark.digest (what scripts/release.py sets) win over the tag; spark.image
    still wins over spark.digest."""
    from kafka_zk_operator.service.plan_offload import SETTINGS_KEY, settings_from_json

    operator, spark = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    values: dict[str, Any] = {
        "spark": {"enabled": True, "digest": spark},
        "image": {"repository": "reg.example/kzo", "tag": "9.9", "digest": operator},
    }
    docs = render(helm, values_file(values))
    assert one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"] == (
        f"reg.example/kzo@{operator}"
    )
    (settings_cm,) = by_kind(spark_docs(docs), "ConfigMap")
    assert (
        settings_from_json(settings_cm["data"][SETTINGS_KEY]).spark.image == f"reg.example/kzo-spark@{spark}"
    )
    values["spark"]["image"] = "mine.example/spark:1"
    (settings_cm,) = by_kind(spark_docs(render(helm, values_file(values))), "ConfigMap")
    assert settings_from_json(settings_cm["data"][SETTINGS_KEY]).spark.image == "mine.example/spark:1"


def test_spark_with_an_existing_service_account_binds_it(helm: Path, values_file: Any) -> None:
    docs = spark_docs(render(helm, values_file(VALUE_SETS["spark-namespaced"])))
    assert not by_kind(docs, "ServiceAccount")
    driver = next(d for d in by_kind(docs, "RoleBinding") if d["roleRef"]["name"].endswith("-spark-driver"))
    assert driver["subjects"][0]["name"] == "existing-spark"


def test_spark_rbac_against_the_real_server(
    helm: Path, kubectl: Path, api: k8s.ApiClient, kafka_cluster: KafkaCluster, tmp_path: Path
) -> None:
    """What the operator and the Spark pods may do, answered by the API server (SubjectAccessReview)."""
    namespace = fresh_namespace(api, "kzo-spark", RESTRICTED)
    release = f"kzo-{uuid.uuid4().hex[:6]}"
    values_path = tmp_path / "values.yaml"
    values_path.write_text(yaml.safe_dump(VALUE_SETS["spark"]))
    docs = render(helm, values_path, release=release, namespace=namespace)
    manifest = tmp_path / "rendered.yaml"
    manifest.write_text(yaml.safe_dump_all(docs))
    apply_crds(kubectl, kafka_cluster.kubeconfig)
    applied = run(
        [kubectl, "--kubeconfig", kafka_cluster.kubeconfig, "apply", "--server-side",
         f"--field-manager={FIELD_MANAGER}", "-f", manifest]
    )  # fmt: skip
    assert "Warning" not in applied.stderr, applied.stderr
    spark = spark_docs(docs)
    spark_sa = next(d for d in by_kind(docs, "ServiceAccount") if d in spark)
    operator_sa = next(d for d in by_kind(docs, "ServiceAccount") if d not in spark)
    operator = Installed(namespace, [operator_sa], manifest, "")
    pods = Installed(namespace, [spark_sa], manifest, "")
    for verb in ("create", "get", "delete"):
        assert can(api, operator, verb, "jobs.batch", namespace), f"operator {verb} jobs"
        assert can(api, operator, verb, "configmaps", namespace), f"operator {verb} configmaps"
    for verb in ("list", "delete"):  # the pods of a run that ended without a result
        assert can(api, operator, verb, "pods", namespace), f"operator {verb} pods"
    for verb, resource in (
        ("create", "pods"),
        ("patch", "pods"),
        ("create", "rolebindings.rbac.authorization.k8s.io"),
    ):
        assert not can(api, operator, verb, resource, namespace), f"operator {verb} {resource}"
    assert not can(api, operator, "create", "jobs.batch", "elsewhere")
    for verb in ("create", "watch", "delete", "deletecollection"):
        for resource in ("pods", "services", "configmaps", "networkpolicies.networking.k8s.io"):
            assert can(api, pods, verb, resource, namespace), f"spark {verb} {resource}"
    for verb, resource, ns in (
        ("create", "pods", "elsewhere"),
        ("get", "secrets", namespace),
        ("create", "jobs.batch", namespace),
        ("create", "roles.rbac.authorization.k8s.io", namespace),
        ("list", "nodes", None),
    ):
        assert not can(api, pods, verb, resource, ns), f"spark {verb} {resource} in {ns}"
