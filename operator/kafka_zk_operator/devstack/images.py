"""Container images for the local node (``devstack.node``), built on this machine with buildah.

No container registry is reachable here, so nothing is pulled:

* the pod sandbox's **pause** image is the static Go program ``assets/pause/main.go`` alone;
* the **Python bases** the Dockerfile's stages start from are Debian bookworm made with
  ``mmdebstrap`` (``python3`` + pip; the builder's also has ``python3-dev``), passed to the build
  as ``PYTHON_IMAGE`` / ``BUILDER_IMAGE`` while the Dockerfile's defaults stay the official
  ``python`` image users build from. They trust this host's CA bundle and allow pip to install
  into Debian's Python (``PIP_BREAK_SYSTEM_PACKAGES``), which the official image does by itself;
* the project's **images** (the Dockerfile's ``runtime`` and ``spark`` targets) are built from the
  working tree with ``buildah bud``.

Each result is an OCI archive cached under ``<cache>/images/`` and named by a digest of what it is
built from, so a changed source tree gives a new tag and an unchanged one is not rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kafka_zk_operator import __version__
from kafka_zk_operator.devstack import artifacts
from kafka_zk_operator.devstack.errors import StackError

PAUSE_IMAGE = "localhost/kzo-pause"
PYTHON_BASE = "localhost/kzo-python"
BUILDER_BASE = "localhost/kzo-python-dev"
OPERATOR_IMAGE = "localhost/kafka-zk-operator"
SPARK_IMAGE = "localhost/kafka-zk-operator-spark"
DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
_BASE_PACKAGES = ("python3", "python3-pip", "python-is-python3", "ca-certificates", "passwd")
#: What the Dockerfile's build copies, besides the Dockerfile itself.
_BUILD_INPUTS = ("pyproject.toml", "README.md", "LICENSE", "requirements", "operator")
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
#: What dpkg leaves out of the bases: documentation, manuals and translations, but not each
#: package's copyright file (/usr/share/doc/<package>/copyright: its license, which an image
#: that is distributed, as ``make release``'s are, must carry).
_DPKG_PATHS = (
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/locale/*",
)


@dataclass(frozen=True)
class BuiltImage:
    """An image in an OCI archive: ``reference`` is ``repository:tag`` as containerd will know it."""

    repository: str
    tag: str
    archive: Path
    #: Seconds the build took (0.0: found in the cache).
    build_seconds: float

    @property
    def reference(self) -> str:
        return f"{self.repository}:{self.tag}"

    @property
    def size_bytes(self) -> int:
        return self.archive.stat().st_size


def images_dir() -> Path:
    return artifacts.cache_dir() / "images"


def _progress(message: str) -> None:
    print(f"kzo: {message}", file=sys.stderr, flush=True)


def _run(argv: list[str], what: str, log: Path, env: dict[str, str] | None = None) -> str:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        proc = subprocess.run(
            argv, stdout=subprocess.PIPE, stderr=out, text=True, env={**os.environ, **(env or {})}
        )
    if proc.returncode != 0:
        tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-6:])
        raise StackError(f"{what} failed (exit code {proc.returncode}); last lines of {log}: {tail}")
    return proc.stdout


def _require(tool: str, package: str) -> None:
    if shutil.which(tool) is None:
        raise StackError(
            f"'{tool}' is not installed: run 'kzo dev prepare --node' (Debian package '{package}')"
        )


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:12]


def _tree_digest(root: Path, names: tuple[str, ...]) -> list[bytes]:
    parts: list[bytes] = []
    for name in names:
        path = root / name
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in files:
            if "__pycache__" in file.parts or file.suffix == ".pyc" or ".egg-info" in str(file):
                continue
            parts += [str(file.relative_to(root)).encode(), file.read_bytes()]
    return parts


def _push_archive(reference: str, archive: Path, log: Path) -> None:
    tmp = archive.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    _run(
        ["buildah", "push", "--quiet", reference, f"oci-archive:{tmp}:{reference}"],
        f"saving {reference}",
        log,
    )
    tmp.rename(archive)


def pause_image() -> BuiltImage:
    """The pod sandbox image: ``assets/pause/main.go`` built statically, alone in the image."""
    source = artifacts.ASSETS / "pause" / "main.go"
    tag = _digest(source.read_bytes())
    archive = images_dir() / f"kzo-pause-{tag}.tar"
    if archive.exists():
        return BuiltImage(PAUSE_IMAGE, tag, archive, 0.0)
    _require("buildah", "buildah")
    started = time.monotonic()
    log = artifacts.cache_dir() / "logs" / "build-pause.log"
    work = artifacts.cache_dir() / "build" / "pause"
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, work / "main.go")
    (work / "go.mod").write_text("module kzo.local/pause\n\ngo 1.22\n")
    env = {"CGO_ENABLED": "0", "GOFLAGS": "-mod=mod"}
    _run(
        ["go", "build", "-C", str(work), "-trimpath", "-ldflags", "-s -w", "-o", "pause", "."],
        "building pause",
        log,
        env,
    )
    reference = f"{PAUSE_IMAGE}:{tag}"
    container = _run(["buildah", "from", "scratch"], "buildah from scratch", log).strip()
    try:
        _run(["buildah", "copy", container, str(work / "pause"), "/pause"], "buildah copy", log)
        _run(["buildah", "config", "--entrypoint", '["/pause"]', container], "buildah config", log)
        _run(["buildah", "commit", "--quiet", container, reference], "buildah commit", log)
    finally:
        subprocess.run(["buildah", "rm", container], capture_output=True)
    images_dir().mkdir(parents=True, exist_ok=True)
    _push_archive(reference, archive, log)
    return BuiltImage(PAUSE_IMAGE, tag, archive, time.monotonic() - started)


def _has_image(reference: str) -> bool:
    return (
        subprocess.run(["buildah", "inspect", "--type", "image", reference], capture_output=True).returncode
        == 0
    )


def python_bases() -> tuple[str, str]:
    """(runtime base, builder base) references in buildah's storage, made with mmdebstrap if missing."""
    _require("buildah", "buildah")
    extra_ca = HOST_CA_BUNDLE.read_bytes() if HOST_CA_BUNDLE.exists() else b""
    tag = _digest(
        " ".join(_BASE_PACKAGES).encode(), DEBIAN_SUITE.encode(), extra_ca, " ".join(_DPKG_PATHS).encode()
    )
    refs = []
    for repository, extra in ((PYTHON_BASE, ()), (BUILDER_BASE, ("python3-dev",))):
        reference = f"{repository}:{tag}"
        refs.append(reference)
        if not _has_image(reference):
            _make_python_base(reference, (*_BASE_PACKAGES, *extra))
    return refs[0], refs[1]


