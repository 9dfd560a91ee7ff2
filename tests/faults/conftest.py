"""Fault-suite fixtures: a ZooKeeper *ensemble* (3 servers), 3 racked brokers, etcd +
kube-apiserver and the operator as a real process, all started once for ``tests/faults``.

Faults are real: ``kill -9`` of ZooKeeper servers (the leader found with ``srvr``), of the operator
and of brokers. Each test states the promise it checks and ends with :func:`assert_converged`,
the invariant checker of ``tests/faults/invariants.py``.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Generator, Iterator
from pathlib import Path
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
from tests.faults.invariants import all_violations, controller_defect_topics, missing_topics
from tests.faults.leftovers import clear_after_failure


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


#: The chart's resync period, not the e2e suite's 5 s: 300 topics resynced every 5 s keep a 2-core
#: machine busy enough on their own to delay new events by a minute.
OPERATOR_ENV = {"KZO_CREATE_WAIT_SECONDS": "10", "KZO_RESYNC_SECONDS": "60"}


@contextlib.contextmanager
def operator_process(
    ensemble: KafkaCluster, zk_connect: str, log_path: Path, kubeconfig: Path | None = None, **env: str
) -> Iterator[OperatorProcess]:
    """``kzo operator`` against the ensemble's API server (or the one ``kubeconfig`` names) and
    ``zk_connect``, stopped afterwards."""
    process = OperatorProcess(
        kubeconfig=kubeconfig or ensemble.kubeconfig,
        zk_connect=zk_connect,
        log_path=log_path,
        extra_env={**OPERATOR_ENV, **env},
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="package")
def fault_operator(
    ensemble: KafkaCluster, api: client.ApiClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    """``kzo operator`` with the ensemble's full connect string (tests may kill it: see ``operator_up``)."""
    log_path = tmp_path_factory.mktemp("fault-operator") / "operator.log"
    with operator_process(ensemble, ensemble.zk_connect, log_path) as process:
        yield process


@pytest.fixture(scope="module")
def suite_operator_paused(fault_operator: OperatorProcess) -> Iterator[None]:
    """For a module that runs its own operator: the suite's one is stopped meanwhile (two operators would both
    reconcile the resources)."""
    fault_operator.stop()
    try:
        yield
    finally:
        fault_operator.start()


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


@pytest.fixture
def fourth_broker(ensemble: KafkaCluster) -> int:
    """Broker 4 (rack-a), started once for the tests that move replicas to a broker not yet used."""
    if 4 not in ensemble.stack.brokers:
        ensemble.stack.add_broker(4, "rack-a")
    return 4


@pytest.fixture(autouse=True)
def stack_whole_after_each_test(
    request: pytest.FixtureRequest, ensemble: KafkaCluster, api: client.ApiClient
) -> Iterator[None]:
    """Every ZooKeeper server and broker runs after each test (a failed test may leave one down),
    and what a failed test left in flight is cleared (``tests/faults/leftovers.py``) so that its
    failure does not fail the tests after it."""
    yield
    for server in ensemble.stack.zookeepers:
        if server.process is None or not server.process.is_running():
            ensemble.stack.restart_zookeeper(server)
    for broker in ensemble.stack.brokers.values():
        if broker.process is None or not broker.process.is_running():
            ensemble.stack.restart_broker(broker.broker_id)
    report = getattr(request.node, "report_of_call", None)
    namespace = request.node.funcargs.get("ns") if hasattr(request.node, "funcargs") else None
    if isinstance(report, pytest.TestReport) and report.failed and isinstance(namespace, str):
        for line in clear_after_failure(ensemble, api, namespace):
            print(f"[leftovers] {line}")


def _violations_after(
    api: client.ApiClient, namespace: str, kafka: KafkaView, zk: KazooClient, timeout: float
) -> list[str]:
    deadline = time.monotonic() + timeout
    found = all_violations(api, namespace, kafka, zk)
    while found and time.monotonic() < deadline:
        time.sleep(2)
        found = all_violations(api, namespace, kafka, zk)
    return found


def _fail_on(found: list[str], timeout: float) -> None:
    shown = "\n  ".join(found[:30]) + (f"\n  ... and {len(found) - 30} more" if len(found) > 30 else "")
    assert not found, f"{len(found)} invariant violation(s) after {timeout:.0f} s:\n  {shown}"


def assert_converged(
    api: client.ApiClient, namespace: str, kafka: KafkaView, zk: KazooClient, timeout: float = 180.0
) -> None:
    """Wait until the invariant checker finds nothing; fail with what it still finds."""
    _fail_on(_violations_after(api, namespace, kafka, zk, timeout), timeout)


def assert_converged_despite_controller_defect(
    ensemble: KafkaCluster,
    api: client.ApiClient,
    namespace: str,
    kafka: KafkaView,
    zk: KazooClient,
    timeout: float = 300.0,
) -> None:
    """:func:`assert_converged`, except that when all that is left is topics Kafka does not serve
    because of the controller defect above (proved from the controller's own log), the documented
    recovery - a controller failover, ``delete /controller`` (docs/troubleshooting.md) - is applied
    and everything must then converge. The operator's own promises are checked either way."""
    found = _violations_after(api, namespace, kafka, zk, timeout)
    missing = missing_topics(found)
    if found and len(missing) == len(found) and missing <= controller_defect_topics(ensemble.stack):
        print(f"[figures] Kafka controller defect reproduced for {sorted(missing)}; controller failover")
        zk.delete("/controller")
        found = _violations_after(api, namespace, kafka, zk, timeout)
    _fail_on(found, timeout)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.report_of_call = report  # type: ignore[attr-defined]  # read by stack_whole_after_each_test
    if report.when == "call" and report.failed and hasattr(item, "funcargs"):
        proc = item.funcargs.get("operator_up")
        if isinstance(proc, OperatorProcess):
            report.sections.append(("operator log (tail)", proc.log_tail(150)))
        for name, tail in _replica_log_tails(item.funcargs.get("replicas")):
            report.sections.append((f"{name} log (tail)", tail))


def _replica_log_tails(replicas: object) -> list[tuple[str, str]]:
    """The log tails of the leader-election tests' replicas (``replicas.processes``), if any."""
    processes = getattr(replicas, "processes", None) or []
    return [(p.log_path.stem, p.log_tail(80)) for p in processes if isinstance(p, OperatorProcess)]
