"""Install Debian packages the local stack needs (``apt-get``, as root), with errors that say what to
run when this machine cannot: the Kerberos tests' KDC (``devstack.kerberos``) and the real node's
containerd, runc, CNI plugins, buildah and mmdebstrap (``devstack.node``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence

from kafka_zk_operator.devstack import artifacts
from kafka_zk_operator.devstack.errors import StackError


def apt_install(
    missing: Sequence[str],
    *,
    still_missing: Callable[[], list[str]],
    needed_by: str,
    skip_hint: str,
    log_name: str,
) -> None:
    """Install ``missing`` with ``apt-get`` (updating the package lists once if the first try fails).

    ``still_missing`` tells afterwards what is still not there; ``needed_by`` ("the Kerberos tests")
    and ``skip_hint`` (how to go without) go into the errors.

    :raises StackError: not root, no ``apt-get``, or apt failed (with the last lines of its log).
    """
    if not missing:
        return
    names = ", ".join(missing)
    command = f"apt-get install -y --no-install-recommends {' '.join(missing)}"
    if shutil.which("apt-get") is None:
        raise StackError(
            f"{needed_by} need the Debian packages {names}, and this machine has no apt-get; "
            "install their equivalents"
        )
    if os.geteuid() != 0:
        raise StackError(
            f"{needed_by} need the Debian packages {names}; installing them needs root: run "
            f"'sudo apt-get update && sudo {command}', then this again (or {skip_hint})"
        )
    print(f"kzo: installing {names} with apt-get (first run only)...", file=sys.stderr)
    log_path = artifacts.cache_dir() / "logs" / log_name
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with log_path.open("w") as log:
        # A fresh machine may have no package lists yet: update once when the install fails.
        for attempt in ([command], ["apt-get update", command]):
            failed = False
            for step in attempt:
                done = subprocess.run(
                    step.split(), stdout=log, stderr=subprocess.STDOUT, env=env, check=False
                )
                if done.returncode != 0:
                    failed = True
                    break
            if not failed:
                break
    still = still_missing()
    if still:
        tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
        raise StackError(
            f"apt-get could not install {', '.join(still)} (Debian's package mirror must be "
            f"reachable). Last lines of {log_path}: " + " | ".join(tail)
        )
