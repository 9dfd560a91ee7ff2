#!/usr/bin/env python3
"""Build release X.Y.Z into dist/: the wheel and sdist, both images as OCI archives with their
digests and SBOMs, the Helm chart packaged with those digests pinned, the chart as an OCI layout,
release.json and SHA256SUMS (``make release``; docs/releasing.md).

    .venv/bin/python scripts/release.py              a release: HEAD tagged vX.Y.Z, a clean tree
    .venv/bin/python scripts/release.py --dry-run    the same outputs from the working tree as it is
                                     (no tag, local changes allowed); tests/node/test_release.py

The images are the Dockerfile's ``runtime`` and ``spark`` targets built with buildah exactly as the
local stack's real node builds them (``kafka_zk_operator.devstack.images``, Debian bookworm bases
made on this machine: no registry is needed): that build is cached by a digest of its inputs, so an
image the node tests built is reused, not built again. The release archive is that build's archive
with its reference renamed to ``<repository>:X.Y.Z``; the layers and the manifest are unchanged, so
the digest recorded here is the one a registry reports after ``skopeo copy``. SBOMs are made by
syft (built once from its Go module, like the stack's other Go tools).

Every failure is one line on stderr and exit code 1.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHART = ROOT / "charts" / "kafka-zk-operator"
#: Where the chart's default ``image.repository`` (``kafka-zk-operator``) points: the name the
#: archives carry unless --image-repository says otherwise.
DEFAULT_REPOSITORY = "docker.io/library/kafka-zk-operator"
HELM_CONFIG_MEDIA_TYPE = "application/vnd.cncf.helm.config.v1+json"
HELM_CHART_MEDIA_TYPE = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
OCI_MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"


class ReleaseError(Exception):
    """What went wrong and what to do (printed as one line)."""


@dataclass(frozen=True)
class ReleasedImage:
    target: str
    reference: str
    digest: str
    archive: Path
    sbom: Path
    cyclonedx: Path


def _progress(message: str) -> None:
    print(f"release: {message}", file=sys.stderr, flush=True)


def _run(argv: list[str], what: str, *, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=cwd, check=False
        )
    except OSError as exc:
        raise ReleaseError(f"{what}: cannot run {argv[0]}: {exc.strerror or exc}") from exc
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-6:])
        raise ReleaseError(f"{what} failed (exit code {done.returncode}): {tail}")
    return done.stdout


def _load_script(name: str) -> Any:
    """A sibling script (version.py, gen_chart_readme.py) as a module: one home for what they do."""
    spec = importlib.util.spec_from_file_location(f"kzo_{name}", ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def resolve_version(dry_run: bool) -> str:
    """The version to release: tagged and clean unless ``dry_run``."""
    version_module = _load_script("version")
    try:
        version = str(version_module.resolve(ROOT, release=not dry_run))
    except version_module.VersionError as exc:
        raise ReleaseError(str(exc)) from exc
    if not dry_run:
        status = _run(["git", "-C", str(ROOT), "status", "--porcelain"], "git status")
        if status.strip():
            first = status.strip().splitlines()[0]
            raise ReleaseError(
                f"the working tree has changes ({first.strip()} ...): a release builds the tagged commit "
                "as it is; commit or stash them, or use --dry-run"
            )
    return version


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- the wheel and the sdist ---------------------------------------------------------------------


def build_python(out: Path, version: str) -> tuple[Path, Path]:
    """``python -m build``: the sdist, then the wheel built from that sdist."""
    _progress("building the sdist and the wheel (python -m build)...")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], "python -m build")
    wheel = out / f"kafka_zk_operator-{version}-py3-none-any.whl"
    sdist = out / f"kafka_zk_operator-{version}.tar.gz"
    for path in (wheel, sdist):
        if not path.is_file():
            raise ReleaseError(f"python -m build did not make {path.name} (made: {sorted(os.listdir(out))})")
    with zipfile.ZipFile(wheel) as archive:
        if f"kafka_zk_operator-{version}.dist-info/licenses/LICENSE" not in archive.namelist():
            raise ReleaseError(f"{wheel.name} has no dist-info/licenses/LICENSE (pyproject license-files)")
    return wheel, sdist


# -- the images ------------------------------------------------------------------------------------


def _archive_index(archive: Path) -> dict[str, Any]:
    with tarfile.open(archive) as tar:
        member = tar.extractfile("index.json")
        if member is None:
            raise ReleaseError(f"{archive} has no index.json: not an OCI archive")
        index: dict[str, Any] = json.load(member)
    if len(index.get("manifests", [])) != 1:
        raise ReleaseError(f"{archive}: expected one manifest in index.json, found {index.get('manifests')}")
    return index


def archive_digest(archive: Path) -> str:
    """The manifest digest of the one image in an OCI archive (what a registry reports for it)."""
    return str(_archive_index(archive)["manifests"][0]["digest"])


def rename_archive(source: Path, target: Path, reference: str) -> str:
    """Copy the OCI archive ``source`` to ``target`` with its image named ``reference``; only
    index.json changes (blobs and manifest as they are). Returns the manifest digest."""
    index = _archive_index(source)
    index["manifests"][0].setdefault("annotations", {})["org.opencontainers.image.ref.name"] = reference
    data = json.dumps(index, separators=(",", ":")).encode()
    partial = target.with_name(target.name + ".partial")
    with tarfile.open(source) as tar_in, tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar_out:
        for member in tar_in:
            if member.name == "index.json":
                member.size = len(data)
                tar_out.addfile(member, io.BytesIO(data))
            elif member.isfile():
                tar_out.addfile(member, tar_in.extractfile(member))
            else:
                tar_out.addfile(member)
    partial.rename(target)
    return str(index["manifests"][0]["digest"])


def syft_binary() -> Path:
    """syft, built with ``go install`` once into the stack's tool cache (KZO_SYFT: one of yours)."""
    chosen = os.environ.get("KZO_SYFT")
    if chosen:
        if not os.access(chosen, os.X_OK):
            raise ReleaseError(f"KZO_SYFT={chosen} is not an executable file; fix or unset it")
        return Path(chosen)
    from kafka_zk_operator.devstack import artifacts
    from kafka_zk_operator.devstack.errors import StackError

    try:
        return artifacts.syft_binary()
    except StackError as exc:
        raise ReleaseError(str(exc)) from exc


