"""A real single-node Kubernetes cluster on this machine (``kzo dev up --node``): containerd with
runc and the CNI bridge, the kubelet, kube-controller-manager, kube-scheduler and kube-proxy, next
to the stack's etcd and kube-apiserver (``devstack.controlplane`` with ``node_address``).

Pods run for real: the kubelet starts them through containerd's CRI, on a bridge (``kzo0``,
``POD_SUBNET``) whose gateway is this host, so a pod reaches ZooKeeper and the Kafka brokers on the
host's address and the API server through the ``kubernetes`` Service (kube-proxy's iptables rules).
No registry is reachable here, so every image a pod uses is imported into containerd from an OCI
archive built on this machine (``devstack.images``), the pod sandbox's pause image included.

Everything lives under the node's work folder (containerd's root and state, the kubelet's root, the
CNI leases), except containerd's socket folder, which is short (``/run/kzo-node-<hash>``: a Unix
socket path must fit in 108 bytes). Stopping deletes the pods' containers, unmounts what the kubelet
and containerd mounted and removes the bridge, so a stopped node leaves nothing behind.
This needs root (containers, mounts, iptables), as a kubelet does.

What the node needs of this machine (packages, root, sysctls, the host address) is in
``devstack.node_host``; stopping it and cleaning up after it in ``devstack.node_teardown``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kafka_zk_operator.devstack import ports, tools
from kafka_zk_operator.devstack.controlplane import ControlPlane
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.devstack.node_host import (
    BRIDGE,
    CNI_PLUGINS,
    check_node_prerequisites,
    ctr,
    run_dir_of,
    running_kubelet,
    write_sysctl,
)
from kafka_zk_operator.devstack.node_teardown import stop_node
from kafka_zk_operator.devstack.processes import ManagedProcess, wait_until

NODE_NAME = "kzo-node"
#: The pods' addresses (one node: one bridge, host-local leases). Not 10.88/16: podman's default.
POD_SUBNET = "10.244.0.0/24"
CLUSTER_DOMAIN = "cluster.local"


@dataclass
class Node:
    """One node: containerd + kubelet + kube-proxy, and the cluster's controller-manager and scheduler."""

    workdir: Path
    #: The folder holding ``kube-node`` (``devstack.artifacts.k8s_bins(..., node=True)``).
    bins: Path
    control_plane: ControlPlane
    address: str
    #: CoreDNS (``devstack.artifacts.coredns_binary``): the cluster DNS, on this host's address.
    coredns: Path | None = None
    #: OCI archives imported into containerd before the kubelet starts (the pause image first).
    images: Sequence[Path] = ()
    pause_image: str = "localhost/kzo-pause:1"
    processes: dict[str, ManagedProcess] = field(default_factory=dict)

    @property
    def run_dir(self) -> Path:
        return run_dir_of(self.workdir)

    @property
    def containerd_socket(self) -> Path:
        return self.run_dir / "containerd.sock"

    # ------------------------------------------------------------------ start
    def start(self) -> None:
        check_node_prerequisites()
        other = running_kubelet()
        if other is not None:
            raise StackError(
                f"another node's kubelet runs on this machine (pid {other}); one node at a time shares "
                f"the bridge {BRIDGE} and kube-proxy's rules: stop it first ('kzo dev down')"
            )
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        write_sysctl("net/ipv4/ip_forward", "1")
        write_sysctl("net/bridge/bridge-nf-call-iptables", "1")
        self._start_containerd()
        for archive in self.images:
            self.import_image(archive)
        self._start_control_loops()
        self._start_kube_proxy()
        self._start_cluster_dns()
        self._start_kubelet()
        wait_until(
            self._node_ready,
            timeout=120,
            what=f"node {NODE_NAME} to be Ready",
            process=self.processes["kubelet"],
        )
        # Pods of a namespace need its ServiceAccount, which the controller-manager makes.
        wait_until(
            lambda: self._kubectl("get", "serviceaccount", "default", check=False).returncode == 0,
            timeout=60,
            what="the default ServiceAccount",
            process=self.processes["kube-controller-manager"],
        )

    def _start_containerd(self) -> None:
        root = self.workdir / "containerd"
        cni_dir = self.workdir / "cni"
        (cni_dir / "net.d").mkdir(parents=True, exist_ok=True)
        (cni_dir / "net.d" / "10-kzo.conflist").write_text(json.dumps(self._cni_config(cni_dir), indent=2))
        cri = 'plugins."io.containerd.grpc.v1.cri"'
        config = f"""version = 2
root = "{root / "root"}"
state = "{self.run_dir / "state"}"
[grpc]
  address = "{self.containerd_socket}"
[ttrpc]
  address = "{self.run_dir / "containerd.sock.ttrpc"}"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "{root / "opt"}"
[{cri}]
  sandbox_image = "{self.pause_image}"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  # Root here lacks CAP_SYS_RESOURCE: a negative oom_score_adj (the sandbox's -998) cannot be set.
  restrict_oom_score_adj = true
  [{cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [{cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [{cri}.containerd.runtimes.runc.options]
        BinaryName = "{shutil.which("runc")}"
        SystemdCgroup = false
  [{cri}.cni]
    bin_dir = "{CNI_PLUGINS}"
    conf_dir = "{cni_dir / "net.d"}"
"""
        config_path = root / "config.toml"
        config_path.parent.mkdir(parents=True, exist_ok=True)
        config_path.write_text(config)
        process = ManagedProcess(
            "containerd", ["containerd", "--config", str(config_path)], self.workdir / "containerd.log"
        )
        self.processes["containerd"] = process
        process.start()
        wait_until(self._containerd_ready, timeout=60, what="containerd to serve CRI", process=process)

    def _cni_config(self, cni_dir: Path) -> dict[str, object]:
        return {
            "cniVersion": "0.4.0",
            "name": "kzo",
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": BRIDGE,
                    "isGateway": True,
                    "ipMasq": True,
                    "hairpinMode": True,
                    "ipam": {
                        "type": "host-local",
                        "ranges": [[{"subnet": POD_SUBNET}]],
                        "routes": [{"dst": "0.0.0.0/0"}],
                        "dataDir": str(cni_dir / "leases"),
                    },
                },
                {"type": "portmap", "capabilities": {"portMappings": True}},
            ],
        }

    def _containerd_ready(self) -> bool:
        return self._ctr("version", check=False).returncode == 0

    def _ctr(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return ctr(self.containerd_socket, *args, check=check)

    def import_image(self, archive: Path) -> None:
        """Import an OCI archive into containerd's ``k8s.io`` namespace (where the kubelet looks)."""
        self._ctr("images", "import", "--no-unpack", str(archive))

    def tag_image(self, source: str, *targets: str) -> None:
        """More names for an image of the ``k8s.io`` namespace. A by-digest name (``repo@sha256:...``)
        is how the kubelet finds an image a pod pins by digest: containerd's CRI plugin resolves a
        pod's image by name, and only a pull would have created that name."""
        self._ctr("images", "tag", "--force", source, *targets)

    def _kubeconfig(self, user: str, groups: tuple[str, ...]) -> Path:
        return self.control_plane.write_kubeconfig(
            user, groups, self.workdir / "kubeconfigs" / f"{user}.yaml"
        )

    def _start_control_loops(self) -> None:
        pki = self.control_plane.cert_dir
        manager = self._kubeconfig("system:kube-controller-manager", ())
        self._start(
            "kube-controller-manager",
            [
                f"--kubeconfig={manager}",
                f"--authentication-kubeconfig={manager}",
                f"--authorization-kubeconfig={manager}",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={pki / 'serving-ca.crt'}",
                "--use-service-account-credentials=true",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={ports.free_port()}",
                f"--cert-dir={self.workdir / 'controller-manager-certs'}",
                "--v=1",
            ],
        )
        scheduler = self._kubeconfig("system:kube-scheduler", ())
        self._start(
            "kube-scheduler",
            [
                f"--kubeconfig={scheduler}",
                f"--authentication-kubeconfig={scheduler}",
                f"--authorization-kubeconfig={scheduler}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={ports.free_port()}",
                f"--cert-dir={self.workdir / 'scheduler-certs'}",
                "--v=1",
            ],
        )

    def _start_kube_proxy(self) -> None:
        config = {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "mode": "iptables",
            "clientConnection": {"kubeconfig": str(self._kubeconfig("system:kube-proxy", ()))},
            "hostnameOverride": NODE_NAME,
            "clusterCIDR": POD_SUBNET,
            "healthzBindAddress": f"127.0.0.1:{ports.free_port()}",
            "metricsBindAddress": f"127.0.0.1:{ports.free_port()}",
            "oomScoreAdj": 0,
            # Leave the host's conntrack table size and timeouts as they are.
            "conntrack": {"maxPerCore": 0, "min": 0},
        }
        path = self.workdir / "kube-proxy.yaml"
        path.write_text(yaml.safe_dump(config))
        self._start("kube-proxy", [f"--config={path}", "--v=1"])

    def _start_cluster_dns(self) -> None:
        """CoreDNS serving ``cluster.local`` from the API server (Services, headless ones' pods) on
        this host's address, port 53; other names go to this host's resolvers."""
        if self.coredns is None:
            return
        kubeconfig = self.control_plane.admin_kubeconfig
        corefile = self.workdir / "Corefile"
        corefile.write_text(
            f"""{CLUSTER_DOMAIN}:53 in-addr.arpa:53 ip6.arpa:53 {{
    bind {self.address}
    errors
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        kubeconfig {kubeconfig} kzo-local
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }}
    cache 5
}}
.:53 {{
    bind {self.address}
    errors
    forward . /etc/resolv.conf
    cache 30
}}
"""
        )
        process = ManagedProcess(
            "coredns", [str(self.coredns), "-conf", str(corefile)], self.workdir / "coredns.log"
        )
        self.processes["coredns"] = process
        process.start()

    def _start_kubelet(self) -> None:
        pki = self.control_plane.cert_dir
        config = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            # This machine has cgroup v1 (hybrid) and no systemd as PID 1.
            "failCgroupV1": False,
            "cgroupDriver": "cgroupfs",
            "failSwapOn": False,
            "containerRuntimeEndpoint": f"unix://{self.containerd_socket}",
            "address": self.address,
            "port": ports.free_port(),
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": ports.free_port(),
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": True},
                "x509": {"clientCAFile": str(pki / "client-ca.crt")},
            },
            "authorization": {"mode": "Webhook"},
            "kernelMemcgNotification": False,
            # No CAP_SYS_RESOURCE here: an oom_score_adj below the current one cannot be set.
            "oomScoreAdj": 0,
            "protectKernelDefaults": False,
            "serializeImagePulls": False,
            "resolvConf": "/etc/resolv.conf",
            **({"clusterDNS": [self.address], "clusterDomain": CLUSTER_DOMAIN} if self.coredns else {}),
            # The host's disk is shared with everything else: evict only when it is really full.
            "evictionHard": {
                "memory.available": "100Mi",
                "nodefs.available": "2%",
                "imagefs.available": "2%",
                "nodefs.inodesFree": "2%",
            },
            "imageGCHighThresholdPercent": 99,
            "imageGCLowThresholdPercent": 98,
            "maxPods": 60,
        }
        path = self.workdir / "kubelet.yaml"
        path.write_text(yaml.safe_dump(config))
        kubeconfig = self._kubeconfig(f"system:node:{NODE_NAME}", ("system:nodes",))
        self._start(
            "kubelet",
            [
                f"--config={path}",
                f"--kubeconfig={kubeconfig}",
                f"--hostname-override={NODE_NAME}",
                f"--node-ip={self.address}",
                f"--root-dir={self.workdir / 'kubelet'}",
                f"--cert-dir={self.workdir / 'kubelet-certs'}",
                "--v=1",
            ],
        )

    def _start(self, name: str, args: list[str]) -> None:
        process = ManagedProcess(
            name, [str(self.bins / "kube-node"), name, *args], self.workdir / f"{name}.log"
        )
        self.processes[name] = process
        process.start()

    def _node_ready(self) -> bool:
        result = self._kubectl("get", "node", NODE_NAME, "-o", "json", check=False)
        if result.returncode != 0:
            return False
        conditions = json.loads(result.stdout).get("status", {}).get("conditions", [])
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)

    def _kubectl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [str(tools.kubectl_binary()), f"--kubeconfig={self.control_plane.admin_kubeconfig}", *args]
        result = subprocess.run(argv, capture_output=True, text=True)
        if check and result.returncode != 0:
            raise StackError(f"'{' '.join(argv)}' failed: {result.stderr.strip()}")
        return result

    # ------------------------------------------------------------------ stop
    def stop(self) -> None:
        """Stop the node and remove what it made: pods, containers, mounts, the bridge, kube-proxy's rules."""
        stop_node(self.processes, self.workdir, self.control_plane.admin_kubeconfig)
