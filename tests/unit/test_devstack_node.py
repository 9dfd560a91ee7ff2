"""The real node's pieces that need no node: what it requires, how it cleans up iptables, how image
tags follow their sources, the API server certificate's names for pods. The node itself runs in
``tests/node``."""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from kafka_zk_operator.devstack import certs, images, node_host, node_teardown
from kafka_zk_operator.devstack.errors import StackError


def test_missing_packages_are_named_once_each_in_install_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        shutil, "which", lambda name, **_: None if name in ("ctr", "buildah") else f"/x/{name}"
    )
    monkeypatch.setattr(node_host, "CNI_PLUGINS", Path("/nonexistent"))
    assert node_host.missing_packages() == ["containerd", "buildah", "containernetworking-plugins"]
    monkeypatch.setattr(shutil, "which", lambda name, **_: f"/x/{name}")
    monkeypatch.setattr(node_host, "CNI_PLUGINS", Path("/"))  # has no "bridge"
    assert node_host.missing_packages() == ["containernetworking-plugins"]


def test_without_root_the_node_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(StackError, match="needs root"):
        node_host.check_node_prerequisites()


def test_only_the_kube_chains_and_the_jumps_to_them_are_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    listing = "\n".join(
        [
            "-P INPUT ACCEPT",
            "-N CNI-FORWARD",
            "-N KUBE-FIREWALL",
            "-N KUBE-SERVICES",
            "-A INPUT -j KUBE-FIREWALL",
            "-A FORWARD -m comment --comment podman -j CNI-FORWARD",
            '-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
            "-A KUBE-FIREWALL -d 127.0.0.0/8 -j DROP",
        ]
    )
    calls: list[list[str]] = []

    def run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, stdout=listing if argv[-1] == "-S" else "", stderr="")

    monkeypatch.setattr(subprocess, "run", run)
    node_teardown._remove_kube_chains("iptables", "filter")
    changes = [call[3:] for call in calls[1:]]
    assert changes == [
        ["-D", "INPUT", "-j", "KUBE-FIREWALL"],
        [
            "-D",
            "OUTPUT",
            "-m",
            "conntrack",
            "--ctstate",
            "NEW",
            "-m",
            "comment",
            "--comment",
            "kubernetes service portals",
            "-j",
            "KUBE-SERVICES",
        ],
        ["-F", "KUBE-FIREWALL"],
        ["-F", "KUBE-SERVICES"],
        ["-X", "KUBE-FIREWALL"],
        ["-X", "KUBE-SERVICES"],
    ]


def test_image_tags_follow_the_sources_and_ignore_bytecode(tmp_path: Path) -> None:
    (tmp_path / "operator" / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "operator" / "pkg" / "a.py").write_text("x = 1\n")

    def tag() -> str:
        return images._digest(*images._tree_digest(tmp_path, ("pyproject.toml", "operator")))

    first = tag()
    (tmp_path / "operator" / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert tag() == first
    (tmp_path / "operator" / "pkg" / "a.py").write_text("x = 2\n")
    assert tag() != first


def test_the_serving_certificate_names_what_pods_dial() -> None:
    ca = certs.CertificateAuthority.create("test-ca")
    cert_pem, _ = ca.issue(
        "localhost", server=True, extra_names=("192.0.2.2", "10.0.0.1", "kubernetes.default.svc")
    )
    names = x509.load_pem_x509_certificate(cert_pem).extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    )
    assert set(names.value.get_values_for_type(x509.IPAddress)) == {
        ipaddress.ip_address(a) for a in ("127.0.0.1", "192.0.2.2", "10.0.0.1")
    }
    assert set(names.value.get_values_for_type(x509.DNSName)) == {"localhost", "kubernetes.default.svc"}
