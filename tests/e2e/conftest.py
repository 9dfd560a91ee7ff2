"""End-to-end fixtures: real kube-apiserver + the operator as a real process + real Kafka.

The operator runs as ``kzo operator`` in a subprocess (as in production: its own process, its
own kopf event loop), configured through the same KZO_* environment variables the Helm chart
sets, and logs to a file shown on failure. There is no kubelet: the operator process stands in
for the pod the Deployment would run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Generator, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from pluggy import Result

from kafka_zk_operator.devstack import demo
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.integration.helpers import wait_for

ROOT = Path(__file__).resolve().parents[2]
GROUP, VERSION = "kafka.zk-operator.io", "v1alpha1"


@pytest.fixture(scope="session")
def api_client(kafka_cluster: KafkaCluster) -> client.ApiClient:
    api: client.ApiClient = config.new_client_from_config(  # type: ignore[no-untyped-call]  # kubernetes.config is untyped
        config_file=str(kafka_cluster.kubeconfig)
    )
    return api


@pytest.fixture(scope="session")
def crds(api_client: client.ApiClient) -> None:
    demo.install_crds(api_client, ROOT / "crds")


@contextmanager
def operator_running(cluster: KafkaCluster, log_dir: Path, env: dict[str, str]) -> Iterator[OperatorProcess]:
    """``kzo operator`` serving ``cluster`` with extra ``env``, logging to ``log_dir``/operator.log."""
    process = OperatorProcess(
        kubeconfig=cluster.kubeconfig,
        zk_connect=cluster.zk_connect,
        log_path=log_dir / "operator.log",
        extra_env=env,
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()


@contextmanager
def scoped_operator(
    cluster: KafkaCluster,
    session_operator: OperatorProcess,
    namespace: str,
    log_dir: Path,
    clusters: dict[str, str],
    env: Mapping[str, str] | None = None,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> Iterator[OperatorProcess]:
    """``kzo operator`` serving ``clusters`` (name -> ZooKeeper connect; the first is the default)
    in ``namespace`` only, with extra ``env`` and extra clusters-file keys per cluster
    (``settings``, e.g. ``{"old": {"kafkaVersion": "1.1"}}``). The session operator watches every
    namespace, so it is stopped meanwhile."""
    clusters_file = log_dir / "clusters.yaml"
    extra = settings or {}
    clusters_file.write_text(
        yaml.safe_dump(
            {
                "clusters": [
                    {"name": name, "zookeeper": connect, **extra.get(name, {})}
                    for name, connect in clusters.items()
                ],
                "defaultCluster": next(iter(clusters)),
            }
        )
    )
    session_operator.stop()
    scoped = OperatorProcess(
        kubeconfig=cluster.kubeconfig,
        zk_connect="unused",
        log_path=log_dir / "operator.log",
        extra_env={
            "KZO_CLUSTERS_FILE": str(clusters_file),
            "KZO_ZOOKEEPER": "",
            "KZO_NAMESPACES": namespace,
            **(env or {}),
        },
    )
    try:
        scoped.start()
        yield scoped
    finally:
        scoped.stop()
        session_operator.start()


@contextmanager
def serving_alone(
    cluster: KafkaCluster, session_operator: OperatorProcess, log_dir: Path, entry: Mapping[str, Any]
) -> Iterator[OperatorProcess]:
    """``kzo operator`` serving one cluster-file ``entry`` (its default cluster) in every namespace,
    resyncing every 5 s; the session operator is stopped meanwhile and started again after."""
    clusters_file = log_dir / "clusters.yaml"
    clusters_file.write_text(yaml.safe_dump({"clusters": [dict(entry)], "defaultCluster": entry["name"]}))
    session_operator.stop()
    process = OperatorProcess(
        kubeconfig=cluster.kubeconfig,
        zk_connect="unused",
        log_path=log_dir / "operator.log",
        extra_env={
            "KZO_CLUSTERS_FILE": str(clusters_file),
            "KZO_ZOOKEEPER": "",
            "KZO_RESYNC_SECONDS": "5",
            "KZO_CREATE_WAIT_SECONDS": "10",
        },
    )
    try:
        process.start()
        yield process
    finally:
        process.stop()
        session_operator.start()


@pytest.fixture(scope="session")
def operator(
    kafka_cluster: KafkaCluster, crds: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    log_dir = tmp_path_factory.mktemp("operator")
    with operator_running(kafka_cluster, log_dir, {"KZO_CREATE_WAIT_SECONDS": "10"}) as process:
        yield process


@pytest.fixture
def namespace(api_client: client.ApiClient, request: pytest.FixtureRequest) -> str:
    """A fresh namespace per test (a bare API server never finishes deleting namespaces)."""
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    # The client serializes a plain dict body as well as a V1Namespace (its annotation names only that).
    client.CoreV1Api(api_client).create_namespace(cast(Any, {"metadata": {"name": name}}))
    return name


class Resources:
    """Typed helpers over the custom objects API for tests."""

    def __init__(self, api_client: client.ApiClient, plural: str) -> None:
        self.api = client.CustomObjectsApi(api_client)
        self.plural = plural

    def create(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        result = cast(
            "dict[str, Any]",
            self.api.create_namespaced_custom_object(GROUP, VERSION, namespace, self.plural, body),
        )
        return result

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            result = cast(
                "dict[str, Any]",
                self.api.get_namespaced_custom_object(GROUP, VERSION, namespace, self.plural, name),
            )
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return result

    def patch(self, namespace: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        result = cast(
            "dict[str, Any]",
            self.api.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                namespace,
                self.plural,
                name,
                body,
                _content_type="application/merge-patch+json",
            ),
        )
        return result

    def delete(self, namespace: str, name: str) -> None:
        self.api.delete_namespaced_custom_object(GROUP, VERSION, namespace, self.plural, name)

    def condition(self, namespace: str, name: str, type_: str = "Ready") -> dict[str, Any] | None:
        body = self.get(namespace, name) or {}
        for cond in (body.get("status") or {}).get("conditions") or []:
            if cond.get("type") == type_:
                return dict(cond)
        return None

    def wait_ready(self, namespace: str, name: str, timeout: float = 120) -> dict[str, Any]:
        def ready() -> dict[str, Any] | None:
            body = self.get(namespace, name) or {}
            status = body.get("status") or {}
            cond = self.condition(namespace, name)
            fresh = status.get("observedGeneration") == body.get("metadata", {}).get("generation")
            return body if cond and cond.get("status") == "True" and fresh else None

        return wait_for(ready, timeout=timeout, what=f"{self.plural} {namespace}/{name} to be Ready")

    def wait_reason(self, namespace: str, name: str, reason: str, timeout: float = 120) -> dict[str, Any]:
        def reached() -> dict[str, Any] | None:
            cond = self.condition(namespace, name)
            return cond if cond and cond.get("reason") == reason else None

        return wait_for(reached, timeout=timeout, what=f"{namespace}/{name} Ready reason {reason}")


@pytest.fixture
def topics(api_client: client.ApiClient, operator: OperatorProcess) -> Resources:
    return Resources(api_client, "kafkatopics")


def kafkatopic(name: str, partitions: int = 3, rf: int = 3, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "KafkaTopic",
        "metadata": {"name": name},
        "spec": {"partitions": partitions, "replicationFactor": rf, **spec},
    }
    return body


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        funcargs = getattr(item, "funcargs", {})
        # The session operator, or the one a module started for a cluster of its own.
        for name in ("kraft_operator", "migration_operator", "operator"):
            proc = funcargs.get(name)
            if isinstance(proc, OperatorProcess) and proc.running():
                report.sections.append((f"{name} log (tail)", proc.log_tail(120)))
                break


def wait_gone(probe: Any, timeout: float = 90, what: str = "deletion") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if probe() is None:
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")
