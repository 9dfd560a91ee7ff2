"""A Kubernetes control plane of one test module's own: etcd and kube-apiserver, as the stack runs
them (``devstack.controlplane``), and optionally Kubernetes' clusterrole-aggregation controller.

For tests that change what the whole API server serves (another operator's CRDs, which change what
kubectl resolves a name to) or that need the aggregation of the built-in ``view``/``edit``/``admin``
ClusterRoles, which the stack's API server alone never computes (it runs no controller-manager).
The session's stack stays as the other tests expect it. kubectl runs with a cache directory of the
module's own, so that no discovery cache is shared with other tests or with the user.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_zk_operator.devstack import artifacts, ports, tools
from kafka_zk_operator.devstack.controlplane import ControlPlane
from kafka_zk_operator.devstack.processes import ManagedProcess

ROOT = Path(__file__).resolve().parents[2]
CRDS = ROOT / "crds"


@dataclass
class OwnControlPlane:
    plane: ControlPlane
    cache_dir: Path

    @property
    def kubeconfig(self) -> Path:
        return self.plane.admin_kubeconfig

    def kubectl(
        self, *args: str | Path, check: bool = True, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """kubectl as the cluster admin (``system:masters``), failing with its output when ``check``."""
        argv = [
            str(tools.kubectl_binary()),
            f"--kubeconfig={self.kubeconfig}",
            f"--cache-dir={self.cache_dir}",
            *[str(a) for a in args],
        ]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, input=stdin)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{' '.join(argv[3:])} exited with {proc.returncode}:\n{proc.stdout}{proc.stderr}"
            )
        return proc

    def kubectl_json(self, *args: str | Path) -> Any:
        return json.loads(self.kubectl(*args, "-o", "json").stdout)

    def apply(self, manifest: str | Path, *extra: str) -> subprocess.CompletedProcess[str]:
        """Server-side apply of a file, or of YAML text."""
        if isinstance(manifest, Path):
            return self.kubectl("apply", "--server-side", *extra, "-f", manifest)
        return self.kubectl("apply", "--server-side", *extra, "-f", "-", stdin=manifest)

    def wait_established(self, *crd_names: str) -> None:
        for name in crd_names:
            for condition in ("Established", "NamesAccepted"):
                self.kubectl("wait", f"--for=condition={condition}", "--timeout=60s", f"crd/{name}")


@contextlib.contextmanager
def own_control_plane(workdir: Path, *, aggregation_controller: bool = False) -> Iterator[OwnControlPlane]:
    """Start etcd + kube-apiserver (RBAC authorization) in ``workdir``; with ``aggregation_controller``
    also kube-controller-manager running only the clusterrole-aggregation controller."""
    bins = artifacts.k8s_bins(node=aggregation_controller)
    plane = ControlPlane(
        workdir / "k8s",
        bins,
        etcd_port=ports.free_port(),
        etcd_peer_port=ports.free_port(),
        apiserver_port=ports.free_port(),
    )
    manager: ManagedProcess | None = None
    try:
        plane.start()
        if aggregation_controller:
            manager = ManagedProcess(
                "kube-controller-manager",
                [
                    str(bins / "kube-node"),
                    "kube-controller-manager",
                    f"--kubeconfig={plane.admin_kubeconfig}",
                    "--controllers=clusterrole-aggregation",
                    "--leader-elect=false",
                    "--secure-port=0",
                    "--v=1",
                ],
                workdir / "kube-controller-manager.log",
            )
            manager.start()
        yield OwnControlPlane(plane, workdir / "kubectl-cache")
    finally:
        if manager is not None:
            manager.stop(timeout=10)
        plane.stop()
