"""What the real node (``devstack.node``) needs of this machine and where it sits on it.

The Debian packages of the programs it runs (``kzo dev prepare --node`` installs them), root, a
network interface besides loopback, no kubelet of an earlier node still running; the sysctls it
sets; the bridge it adds (:data:`BRIDGE`), its short folder under ``/run`` (:func:`run_dir_of`)
and containerd's ``ctr`` on the node's socket (:func:`ctr`). Used by ``devstack.node`` (start),
``devstack.node_teardown`` (stop and clean up), ``devstack.stack`` and ``cli.dev_cmd``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
from pathlib import Path

from kafka_zk_operator.devstack import debian
from kafka_zk_operator.devstack.errors import StackError

BRIDGE = "kzo0"
CNI_PLUGINS = Path("/usr/lib/cni")
#: The program each Debian package the node needs provides (``kzo dev prepare --node`` installs them):
#: the node's runtime, and what builds its images (buildah, mmdebstrap).
_PROGRAMS = {
    "containerd": "containerd",
    "containerd-shim-runc-v2": "containerd",
    "ctr": "containerd",
    "runc": "runc",
    "iptables": "iptables",
    "conntrack": "conntrack",
    "buildah": "buildah",
    "mmdebstrap": "mmdebstrap",
}
NODE_PACKAGES = tuple(dict.fromkeys([*_PROGRAMS.values(), "containernetworking-plugins"]))


def host_address() -> str:
    """The host's address on its default route: what pods (behind the bridge) reach it on."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.1", 9))  # TEST-NET-3; no packet is sent: this only picks the route
            address: str = probe.getsockname()[0]
        except OSError as exc:
            raise StackError(f"the node needs a network interface besides loopback: {exc}") from exc
    if address.startswith("127."):
        raise StackError("the node needs a network interface besides loopback (pods cannot reach 127.0.0.1)")
    return address


def missing_packages() -> list[str]:
    """The Debian packages of :data:`NODE_PACKAGES` that are not installed."""
    missing = {package for tool, package in _PROGRAMS.items() if shutil.which(tool) is None}
    if not (CNI_PLUGINS / "bridge").exists():
        missing.add("containernetworking-plugins")
    return [package for package in NODE_PACKAGES if package in missing]


def install_node_packages() -> None:
    """Install what :func:`missing_packages` names with apt-get (as root)."""
    debian.apt_install(
        missing_packages(),
        still_missing=missing_packages,
        needed_by="the real node (kzo dev up --node)",
        skip_hint="leave out --node",
        log_name="apt-node.log",
    )


def running_kubelet() -> int | None:
    """The pid of a kubelet of ``kube-node`` running on this machine, or None."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) > 1 and argv[0].endswith(b"/kube-node") and argv[1] == b"kubelet":
            return int(proc.name)
    return None


def check_node_prerequisites() -> None:
    """Fail with what to install or change when this machine cannot run the node."""
    if os.geteuid() != 0:
        raise StackError("--node runs a kubelet and containers, which needs root; run it as root")
    missing = missing_packages()
    if missing:
        raise StackError(
            f"--node needs the Debian packages {', '.join(missing)}: run 'kzo dev prepare --node' "
            f"(or apt-get install {' '.join(NODE_PACKAGES)})"
        )


def run_dir_of(workdir: Path) -> Path:
    """The node's short folder under /run (containerd's socket and state)."""
    digest = hashlib.sha256(str(workdir.resolve()).encode()).hexdigest()[:10]
    return Path("/run") / f"kzo-node-{digest}"


def ctr(socket_path: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """containerd's ``ctr`` in the ``k8s.io`` namespace (the kubelet's) of the node's containerd."""
    argv = ["ctr", "--address", str(socket_path), "--namespace", "k8s.io", *args]
    result = subprocess.run(argv, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise StackError(f"'{' '.join(argv)}' failed: {result.stderr.strip() or result.stdout.strip()}")
    return result


def write_sysctl(key: str, value: str) -> None:
    path = Path("/proc/sys") / key
    try:
        if path.read_text().strip() != value:
            path.write_text(value)
    except OSError as exc:
        raise StackError(f"the node needs sysctl {key.replace('/', '.')}={value}: {exc}") from exc
