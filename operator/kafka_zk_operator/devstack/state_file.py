"""``stack.json``: what a running local stack records (ports, pids, logs, the API server) so
that ``kzo dev`` commands, the tests and ``kzo dev down`` find it again, and how ``down`` stops
every recorded process in order (the operator and the node's pods first, brokers before
ZooKeeper). Written by ``devstack.stack`` and ``devstack.kraft``."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kafka_zk_operator.devstack import ports
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.devstack.node_teardown import stop_node
from kafka_zk_operator.devstack.processes import ManagedProcess

STATE_FILE = "stack.json"


@dataclass
class BrokerInfo:
    id: int
    rack: str | None
    port: int

    @property
    def bootstrap(self) -> str:
        return f"{ports.LOOPBACK}:{self.port}"


@dataclass
class StackState:
    """What ``stack.json`` records: enough to reach and stop every component."""

    spec: dict[str, Any]
    zk_port: int
    chroot: str
    brokers: list[BrokerInfo]
    pids: dict[str, int] = field(default_factory=dict)
    apiserver: str | None = None
    kubeconfig: str | None = None
    logs: dict[str, str] = field(default_factory=dict)
    #: The client ports of every ZooKeeper server (``zk_port`` is the first).
    zk_ports: list[int] = field(default_factory=list)
    #: With a node: the host address pods reach ZooKeeper, the brokers and the API server on.
    node_address: str | None = None
    #: With a node: its work folder (``kzo dev down`` cleans up after it from there).
    node_dir: str | None = None

    @property
    def zk_connect(self) -> str:
        hosts = ",".join(f"{ports.LOOPBACK}:{port}" for port in self.zk_ports or [self.zk_port])
        return f"{hosts}{self.chroot}"

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers)


def write_state(state_dir: Path, state: StackState) -> None:
    data = asdict(state)
    (state_dir / STATE_FILE).write_text(json.dumps(data, indent=2) + "\n")


def read_state(state_dir: Path) -> StackState | None:
    path = state_dir / STATE_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        brokers = [BrokerInfo(**b) for b in data.pop("brokers")]
        return StackState(brokers=brokers, **data)
    except (ValueError, TypeError, KeyError) as exc:
        raise StackError(
            f"{path} is unreadable ({exc}); delete it and stop leftover processes by hand"
        ) from exc


STOP_ORDER = ("operator", "kafka-", "kraft-controller-", "kube-apiserver", "etcd", "zookeeper")
NODE_PROCESSES = (
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "kube-proxy",
    "coredns",
    "containerd",
)


def stop_recorded(state: StackState) -> list[str]:
    """Stop every process recorded in ``state`` (the operator and the node's pods first, brokers before
    ZooKeeper). Returns their names."""
    stopped = []
    recorded = {
        name: ManagedProcess(name, [name], Path(state.logs.get(name, "/dev/null")), pid=pid)
        for name, pid in state.pids.items()
    }
    if "operator" in recorded and recorded["operator"].is_running():
        recorded.pop("operator").stop(timeout=15)
        stopped.append("operator")
    if state.node_dir is not None:
        node_processes = {name: recorded.pop(name) for name in NODE_PROCESSES if name in recorded}
        stopped += [name for name, proc in node_processes.items() if proc.is_running()]
        kubeconfig = Path(state.kubeconfig) if state.kubeconfig else None
        stop_node(node_processes, Path(state.node_dir), kubeconfig)

    def order(name: str) -> int:
        return next((i for i, prefix in enumerate(STOP_ORDER) if name.startswith(prefix)), 0)

    if (
        state.spec.get("mode") == "kraft"
    ):  # devstack.kraft: combined nodes stop together, keeping their quorum
        brokers = {name: recorded.pop(name) for name in list(recorded) if name.startswith("kafka-")}
        running = [(name, proc) for name, proc in brokers.items() if proc.is_running()]
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda item: item[1].stop(timeout=60), running))
        stopped += [name for name, _ in running]
    for name, proc in sorted(recorded.items(), key=lambda item: order(item[0])):
        if proc.is_running():
            proc.stop(timeout=60 if name.startswith("kafka-") else 15)
            stopped.append(name)
    return stopped
