"""Stopping the real node (``devstack.node``) and removing everything it made on this machine.

The control loops stop first (nothing recreates pods), then every pod is deleted while the kubelet
still runs, then what is left is killed through containerd; then everything the kubelet and
containerd mounted under the node's folders is unmounted, its bridge removed and the ``KUBE-*``
iptables chains deleted, so a stopped node leaves nothing behind. ``kzo dev down`` uses the same
steps by pid (``devstack.state_file``), after a crash too: the clean-up needs none of its processes.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import subprocess
from pathlib import Path

from kafka_zk_operator.devstack import tools
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.devstack.node_host import BRIDGE, ctr, run_dir_of
from kafka_zk_operator.devstack.processes import ManagedProcess, wait_until


def stop_node(processes: dict[str, ManagedProcess], workdir: Path, admin_kubeconfig: Path | None) -> None:
    """Stop a node's processes in order and clean up after them (also ``kzo dev down``'s way, by pid).

    The control loops stop first (nothing recreates pods), then every pod is deleted while the
    kubelet still runs, so it tears down their sandboxes and networks itself; what remains (a
    kubelet that was already dead) is killed through containerd before containerd stops.
    """
    for name in ("kube-controller-manager", "kube-scheduler"):
        if name in processes:
            processes[name].stop(timeout=10)
    kubelet = processes.get("kubelet")
    if kubelet is not None and kubelet.is_running() and admin_kubeconfig is not None:
        _delete_all_pods(admin_kubeconfig)
    for name in ("kubelet", "kube-proxy", "coredns"):
        if name in processes:
            processes[name].stop(timeout=10)
    containerd = processes.get("containerd")
    run_dir = run_dir_of(workdir)
    if containerd is not None and containerd.is_running():
        _kill_containers(run_dir / "containerd.sock")
        containerd.stop(timeout=10)
    cleanup_node_leftovers(workdir, run_dir)


def _delete_all_pods(admin_kubeconfig: Path, timeout: float = 60.0) -> None:
    kubectl = [str(tools.kubectl_binary()), f"--kubeconfig={admin_kubeconfig}"]
    subprocess.run(
        [*kubectl, "delete", "pods", "--all", "--all-namespaces", "--grace-period=1", "--wait=false"],
        capture_output=True,
    )

    def gone() -> bool:
        listed = subprocess.run(
            [*kubectl, "get", "pods", "--all-namespaces", "-o", "name"], capture_output=True, text=True
        )
        return listed.returncode != 0 or not listed.stdout.strip()

    with contextlib.suppress(StackError):
        wait_until(gone, timeout=timeout, what="the node's pods to be deleted", interval=1.0)


def _kill_containers(socket_path: Path) -> None:
    def words(*args: str) -> list[str]:
        return ctr(socket_path, *args, check=False).stdout.split()

    for task in words("tasks", "list", "-q"):
        words("tasks", "kill", "--signal", "SIGKILL", task)
    for task in words("tasks", "list", "-q"):
        words("tasks", "delete", "--force", task)
    for container in words("containers", "list", "-q"):
        words("containers", "delete", container)


def cleanup_node_leftovers(workdir: Path, run_dir: Path) -> None:
    """Unmount everything under the node's folders, remove its bridge and kube-proxy's chains.

    Safe to repeat, and used by ``kzo dev down`` after a crash too (nothing here needs the node's
    processes). Network namespaces of killed pods go with their sandboxes' processes.
    """
    _unmount_under(workdir)
    _unmount_under(run_dir)
    subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True)
    for program in ("iptables", "ip6tables"):
        for table in ("filter", "nat", "mangle"):
            _remove_kube_chains(program, table)
    with contextlib.suppress(OSError):
        shutil.rmtree(run_dir)


def _remove_kube_chains(program: str, table: str) -> None:
    """Delete the ``KUBE-*`` chains the kubelet and kube-proxy made in ``table``, and the jumps to them."""
    listed = subprocess.run([program, "-t", table, "-S"], capture_output=True, text=True)
    if listed.returncode != 0:
        return
    rules = [shlex.split(line) for line in listed.stdout.splitlines()]  # comments are quoted
    for rule in rules:
        if len(rule) > 2 and rule[0] == "-A" and not rule[1].startswith("KUBE-") and "-j" in rule:
            target = rule[rule.index("-j") + 1]
            if target.startswith("KUBE-"):
                subprocess.run([program, "-t", table, "-D", *rule[1:]], capture_output=True)
    chains = [rule[1] for rule in rules if len(rule) == 2 and rule[0] == "-N" and rule[1].startswith("KUBE-")]
    for chain in chains:
        subprocess.run([program, "-t", table, "-F", chain], capture_output=True)
    for chain in chains:
        subprocess.run([program, "-t", table, "-X", chain], capture_output=True)


def _unmount_under(folder: Path) -> None:
    prefix = str(folder.resolve())
    with open("/proc/self/mounts") as mounts:
        points = [line.split()[1] for line in mounts]
    inside = [p for p in points if p == prefix or p.startswith(prefix + "/")]
    for point in sorted(set(inside), key=len, reverse=True):
        subprocess.run(["umount", "--lazy", point], capture_output=True)
