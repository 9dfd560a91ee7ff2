"""The operator (``kzo operator``) as a child process of the local stack: for ``kzo dev up
--operator``, the e2e tests and the benchmarks. It stands in for the pod the Helm chart's
Deployment would run (this stack has no kubelet)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.devstack.ports import free_port


class OperatorProcess:
    """``kzo operator`` as a child process; restartable and killable like a pod."""

    def __init__(
        self,
        *,
        kubeconfig: Path,
        zk_connect: str,
        log_path: Path,
        cluster_name: str = "local",
        extra_env: dict[str, str] | None = None,
        metrics_port: int | None = None,
        health_port: int | None = None,
        detach: bool = False,
    ) -> None:
        self.log_path = log_path
        self.metrics_port = metrics_port or free_port()
        self.health_port = health_port or free_port()
        self.detach = detach
        self.env = dict(os.environ)
        self.env.update(
            KUBECONFIG=str(kubeconfig),
            KZO_ZOOKEEPER=zk_connect,
            KZO_CLUSTER_NAME=cluster_name,
            KZO_RESYNC_SECONDS="5",
            KZO_METRICS_PORT=str(self.metrics_port),
            KZO_HEALTH_PORT=str(self.health_port),
        )
        self.env.update(extra_env or {})
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self, timeout: float = 60.0) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kafka_zk_operator", "operator"],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=self.detach,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.healthy():
                return
            time.sleep(0.25)
        raise StackError(f"the operator did not become healthy in {timeout:.0f} s; log:\n{self.log_tail()}")

    def healthy(self) -> bool:
        if self.proc is None or self.proc.poll() is not None:
            raise StackError(f"the operator exited; log ({self.log_path}):\n{self.log_tail()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health_port}/healthz", timeout=2) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    def metrics(self, names: Sequence[str] = ()) -> str:
        """The metrics page; only the samples named in ``names`` when given (prometheus_client's
        ``name[]`` filter). The whole page holds every topic's health gauges: at 10,000 topics it
        is about 1.2 MB and costs the operator about 0.1 s of CPU to render, so a caller polling
        it twice a second took a fifth of the operator's CPU away from what it measured."""
        query = urllib.parse.urlencode([("name[]", name) for name in names])
        url = f"http://127.0.0.1:{self.metrics_port}/metrics" + (f"?{query}" if query else "")
        # A saturated operator (10,000 topics in a benchmark) answered later than 5 s.
        with urllib.request.urlopen(url, timeout=60) as r:
            return str(r.read().decode())

    def metric_sum(self, prefix: str) -> float:
        """Sum of all samples whose line starts with ``prefix``: a whole sample name (e.g. a
        counter's ``..._total``), with the start of its labels if wanted. Only that metric is
        scraped."""
        total = 0.0
        for line in self.metrics([prefix.split("{", 1)[0].strip()]).splitlines():
            if line.startswith(prefix) and not line.startswith("#"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill(self) -> None:
        """Hard kill (SIGKILL), as when a node dies."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()

    def pause(self) -> None:
        """SIGSTOP: the process is frozen (as in a long GC pause or a frozen VM) until :meth:`resume`."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def leads(self) -> bool:
        """This replica is the elected leader (its ``kzo_leader`` metric is 1); False if it cannot answer."""
        if not self.running():
            return False
        try:
            return self.metric_sum("kzo_leader ") == 1
        except OSError:
            return False

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""
