"""Shared pytest fixtures: the real local stack (ZooKeeper, racked Kafka brokers, kube-apiserver).

Tests under ``tests/unit`` are marked ``unit``; ``tests/integration`` ``integration``;
``tests/e2e`` ``e2e``; ``tests/faults`` ``faults``. The stack is started once per session (``LocalStack``, the same code as
``kzo dev up``) on free loopback ports and stopped at the end. A component that cannot be
obtained or started fails the tests that need it with the reason: nothing is skipped silently.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from kafka.admin import KafkaAdminClient
from kazoo.client import KazooClient

from kafka_zk_operator.devstack import artifacts
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec
from kafka_zk_operator.devstack.state_file import BrokerInfo
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for
from tests.kraft_stack import KRaftCluster, start_kraft_cluster

MAIN_KAFKA_VERSION = os.environ.get("KZO_TEST_KAFKA_VERSION", artifacts.DEFAULT_KAFKA_VERSION)

# Property and fuzz tests draw the same cases in every run of ``make test`` (a suite that passes
# passes again); ``KZO_HYPOTHESIS_PROFILE=explore`` draws new ones, to look for bugs.
hypothesis.settings.register_profile("repeatable", derandomize=True)
hypothesis.settings.register_profile("explore", derandomize=False)
hypothesis.settings.load_profile(os.environ.get("KZO_HYPOTHESIS_PROFILE", "repeatable"))


def kafka_version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _legacy_kafka_versions() -> tuple[str, ...]:
    """Kafka lines before 2.3 whose real brokers the integration tests run.

    By default those of ``artifacts.TESTED_KAFKA_VERSIONS`` (what ``kzo dev prepare`` fetches):
    2.0.1, 1.1.1 (the first KafkaZkClient-based controller), 1.0.2 (no ``/config/brokers``) and
    0.10.0.1 (the oldest line with racks: v3 broker registrations, v1 config notifications, a
    zkclient-based controller). ``KZO_TEST_LEGACY_KAFKA_VERSIONS`` takes a comma-separated list
    instead, or ``all`` for every supported line before 2.3 (docs/compatibility.md).
    """
    tested = ",".join(v for v in artifacts.TESTED_KAFKA_VERSIONS if kafka_version_tuple(v) < (2, 3))
    chosen = os.environ.get("KZO_TEST_LEGACY_KAFKA_VERSIONS", tested).strip()
    if chosen == "all":
        return tuple(v for v in artifacts.SUPPORTED_KAFKA_VERSIONS if kafka_version_tuple(v) < (2, 3))
    return tuple(v.strip() for v in chosen.split(",") if v.strip())


LEGACY_KAFKA_VERSIONS = _legacy_kafka_versions()


#: Test files that start clusters of other Kafka lines (``kafka_cluster_factory``, kept for the
#: whole session): one worker runs them all, so that a line's cluster starts once per run.
_KAFKA_LINE_FILES = frozenset(
    {
        "tests/integration/test_znodes_from_real_brokers.py",
        "tests/integration/test_store_notifications_without_brokers.py",
        "tests/integration/test_plan_applied_by_kafka.py",
        "tests/integration/test_store_topics.py",
        "tests/integration/test_store_write_guards.py",
        "tests/integration/test_kafka_line_matrix.py",
        "tests/e2e/test_multi_cluster.py",
        "tests/e2e/test_kafkatopic_kafka_lines.py",
    }
)
#: Test files on the native KRaft cluster (``kraft_cluster``, kept for the whole session): one
#: worker runs them all, so that it starts once per run (``test_kraft_parity.py`` also starts a 4.x
#: cluster of its own, ~2 min of that worker's time).
_KRAFT_FILES = frozenset(
    {
        "tests/integration/test_kraft_stack.py",
        "tests/integration/test_admin_backend_kraft.py",
        "tests/e2e/test_kraft_parity.py",
        "tests/e2e/test_kraft_cancel.py",
    }
)
#: The order work is handed to ``make test``'s workers (pytest-xdist, ``--dist loadgroup``): the
#: longest groups first, so that no worker is left with a long one at the end.
_GROUP_ORDER = ("node", "kafka-lines", "kraft", "faults", "e2e", "integration", "unit")


_TIERS = ("unit", "integration", "e2e", "faults", "node")


def _tier(path: str) -> str:
    """A test file's tier: its folder under tests/."""
    return next((t for t in _TIERS if f"tests/{t}/" in path), "unit")


