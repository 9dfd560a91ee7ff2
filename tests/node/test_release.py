"""``make release`` as a dry run (``scripts/release.py --dry-run``), checked with tools other than
the release script: ``sha256sum -c``, the archives' own index.json, ``helm show values`` of the
packaged chart, the wheel's file list and the SBOMs' package lists. Then the packaged chart is
installed with the archived operator image imported into the node's containerd, and ``helm test``
runs its test pod (``kzo check`` against the stack's ZooKeeper, Kafka and API server).

The images are the ones this session's node tests use (the ``operator_image`` / ``spark_image``
fixtures): the release reuses their cached build instead of building them again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafka_zk_operator import __version__
from kafka_zk_operator.devstack import images
from tests.node.conftest import ROOT, NodeCluster
from tests.node.test_helm_install import assert_checks_passed

NAMESPACE = "kzo-released"
RELEASE = "released"


@pytest.fixture(scope="module")
def dist(
    operator_image: images.BuiltImage,
    spark_image: images.BuiltImage,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    out = tmp_path_factory.mktemp("release") / "dist"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "release.py"), "--dry-run", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "operator"), *sys.path])},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    print(done.stderr)
    return out


def _index(archive: Path) -> dict[str, Any]:
    with tarfile.open(archive) as tar:
        member = tar.extractfile("index.json")
        assert member is not None
        return dict(json.load(member))


def _packaged_values(node_cluster: NodeCluster, dist: Path) -> dict[str, Any]:
    return dict(
        yaml.safe_load(
            node_cluster.helm("show", "values", str(dist / f"kafka-zk-operator-{__version__}.tgz"))
        )
    )


def test_the_release_has_every_file_and_the_checksums_verify(dist: Path) -> None:
    v = __version__
    expected = {
        f"kafka_zk_operator-{v}-py3-none-any.whl",
        f"kafka_zk_operator-{v}.tar.gz",
        f"kafka-zk-operator-{v}.oci.tar",
        f"kafka-zk-operator-spark-{v}.oci.tar",
        f"kafka-zk-operator-{v}.spdx.json",
        f"kafka-zk-operator-{v}.cyclonedx.json",
        f"kafka-zk-operator-spark-{v}.spdx.json",
        f"kafka-zk-operator-spark-{v}.cyclonedx.json",
        f"kafka-zk-operator-{v}.tgz",
        "release.json",
        "SHA256SUMS",
        "chart-oci",
    }
    assert expected <= {p.name for p in dist.iterdir()}, sorted(p.name for p in dist.iterdir())
    check = subprocess.run(
        ["sha256sum", "--check", "--strict", "SHA256SUMS"], cwd=dist, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    listed = {line.split("  ", 1)[1] for line in (dist / "SHA256SUMS").read_text().splitlines()}
    assert {name for name in expected if name not in ("SHA256SUMS", "chart-oci")} <= listed


def test_the_wheel_carries_the_license_and_no_devstack_assets(dist: Path) -> None:
    with zipfile.ZipFile(dist / f"kafka_zk_operator-{__version__}-py3-none-any.whl") as wheel:
        license_text = wheel.read(f"kafka_zk_operator-{__version__}.dist-info/licenses/LICENSE").decode()
        names = wheel.namelist()
    assert license_text == (ROOT / "LICENSE").read_text()
    assert "kafka_zk_operator/domain/kafka/kafka_topic_configs.json" in names
    assert [n for n in names if "devstack/assets" in n] == []


def test_the_operator_image_has_the_licenses_and_no_devstack_assets(dist: Path) -> None:
    """Every file of every layer of the archived operator image, read with tarfile."""
    archive = dist / f"kafka-zk-operator-{__version__}.oci.tar"
    files: list[str] = []
    with tarfile.open(archive) as outer:
        manifest_digest = _index(archive)["manifests"][0]["digest"].removeprefix("sha256:")
        manifest_file = outer.extractfile(f"blobs/sha256/{manifest_digest}")
        assert manifest_file is not None
        for layer in json.load(manifest_file)["layers"]:
            blob = outer.extractfile(f"blobs/sha256/{layer['digest'].removeprefix('sha256:')}")
            assert blob is not None
            with tarfile.open(fileobj=blob, mode="r|*") as inner:
                files += [member.name for member in inner]
    assert any(name.endswith("kafka_zk_operator/cli/main.py") for name in files)
    assert "usr/share/doc/kafka-zk-operator/LICENSE" in files
    # The Debian packages' licenses stay in the image (the bases drop the rest of /usr/share/doc).
    assert {"usr/share/doc/libc6/copyright", "usr/share/doc/python3.11/copyright"} <= set(files)
    assert [name for name in files if "devstack/assets" in name] == []


@pytest.mark.parametrize("name", ["kafka-zk-operator", "kafka-zk-operator-spark"])
def test_each_sbom_lists_the_operator_and_kopf(dist: Path, name: str) -> None:
    spdx = json.loads((dist / f"{name}-{__version__}.spdx.json").read_text())
    versions = {p["name"]: p.get("versionInfo") for p in spdx["packages"]}
    assert versions.get("kafka-zk-operator") == __version__
    assert "kopf" in versions and "kazoo" in versions, sorted(versions)
    cyclonedx = json.loads((dist / f"{name}-{__version__}.cyclonedx.json").read_text())
    assert {"kafka-zk-operator", "kopf"} <= {c["name"] for c in cyclonedx["components"]}


def test_the_packaged_chart_pins_the_archived_images_by_digest(node_cluster: NodeCluster, dist: Path) -> None:
    values = _packaged_values(node_cluster, dist)
    operator = _index(dist / f"kafka-zk-operator-{__version__}.oci.tar")["manifests"][0]
    spark = _index(dist / f"kafka-zk-operator-spark-{__version__}.oci.tar")["manifests"][0]
    assert values["image"]["digest"] == operator["digest"]
    assert values["spark"]["digest"] == spark["digest"]
    assert operator["annotations"]["org.opencontainers.image.ref.name"] == (
        f"docker.io/library/kafka-zk-operator:{__version__}"
    )
    release = json.loads((dist / "release.json").read_text())
    assert release["images"]["runtime"]["digest"] == operator["digest"]


def test_the_chart_oci_layout_holds_the_packaged_chart(dist: Path) -> None:
    layout = dist / "chart-oci"
    (descriptor,) = json.loads((layout / "index.json").read_text())["manifests"]
    manifest = json.loads(
        (layout / "blobs" / "sha256" / descriptor["digest"].removeprefix("sha256:")).read_bytes()
    )
    assert manifest["config"]["mediaType"] == "application/vnd.cncf.helm.config.v1+json"
    (layer,) = manifest["layers"]
    assert layer["mediaType"] == "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
    blob = layout / "blobs" / "sha256" / layer["digest"].removeprefix("sha256:")
    assert blob.read_bytes() == (dist / f"kafka-zk-operator-{__version__}.tgz").read_bytes()


def _docker_name(repository: str) -> str:
    """A repository as containerd names it: ``kafka-zk-operator`` is ``docker.io/library/kafka-zk-operator``."""
    first = repository.split("/", 1)[0]
    if "/" in repository and ("." in first or ":" in first or first == "localhost"):
        return repository
    return f"docker.io/{repository}" if "/" in repository else f"docker.io/library/{repository}"


@pytest.fixture(scope="module")
def released(
    node_cluster: NodeCluster, dist: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The packaged chart installed with its archived image (imported into the node's containerd)."""
    assert node_cluster.stack.node is not None
    archive = dist / f"kafka-zk-operator-{__version__}.oci.tar"
    node_cluster.stack.node.import_image(archive)
    # What a registry pull by digest would have left: the image also named <repository>@<digest>.
    image = _packaged_values(node_cluster, dist)["image"]
    name = _index(archive)["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"]
    node_cluster.stack.node.tag_image(name, _docker_name(image["repository"]) + "@" + image["digest"])
    values = tmp_path_factory.mktemp("released") / "values.yaml"
    values.write_text(
        yaml.safe_dump(
            {"clusters": node_cluster.clusters_values(), "replicas": 1, "leaderElection": {"enabled": False}}
        )
    )
    node_cluster.helm(
        "install", RELEASE, str(dist / f"kafka-zk-operator-{__version__}.tgz"),
        "--namespace", NAMESPACE, "--create-namespace", "--values", str(values), "--wait", "--timeout", "240s",
    )  # fmt: skip
    try:
        yield RELEASE
    finally:
        node_cluster.helm("uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", check=False)


def test_the_packaged_chart_runs_the_archived_image_and_helm_test_passes(
    node_cluster: NodeCluster, dist: Path, released: str
) -> None:
    values = _packaged_values(node_cluster, dist)
    pods = node_cluster.kubectl_json(
        "get", "pods", "--namespace", NAMESPACE, "--selector", "app.kubernetes.io/name=kafka-zk-operator"
    )["items"]
    assert len(pods) == 1
    status = pods[0]["status"]["containerStatuses"][0]
    assert status["ready"] is True, status
    assert status["imageID"].endswith(values["image"]["digest"]), status
    output = node_cluster.helm("test", released, "--namespace", NAMESPACE, "--logs", "--timeout", "180s")
    assert_checks_passed(output)
