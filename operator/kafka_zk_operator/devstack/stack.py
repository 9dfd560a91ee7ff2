"""The whole local stack: ZooKeeper (one server or a quorum), N racked Kafka brokers and
(optionally) etcd + kube-apiserver, and (``with_node``) a real node that runs pods
(``devstack.node``).

``LocalStack.up()`` obtains the binaries (cached), starts every component on 127.0.0.1 (with a
node, ZooKeeper, the brokers and the API server also on the host's address, for pods), waits
until each is ready and records pids and ports in ``<state_dir>/stack.json``; ``down()`` stops
them in the right order (brokers before ZooKeeper). The same class backs ``kzo dev`` and the
pytest fixtures, so the tests run exactly what a developer runs.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from kazoo.client import KazooClient

from kafka_zk_operator.devstack import artifacts, images, ports
from kafka_zk_operator.devstack.controlplane import ControlPlane
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.devstack.kafka import KafkaBroker
from kafka_zk_operator.devstack.node import Node
from kafka_zk_operator.devstack.node_host import check_node_prerequisites, host_address
from kafka_zk_operator.devstack.processes import ManagedProcess, pid_alive, wait_until
from kafka_zk_operator.devstack.state_file import BrokerInfo, StackState, read_state, write_state
from kafka_zk_operator.devstack.zookeeper import QuorumPeer, ZooKeeperServer

DEFAULT_RACKS = ("rack-a", "rack-b", "rack-c")


@dataclass(frozen=True)
class StackSpec:
    """What to run. ``base_port=None`` picks free ports (tests); a number gives fixed ports (dev)."""

    brokers: int = 3
    #: ZooKeeper servers: 1 (standalone) or an ensemble of 3 or 5 (brokers get the full connect string).
    zookeeper_servers: int = 1
    racks: tuple[str, ...] = DEFAULT_RACKS
    kafka_version: str = artifacts.DEFAULT_KAFKA_VERSION
    with_kubernetes: bool = True
    base_port: int | None = None
    chroot: str = "/kafka"
    k8s_version: str = artifacts.DEFAULT_K8S_VERSION
    etcd_version: str = artifacts.DEFAULT_ETCD_VERSION
    #: Each Kafka broker's maximum JVM heap (``devstack.kafka.KafkaBroker.heap``).
    broker_heap: str = "512m"
    #: Also run a real node (``devstack.node``: containerd, kubelet, controller-manager, scheduler,
    #: kube-proxy); ZooKeeper and the brokers then listen on the host's address too, for pods.
    with_node: bool = False

    def rack_of(self, broker_id: int) -> str | None:
        if not self.racks:
            return None
        return self.racks[(broker_id - 1) % len(self.racks)]


Progress = Callable[[str], None]


def _stderr_progress(message: str) -> None:
    print(f"kzo: {message}", file=sys.stderr, flush=True)


class LocalStack:
    def __init__(self, spec: StackSpec, state_dir: Path, progress: Progress = _stderr_progress) -> None:
        self.spec = spec
        self.state_dir = state_dir
        self.progress = progress
        #: Every ZooKeeper server; ``zookeeper`` is the first (the only one when standalone).
        self.zookeepers: list[ZooKeeperServer] = []
        self.brokers: dict[int, KafkaBroker] = {}
        self.controlplane: ControlPlane | None = None
        self.kafka_libs: Path | None = None
        self.zookeeper_libs: Path | None = None
        self.extra_processes: dict[str, ManagedProcess] = {}
        self.node: Node | None = None
        #: The host address pods reach the stack on (with a node), else None.
        self.node_address: str | None = None

    # ------------------------------------------------------------------ ports
    def _port(self, offset: int, what: str) -> int:
        if self.spec.base_port is None:
            return ports.free_port()
        return ports.claim(self.spec.base_port + offset, what)

    # ------------------------------------------------------------------ up/down
    def up(self) -> StackState:
        started = time.monotonic()
        existing = read_state(self.state_dir)
        if existing is not None and any(pid_alive(p) for p in existing.pids.values()):
            raise StackError(
                f"a stack is already running from {self.state_dir} (see 'kzo dev status'); "
                "run 'kzo dev down' first"
            )
        if self.state_dir.exists():
            shutil.rmtree(self.state_dir)
        self.state_dir.mkdir(parents=True)
        # ZooKeeper always comes from the newest Kafka's jars (3.8.x); old Kafka lines ship 3.4.
        self.zookeeper_libs = artifacts.kafka_libs(artifacts.DEFAULT_KAFKA_VERSION)
        self.kafka_libs = artifacts.kafka_libs(self.spec.kafka_version)
        if self.spec.with_node and not self.spec.with_kubernetes:
            raise StackError("a node needs the API server: drop --no-kubernetes")
        bins = (
            artifacts.k8s_bins(self.spec.k8s_version, self.spec.etcd_version, node=self.spec.with_node)
            if self.spec.with_kubernetes
            else None
        )
        pause: images.BuiltImage | None = None
        if self.spec.with_node:
            check_node_prerequisites()
            self.node_address = host_address()
            pause = images.pause_image()
        try:
            self._start_zookeeper()
            self._start_brokers()
            if bins is not None:
                self.progress("starting etcd and kube-apiserver ...")
                self.controlplane = ControlPlane(
                    self.state_dir / "k8s",
                    bins,
                    etcd_port=self._port(20, "etcd client"),
                    etcd_peer_port=self._port(21, "etcd peer"),
                    apiserver_port=self._port(22, "kube-apiserver"),
                    node_address=self.node_address,
                )
                self.controlplane.start()
                if pause is not None:
                    self.progress(
                        "starting the node: containerd, kubelet, controller-manager, scheduler, kube-proxy ..."
                    )
                    self.node = Node(
                        self.state_dir / "node",
                        bins,
                        self.controlplane,
                        self._node_address(),
                        coredns=artifacts.coredns_binary(),
                        images=[pause.archive],
                        pause_image=pause.reference,
                    )
                    self.node.start()
            self.wait_brokers_registered(set(self.brokers))
        except BaseException:
            self.down()
            raise
        state = self.state()
        write_state(self.state_dir, state)
        self.progress(f"stack ready in {time.monotonic() - started:.0f} s")
        return state

    def _node_address(self) -> str:
        assert self.node_address is not None
        return self.node_address

    @property
    def zookeeper(self) -> ZooKeeperServer | None:
        return self.zookeepers[0] if self.zookeepers else None

    @property
    def zk_hosts(self) -> str:
        """The connect string of every ZooKeeper server, without the chroot."""
        return ",".join(server.connect for server in self.zookeepers)

    def _start_zookeeper(self) -> None:
        assert self.zookeeper_libs is not None
        count = self.spec.zookeeper_servers
        if count not in (1, 3, 5):
            raise StackError(
                f"--zookeeper-servers must be 1, 3 or 5 (a quorum needs an odd size), got {count}"
            )
        if count == 1:
            self.progress("starting ZooKeeper ...")
            self.zookeepers = [
                ZooKeeperServer(
                    self.state_dir / "zookeeper",
                    self._port(0, "ZooKeeper"),
                    self.zookeeper_libs,
                    extra_config=self._zookeeper_for_pods(),
                )
            ]
        else:
            self.progress(f"starting a ZooKeeper ensemble of {count} servers ...")
            quorum = tuple(
                QuorumPeer(
                    i,
                    client_port=self._port(i - 1, f"ZooKeeper {i}"),
                    quorum_port=self._port(40 + 2 * (i - 1), f"ZooKeeper {i} quorum"),
                    election_port=self._port(41 + 2 * (i - 1), f"ZooKeeper {i} election"),
                )
                for i in range(1, count + 1)
            )
            self.zookeepers = [
                ZooKeeperServer(
                    self.state_dir / f"zookeeper-{peer.server_id}",
                    peer.client_port,
                    self.zookeeper_libs,
                    server_id=peer.server_id,
                    quorum=quorum,
                    extra_config=self._zookeeper_for_pods(),
                )
                for peer in quorum
            ]
        for server in self.zookeepers:
            server.start()
        for server in self.zookeepers:
            server.wait_ready(timeout=90.0)

    def _zookeeper_for_pods(self) -> dict[str, str]:
        """With a node, ZooKeeper also answers on the host's address (pods cannot reach 127.0.0.1)."""
        return {"clientPortAddress": "0.0.0.0"} if self.node_address is not None else {}

    def _kafka_for_pods(self, port: int) -> dict[str, str]:
        """With a node, brokers listen on every address and advertise the host's (reachable from both)."""
        if self.node_address is None:
            return {}
        return {
            "listeners": f"PLAINTEXT://0.0.0.0:{port}",
            "advertised.listeners": f"PLAINTEXT://{self.node_address}:{port}",
        }

    def zookeeper_leader(self, timeout: float = 60.0) -> ZooKeeperServer:
        """The ensemble's current leader (waits for an election to finish)."""
        found: list[ZooKeeperServer] = []

        def elected() -> bool:
            found[:] = [
                s
                for s in self.zookeepers
                if s.process is not None and s.process.is_running() and s.mode() == "leader"
            ]
            return bool(found)

        wait_until(elected, timeout=timeout, what="a ZooKeeper leader to be elected")
        return found[0]

    def kill_zookeeper(self, server: ZooKeeperServer) -> None:
        """``kill -9`` one ZooKeeper server (its data stays for :meth:`restart_zookeeper`)."""
        assert server.process is not None
        server.process.kill()

    def restart_zookeeper(self, server: ZooKeeperServer, *, wait: bool = True) -> None:
        """Start a killed or stopped ZooKeeper server again with the same id, ports and data."""
        server.start()
        if wait:
            server.wait_ready(timeout=90.0)

    def _start_brokers(self) -> None:
        self.progress(
            f"starting {self.spec.brokers} Kafka {self.spec.kafka_version} brokers "
            f"(racks {', '.join(self.spec.racks) or 'none'}) ..."
        )
        for broker_id in range(1, self.spec.brokers + 1):
            self.add_broker(broker_id, self.spec.rack_of(broker_id), wait=False)
        for broker in self.brokers.values():
            broker.wait_listening()

    def add_broker(
        self, broker_id: int, rack: str | None, *, wait: bool = True, extra: dict[str, str] | None = None
    ) -> KafkaBroker:
        """Start one more broker (also used to grow the cluster in reassignment tests)."""
        assert self.zookeeper is not None and self.kafka_libs is not None
        port = self._port(10 + broker_id, f"Kafka broker {broker_id}")
        broker = KafkaBroker(
            broker_id=broker_id,
            rack=rack,
            port=port,
            workdir=self.state_dir / f"kafka-{broker_id}",
            libs=self.kafka_libs,
            zk_connect=f"{self.zk_hosts}{self.spec.chroot}",
            cluster_size=max(self.spec.brokers, len(self.brokers) + 1),
            extra_properties={**self._kafka_for_pods(port), **(extra or {})},
            heap=self.spec.broker_heap,
        )
        self.brokers[broker_id] = broker
        broker.start()
        if wait:
            broker.wait_listening()
            self.wait_brokers_registered({broker_id})
        return broker

    def stop_broker(self, broker_id: int) -> None:
        self.brokers[broker_id].stop()

    def kill_broker(self, broker_id: int) -> None:
        self.brokers[broker_id].kill()

    def restart_broker(self, broker_id: int) -> None:
        """Start a stopped broker again with the same id, port, rack and data."""
        broker = self.brokers[broker_id]
        broker.start()
        broker.wait_listening()
        self.wait_brokers_registered({broker_id})

    def zk_client(self, timeout: float = 15.0) -> KazooClient:
        """A started kazoo client on the Kafka chroot (the caller stops it)."""
        assert self.zookeeper is not None
        client = KazooClient(hosts=f"{self.zk_hosts}{self.spec.chroot}", timeout=timeout)
        client.start(timeout=timeout)
        return client

    def wait_brokers_registered(self, broker_ids: set[int], timeout: float = 120.0) -> None:
        if not broker_ids:  # a ZooKeeper-only stack (StackSpec(brokers=0)): no controller either
            return
        client = self.zk_client()
        try:

            def registered() -> bool:
                if not client.exists("/brokers/ids") or not client.exists("/controller"):
                    return False
                ids = {int(child) for child in client.get_children("/brokers/ids")}
                return broker_ids <= ids

            wait_until(registered, timeout=timeout, what=f"brokers {sorted(broker_ids)} to register")
        finally:
            client.stop()
            client.close()

    def down(self) -> None:
        for broker in self.brokers.values():
            broker.stop()
        for proc in self.extra_processes.values():
            proc.stop()
        if self.node is not None:
            self.node.stop()
        if self.controlplane is not None:
            self.controlplane.stop()
        for server in self.zookeepers:
            if server.process is not None:
                server.process.stop()

    # ------------------------------------------------------------------ state
    def state(self) -> StackState:
        assert self.zookeeper is not None
        pids: dict[str, int] = {}
        logs: dict[str, str] = {}
        procs: list[ManagedProcess | None] = [server.process for server in self.zookeepers]
        procs += [b.process for b in self.brokers.values()]
        if self.controlplane is not None:
            procs += [self.controlplane.etcd, self.controlplane.apiserver]
        if self.node is not None:
            procs += list(self.node.processes.values())
        procs += list(self.extra_processes.values())
        for proc in procs:
            if proc is not None and proc.pid is not None:
                pids[proc.name] = proc.pid
                logs[proc.name] = str(proc.log_path)
        return StackState(
            spec=asdict(self.spec),
            zk_port=self.zookeeper.port,
            zk_ports=[server.port for server in self.zookeepers],
            chroot=self.spec.chroot,
            brokers=[BrokerInfo(b.broker_id, b.rack, b.port) for b in self.brokers.values()],
            pids=pids,
            apiserver=self.controlplane.server if self.controlplane else None,
            kubeconfig=str(self.controlplane.admin_kubeconfig) if self.controlplane else None,
            logs=logs,
            node_address=self.node_address,
            node_dir=str(self.node.workdir) if self.node is not None else None,
        )
