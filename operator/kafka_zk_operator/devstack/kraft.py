"""Kafka in KRaft mode for the local stack: controllers, brokers and combined nodes, and a whole
KRaft-only cluster without ZooKeeper (``kzo dev up --kraft``, the tests' ``kraft_cluster`` fixture).

A :class:`KRaftNode` is one ``kafka.Kafka`` process with ``process.roles`` ``controller``,
``broker`` or ``broker,controller``, a static ``controller.quorum.voters`` list (the path Kafka's own
migration system test exercises) and a ``CONTROLLER`` listener; its log folder is formatted once
with Kafka's own ``kafka.tools.StorageTool format`` (``--ignore-formatted``). With ``zk_connect`` set,
a controller runs in ZooKeeper-migration mode (``devstack.migration``). :class:`KRaftStack` starts
either three combined nodes (the small footprint) or one controller and N brokers, racked like the
ZooKeeper-mode stack, and records them in the same ``stack.json`` ``kzo dev down`` reads.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kafka_zk_operator.devstack import artifacts, java, ports
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.devstack.kafka import broker_tuning
from kafka_zk_operator.devstack.processes import ManagedProcess, pid_alive, wait_until
from kafka_zk_operator.devstack.stack import DEFAULT_RACKS, Progress, _stderr_progress
from kafka_zk_operator.devstack.state_file import BrokerInfo, StackState, read_state, write_state

CONTROLLER_LISTENER = "CONTROLLER"
#: Node ids of dedicated controllers start here, far from the brokers' ids (one id namespace in KRaft).
FIRST_CONTROLLER_ID = 3000
CONTROLLER = "controller"
BROKER = "broker"
COMBINED = "broker,controller"
#: ``KRaftSpec.controllers``: three combined nodes, or dedicated controller(s) beside the brokers.
CONTROLLER_LAYOUTS = ("combined", "separate")
#: Kafka lines ``KRaftStack`` runs (checked by tests/integration/test_kraft_stack.py).
KRAFT_KAFKA_VERSIONS = (artifacts.DEFAULT_KAFKA_VERSION, *artifacts.KRAFT_ONLY_KAFKA_VERSIONS)
#: Kafka's main class of the storage tool (``bin/kafka-storage.sh``), in the kafka_2.13 jar of 3.x.
STORAGE_TOOL = "kafka.tools.StorageTool"


def new_cluster_id() -> str:
    """A cluster id as ``kafka-storage random-uuid`` prints it: 16 random bytes, URL-safe base64
    without padding, never starting with ``-`` (Kafka's ``Uuid.randomUuid`` rule)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def quorum_voters(controllers: Iterable[tuple[int, int]]) -> str:
    """``controller.quorum.voters`` for ``(node id, controller port)`` pairs on 127.0.0.1."""
    return ",".join(f"{node_id}@{ports.LOOPBACK}:{port}" for node_id, port in controllers)


def kraft_properties(
    *,
    node_id: int,
    roles: str,
    voters: str,
    log_dir: Path,
    broker_port: int | None = None,
    controller_port: int | None = None,
    rack: str | None = None,
    cluster_size: int = 3,
    zk_connect: str | None = None,
    extra: dict[str, str] | None = None,
) -> str:
    """The ``server.properties`` of one KRaft node (see ``kafka@3.9:docs/ops.html``, KRaft and
    "ZooKeeper to KRaft Migration"). ``zk_connect`` turns on ZooKeeper migration (controllers only)."""
    listeners = []
    if BROKER in roles:
        if broker_port is None:
            raise StackError(f"KRaft node {node_id} has the broker role but no broker port")
        listeners.append(f"PLAINTEXT://{ports.LOOPBACK}:{broker_port}")
    if CONTROLLER in roles:
        if controller_port is None:
            raise StackError(f"KRaft node {node_id} has the controller role but no controller port")
        listeners.append(f"{CONTROLLER_LISTENER}://{ports.LOOPBACK}:{controller_port}")
    props = {
        "process.roles": roles,
        "node.id": str(node_id),
        "controller.quorum.voters": voters,
        "controller.listener.names": CONTROLLER_LISTENER,
        "listeners": ",".join(listeners),
        "listener.security.protocol.map": f"PLAINTEXT:PLAINTEXT,{CONTROLLER_LISTENER}:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(log_dir),
        "num.network.threads": "2",
        "num.io.threads": "2",
        "background.threads": "2",
    }
    if BROKER in roles:
        props["advertised.listeners"] = f"PLAINTEXT://{ports.LOOPBACK}:{broker_port}"
        props.update(broker_tuning(cluster_size))
        if rack is not None:
            props["broker.rack"] = rack
    if zk_connect is not None:
        props["zookeeper.metadata.migration.enable"] = "true"
        props["zookeeper.connect"] = zk_connect
    props.update(extra or {})
    return "".join(f"{key}={value}\n" for key, value in props.items())


@dataclass
class KRaftNode:
    """One KRaft process: a controller, a broker, or both (``roles``)."""

    node_id: int
    roles: str
    workdir: Path
    libs: Path
    voters: str
    broker_port: int | None = None
    controller_port: int | None = None
    rack: str | None = None
    cluster_size: int = 3
    #: ZooKeeper's connect string (with chroot) while the node takes part in a ZooKeeper migration.
    zk_connect: str | None = None
    extra_properties: dict[str, str] = field(default_factory=dict)
    heap: str = "512m"
    process: ManagedProcess | None = None

    @property
    def name(self) -> str:
        """``kafka-<id>`` for a broker or combined node, ``kraft-controller-<id>`` for a controller."""
        return f"kafka-{self.node_id}" if BROKER in self.roles else f"kraft-controller-{self.node_id}"

    @property
    def bootstrap(self) -> str:
        return f"{ports.LOOPBACK}:{self.broker_port}"

    @property
    def properties_path(self) -> Path:
        return self.workdir / "server.properties"

    @property
    def log_dir(self) -> Path:
        return self.workdir / "data"

    def write_properties(self) -> Path:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.properties_path.write_text(
            kraft_properties(
                node_id=self.node_id,
                roles=self.roles,
                voters=self.voters,
                log_dir=self.log_dir,
                broker_port=self.broker_port,
                controller_port=self.controller_port,
                rack=self.rack,
                cluster_size=self.cluster_size,
                zk_connect=self.zk_connect,
                extra=self.extra_properties,
            )
        )
        return self.properties_path

    def format_argv(self, cluster_id: str, release_version: str | None = None) -> list[str]:
        """``kafka-storage format -t <cluster id> -c <props> --ignore-formatted`` as a java command."""
        # ``--cluster-id=``: an id is URL-safe base64 and may start with '-', which argparse would
        # take for an option (seen: "argument --cluster-id/-t: expected one argument").
        args = [
            "format",
            f"--cluster-id={cluster_id}",
            "-c",
            str(self.write_properties()),
            "--ignore-formatted",
        ]
        if release_version is not None:
            args += ["--release-version", release_version]
        log4j = java.write_logging(self.libs, self.workdir)
        return java.java_argv(self.libs, STORAGE_TOOL, args, heap="256m", log4j=log4j)

    def start(self) -> None:
        """Start the node on its (already formatted) log folder, with freshly written properties."""
        self.write_properties()
        log4j = java.write_logging(self.libs, self.workdir)
        argv = java.java_argv(
            self.libs, "kafka.Kafka", [str(self.properties_path)], heap=self.heap, log4j=log4j
        )
        self.process = ManagedProcess(self.name, argv, self.workdir / f"{self.name}.log")
        self.process.start()

    def is_listening(self) -> bool:
        port = self.broker_port if self.broker_port is not None else self.controller_port
        return port is not None and ports.port_open(port)

    def wait_listening(self, timeout: float = 120.0) -> None:
        wait_until(self.is_listening, timeout=timeout, what=f"{self.name} to listen", process=self.process)

    def log_size(self) -> int:
        """The size of the node's log file now (a ``since`` for :meth:`log_contains`)."""
        try:
            return (self.workdir / f"{self.name}.log").stat().st_size
        except OSError:
            return 0

    def log_contains(self, text: str, *, since: int = 0) -> bool:
        """True when the node's log, from byte ``since`` on, contains ``text``."""
        try:
            with (self.workdir / f"{self.name}.log").open("rb") as log:
                log.seek(since)
                return text.encode() in log.read()
        except OSError:
            return False

    def stop(self, timeout: float = 60.0) -> None:
        if self.process is not None:
            self.process.stop(timeout=timeout)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()


def format_storage(nodes: Sequence[KRaftNode], cluster_id: str, release_version: str | None = None) -> None:
    """Format every node's log folder with ``cluster_id`` (in parallel: one JVM each, ~2 s).

    :raises StackError: the storage tool failed (its output is in the message).
    """
    running = [
        (node, subprocess.Popen(node.format_argv(cluster_id, release_version), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True))
        for node in nodes
    ]  # fmt: skip
    for node, proc in running:
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise StackError(
                f"formatting {node.name}'s storage failed (exit {proc.returncode}): {out.strip()}"
            )


def stop_together(nodes: Iterable[KRaftNode], timeout: float = 60.0) -> None:
    """Stop nodes gracefully at the same time: combined nodes must not lose their quorum while a
    broker's controlled shutdown waits for it (a last combined node alone never gets an answer)."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda node: node.stop(timeout), list(nodes)))


def describe_cluster(bootstrap: str) -> list[dict[str, Any]]:
    """Kafka's DescribeCluster brokers (``broker_id``, ``host``, ``port``, ``rack``), or ``[]`` when no
    broker answers yet. KRaft lists registered, unfenced brokers only."""
    from kafka import errors as kafka_errors
    from kafka.admin import KafkaAdminClient

    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    except kafka_errors.KafkaError:
        return []
    try:
        brokers: list[dict[str, Any]] = admin.describe_cluster()["brokers"]
        return brokers
    except kafka_errors.KafkaError:
        return []
    finally:
        admin.close()


def wait_brokers_unfenced(
    bootstrap: str, broker_ids: set[int], *, timeout: float = 120.0, process: ManagedProcess | None = None
) -> None:
    """Wait until DescribeCluster lists ``broker_ids`` (registered with the controller, unfenced)."""
    wait_until(
        lambda: broker_ids <= {b["broker_id"] for b in describe_cluster(bootstrap)},
        timeout=timeout,
        what=f"brokers {sorted(broker_ids)} to be registered and unfenced",
        process=process,
        interval=0.5,
    )


@dataclass(frozen=True)
class KRaftSpec:
    """What to run. ``base_port=None`` picks free ports (tests); a number gives fixed ports (dev)."""

    brokers: int = 3
    #: ``combined``: every broker is also a controller voter (up to 3 voters; more brokers are plain
    #: brokers). ``separate``: one dedicated controller (node 3000) and ``brokers`` brokers.
    controllers: str = "combined"
    racks: tuple[str, ...] = DEFAULT_RACKS
    kafka_version: str = artifacts.DEFAULT_KAFKA_VERSION
    base_port: int | None = None
    broker_heap: str = "512m"
    controller_heap: str = "256m"

    def rack_of(self, broker_id: int) -> str | None:
        return self.racks[(broker_id - 1) % len(self.racks)] if self.racks else None


class KRaftStack:
    """A KRaft-only cluster: formatted, started, ready when every broker is registered and unfenced."""

    def __init__(self, spec: KRaftSpec, state_dir: Path, progress: Progress = _stderr_progress) -> None:
        if spec.controllers not in CONTROLLER_LAYOUTS:
            raise StackError(
                f"controllers must be one of {', '.join(CONTROLLER_LAYOUTS)}, got {spec.controllers!r}"
            )
        if spec.brokers < 1:
            raise StackError(f"a KRaft cluster needs at least 1 broker, got {spec.brokers}")
        self.spec = spec
        self.state_dir = state_dir
        self.progress = progress
        self.cluster_id = new_cluster_id()
        self.nodes: dict[int, KRaftNode] = {}

    def _port(self, offset: int, what: str) -> int:
        if self.spec.base_port is None:
            return ports.free_port()
        return ports.claim(self.spec.base_port + offset, what)

    @property
    def brokers(self) -> list[KRaftNode]:
        return [n for n in self.nodes.values() if BROKER in n.roles]

    @property
    def controllers(self) -> list[KRaftNode]:
        return [n for n in self.nodes.values() if CONTROLLER in n.roles]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(n.bootstrap for n in self.brokers)

    def _plan(self, libs: Path) -> None:
        spec = self.spec
        if spec.controllers == "combined":
            voter_ids = list(range(1, min(3, spec.brokers) + 1))
        else:
            voter_ids = [FIRST_CONTROLLER_ID]
        controller_ports = {i: self._port(50 + (i % 1000), f"KRaft controller {i}") for i in voter_ids}
        voters = quorum_voters(controller_ports.items())
        for node_id in voter_ids if spec.controllers == "separate" else []:
            self.nodes[node_id] = KRaftNode(
                node_id, CONTROLLER, self.state_dir / f"kraft-controller-{node_id}", libs, voters,
                controller_port=controller_ports[node_id], heap=spec.controller_heap,
            )  # fmt: skip
        for broker_id in range(1, spec.brokers + 1):
            roles = COMBINED if broker_id in controller_ports and spec.controllers == "combined" else BROKER
            self.nodes[broker_id] = KRaftNode(
                broker_id, roles, self.state_dir / f"kafka-{broker_id}", libs, voters,
                broker_port=self._port(10 + broker_id, f"Kafka broker {broker_id}"),
                controller_port=controller_ports.get(broker_id) if roles == COMBINED else None,
                rack=spec.rack_of(broker_id), cluster_size=spec.brokers, heap=spec.broker_heap,
            )  # fmt: skip

    def up(self) -> StackState:
        started = time.monotonic()
        existing = read_state(self.state_dir)
        if existing is not None and any(pid_alive(p) for p in existing.pids.values()):
            raise StackError(
                f"a stack is already running from {self.state_dir} (see 'kzo dev status'); run 'kzo dev down' first"
            )
        if self.state_dir.exists():
            shutil.rmtree(self.state_dir)
        self.state_dir.mkdir(parents=True)
        libs = artifacts.kafka_libs(self.spec.kafka_version)
        try:
            self._plan(libs)
            self.progress(
                f"starting a KRaft Kafka {self.spec.kafka_version} cluster: {len(self.controllers)} controller(s), "
                f"{len(self.brokers)} broker(s) ({self.spec.controllers}), racks {', '.join(self.spec.racks) or 'none'} ..."
            )
            format_storage(list(self.nodes.values()), self.cluster_id)
            for node in self.nodes.values():
                node.start()
            for node in self.nodes.values():
                node.wait_listening()
            wait_brokers_unfenced(self.bootstrap_servers, {n.node_id for n in self.brokers})
        except BaseException:
            self.down()
            raise
        state = self.state()
        write_state(self.state_dir, state)
        self.progress(f"KRaft cluster {self.cluster_id} ready in {time.monotonic() - started:.0f} s")
        return state

    def down(self) -> None:
        """Brokers first (their controlled shutdown needs the controllers), together; then controllers."""
        stop_together(self.brokers)
        stop_together(self.controllers)

    def state(self) -> StackState:
        procs = [
            n.process for n in self.nodes.values() if n.process is not None and n.process.pid is not None
        ]
        return StackState(
            spec={**asdict(self.spec), "mode": "kraft", "cluster_id": self.cluster_id},
            zk_port=0,
            chroot="",
            brokers=[BrokerInfo(n.node_id, n.rack, n.broker_port or 0) for n in self.brokers],
            pids={p.name: p.pid for p in procs if p.pid is not None},
            logs={p.name: str(p.log_path) for p in procs},
        )


def is_kraft_state(state: StackState) -> bool:
    """True for the ``stack.json`` of a :class:`KRaftStack` (no ZooKeeper)."""
    return state.spec.get("mode") == "kraft"
