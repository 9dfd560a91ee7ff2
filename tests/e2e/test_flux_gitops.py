"""GitOps end to end with Flux's real source-controller and kustomize-controller (built once by
``kzo dev prepare``, ``devstack/flux.py``) against the stack's kube-apiserver, reading a local Git
repository over smart HTTP: commits of KafkaTopic and PartitionReassignment manifests become Kafka
topics through a Kustomization with ``wait: true`` and ``prune: true``; an invalid spec fails the
Kustomization fast; an out-of-band change in Kafka is reverted without Flux drift. Kafka's view is
read with Kafka's own client (``tests/e2e/kafka_client.py``)."""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from kafka.admin import ConfigResource, ConfigResourceType
from kubernetes import client

from kafka_zk_operator.cli import main as cli_main
from kafka_zk_operator.devstack import flux, tools
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for

#: Flux's intervals here: short, to keep the file fast.
INTERVAL_SECONDS = 5
SOURCE = ("source.toolkit.fluxcd.io", "v1", "gitrepositories")
KUSTOMIZATION = ("kustomize.toolkit.fluxcd.io", "v1", "kustomizations")
FLUX_NAMESPACE = "flux-system"


class Repo:
    """A working copy whose commits are pushed to the served bare repository."""

    def __init__(self, root: Path) -> None:
        self.bare, self.work = root / "srv" / "kafka.git", root / "work"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(self.bare)], check=True)
        subprocess.run(
            ["git", "clone", "-q", str(self.bare), str(self.work)], check=True, capture_output=True
        )
        self._git("checkout", "-q", "-b", "main")
        (self.work / "deploy").mkdir()
        # Git keeps no empty folder: without a file left, path ./deploy would vanish when all is pruned.
        (self.work / "deploy" / "keep.yaml").write_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gitops-placeholder\n"
        )

    def _git(self, *args: str) -> str:
        env = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
        done = subprocess.run(["git", *env, *args], cwd=self.work, check=True, capture_output=True, text=True)
        return done.stdout.strip()

    def commit(self, files: dict[str, list[dict[str, Any]] | None], message: str) -> str:
        """Write (or, for ``None``, remove) files under deploy/, commit, push; the revision."""
        for name, docs in files.items():
            path = self.work / "deploy" / name
            if docs is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(yaml.safe_dump_all(docs))
        self._git("add", "-A")
        self._git("commit", "-q", "--allow-empty", "-m", message)
        self._git("push", "-q", "origin", "main")
        return self._git("rev-parse", "HEAD")


@pytest.fixture(scope="module")
def gitops(
    kafka_cluster: KafkaCluster,
    api_client: client.ApiClient,
    operator: OperatorProcess,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Repo, str]]:
    """Flux's CRDs and controllers, the Git server, a GitRepository + Kustomization for a namespace."""
    build = flux.flux_build()
    kubectl = [str(tools.kubectl_binary()), "--kubeconfig", str(kafka_cluster.kubeconfig)]
    for crd in build.crd_files():
        subprocess.run([*kubectl, "apply", "--server-side", "-f", str(crd)], check=True, capture_output=True)
    core = client.CoreV1Api(api_client)
    namespace = f"gitops-{uuid.uuid4().hex[:6]}"
    for name in (FLUX_NAMESPACE, namespace):
        try:
            core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
        except client.ApiException as exc:
            if exc.status != 409:
                raise
    root = tmp_path_factory.mktemp("gitops")
    repo = Repo(root)
    repo.commit({}, "empty")
    server = flux.GitServer(repo.bare.parent)
    url = server.start()
    controllers = flux.start_controllers(build, kafka_cluster.kubeconfig, root / "flux", FLUX_NAMESPACE)
    custom = client.CustomObjectsApi(api_client)
    interval = f"{INTERVAL_SECONDS}s"
    custom.create_namespaced_custom_object(*SOURCE[:2], namespace, SOURCE[2], {
        "apiVersion": "/".join(SOURCE[:2]), "kind": "GitRepository", "metadata": {"name": "kafka"},
        "spec": {"url": f"{url}/kafka.git", "interval": interval, "ref": {"branch": "main"}, "timeout": "20s"},
    })  # fmt: skip
    custom.create_namespaced_custom_object(*KUSTOMIZATION[:2], namespace, KUSTOMIZATION[2], {
        "apiVersion": "/".join(KUSTOMIZATION[:2]), "kind": "Kustomization", "metadata": {"name": "kafka"},
        "spec": {
            "sourceRef": {"kind": "GitRepository", "name": "kafka"}, "path": "./deploy", "prune": True,
            "wait": True, "interval": interval, "retryInterval": interval, "timeout": "60s",
            "targetNamespace": namespace,
        },
    })  # fmt: skip
    try:
        yield repo, namespace
    finally:
        alive = controllers.alive()
        controllers.stop()
        server.stop()
        assert alive, f"a Flux controller exited; see {root / 'flux'}"