def _make_python_base(reference: str, packages: tuple[str, ...]) -> None:
    _require("mmdebstrap", "mmdebstrap")
    log = artifacts.cache_dir() / "logs" / "build-python-base.log"
    _progress(
        f"making {reference} from Debian {DEBIAN_SUITE} packages with mmdebstrap (first run only, ~1 min)..."
    )
    rootfs = artifacts.cache_dir() / "build" / "rootfs.tar"
    rootfs.parent.mkdir(parents=True, exist_ok=True)
    _run(
        [
            "mmdebstrap",
            "--variant=minbase",
            f"--include={','.join(packages)}",
            '--aptopt=APT::Install-Recommends "false"',
            *(f"--dpkgopt={option}" for option in _DPKG_PATHS),
            DEBIAN_SUITE,
            str(rootfs),
            DEBIAN_MIRROR,
        ],
        "mmdebstrap",
        log,
    )
    container = _run(["buildah", "from", "scratch"], "buildah from scratch", log).strip()
    try:
        _run(["buildah", "add", container, str(rootfs), "/"], "buildah add", log)
        if HOST_CA_BUNDLE.exists():
            # This host may reach the registries through a proxy with its own CA: trust what it trusts.
            _run(
                ["buildah", "copy", container, str(HOST_CA_BUNDLE), str(HOST_CA_BUNDLE)], "buildah copy", log
            )
        _run(
            [
                "buildah",
                "config",
                "--env",
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "--env",
                "PIP_BREAK_SYSTEM_PACKAGES=1",
                "--env",
                f"PIP_CERT={HOST_CA_BUNDLE}",
                "--env",
                f"REQUESTS_CA_BUNDLE={HOST_CA_BUNDLE}",
                "--cmd",
                '["python3"]',
                container,
            ],
            "buildah config",
            log,
        )
        _run(["buildah", "commit", "--quiet", container, reference], "buildah commit", log)
    finally:
        subprocess.run(["buildah", "rm", container], capture_output=True)
        rootfs.unlink(missing_ok=True)


