"""Obtain the stack's binaries: Kafka jars from Maven Central, etcd and kube-apiserver (and the real
node's kubelet and control loops, and CoreDNS) built from Go modules, Prometheus' promtool (which checks the chart's alerting rules) and Toxiproxy's server
(the TCP fault injector of the fault tests, ``devstack.toxiproxy``) and syft (the SBOMs of
``make release``) built from their Go modules.
Each is fetched or built once into the cache folder and reused afterwards.

The recipes are the shell scripts in ``assets/`` (they only call ``mvn`` and ``go``); this module
runs them, streams their progress to the user and turns failures into ``StackError``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from kafka_zk_operator.devstack.errors import StackError

ASSETS = Path(__file__).resolve().parent / "assets"
DEFAULT_KAFKA_VERSION = "3.9.2"
DEFAULT_K8S_VERSION = "1.33.13"
DEFAULT_ETCD_VERSION = "3.5.21"
#: The Go module version of github.com/prometheus/prometheus whose promtool checks the chart's rules.
PROMTOOL_MODULE_VERSION = "v0.316.0"
#: The Go module version of github.com/coredns/coredns: the real node's cluster DNS (``devstack.node``).
COREDNS_MODULE_VERSION = "v1.12.1"
#: The Go module version of github.com/Shopify/toxiproxy/v2 whose server the fault tests run.
TOXIPROXY_MODULE_VERSION = "v2.12.0"
#: The Go module version of github.com/anchore/syft: the images' SBOMs (scripts/release.py).
SYFT_MODULE_VERSION = "v1.57.2"
#: Kafka lines the stack can run on Java 17, newest first (docs/compatibility.md). 2.3.x and older
#: write v1 topic znodes, 2.4.x v2, 2.8.x v3. Lines before 2.4 run with the ZooKeeper 3.5.9 client, lines
#: before 1.0 also with jaxb-api, lines before 0.10.2 as kafka_2.11 (see ``assets/fetch-kafka.sh``).
SUPPORTED_KAFKA_VERSIONS = (
    "3.9.2",
    "3.9.1",
    "3.9.0",
    "3.8.1",
    "3.7.2",
    "3.6.2",
    "2.8.2",
    "2.4.1",
    "2.3.1",
    "2.2.2",
    "2.0.1",
    "1.1.1",
    "1.0.2",
    "0.11.0.3",
    "0.10.2.2",
    "0.10.1.1",
    "0.10.0.1",
)
#: Kafka lines that only run in KRaft mode (``devstack.kraft``; 4.0 removed ZooKeeper mode). 4.x logs
#: through log4j2 (``assets/fetch-kafka.sh``, ``java.write_logging``).
KRAFT_ONLY_KAFKA_VERSIONS = ("4.1.2",)
#: What ``kzo dev prepare`` fetches by default: the lines ``make test`` runs (tests/conftest.py;
#: tests/integration/test_kafka_line_matrix.py restarts every broker of each with edge configs).
TESTED_KAFKA_VERSIONS = (
    DEFAULT_KAFKA_VERSION,
    "2.8.2",
    "2.4.1",
    "2.3.1",
    "2.0.1",
    "1.1.1",
    "1.0.2",
    "0.10.0.1",
)


def require_assets() -> None:
    """:raises StackError: the recipes in ``assets/`` are not here. They are not package data (the
    runtime wheel and the operator image carry none of them): the local stack runs from a source
    checkout, which ``make bootstrap`` installs in editable mode."""
    if not (ASSETS / "fetch-kafka.sh").is_file():
        raise StackError(
            f"the local stack's build recipes are not installed ({ASSETS} is missing): 'kzo dev' runs "
            "from a source checkout of kafka-zk-operator; clone it and run 'make bootstrap' there"
        )


def cache_dir() -> Path:
    return Path(os.environ.get("KZO_CACHE_DIR", Path.home() / ".cache" / "kafka-zk-operator"))


def _require_tool(name: str, hint: str) -> None:
    if shutil.which(name) is None:
        raise StackError(f"'{name}' is not installed or not on PATH; {hint}")


def _run_recipe(script: str, args: list[str], what: str, log_name: str) -> Path:
    log_path = cache_dir() / "logs" / log_name
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            ["bash", str(ASSETS / script), *args],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        out, _ = proc.communicate()
    if proc.returncode != 0:
        tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
        raise StackError(
            f"could not obtain {what} (exit code {proc.returncode}); the package registries must be "
            f"reachable. Last lines of {log_path}: " + " | ".join(tail)
        )
    lines = out.strip().splitlines()
    if not lines:
        raise StackError(f"the recipe for {what} printed no result folder; see {log_path}")
    return Path(lines[-1])


def kafka_libs(version: str = DEFAULT_KAFKA_VERSION) -> Path:
    """The folder of Kafka ``version``'s jars (with ZooKeeper, log4j and tools), fetching it if needed."""
    target = cache_dir() / "kafka" / version / "libs"
    if (target / ".complete").exists():
        return target
    _require_tool("mvn", "install Maven (Debian package 'maven')")
    _require_tool("java", "install a Java 17 runtime (Debian package 'openjdk-17-jre-headless')")
    print(f"kzo: fetching Kafka {version} from Maven Central (first run only, ~20 s)...", file=sys.stderr)
    return _run_recipe("fetch-kafka.sh", [version], f"Kafka {version}", f"fetch-kafka-{version}.log")


