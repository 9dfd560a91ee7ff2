"""Start, watch and stop the stack's child processes, each logging to its own file.

Processes run in their own session (so ``kzo dev up`` can return while they keep running) and
are recorded by pid in the stack's state file, which ``kzo dev down`` reads to stop them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kafka_zk_operator.devstack.errors import StackError


@dataclass
class ManagedProcess:
    """One child process of the stack."""

    name: str
    argv: Sequence[str]
    log_path: Path
    env: Mapping[str, str] | None = None
    cwd: Path | None = None
    pid: int | None = None
    _popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        if self.env:
            env.update(self.env)
        with self.log_path.open("ab") as log:
            try:
                self._popen = subprocess.Popen(
                    list(self.argv),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    cwd=self.cwd,
                    start_new_session=True,
                )
            except OSError as exc:
                raise StackError(f"could not start {self.name} ({self.argv[0]}): {exc}") from exc
        self.pid = self._popen.pid

    def is_running(self) -> bool:
        if self._popen is not None:
            return self._popen.poll() is None
        return self.pid is not None and pid_alive(self.pid)

    def stop(self, timeout: float = 20.0, sig: int = signal.SIGTERM) -> None:
        """Ask the process (and its group) to stop; kill it after ``timeout`` seconds."""
        if self.pid is None:
            return
        _signal_group(self.pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.is_running():
                break
            time.sleep(0.1)
        else:
            _signal_group(self.pid, signal.SIGKILL)
            self.wait_exit(5.0)
        if self._popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._popen.wait(timeout=5)

    def kill(self) -> None:
        """Hard kill (SIGKILL), as a crash would."""
        self.stop(timeout=0.0, sig=signal.SIGKILL)

    def wait_exit(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.is_running():
                return True
            time.sleep(0.1)
        return not self.is_running()

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still "exists"; treat it as gone.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return True


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def wait_until(
    condition: Callable[[], bool],
    *,
    timeout: float,
    what: str,
    process: ManagedProcess | None = None,
    interval: float = 0.25,
) -> None:
    """Poll ``condition`` until true; fail early (with its log tail) if ``process`` dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if process is not None and not process.is_running():
            raise StackError(
                f"{process.name} exited while waiting for {what}; last log lines "
                f"({process.log_path}):\n{process.log_tail()}"
            )
        time.sleep(interval)
    hint = f"; see {process.log_path}" if process is not None else ""
    raise StackError(f"timed out after {timeout:.0f} s waiting for {what}{hint}")