def _group(path: str) -> str:
    """The work unit a test file belongs to when ``make test`` runs with workers: the real node's
    tests share one (one node per run), the Kafka lines' files another (a line's cluster starts
    once per run), the KRaft cluster's a third; any other file is one of its own (its module
    fixtures start once)."""
    if _tier(path) == "node":
        return "node"
    if path in _KRAFT_FILES:
        return "kraft"
    return "kafka-lines" if path in _KAFKA_LINE_FILES else path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tier markers, and the order the groups are handed out to workers in (stable in a rank)."""
    rank: dict[int, int] = {}
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        item.add_marker(getattr(pytest.mark, _tier(path)))
        group = _group(path)
        rank[id(item)] = _GROUP_ORDER.index(group if group in _GROUP_ORDER else _tier(path))
    items.sort(key=lambda item: rank[id(item)])


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's scope scheduling with ``_group`` as the scope: a group runs on one worker,
    in collection order (run-tests.sh passes ``--no-loadscope-reorder``)."""
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist is untyped
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid.split("::", 1)[0])

    return GroupScheduling(config, log)


#: The ``[figures]`` a passing test printed (its captured stdout), shown again after the run so
#: that CI's log keeps what each fault, failover and soak test measured (pytest drops the output
#: of passing tests). A figure's continuation lines are indented.
_FIGURES: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call" or not report.passed:
        return
    keep = False
    for line in report.capstdout.splitlines():
        keep = line.startswith("[figures]") or (keep and line.startswith("  "))
        if keep:
            _FIGURES.append(f"{report.nodeid}: {line}" if line.startswith("[figures]") else line)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _FIGURES:
        terminalreporter.section("figures printed by passing tests")
        for line in _FIGURES:
            terminalreporter.write_line(line)


@dataclass
class KafkaCluster:
    """A running cluster as tests see it. ``stack`` allows stopping/starting brokers."""

    stack: LocalStack
    kafka_version: str

    @property
    def zk_connect(self) -> str:
        """Every ZooKeeper server (one, or the ensemble) and the chroot."""
        assert self.stack.zookeeper is not None
        return f"{self.stack.zk_hosts}{self.stack.spec.chroot}"

    @property
    def zk_hosts(self) -> str:
        assert self.stack.zookeeper is not None
        return self.stack.zk_hosts

    @property
    def chroot(self) -> str:
        return self.stack.spec.chroot

    @property
    def brokers(self) -> list[BrokerInfo]:
        return [BrokerInfo(b.broker_id, b.rack, b.port) for b in self.stack.brokers.values()]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers)

    @property
    def kubeconfig(self) -> Path:
        assert self.stack.controlplane is not None, "this stack runs without kube-apiserver"
        return self.stack.controlplane.admin_kubeconfig

    def zk_client(self) -> KazooClient:
        """A started client; prefer ``zk_session()``, which also closes it."""
        return self.stack.zk_client()

    @contextlib.contextmanager
    def zk_session(self) -> Iterator[KazooClient]:
        client = self.stack.zk_client()
        try:
            yield client
        finally:
            client.stop()
            client.close()


def _start(spec: StackSpec, state_dir: Path) -> LocalStack:
    stack = LocalStack(spec, state_dir, progress=lambda message: print(f"[stack] {message}"))
    stack.up()
    try:
        _wait_for_the_controller_to_know_every_broker(KafkaCluster(stack, spec.kafka_version))
    except BaseException:
        stack.down()
        raise
    return stack