def _kustomization(api_client: client.ApiClient, namespace: str) -> dict[str, Any]:
    body = client.CustomObjectsApi(api_client).get_namespaced_custom_object(
        *KUSTOMIZATION[:2], namespace, KUSTOMIZATION[2], "kafka"
    )
    return cast("dict[str, Any]", body)


def _ready(body: dict[str, Any]) -> dict[str, Any]:
    return next((c for c in (body.get("status") or {}).get("conditions") or [] if c["type"] == "Ready"), {})


def _applied(
    api_client: client.ApiClient, namespace: str, revision: str, ready: str
) -> dict[str, Any] | None:
    """The Kustomization once it has reconciled ``revision`` with Ready=``ready``."""
    body = _kustomization(api_client, namespace)
    status = body.get("status") or {}
    cond = _ready(body)
    attempted = str(status.get("lastAttemptedRevision") or "")
    return body if revision in attempted and cond.get("status") == ready else None


def _kafkatopic(api_client: client.ApiClient, namespace: str, name: str) -> dict[str, Any]:
    body = client.CustomObjectsApi(api_client).get_namespaced_custom_object(
        "kafka.zk-operator.io", "v1alpha1", namespace, "kafkatopics", name
    )
    return cast("dict[str, Any]", body)


def _topic(name: str, partitions: int = 2, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kafka.zk-operator.io/v1alpha1", "kind": "KafkaTopic", "metadata": {"name": name},
        "spec": {"partitions": partitions, "replicationFactor": 2, **spec},
    }  # fmt: skip


def _wait_applied(api_client: client.ApiClient, namespace: str, revision: str, ready: str = "True") -> float:
    started = time.monotonic()
    wait_for(
        lambda: _applied(api_client, namespace, revision, ready), timeout=90, interval=0.5,
        what=f"the Kustomization to reconcile {revision[:8]} with Ready={ready}",
    )  # fmt: skip
    return time.monotonic() - started


def test_a_commit_of_topics_and_a_reassignment_becomes_ready_and_later_commits_apply(
    gitops: tuple[Repo, str], api_client: client.ApiClient, kafka: KafkaView
) -> None:
    repo, namespace = gitops
    keep, drop = f"g-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
    kpr = {
        "apiVersion": "kafka.zk-operator.io/v1alpha1", "kind": "PartitionReassignment",
        "metadata": {"name": "move-keep"},
        "spec": {"mode": "Explicit", "partitions": [{"topic": keep, "partition": 0, "replicas": [3, 1]}]},
    }  # fmt: skip
    topics = [_topic(keep, deletionPolicy="Retain", assignment={"0": [1, 2], "1": [2, 3]}), _topic(drop)]
    revision = repo.commit({"topics.yaml": topics}, "two topics")
    elapsed = _wait_applied(api_client, namespace, revision)
    print(f"commit -> Kustomization Ready (topics in Kafka): {elapsed:.1f} s")
    wait_for(  # Ready means written to ZooKeeper; the brokers' metadata follows within moments
        lambda: set(kafka.describe(keep) or {}) == set(kafka.describe(drop) or {}) == {0, 1},
        timeout=30, what="Kafka to show both topics",
    )  # fmt: skip

    revision = repo.commit({"topics.yaml": topics, "move.yaml": [kpr]}, "move partition 0")
    elapsed = _wait_applied(api_client, namespace, revision)
    print(f"commit -> Kustomization Ready (reassignment Completed): {elapsed:.1f} s")
    wait_for(
        lambda: sorted((kafka.describe(keep) or {0: {"replicas": []}})[0]["replicas"]) == [1, 3],
        timeout=30, what="Kafka to show partition 0 on brokers 3 and 1",
    )  # fmt: skip

    topics[1]["spec"].update(partitions=4, config={"retention.ms": "3600000"})
    revision = repo.commit({"topics.yaml": topics, "move.yaml": [kpr]}, "grow and configure")
    elapsed = _wait_applied(api_client, namespace, revision)
    print(f"commit -> Kustomization Ready (partitions + config): {elapsed:.1f} s")
    wait_for(lambda: len(kafka.describe(drop) or {}) == 4, what="Kafka to show 4 partitions")
    wait_for(lambda: kafka.configs(drop).get("retention.ms") == "3600000", what="Kafka to show the config")

    # Out of band: Kafka's own client alters the config; the operator reverts it, Flux sees no drift.
    kafka.admin.alter_configs(
        [ConfigResource(ConfigResourceType.TOPIC, drop, configs={"retention.ms": "1000"})]
    )
    wait_for(lambda: kafka.configs(drop).get("retention.ms") == "3600000", timeout=90, what="the revert")
    before = _kafkatopic(api_client, namespace, drop)
    applied = _kustomization(api_client, namespace)["status"]["lastAppliedRevision"]
    time.sleep(2 * INTERVAL_SECONDS + 2)
    after = _kafkatopic(api_client, namespace, drop)
    assert _kustomization(api_client, namespace)["status"]["lastAppliedRevision"] == applied
    assert after["metadata"]["generation"] == before["metadata"]["generation"], "Flux changed the spec"

    def flux_fields(body: dict[str, Any]) -> list[Any]:  # the operator's own status writes go on
        return [f for f in body["metadata"]["managedFields"] if f.get("manager") == "kustomize-controller"]

    assert flux_fields(after) == flux_fields(before) != [], "no re-apply by Flux changes it"

    # Removed from Git (prune): Delete removes the Kafka topic, Retain keeps it.
    revision = repo.commit({"topics.yaml": None, "move.yaml": None}, "remove everything")
    _wait_applied(api_client, namespace, revision)
    wait_for(lambda: drop not in kafka.topic_names(), timeout=90, what=f"Kafka to delete {drop}")
    assert keep in kafka.topic_names(), "deletionPolicy Retain keeps the topic"


