"""Kafka brokers in ZooKeeper mode, each in its own rack, for the local stack."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kafka_zk_operator.devstack import java, ports
from kafka_zk_operator.devstack.processes import ManagedProcess, wait_until


def broker_tuning(cluster_size: int) -> dict[str, str]:
    """The settings every test broker gets, ZooKeeper-mode or KRaft (``devstack.kraft``): small thread
    pools and buffers, internal topics sized for ``cluster_size`` brokers, no auto-created topics."""
    replication = str(min(3, cluster_size))
    return {
        "delete.topic.enable": "true",
        "auto.create.topics.enable": "false",
        "num.partitions": "1",
        "default.replication.factor": "1",
        "offsets.topic.replication.factor": replication,
        "offsets.topic.num.partitions": "6",
        "transaction.state.log.replication.factor": replication,
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "6",
        "group.initial.rebalance.delay.ms": "0",
        "num.network.threads": "2",
        "num.io.threads": "2",
        "num.recovery.threads.per.data.dir": "1",
        "background.threads": "2",
        "log.cleaner.dedupe.buffer.size": "2097152",
        "controlled.shutdown.enable": "true",
        "replica.lag.time.max.ms": "10000",
    }


def broker_properties(
    *,
    broker_id: int,
    rack: str | None,
    port: int,
    log_dir: Path,
    zk_connect: str,
    cluster_size: int,
    extra: dict[str, str] | None = None,
) -> str:
    props = {
        "broker.id": str(broker_id),
        "listeners": f"PLAINTEXT://{ports.LOOPBACK}:{port}",
        "advertised.listeners": f"PLAINTEXT://{ports.LOOPBACK}:{port}",
        "log.dirs": str(log_dir),
        "zookeeper.connect": zk_connect,
        "zookeeper.session.timeout.ms": "10000",
        "zookeeper.connection.timeout.ms": "30000",
        **broker_tuning(cluster_size),
    }
    if rack is not None:
        props["broker.rack"] = rack
    props.update(extra or {})
    return "".join(f"{key}={value}\n" for key, value in props.items())


@dataclass
class KafkaBroker:
    broker_id: int
    rack: str | None
    port: int
    workdir: Path
    libs: Path
    zk_connect: str
    cluster_size: int
    extra_properties: dict[str, str] = field(default_factory=dict)
    process: ManagedProcess | None = None
    #: More JVM options (e.g. ``-Djava.security.auth.login.config=...`` for a ZooKeeper SASL login).
    jvm_options: tuple[str, ...] = ()
    #: The JVM's maximum heap. 512m holds a few thousand partitions; at 10,000 partitions with 3
    #: replicas the brokers spent most of their time in full GCs and lost their ZooKeeper sessions.
    heap: str = "512m"

    @property
    def bootstrap(self) -> str:
        return f"{ports.LOOPBACK}:{self.port}"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        props_path = self.workdir / "server.properties"
        props_path.write_text(
            broker_properties(
                broker_id=self.broker_id,
                rack=self.rack,
                port=self.port,
                log_dir=self.workdir / "data",
                zk_connect=self.zk_connect,
                cluster_size=self.cluster_size,
                extra=self.extra_properties,
            )
        )
        log4j = java.write_log4j(self.workdir / "log4j.properties")
        argv = java.java_argv(self.libs, "kafka.Kafka", [str(props_path)], heap=self.heap, log4j=log4j)
        argv[1:1] = self.jvm_options
        self.process = ManagedProcess(
            f"kafka-{self.broker_id}", argv, self.workdir / f"kafka-{self.broker_id}.log"
        )
        self.process.start()

    def is_listening(self) -> bool:
        return ports.port_open(self.port)

    def wait_listening(self, timeout: float = 120.0) -> None:
        wait_until(
            self.is_listening,
            timeout=timeout,
            what=f"Kafka broker {self.broker_id} to listen on {self.bootstrap}",
            process=self.process,
        )

    def stop(self, timeout: float = 60.0) -> None:
        if self.process is not None:
            self.process.stop(timeout=timeout)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