def project_root() -> Path:
    root = Path(__file__).resolve().parents[3]
    if not (root / "Dockerfile").exists() or not (root / "pyproject.toml").exists():
        raise StackError(
            f"building the project's images needs its source tree (Dockerfile, pyproject.toml) at {root}: "
            "run from a clone of the repository (make bootstrap installs it in editable mode)"
        )
    return root


def project_image(target: str = "runtime") -> BuiltImage:
    """The Dockerfile's ``target`` built from the working tree (``runtime``: the operator; ``spark``)."""
    if target not in ("runtime", "spark"):
        raise StackError(f"unknown image target {target!r}: choose 'runtime' or 'spark'")
    root = project_root()
    repository = OPERATOR_IMAGE if target == "runtime" else SPARK_IMAGE
    base, builder = python_bases()
    tag = _digest(
        base.encode(),
        builder.encode(),
        target.encode(),
        (root / "Dockerfile").read_bytes(),
        *_tree_digest(root, _BUILD_INPUTS),
    )
    archive = images_dir() / f"{repository.rsplit('/', 1)[-1]}-{tag}.tar"
    if archive.exists():
        return BuiltImage(repository, tag, archive, 0.0)
    log = artifacts.cache_dir() / "logs" / f"build-image-{target}.log"
    _progress(f"building the {target} image from {root / 'Dockerfile'} with buildah (log: {log})...")
    started = time.monotonic()
    reference = f"{repository}:{tag}"
    conf = artifacts.cache_dir() / "build" / "containers.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    # runc, not crun (crun cannot set RLIMIT_NPROC here), and no ulimits above this host's hard limits.
    conf.write_text('[containers]\ndefault_ulimits = []\n[engine]\nruntime = "runc"\n')
    _run(
        [
            "buildah",
            "bud",
            "--layers",
            "--network=host",
            f"--runtime={shutil.which('runc') or 'runc'}",
            f"--build-arg=PYTHON_IMAGE={base}",
            f"--build-arg=BUILDER_IMAGE={builder}",
            f"--build-arg=VERSION={__version__}",
            f"--target={target}",
            f"--tag={reference}",
            "--file",
            str(root / "Dockerfile"),
            str(root),
        ],
        f"building the {target} image",
        log,
        env={"CONTAINERS_CONF": str(conf)},
    )
    images_dir().mkdir(parents=True, exist_ok=True)
    _push_archive(reference, archive, log)
    _prune(repository, keep=tag)
    return BuiltImage(repository, tag, archive, time.monotonic() - started)


def _prune(repository: str, keep: str) -> None:
    """Forget the older builds of ``repository`` (each source change makes a new one: 0.5-1.6 GB in
    buildah's storage plus its archive), keeping ``keep`` and the one before it."""
    name = repository.rsplit("/", 1)[-1]
    archives = sorted(images_dir().glob(f"{name}-*.tar"), key=lambda path: path.stat().st_mtime, reverse=True)
    archives = [a for a in archives if a.stem.removeprefix(f"{name}-").isalnum()]  # not another repository's
    kept = {keep} | {a.stem.removeprefix(f"{name}-") for a in archives[:2]}
    for old in archives:
        if old.stem.removeprefix(f"{name}-") not in kept:
            old.unlink(missing_ok=True)
            subprocess.run(
                ["buildah", "rmi", f"{repository}:{old.stem.removeprefix(f'{name}-')}"], capture_output=True
            )
    subprocess.run(["buildah", "rmi", "--prune"], capture_output=True)  # the untagged layers of those builds
