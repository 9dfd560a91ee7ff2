"""A native KRaft Kafka cluster for the tests (no ZooKeeper): one controller (node 3000) and three
brokers in racks rack-a/b/c, started by the devstack's :class:`~kafka_zk_operator.devstack.kraft.KRaftStack`
(the code behind ``kzo dev up --kraft --kraft-controllers separate``), on free loopback ports.

``tests/conftest.py`` provides it as the session-scoped fixture ``kraft_cluster``; any test under
``tests/`` can ask for it. :meth:`KRaftCluster.kafka_cli` runs one of Kafka's own command-line tools
(``org.apache.kafka.tools.TopicCommand``, ...) from the cluster's jars, so tests can read Kafka's
view with Kafka's code.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from kafka_zk_operator.devstack import artifacts, java
from kafka_zk_operator.devstack.kraft import KRaftSpec, KRaftStack
from kafka_zk_operator.devstack.state_file import BrokerInfo

#: The newest KRaft-only release the stack runs (4.x has no ZooKeeper mode): the parity tests' second cluster.
KAFKA_4_VERSION = artifacts.KRAFT_ONLY_KAFKA_VERSIONS[-1]
#: Kafka's topic tool (``bin/kafka-topics.sh``) in the kafka-tools jar (3.5 and later, 4.x too).
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
#: Kafka's quorum tool (``bin/kafka-metadata-quorum.sh``).
QUORUM_COMMAND = "org.apache.kafka.tools.MetadataQuorumCommand"


@dataclass
class KRaftCluster:
    """A running KRaft cluster as tests see it; ``stack`` stops and starts its nodes."""

    stack: KRaftStack
    workdir: Path

    @property
    def kafka_version(self) -> str:
        return self.stack.spec.kafka_version

    @property
    def cluster_id(self) -> str:
        return self.stack.cluster_id

    @property
    def bootstrap_servers(self) -> str:
        return self.stack.bootstrap_servers

    @property
    def brokers(self) -> list[BrokerInfo]:
        return [BrokerInfo(n.node_id, n.rack, n.broker_port or 0) for n in self.stack.brokers]

    def kafka_cli(self, main_class: str, *args: str, timeout: float = 120.0) -> str:
        """Run Kafka's tool ``main_class`` with ``--bootstrap-server`` and ``args``; its standard
        output (a failing tool fails the test with its output)."""
        libs = artifacts.kafka_libs(self.kafka_version)
        log4j = java.write_logging(libs, self.workdir / "cli")
        argv = java.java_argv(
            libs,
            main_class,
            ["--bootstrap-server", self.bootstrap_servers, *args],
            heap="256m",
            log4j=log4j,
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        assert done.returncode == 0, (done.stdout, done.stderr)
        return done.stdout


def start_kraft_cluster(state_dir: Path, spec: KRaftSpec | None = None) -> KRaftCluster:
    """Start a KRaft cluster (default: 1 controller + 3 racked brokers of the default Kafka line)
    and return it once every broker is registered and unfenced; the caller stops it with
    ``cluster.stack.down()``."""
    stack = KRaftStack(
        spec or KRaftSpec(controllers="separate"),
        state_dir,
        progress=lambda message: print(f"[kraft] {message}"),
    )
    stack.up()
    return KRaftCluster(stack, state_dir)


def describe_replicas(describe_output: str) -> dict[int, list[int]]:
    """partition → replicas from ``TopicCommand --describe`` output (its per-partition lines:
    ``Topic: t	Partition: 0	Leader: 1	Replicas: 1,2	Isr: 1,2 ...``)."""
    found: dict[int, list[int]] = {}
    for line in describe_output.splitlines():
        fields = dict(part.split(": ", 1) for part in line.strip().split("\t") if ": " in part)
        if "Partition" in fields and "Replicas" in fields:
            found[int(fields["Partition"])] = [int(r) for r in fields["Replicas"].split(",") if r]
    return found