def _wait_for_the_controller_to_know_every_broker(cluster: KafkaCluster) -> None:
    """The stack is up once every broker registered in ZooKeeper; Kafka's controller takes them
    as live a moment later. A topic created in between gets leaders and ISRs without the broker
    not yet known (seen on Kafka 1.1.1: replicas [2, 3], leader 3, ISR [3]). A broker's metadata
    lists the brokers the controller told it about, so wait until it lists them all."""
    wanted = {b.id for b in cluster.brokers}
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=20000)

    def all_known() -> bool:
        try:
            brokers = admin.describe_cluster()["brokers"]
        except KeyError:  # kafka-python 3.0 misreads Kafka 2.8's DescribeCluster answer: no check there
            return True
        return {b["broker_id"] for b in brokers} >= wanted

    try:
        wait_for(
            all_known,
            timeout=60,
            what=f"Kafka's controller to know brokers {sorted(wanted)}",
        )
    finally:
        admin.close()


def _throw_away(stack: LocalStack) -> None:
    """Stop a test cluster whose data nobody needs: brokers killed, then the rest stopped. A
    graceful stop waits for each broker's controlled shutdown (up to 60 s each): ~35 s for a
    pre-3.x cluster (the last broker's retries while no other replica is alive); the session's
    teardown after the whole suite, the main cluster's graceful stop among it, took 56.7 s in CI,
    34.0 s with its brokers killed."""
    for broker_id in list(stack.brokers):
        stack.kill_broker(broker_id)
    stack.down()


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """Three Kafka brokers (racks rack-a/b/c) on ZooKeeper, plus etcd + kube-apiserver."""
    stack = _start(StackSpec(kafka_version=MAIN_KAFKA_VERSION), tmp_path_factory.mktemp("stack"))
    try:
        yield KafkaCluster(stack, MAIN_KAFKA_VERSION)
    finally:
        _throw_away(stack)


@pytest.fixture(scope="session")
def kafka_cluster_factory(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[str], KafkaCluster]]:
    """Start (once per session and version) a ZooKeeper-only cluster of another Kafka line."""
    started: dict[str, LocalStack] = {}

    def get(version: str) -> KafkaCluster:
        if version not in started:
            spec = StackSpec(kafka_version=version, with_kubernetes=False)
            started[version] = _start(spec, tmp_path_factory.mktemp(f"stack-{version}"))
        return KafkaCluster(started[version], version)

    try:
        yield get
    finally:
        for stack in started.values():
            _throw_away(stack)


@pytest.fixture(scope="session")
def kraft_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KRaftCluster]:
    """A native KRaft Kafka 3.9 cluster (no ZooKeeper): controller 3000 and brokers 1-3 in racks
    rack-a/b/c (``tests/kraft_stack.py``); stopped gracefully at the end (~1 s)."""
    cluster = start_kraft_cluster(tmp_path_factory.mktemp("kraft"))
    try:
        yield cluster
    finally:
        cluster.stack.down()


@pytest.fixture(scope="module")
def kafka(kafka_cluster: KafkaCluster) -> Iterator[KafkaView]:
    """Kafka's own view (a Kafka client) of the module's cluster; a module may override kafka_cluster."""
    view = KafkaView(kafka_cluster.bootstrap_servers)
    try:
        yield view
    finally:
        view.close()


@pytest.fixture
def zk(kafka_cluster: KafkaCluster) -> Iterator[KazooClient]:
    """A kazoo client connected to the main cluster's chroot."""
    client = kafka_cluster.zk_client()
    try:
        yield client
    finally:
        client.stop()
        client.close()


_counter = itertools.count()


@pytest.fixture
def unique_topic(request: pytest.FixtureRequest) -> str:
    """A topic name unique to this test (tests share one cluster)."""
    base = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower().replace("_", "-"))[:50].strip("-")
    return f"t-{base}-{next(_counter)}-{uuid.uuid4().hex[:6]}"
