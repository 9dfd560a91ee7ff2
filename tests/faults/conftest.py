"""Fault-suite fixtures: a ZooKeeper *ensemble* (3 servers), 3 racked brokers, etcd +
kube-apiserver and the operator as a real process, all started once for ``tests/faults``.

Faults are real: ``kill -9`` of ZooKeeper servers (the leader found with ``srvr``), of the operator
and of brokers. Each test states the promise it checks and ends with :func:`assert_converged`,
the invariant checker of ``tests/faults/invariants.py``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Generator, Iterator
from typing import Any, cast

import pytest
from kazoo.client import KazooClient
from kubernetes import client, config
from pluggy import Result

from kafka_zk_operator.devstack import demo
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec
from tests.conftest import MAIN_KAFKA_VERSION, KafkaCluster
from tests.e2e.conftest import ROOT, Resources
from tests.e2e.kafka_client import KafkaView
from tests.faults.invariants import all_violations


@pytest.fixture(scope="package")
def ensemble(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """Three ZooKeeper servers in a quorum, three brokers (rack-a/b/c), etcd and kube-apiserver."""
    spec = StackSpec(kafka_version=MAIN_KAFKA_VERSION, zookeeper_servers=3)
    stack = LocalStack(spec, tmp_path_factory.mktemp("ensemble"), progress=lambda m: print(f"[ensemble] {m}"))
    stack.up()
    try:
        yield KafkaCluster(stack, MAIN_KAFKA_VERSION)
    finally:
        for broker_id in list(stack.brokers):
            stack.kill_broker(broker_id)  # throw-away cluster: no 30 s controlled shutdowns
        stack.down()


@pytest.fixture(scope="package")
def api(ensemble: KafkaCluster) -> client.ApiClient:
    api_client: client.ApiClient = config.new_client_from_config(  # type: ignore[no-untyped-call]  # kubernetes.config is untyped
        config_file=str(ensemble.kubeconfig)
    )
    demo.install_crds(api_client, ROOT / "crds")
    return api_client


@pytest.fixture(scope="package")
def fault_operator(
    ensemble: KafkaCluster, api: client.ApiClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    """``kzo operator`` with the ensemble's full connect string (tests may kill it: see ``operator_up``)."""
    process = OperatorProcess(
        kubeconfig=ensemble.kubeconfig,
        zk_connect=ensemble.zk_connect,
        log_path=tmp_path_factory.mktemp("fault-operator") / "operator.log",
        # The chart's resync period, not the e2e suite's 5 s: 300 topics resynced every 5 s keep
        # a 2-core machine busy enough on their own to delay new events by a minute.
        extra_env={"KZO_CREATE_WAIT_SECONDS": "10", "KZO_RESYNC_SECONDS": "60"},
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def operator_up(fault_operator: OperatorProcess) -> OperatorProcess:
    """The operator, running (started again if an earlier test killed it)."""
    if fault_operator.proc is None or fault_operator.proc.poll() is not None:
        fault_operator.start()
    return fault_operator


@pytest.fixture(scope="package")
def kafka_view(ensemble: KafkaCluster) -> Iterator[KafkaView]:
    view = KafkaView(ensemble.bootstrap_servers)
    try:
        yield view
    finally:
        view.close()


@pytest.fixture
def zk(ensemble: KafkaCluster) -> Iterator[KazooClient]:
    client_ = ensemble.zk_client()
    try:
        yield client_
    finally:
        client_.stop()
        client_.close()


@pytest.fixture
def ns(api: client.ApiClient) -> str:
    name = f"fault-{uuid.uuid4().hex[:8]}"
    client.CoreV1Api(api).create_namespace(cast(Any, {"metadata": {"name": name}}))
    return name


@pytest.fixture
def topics(api: client.ApiClient, operator_up: OperatorProcess) -> Resources:
    return Resources(api, "kafkatopics")


@pytest.fixture
def reassignments(api: client.ApiClient, operator_up: OperatorProcess) -> Resources:
    return Resources(api, "partitionreassignments")


@pytest.fixture(autouse=True)
def zookeeper_quorum_whole(ensemble: KafkaCluster) -> Iterator[None]:
    """Every ZooKeeper server runs before and after each test (a failed test may leave one down)."""
    yield
    for server in ensemble.stack.zookeepers:
        if server.process is None or not server.process.is_running():
            ensemble.stack.restart_zookeeper(server)
    for broker in ensemble.stack.brokers.values():
        if broker.process is None or not broker.process.is_running():
            ensemble.stack.restart_broker(broker.broker_id)


def assert_converged(
    api: client.ApiClient, namespace: str, kafka: KafkaView, zk: KazooClient, timeout: float = 180.0
) -> None:
    """Wait until the invariant checker finds nothing; fail with what it still finds."""
    deadline = time.monotonic() + timeout
    found = all_violations(api, namespace, kafka, zk)
    while found and time.monotonic() < deadline:
        time.sleep(2)
        found = all_violations(api, namespace, kafka, zk)
    shown = "\n  ".join(found[:30]) + (f"\n  ... and {len(found) - 30} more" if len(found) > 30 else "")
    assert not found, f"{len(found)} invariant violation(s) after {timeout:.0f} s:\n  {shown}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed and hasattr(item, "funcargs"):
        proc = item.funcargs.get("operator_up")
        if isinstance(proc, OperatorProcess):
            report.sections.append(("operator log (tail)", proc.log_tail(150)))