def k8s_bins(
    k8s_version: str = DEFAULT_K8S_VERSION, etcd_version: str = DEFAULT_ETCD_VERSION, *, node: bool = False
) -> Path:
    """The folder holding ``etcd`` and ``kube-apiserver`` (with ``node``, also ``kube-node``: kubelet,
    kube-controller-manager, kube-scheduler and kube-proxy), building them from Go modules if needed."""
    target = cache_dir() / "k8s-bins" / k8s_version
    wanted = ("kube-apiserver", "etcd", *(("kube-node",) if node else ()))
    if all((target / name).exists() for name in wanted):
        return target
    _require_tool("go", "install Go >= 1.24 (the Go module proxy provides newer toolchains)")
    if not ((target / "kube-apiserver").exists() and (target / "etcd").exists()):
        print(
            f"kzo: building etcd {etcd_version} and kube-apiserver {k8s_version} from Go modules "
            f"(first run only: ~15-25 min on 2 cores; log: {cache_dir() / 'logs' / 'build-k8s-bins.log'})...",
            file=sys.stderr,
        )
    if node and not (target / "kube-node").exists():
        print(
            f"kzo: building the node's kubelet and control loops {k8s_version} (first run only: ~10 min)...",
            file=sys.stderr,
        )
    return _run_recipe(
        "build-k8s-bins.sh",
        [k8s_version, etcd_version, *(["node"] if node else [])],
        "kube-apiserver and etcd" + (" and kube-node" if node else ""),
        "build-k8s-bins.log",
    )


def promtool_binary(module_version: str = PROMTOOL_MODULE_VERSION) -> Path:
    """Prometheus' ``promtool``, built with ``go install`` once (about 2 min on 2 cores).

    Built with the ``remove_all_sd`` tag: rule checks need no service discovery, and one discovery
    plugin's dependency (hashicorp/nomad/api) is not served by the Go module proxy.
    """
    return _go_install(
        f"github.com/prometheus/prometheus/cmd/promtool@{module_version}",
        ["-tags", "remove_all_sd"],
        folder=cache_dir() / "tools" / f"promtool-{module_version}",
        binary_name="promtool",
        log_name="build-promtool.log",
        what=f"promtool {module_version}",
        duration="~2 min",
    )


def toxiproxy_binary(module_version: str = TOXIPROXY_MODULE_VERSION) -> Path:
    """Toxiproxy's server (``toxiproxy-server``), built with ``go install`` once (about 25 s on 2 cores).

    Linked as upstream's releases are (``-s -w``, the version stamped in, so ``GET /version``
    answers it instead of ``git``).
    """
    return _go_install(
        f"github.com/Shopify/toxiproxy/v2/cmd/server@{module_version}",
        ["-ldflags", f"-s -w -X github.com/Shopify/toxiproxy/v2.Version={module_version.lstrip('v')}"],
        folder=cache_dir() / "tools" / f"toxiproxy-{module_version}",
        binary_name="toxiproxy-server",
        built_name="server",
        log_name="build-toxiproxy.log",
        what=f"toxiproxy-server {module_version}",
        duration="~30 s",
    )


def coredns_binary(module_version: str = COREDNS_MODULE_VERSION) -> Path:
    """CoreDNS, the real node's cluster DNS, built with ``go install`` once (about 80 s on 2 cores)."""
    return _go_install(
        f"github.com/coredns/coredns@{module_version}",
        ["-trimpath", "-ldflags", "-s -w"],
        folder=cache_dir() / "tools" / f"coredns-{module_version}",
        binary_name="coredns",
        log_name="build-coredns.log",
        what=f"CoreDNS {module_version}",
        duration="~80 s",
    )


def syft_binary(module_version: str = SYFT_MODULE_VERSION) -> Path:
    """Anchore's syft, the SBOM generator of ``make release``, built with ``go install`` once
    (about 4 min on 2 cores), its version stamped in as upstream's releases are."""
    return _go_install(
        f"github.com/anchore/syft/cmd/syft@{module_version}",
        ["-trimpath", "-ldflags", f"-s -w -X main.version={module_version.lstrip('v')}"],
        folder=cache_dir() / "tools" / f"syft-{module_version}",
        binary_name="syft",
        log_name="build-syft.log",
        what=f"syft {module_version}",
        duration="~4 min",
    )


def _go_install(
    package: str,
    flags: Sequence[str],
    *,
    folder: Path,
    binary_name: str,
    log_name: str,
    what: str,
    duration: str,
    built_name: str | None = None,
) -> Path:
    """``go install package@version`` into ``folder`` once: built in a staging folder (renamed
    into place when complete) under a lock, so concurrent callers build it only once."""
    binary = folder / binary_name
    if binary.exists():
        return binary
    _require_tool("go", "install Go >= 1.24 (the Go module proxy provides newer toolchains)")
    with _lock(folder.with_name(f".{folder.name}.lock")):
        if binary.exists():  # built by another process while this one waited
            return binary
        log_path = cache_dir() / "logs" / log_name
        log_path.parent.mkdir(parents=True, exist_ok=True)
        print(f"kzo: building {what} from Go modules (first run only, {duration})...", file=sys.stderr)
        staging = folder.with_name(folder.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        env = {**os.environ, "GOBIN": str(staging), "CGO_ENABLED": "0", "GOTOOLCHAIN": "auto"}
        with log_path.open("w") as log:
            proc = subprocess.run(
                ["go", "install", *flags, package],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                check=False,
            )
        built = staging / (built_name or binary_name)
        if proc.returncode != 0 or not built.exists():
            tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
            raise StackError(
                f"could not build {what} (exit code {proc.returncode}); the Go module "
                f"proxy must be reachable. Last lines of {log_path}: " + " | ".join(tail)
            )
        built.rename(staging / binary_name)
        shutil.rmtree(folder, ignore_errors=True)
        staging.rename(folder)
    return binary


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (as ``assets/build-k8s-bins.sh`` takes on its folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