def sbom(syft: Path, archive: Path, name: str, version: str, out: Path) -> tuple[Path, Path]:
    """SPDX and CycloneDX JSON SBOMs of the image in ``archive`` (its Debian and Python packages)."""
    spdx = out / f"{name}-{version}.spdx.json"
    cyclonedx = out / f"{name}-{version}.cyclonedx.json"
    with tempfile.TemporaryDirectory(prefix="kzo-syft-") as tmp:
        _run(
            [
                str(syft),
                "scan",
                f"oci-archive:{archive}",
                "--source-name",
                name,
                "--source-version",
                version,
                "--quiet",
                "--output",
                f"spdx-json={spdx}",
                "--output",
                f"cyclonedx-json={cyclonedx}",
            ],
            f"syft scan of {archive.name}",
            env={"SYFT_CHECK_FOR_APP_UPDATE": "false", "TMPDIR": tmp, "SYFT_CACHE_DIR": tmp},
        )
    return spdx, cyclonedx


def release_images(out: Path, version: str, repository: str) -> list[ReleasedImage]:
    from kafka_zk_operator.devstack import images
    from kafka_zk_operator.devstack.errors import StackError

    syft = syft_binary()
    released = []
    for target, repo in (("runtime", repository), ("spark", f"{repository}-spark")):
        try:
            built = images.project_image(target)
        except StackError as exc:
            raise ReleaseError(f"building the {target} image: {exc}") from exc
        name = repo.rsplit("/", 1)[-1]
        archive = out / f"{name}-{version}.oci.tar"
        reference = f"{repo}:{version}"
        _progress(f"{target} image {built.reference} -> {archive.name} ({reference})")
        digest = rename_archive(built.archive, archive, reference)
        _progress(f"SBOM of {archive.name} (syft)...")
        spdx, cyclonedx = sbom(syft, archive, name, version, out)
        released.append(ReleasedImage(target, reference, digest, archive, spdx, cyclonedx))
    return released


# -- the chart -------------------------------------------------------------------------------------


def _pin(values: str, block: str, key: str, value: str) -> str:
    """Set ``key`` (two spaces in) of the top-level ``block:`` of values.yaml, keeping every comment."""
    lines = values.splitlines(keepends=True)
    inside = False
    for i, line in enumerate(lines):
        if line.rstrip() == f"{block}:":
            inside = True
        elif inside and line[:1] not in (" ", "#", "\n", ""):
            break
        elif inside and line.startswith(f"  {key}:"):
            lines[i] = f"  {key}: {json.dumps(value)}\n"
            return "".join(lines)
    raise ReleaseError(f"values.yaml has no {block}.{key}: the chart and scripts/release.py disagree")


def package_chart(
    out: Path, version: str, repository: str, operator: ReleasedImage, spark: ReleasedImage
) -> Path:
    """``helm package`` of a copy of the chart whose values pin both images by digest."""
    from kafka_zk_operator.devstack import tools

    helm = str(tools.helm_binary())
    with tempfile.TemporaryDirectory(prefix="kzo-chart-") as tmp:
        chart = Path(tmp) / CHART.name
        shutil.copytree(CHART, chart)
        values_path = chart / "values.yaml"
        values = values_path.read_text()
        chart_repository = "kafka-zk-operator" if repository == DEFAULT_REPOSITORY else repository
        values = _pin(values, "image", "repository", chart_repository)
        values = _pin(values, "image", "digest", operator.digest)
        values = _pin(values, "spark", "digest", spark.digest)
        values_path.write_text(values)
        (chart / "README.md").write_text(_load_script("gen_chart_readme").generate(chart))
        _run([helm, "lint", "--strict", str(chart)], "helm lint of the packaged chart")
        _run([helm, "package", str(chart), "--destination", str(out)], "helm package")
    package = out / f"{CHART.name}-{version}.tgz"
    if not package.is_file():
        raise ReleaseError(f"helm package did not make {package.name}")
    rendered = _run([helm, "template", "kzo", str(package), "--set", "spark.enabled=true"], "helm template")
    for image in (operator, spark):
        if f"@{image.digest}" not in rendered:
            raise ReleaseError(f"the packaged chart does not render the {image.target} image by digest")
    return package


