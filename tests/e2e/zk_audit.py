"""The ZooKeeper writes of one process, counted from ZooKeeper's own audit log.

The local stack's ZooKeeper logs every write with its session id (``devstack.zookeeper``: the
audit log). Which sessions are the process's comes from outside it too: ZooKeeper's ``cons``
command lists each connection's client address and session id, and ``/proc/<pid>/fd`` with
``/proc/net/tcp`` give the local ports of the process's sockets. :class:`SessionWatch` polls both
while a test runs (a session opened after a reconnect is seen too); :func:`writes` reads the
audit log. Nothing here asks the process itself.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from kafka_zk_operator.devstack.zookeeper import four_letter_word

#: The audit log's write operations (ZooKeeper's "Audit Logging" guide); a transaction is logged
#: as its operations.
WRITE_OPERATIONS = frozenset({"create", "delete", "setData", "setAcl", "multiOperation", "reconfig"})
_CONNECTION = re.compile(r"/[\d.]+:(\d+)\[\d+\]\((.*)\)")
_SESSION = re.compile(r"\bsid=(0x[0-9a-f]+)")


def local_ports(pid: int) -> set[int]:
    """Local TCP ports of the sockets process ``pid`` holds (IPv4 and IPv6)."""
    inodes = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(fd_dir / fd)
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            next(fh)
            for line in fh:
                fields = line.split()
                if fields[9] in inodes:
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def sessions_of(zk_port: int, pid: int) -> set[str]:
    """Session ids of the ZooKeeper connections (to ``zk_port``) that process ``pid`` holds."""
    ports = local_ports(pid)
    found = set()
    for line in four_letter_word(zk_port, "cons").splitlines():
        connection = _CONNECTION.search(line)
        session = _SESSION.search(line)
        if connection and session and int(connection.group(1)) in ports:
            found.add(session.group(1))
    return found


@dataclass(frozen=True)
class AuditedWrite:
    session: str
    operation: str
    znode: str
    line: str


def writes(audit_log: Path, *, since: int = 0, sessions: set[str] | None = None) -> list[AuditedWrite]:
    """Successful writes in ``audit_log`` after byte ``since``, of ``sessions`` (all when None)."""
    with open(audit_log, "rb") as fh:
        fh.seek(since)
        text = fh.read().decode(errors="replace")
    found = []
    for line in text.splitlines():
        entry = dict(field.split("=", 1) for field in line.split("\t") if "=" in field)
        if entry.get("operation") not in WRITE_OPERATIONS or entry.get("result") != "success":
            continue
        if sessions is not None and entry.get("session") not in sessions:
            continue
        found.append(AuditedWrite(entry.get("session", ""), entry["operation"], entry.get("znode", ""), line))
    return found


def size(audit_log: Path) -> int:
    return audit_log.stat().st_size if audit_log.exists() else 0


class SessionWatch:
    """Every ZooKeeper session process ``pid`` held while it ran (polled every ``interval`` s)."""

    def __init__(self, zk_port: int, pid: int, interval: float = 0.5) -> None:
        self.zk_port, self.pid, self.interval = zk_port, pid, interval
        self.sessions: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> SessionWatch:
        self.sessions |= sessions_of(self.zk_port, self.pid)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.sessions |= sessions_of(self.zk_port, self.pid)
            except OSError:  # the process ended, or ZooKeeper did not answer: ask again
                continue
