"""Flux's source-controller and kustomize-controller for the GitOps end-to-end test, built once from
Go modules into the cache folder, plus a local Git repository served over smart HTTP.

``go install pkg@version`` cannot build the controllers (their go.mod files carry replace
directives), so ``assets/build-flux.sh`` builds each in a wrapper module (~7 min cold on 2 cores;
the Go module cache stays in the cache folder, the build cache is deleted afterwards). Flux's CRDs
are read at run time from the module sources in that module cache (``config/crd/bases``): nothing of
Flux is in this repository. The controllers run as processes against the stack's kube-apiserver;
the Git server is ``git http-backend`` behind a small WSGI server in a thread (source-controller
speaks smart HTTP or SSH only). Nothing here reaches the internet once built.

Callers: ``kzo dev prepare`` (builds) and ``tests/e2e/test_flux_gitops.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from kafka_zk_operator.devstack import artifacts, ports
from kafka_zk_operator.devstack.errors import StackError

#: Module versions built (Flux 2.9: the v1.6.x lines are not served by the module proxy).
SOURCE_CONTROLLER_VERSION = "v1.9.1"
KUSTOMIZE_CONTROLLER_VERSION = "v1.9.4"
CONTROLLERS = ("source-controller", "kustomize-controller")


@dataclass(frozen=True)
class FluxBuild:
    folder: Path

    def binary(self, controller: str) -> Path:
        return self.folder / controller

    def crd_files(self) -> list[Path]:
        """Flux's CRDs, from the controllers' module sources in the Go module cache."""
        files: list[Path] = []
        for controller in CONTROLLERS:
            source = Path((self.folder / f"{controller}.dir").read_text().strip())
            files += sorted((source / "config" / "crd" / "bases").glob("*.yaml"))
        if not files:
            raise StackError(f"no Flux CRDs under the module sources named in {self.folder}; rebuild it")
        return files


def flux_build(
    source_version: str = SOURCE_CONTROLLER_VERSION, kustomize_version: str = KUSTOMIZE_CONTROLLER_VERSION
) -> FluxBuild:
    """Both controllers, built on first use. :raises StackError: no Go, or the build failed."""
    folder = artifacts.cache_dir() / "tools" / f"flux-sc-{source_version}-kc-{kustomize_version}"
    built = FluxBuild(folder)
    ready = all(os.access(built.binary(c), os.X_OK) for c in CONTROLLERS)
    if ready and all((folder / f"{c}.dir").is_file() for c in CONTROLLERS):
        return built
    artifacts._require_tool("go", "install Go >= 1.26 (Flux 2.9's controllers need it)")
    print(
        "kzo: building Flux's source- and kustomize-controller (first run only, ~7 min)...", file=sys.stderr
    )
    folder = artifacts._run_recipe(
        "build-flux.sh", [source_version, kustomize_version], "Flux controllers", "build-flux.log"
    )
    built = FluxBuild(folder)
    missing = [c for c in CONTROLLERS if not built.binary(c).exists()]
    if missing:
        raise StackError(f"build-flux.sh finished but {', '.join(missing)} is missing; see the build log")
    return built


# --- the Git server --------------------------------------------------------------------------------


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class GitServer:
    """Bare repositories under ``root`` served over smart HTTP at ``http://127.0.0.1:PORT/<name>``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def _app(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": environ["REQUEST_METHOD"],
            "PATH_INFO": environ.get("PATH_INFO", ""),
            "QUERY_STRING": environ.get("QUERY_STRING", ""),
            "CONTENT_TYPE": environ.get("CONTENT_TYPE", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "safe.directory",
            "GIT_CONFIG_VALUE_0": "*",
        }
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = out.partition(b"\n\n")
        status, headers = "200 OK", []
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = value.strip()
            elif key:
                headers.append((key, value.strip()))
        start_response(status, headers)
        return [payload]

    def start(self) -> str:
        self._server = make_server(ports.LOOPBACK, 0, self._app, handler_class=_Quiet)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True, name="git-http")
        self._thread.start()
        return f"http://{ports.LOOPBACK}:{self._server.server_port}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


# --- the controllers -------------------------------------------------------------------------------


@dataclass
class FluxControllers:
    """Both controllers as processes; ``storage_port`` serves source-controller's artifacts."""

    processes: list[subprocess.Popen[bytes]]
    storage_port: int

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.processes)

    def stop(self) -> None:
        for proc in self.processes:
            proc.terminate()
        for proc in self.processes:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def start_controllers(build: FluxBuild, kubeconfig: Path, workdir: Path, namespace: str) -> FluxControllers:
    """Start both controllers watching every namespace; logs in ``workdir``."""
    (workdir / "storage").mkdir(parents=True, exist_ok=True)  # source-controller refuses a missing one
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "RUNTIME_NAMESPACE": namespace}
    storage = ports.free_port()
    common = ["--watch-all-namespaces", "--log-level=info"]  # leader election is off by default
    commands = {
        "source-controller": [
            f"--storage-path={workdir / 'storage'}",
            f"--storage-addr={ports.LOOPBACK}:{storage}",
            f"--storage-adv-addr={ports.LOOPBACK}:{storage}",
        ],
        "kustomize-controller": ["--no-cross-namespace-refs=true"],
    }
    processes = []
    for controller, extra in commands.items():
        args = [
            str(build.binary(controller)), *common, *extra,
            f"--metrics-addr={ports.LOOPBACK}:{ports.free_port()}",
            f"--health-addr={ports.LOOPBACK}:{ports.free_port()}",
        ]  # fmt: skip
        log = (workdir / f"{controller}.log").open("wb")
        processes.append(subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT))
    return FluxControllers(processes, storage)


def running(build: FluxBuild, kubeconfig: Path, workdir: Path, namespace: str) -> Iterator[FluxControllers]:
    """Generator for a fixture: the controllers while it is suspended, stopped afterwards."""
    controllers = start_controllers(build, kubeconfig, workdir, namespace)
    try:
        yield controllers
    finally:
        controllers.stop()
