"""Obtain the stack's binaries: Kafka jars from Maven Central, etcd and kube-apiserver built from
Go modules, and Prometheus' promtool (which checks the chart's alerting rules) built from its Go
module. Each is fetched or built once into the cache folder and reused afterwards.

The recipes are the shell scripts in ``assets/`` (they only call ``mvn`` and ``go``); this module
runs them, streams their progress to the user and turns failures into ``StackError``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from kafka_zk_operator.devstack.errors import StackError

ASSETS = Path(__file__).resolve().parent / "assets"
DEFAULT_KAFKA_VERSION = "3.9.2"
DEFAULT_K8S_VERSION = "1.33.13"
DEFAULT_ETCD_VERSION = "3.5.21"
#: The Go module version of github.com/prometheus/prometheus whose promtool checks the chart's rules.
PROMTOOL_MODULE_VERSION = "v0.316.0"
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
#: What ``kzo dev prepare`` fetches by default: the lines ``make test`` runs (tests/conftest.py;
#: tests/integration/test_kafka_line_matrix.py restarts every broker of each with edge configs).
TESTED_KAFKA_VERSIONS = (DEFAULT_KAFKA_VERSION, "2.8.2", "2.4.1", "2.3.1", "2.0.1", "1.1.1", "1.0.2", "0.10.0.1")


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


def k8s_bins(k8s_version: str = DEFAULT_K8S_VERSION, etcd_version: str = DEFAULT_ETCD_VERSION) -> Path:
    """The folder holding ``etcd`` and ``kube-apiserver``, building them from Go modules if needed."""
    target = cache_dir() / "k8s-bins" / k8s_version
    if (target / "kube-apiserver").exists() and (target / "etcd").exists():
        return target
    _require_tool("go", "install Go >= 1.24 (the Go module proxy provides newer toolchains)")
    print(
        f"kzo: building etcd {etcd_version} and kube-apiserver {k8s_version} from Go modules "
        f"(first run only: ~15-25 min on 2 cores; log: {cache_dir() / 'logs' / 'build-k8s-bins.log'})...",
        file=sys.stderr,
    )
    return _run_recipe(
        "build-k8s-bins.sh", [k8s_version, etcd_version], "kube-apiserver and etcd", "build-k8s-bins.log"
    )


def promtool_binary(module_version: str = PROMTOOL_MODULE_VERSION) -> Path:
    """Prometheus' ``promtool``, built with ``go install`` once (about 2 min on 2 cores).

    Built with the ``remove_all_sd`` tag: rule checks need no service discovery, and one discovery
    plugin's dependency (hashicorp/nomad/api) is not served by the Go module proxy.
    """
    folder = cache_dir() / "tools" / f"promtool-{module_version}"
    binary = folder / "promtool"
    if binary.exists():
        return binary
    _require_tool("go", "install Go >= 1.24 (the Go module proxy provides newer toolchains)")
    log_path = cache_dir() / "logs" / "build-promtool.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    print(
        f"kzo: building promtool {module_version} from Go modules (first run only, ~2 min)...",
        file=sys.stderr,
    )
    staging = folder.with_name(folder.name + ".partial")
    env = {**os.environ, "GOBIN": str(staging), "CGO_ENABLED": "0", "GOTOOLCHAIN": "auto"}
    with log_path.open("w") as log:
        proc = subprocess.run(
            [
                "go",
                "install",
                "-tags",
                "remove_all_sd",
                f"github.com/prometheus/prometheus/cmd/promtool@{module_version}",
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if proc.returncode != 0 or not (staging / "promtool").exists():
        tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
        raise StackError(
            f"could not build promtool {module_version} (exit code {proc.returncode}); the Go module "
            f"proxy must be reachable. Last lines of {log_path}: " + " | ".join(tail)
        )
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    return binary
