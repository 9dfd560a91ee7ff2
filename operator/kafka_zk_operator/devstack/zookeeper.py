"""A ZooKeeper server (the one Kafka ships with) for the local stack: standalone, or one member of
a quorum (:class:`QuorumPeer` lists every member; ``kzo dev up --zookeeper-servers 3``).

ZooKeeper's audit log is on (ZooKeeper 3.5.7 and later; the ZooKeeper of Kafka 3.9 is 3.8): every
write with the session that made it, in ``audit.log`` of the server's folder, one
``session=0x… user=… ip=… operation=… result=…`` line each (ZooKeeper's "Audit Logging" guide).
It answers "who wrote this znode" on the local stack, and lets a test count a client's writes
without asking that client."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path

from kafka_zk_operator.devstack import java, ports
from kafka_zk_operator.devstack.processes import ManagedProcess, wait_until


def four_letter_word(port: int, word: str, timeout: float = 1.0) -> str:
    """Send a ZooKeeper four-letter command (e.g. ``srvr``) and return the answer, or ``""``."""
    try:
        with socket.create_connection((ports.LOOPBACK, port), timeout=timeout) as sock:
            sock.sendall(word.encode())
            chunks = []
            while True:
                data = sock.recv(4096)
                if not data:
                    break
                chunks.append(data)
    except OSError:
        return ""
    return b"".join(chunks).decode(errors="replace")


#: ZooKeeper's audit logger (``org.apache.zookeeper.audit``) into its own file, message only.
_AUDIT_LOG4J = """\
log4j.logger.org.apache.zookeeper.audit=INFO, audit
log4j.additivity.org.apache.zookeeper.audit=false
log4j.appender.audit=org.apache.log4j.FileAppender
log4j.appender.audit.File={file}
log4j.appender.audit.layout=org.apache.log4j.PatternLayout
log4j.appender.audit.layout.ConversionPattern=%m%n
"""


@dataclass(frozen=True)
class QuorumPeer:
    """One member of a ZooKeeper ensemble: its ``myid`` and its three ports on 127.0.0.1."""

    server_id: int
    client_port: int
    quorum_port: int
    election_port: int


@dataclass
class ZooKeeperServer:
    workdir: Path
    port: int
    libs: Path
    process: ManagedProcess | None = None
    #: More zoo.cfg settings (e.g. ``secureClientPort``, ``authProvider.1``), written after the defaults.
    extra_config: dict[str, str] = field(default_factory=dict)
    #: More JVM options (e.g. ``-Djava.security.auth.login.config=...`` for SASL).
    jvm_options: tuple[str, ...] = ()
    #: This server's ``myid`` in an ensemble (0: standalone).
    server_id: int = 0
    #: Every member of the ensemble, this one included (empty: standalone).
    quorum: tuple[QuorumPeer, ...] = ()

    @property
    def name(self) -> str:
        """The process name: ``zookeeper``, or ``zookeeper-<myid>`` in an ensemble."""
        return f"zookeeper-{self.server_id}" if self.quorum else "zookeeper"

    @property
    def audit_log(self) -> Path:
        """ZooKeeper's audit log of this server (absent on the ZooKeeper of Kafka before 2.5)."""
        return self.workdir / "audit.log"

    @property
    def connect(self) -> str:
        return f"{ports.LOOPBACK}:{self.port}"

    def _quorum_config(self, data_dir: Path) -> list[str]:
        if not self.quorum:
            return []
        (data_dir / "myid").write_text(f"{self.server_id}\n")
        return [
            "initLimit=10",
            "syncLimit=5",
            *(
                f"server.{p.server_id}={ports.LOOPBACK}:{p.quorum_port}:{p.election_port}"
                for p in self.quorum
            ),
        ]

    def start(self) -> None:
        data_dir = self.workdir / "data"
        data_dir.mkdir(parents=True, exist_ok=True)
        cfg = self.workdir / "zoo.cfg"
        cfg.write_text(
            "\n".join(
                [
                    "tickTime=2000",
                    f"dataDir={data_dir}",
                    f"clientPort={self.port}",
                    f"clientPortAddress={ports.LOOPBACK}",
                    "maxClientCnxns=0",
                    "minSessionTimeout=2000",
                    "maxSessionTimeout=60000",
                    "4lw.commands.whitelist=*",
                    "admin.enableServer=false",
                    "autopurge.snapRetainCount=3",
                    "autopurge.purgeInterval=1",
                    *self._quorum_config(data_dir),
                    *(f"{key}={value}" for key, value in self.extra_config.items()),
                    "",
                ]
            )
        )
        log4j = self.workdir / "log4j.properties"
        log4j.write_text(java.LOG4J_PROPERTIES + _AUDIT_LOG4J.format(file=self.audit_log))
        argv = java.java_argv(
            self.libs,
            "org.apache.zookeeper.server.quorum.QuorumPeerMain"
            if self.quorum
            else "org.apache.zookeeper.server.ZooKeeperServerMain",
            [str(cfg)],
            heap="256m",
            log4j=log4j,
        )
        argv[1:1] = [
            "-Dzookeeper.admin.enableServer=false",
            "-Dzookeeper.audit.enable=true",
            *self.jvm_options,
        ]
        self.process = ManagedProcess(self.name, argv, self.workdir / "zookeeper.log")
        self.process.start()

    def is_serving(self) -> bool:
        return "Zookeeper version" in four_letter_word(self.port, "srvr")

    def mode(self) -> str:
        """``leader``, ``follower`` or ``standalone`` as the server says (``""``: not serving)."""
        for line in four_letter_word(self.port, "srvr").splitlines():
            if line.startswith("Mode:"):
                return line.split(":", 1)[1].strip()
        return ""

    def wait_ready(self, timeout: float = 60.0) -> None:
        wait_until(self.is_serving, timeout=timeout, what="ZooKeeper to serve", process=self.process)
