"""A real Kubernetes control plane: etcd + kube-apiserver on 127.0.0.1.

By default there is no controller-manager, scheduler or kubelet: CRDs, validation (including CEL),
RBAC, status subresources, finalizers, watches and Events are real; Pods never start and namespaces
never finish deleting. With ``node_address`` (``kzo dev up --node``, ``devstack.node``) the API
server also listens on that address for pods, serves the ``kubernetes`` Service's names, authorizes
the kubelet (Node authorizer), mounts ServiceAccount tokens and reaches the kubelet with a client
certificate of its own. Users are client certificates signed by the client CA; ``admin`` is in
``system:masters``.
"""

from __future__ import annotations

import base64
import ssl
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from kafka_zk_operator.devstack import ports

if TYPE_CHECKING:  # cryptography is a dev dependency: imported only when a control plane starts
    from kafka_zk_operator.devstack import certs
from kafka_zk_operator.devstack.processes import ManagedProcess, wait_until

#: The Service ClusterIP range; its first address is the ``kubernetes`` Service.
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
#: The names pods reach the API server by (``KUBERNETES_SERVICE_HOST`` is the first).
KUBERNETES_SERVICE_NAMES = (
    "10.0.0.1",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)


@dataclass
class ControlPlane:
    workdir: Path
    bins: Path
    etcd_port: int
    etcd_peer_port: int
    apiserver_port: int
    #: The host address pods reach the API server on (``devstack.node``); None: loopback only, no pods.
    node_address: str | None = None
    etcd: ManagedProcess | None = None
    apiserver: ManagedProcess | None = None
    _client_ca: certs.CertificateAuthority | None = field(default=None, repr=False)

    @property
    def server(self) -> str:
        return f"https://{ports.LOOPBACK}:{self.apiserver_port}"

    @property
    def cert_dir(self) -> Path:
        return self.workdir / "pki"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"

    def start(self) -> None:
        self._write_certificates()
        self.start_etcd()
        self.start_apiserver()

    def start_etcd(self) -> None:
        """Start etcd (again, after :meth:`kill_etcd`: same ports, same data) and wait until healthy."""
        etcd_url = f"http://{ports.LOOPBACK}:{self.etcd_port}"
        etcd_argv = [
            str(self.bins / "etcd"),
            f"--data-dir={self.workdir / 'etcd-data'}",
            f"--listen-client-urls={etcd_url}",
            f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls=http://{ports.LOOPBACK}:{self.etcd_peer_port}",
            f"--initial-advertise-peer-urls=http://{ports.LOOPBACK}:{self.etcd_peer_port}",
            f"--initial-cluster=default=http://{ports.LOOPBACK}:{self.etcd_peer_port}",
            "--unsafe-no-fsync=true",
            "--quota-backend-bytes=4294967296",
        ]
        self.etcd = ManagedProcess("etcd", etcd_argv, self.workdir / "etcd.log")
        self.etcd.start()
        wait_until(self._etcd_healthy, timeout=60, what="etcd to become healthy", process=self.etcd)

    def start_apiserver(self) -> None:
        """Start kube-apiserver (again, after :meth:`kill_apiserver`) and wait for ``/readyz``."""
        c = self.cert_dir
        api_argv = [
            str(self.bins / "kube-apiserver"),
            f"--etcd-servers=http://{ports.LOOPBACK}:{self.etcd_port}",
            f"--cert-dir={c}",
            f"--tls-cert-file={c / 'apiserver.crt'}",
            f"--tls-private-key-file={c / 'apiserver.key'}",
            f"--secure-port={self.apiserver_port}",
            f"--client-ca-file={c / 'client-ca.crt'}",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            "--allow-privileged=true",
            f"--service-account-issuer=https://{ports.LOOPBACK}:{self.apiserver_port}/",
            f"--service-account-key-file={c / 'sa.pub'}",
            f"--service-account-signing-key-file={c / 'sa.key'}",
            "--v=1",
        ]
        if self.node_address is None:
            api_argv += [
                f"--bind-address={ports.LOOPBACK}",
                f"--advertise-address={ports.LOOPBACK}",
                "--authorization-mode=RBAC",
                "--disable-admission-plugins=ServiceAccount",
            ]
        else:
            api_argv += [
                "--bind-address=0.0.0.0",
                f"--advertise-address={self.node_address}",
                "--authorization-mode=Node,RBAC",
                "--enable-admission-plugins=NodeRestriction",
                # The node's name does not resolve: reach the kubelet on its address.
                "--kubelet-preferred-address-types=InternalIP,Hostname",
                f"--kubelet-client-certificate={c / 'kubelet-client.crt'}",
                f"--kubelet-client-key={c / 'kubelet-client.key'}",
            ]
        self.apiserver = ManagedProcess("kube-apiserver", api_argv, self.workdir / "kube-apiserver.log")
        self.apiserver.start()
        wait_until(self._apiserver_ready, timeout=180, what="kube-apiserver /readyz", process=self.apiserver)

    def kill_apiserver(self) -> None:
        """``kill -9`` kube-apiserver, as a crash would (for fault tests)."""
        assert self.apiserver is not None
        self.apiserver.kill()

    def kill_etcd(self) -> None:
        """``kill -9`` etcd; its data directory stays for :meth:`start_etcd`."""
        assert self.etcd is not None
        self.etcd.kill()

    def _write_certificates(self) -> None:
        from kafka_zk_operator.devstack import certs

        c = self.cert_dir
        if (c / "client-ca.key").exists():
            return
        serving_ca = certs.CertificateAuthority.create("kzo-serving-ca")
        client_ca = certs.CertificateAuthority.create("kzo-client-ca")
        sa = certs.CertificateAuthority.create("kzo-service-accounts")
        pod_names = () if self.node_address is None else (self.node_address, *KUBERNETES_SERVICE_NAMES)
        serving_cert, serving_key = serving_ca.issue("localhost", server=True, extra_names=pod_names)
        certs.write(c / "serving-ca.crt", serving_ca.cert_pem)
        certs.write(c / "apiserver.crt", serving_cert)
        certs.write(c / "apiserver.key", serving_key, private=True)
        certs.write(c / "client-ca.crt", client_ca.cert_pem)
        certs.write(c / "client-ca.key", client_ca.key_pem, private=True)
        certs.write(c / "sa.key", sa.key_pem, private=True)
        certs.write(c / "sa.pub", sa.public_key_pem())
        self._client_ca = client_ca
        self.write_kubeconfig("admin", ("system:masters",), self.admin_kubeconfig)
        if self.node_address is not None:
            kubelet_cert, kubelet_key = client_ca.issue(
                "kube-apiserver-kubelet-client", organizations=("system:masters",)
            )
            certs.write(c / "kubelet-client.crt", kubelet_cert)
            certs.write(c / "kubelet-client.key", kubelet_key, private=True)

    def _load_client_ca(self) -> certs.CertificateAuthority:
        from kafka_zk_operator.devstack import certs

        if self._client_ca is None:
            from cryptography import x509
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec

            key = serialization.load_pem_private_key((self.cert_dir / "client-ca.key").read_bytes(), None)
            assert isinstance(key, ec.EllipticCurvePrivateKey)
            cert = x509.load_pem_x509_certificate((self.cert_dir / "client-ca.crt").read_bytes())
            self._client_ca = certs.CertificateAuthority(key, cert)
        return self._client_ca

    def write_kubeconfig(self, user: str, groups: tuple[str, ...], path: Path) -> Path:
        """Write a kubeconfig for a certificate user ``user`` in ``groups`` (used for RBAC tests)."""
        cert, key = self._load_client_ca().issue(user, organizations=groups)

        def b64(data: bytes) -> str:
            return base64.b64encode(data).decode()

        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "kzo-local",
                    "cluster": {
                        "server": self.server,
                        "certificate-authority-data": b64((self.cert_dir / "serving-ca.crt").read_bytes()),
                    },
                }
            ],
            "users": [
                {"name": user, "user": {"client-certificate-data": b64(cert), "client-key-data": b64(key)}}
            ],
            "contexts": [{"name": "kzo-local", "context": {"cluster": "kzo-local", "user": user}}],
            "current-context": "kzo-local",
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(config))
        path.chmod(0o600)
        return path

    def _etcd_healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{ports.LOOPBACK}:{self.etcd_port}/health", timeout=2) as r:
                return b'"health":"true"' in r.read()
        except (urllib.error.URLError, OSError):
            return False

    def _apiserver_ready(self) -> bool:
        ctx = ssl.create_default_context(cafile=str(self.cert_dir / "serving-ca.crt"))
        ctx.load_cert_chain(*self._admin_cert_files())
        try:
            with urllib.request.urlopen(f"{self.server}/readyz", timeout=3, context=ctx) as r:
                status: int = r.status
                return status == 200
        except (urllib.error.URLError, OSError):
            return False

    def _admin_cert_files(self) -> tuple[str, str]:
        from kafka_zk_operator.devstack import certs

        crt, key = self.cert_dir / "admin-probe.crt", self.cert_dir / "admin-probe.key"
        if not crt.exists():
            cert_pem, key_pem = self._load_client_ca().issue("admin", organizations=("system:masters",))
            certs.write(crt, cert_pem)
            certs.write(key, key_pem, private=True)
        return str(crt), str(key)

    def stop(self) -> None:
        if self.apiserver is not None:
            self.apiserver.stop(timeout=15)
        if self.etcd is not None:
            self.etcd.stop(timeout=10)


def kubectl_available() -> bool:
    try:
        return subprocess.run(["kubectl", "version", "--client"], capture_output=True).returncode == 0
    except OSError:
        return False