def test_an_invalid_spec_fails_the_kustomization_fast(
    gitops: tuple[Repo, str], api_client: client.ApiClient
) -> None:
    repo, namespace = gitops
    bad = f"g-{uuid.uuid4().hex[:6]}"
    revision = repo.commit({"bad.yaml": [_topic(bad, config={"no.such.kafka.key": "1"})]}, "invalid")
    elapsed = _wait_applied(api_client, namespace, revision, ready="False")
    message = _ready(_kustomization(api_client, namespace)).get("message", "")
    print(f"commit -> Kustomization Ready=False: {elapsed:.1f} s ({message[:160]})")
    assert bad in message, message
    assert elapsed < 2 * INTERVAL_SECONDS + 15, "fails within about two reconcile intervals"
    revision = repo.commit({"bad.yaml": None}, "drop the invalid topic")
    _wait_applied(api_client, namespace, revision)


def test_a_topic_adopted_with_kzo_import_and_committed_to_git_is_not_recreated(
    gitops: tuple[Repo, str],
    api_client: client.ApiClient,
    kafka: KafkaView,
    kafka_cluster: KafkaCluster,
    tmp_path: Path,
) -> None:
    """An existing topic, exported by ``kzo import`` and committed: adopted, same topic id in Kafka."""
    repo, namespace = gitops
    name = f"g-{uuid.uuid4().hex[:6]}"
    kafka.create_topic(name, 3, 2, {"retention.ms": "7200000"})
    wait_for(lambda: len(kafka.describe(name) or {}) == 3, what=f"Kafka to create {name}")

    def topic_id() -> Any:
        (described,) = kafka.admin.describe_topics([name])
        return described.get("topic_id")

    before = topic_id()
    assert before is not None, "Kafka reports the topic id (MetadataResponse v10+)"
    out = tmp_path / "imported.yaml"
    code = cli_main.main(
        ["import", "--zookeeper", kafka_cluster.zk_connect, "--topics", re.escape(name),
         "--namespace", namespace, "-o", str(out)]
    )  # fmt: skip
    assert code == 0
    documents = [d for d in yaml.safe_load_all(out.read_text()) if d]
    assert [d["spec"].get("topicName", d["metadata"]["name"]) for d in documents] == [name]
    revision = repo.commit({"imported.yaml": documents}, "adopt an existing topic")
    elapsed = _wait_applied(api_client, namespace, revision)
    print(f"commit -> Kustomization Ready (adopted topic): {elapsed:.1f} s")
    body = _kafkatopic(api_client, namespace, documents[0]["metadata"]["name"])
    ready = next(c for c in body["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True" and ready["reason"] in {"Adopted", "InSync"}, ready
    assert topic_id() == before, "the topic was adopted, not recreated"
    assert kafka.configs(name).get("retention.ms") == "7200000"
    revision = repo.commit({"imported.yaml": None}, "stop managing it")
    _wait_applied(api_client, namespace, revision)