def chart_oci_layout(package: Path, layout: Path, version: str) -> str:
    """The packaged chart as an OCI image layout, with Helm's media types (what ``helm push`` sends:
    the chart's metadata as the config, the .tgz as the one layer). Returns the manifest digest."""
    import yaml

    with tarfile.open(package) as tar:
        member = tar.extractfile(f"{CHART.name}/Chart.yaml")
        if member is None:
            raise ReleaseError(f"{package.name} has no Chart.yaml")
        metadata = yaml.safe_load(member)
    blobs = layout / "blobs" / "sha256"
    blobs.mkdir(parents=True)

    def blob(data: bytes, media_type: str) -> dict[str, Any]:
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        return {"mediaType": media_type, "digest": f"sha256:{digest}", "size": len(data)}

    config = blob(json.dumps(metadata, separators=(",", ":")).encode(), HELM_CONFIG_MEDIA_TYPE)
    layer = blob(package.read_bytes(), HELM_CHART_MEDIA_TYPE)
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST_MEDIA_TYPE,
        "config": config,
        "layers": [layer],
        "annotations": {
            "org.opencontainers.image.title": metadata["name"],
            "org.opencontainers.image.version": version,
            "org.opencontainers.image.description": metadata.get("description", ""),
        },
    }
    described = blob(json.dumps(manifest, separators=(",", ":")).encode(), OCI_MANIFEST_MEDIA_TYPE)
    described["annotations"] = {"org.opencontainers.image.ref.name": version}
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX_MEDIA_TYPE, "manifests": [described]}
    (layout / "index.json").write_text(json.dumps(index, separators=(",", ":")))
    (layout / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    return str(described["digest"])


# -- the whole release -----------------------------------------------------------------------------


def write_checksums(out: Path) -> Path:
    """``SHA256SUMS`` of every file under ``out`` (``sha256sum -c SHA256SUMS`` checks them)."""
    sums = out / "SHA256SUMS"
    files = sorted(p for p in out.rglob("*") if p.is_file() and p != sums)
    sums.write_text("".join(f"{sha256_file(p)}  {p.relative_to(out).as_posix()}\n" for p in files))
    return sums


def release(out: Path, *, dry_run: bool, repository: str) -> dict[str, Any]:
    started = time.monotonic()
    version = resolve_version(dry_run)
    if importlib.util.find_spec("build") is None:
        raise ReleaseError(
            "the 'build' package is missing from this Python: run 'make bootstrap' "
            "(requirements/dev.txt pins it) or 'pip install build'"
        )
    if out.exists():
        if not out.is_dir():
            raise ReleaseError(f"{out} exists and is not a folder")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    wheel, sdist = build_python(out, version)
    operator, spark = release_images(out, version, repository)
    package = package_chart(out, version, repository, operator, spark)
    chart_digest = chart_oci_layout(package, out / "chart-oci", version)
    summary: dict[str, Any] = {
        "version": version,
        "dry_run": dry_run,
        "wheel": wheel.name,
        "sdist": sdist.name,
        "images": {
            image.target: {
                "reference": image.reference,
                "digest": image.digest,
                "archive": image.archive.name,
                "sbom_spdx": image.sbom.name,
                "sbom_cyclonedx": image.cyclonedx.name,
            }
            for image in (operator, spark)
        },
        "chart": {"package": package.name, "oci_layout": "chart-oci", "oci_digest": chart_digest},
    }
    (out / "release.json").write_text(json.dumps(summary, indent=2) + "\n")
    write_checksums(out)
    _progress(f"{version} in {out} ({time.monotonic() - started:.0f} s)")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="build from the working tree: no tag needed")
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="output folder (emptied first)")
    parser.add_argument(
        "--image-repository",
        default=DEFAULT_REPOSITORY,
        help="the images' repository, e.g. registry.example.com/kafka-zk-operator (the spark image: "
        f"<repository>-spark); default {DEFAULT_REPOSITORY}, the chart's default",
    )
    args = parser.parse_args(argv)
    if args.out.resolve() in (ROOT, ROOT.parent, Path("/")):
        parser.error(f"--out {args.out} would empty the repository: name a folder of its own")
    sys.path.insert(0, str(ROOT / "operator"))
    try:
        summary = release(args.out.resolve(), dry_run=args.dry_run, repository=args.image_repository)
    except ReleaseError as exc:
        print(f"release: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("release: interrupted", file=sys.stderr)
        return 130
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
