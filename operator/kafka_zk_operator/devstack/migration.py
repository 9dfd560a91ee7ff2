"""A ZooKeeper → KRaft migration (KIP-866) of a devstack ZooKeeper-mode 3.9 cluster, step by step.

:class:`ZkToKRaftMigration` takes a running :class:`~kafka_zk_operator.devstack.stack.LocalStack`
(its own ZooKeeper and racked brokers: a migration is one-way, never the shared test stack) through
the four steps of Kafka 3.9's ``docs/ops.html`` ("ZooKeeper to KRaft Migration"), each waiting for
the sign Kafka itself leaves of its phase:

1. :meth:`~ZkToKRaftMigration.start_controller`: one KRaft controller (node 3000) formatted with the
   ZooKeeper cluster's id (``get /cluster/id``) and bootstrap metadata.version 3.9 (an empty
   controller log migrates only from 3.6-IV1 up, KAFKA-17457), ``zookeeper.metadata.migration.enable``
   and ``zookeeper.connect``. Sign: ``/migration`` exists (all fields -1 until the copy).
2. :meth:`~ZkToKRaftMigration.enter_migration_mode`: each broker restarted gracefully with
   ``inter.broker.protocol.version=3.9``, the migration flag, the quorum voters and the CONTROLLER
   listener mapped. Sign: ``/controller`` has ``kraftControllerEpoch`` > 0 (the KRaft controller
   claimed it) and ``/migration`` ``kraft_metadata_offset`` > 0 (the metadata copy is done).
3. :meth:`~ZkToKRaftMigration.migrate_brokers_to_kraft`: each broker restarted as a KRaft broker
   (``process.roles=broker``, ``node.id`` = its old ``broker.id``, same port, rack and log folder; no
   ZooKeeper settings). Sign: ``/brokers/ids`` is empty (dual-write phase).
4. :meth:`~ZkToKRaftMigration.finalize`: the controller restarted without the flag and without
   ``zookeeper.connect``. Sign: its log says "Completing the ZK migration" (the ZkMigrationState
   record POST_MIGRATION has no Admin API; Kafka's own system test reads this log too) and every
   broker is unfenced again.

Rolling restarts wait for every partition to be back in sync (Kafka's metadata through a Kafka
client) before the next broker goes down. Each step returns the seconds it took.

Until finalization the migration can be reverted (ops.html "Reverting to ZooKeeper mode During the
Migration", a table by the last step completed), with Kafka's own ``zookeeper-shell``
(:meth:`~ZkToKRaftMigration.zookeeper_shell`) for the znodes:

* after step 2, :meth:`~ZkToKRaftMigration.revert_migration_mode`: the controller stopped
  (deprovisioned), ``deleteall /controller`` at once (sign: a ZooKeeper-mode broker registers as
  controller), ``get /migration`` + ``deleteall /migration``, then every broker restarted without
  the migration flag, ``controller.listener.names`` and the quorum voters. The 3.9 docs write
  ``rmr``, which the shell of ZooKeeper 3.8 (Kafka 3.9's) no longer has: ``deleteall`` is its name.
  ``delete_migration_znode=False`` leaves ``/migration`` behind (what the operator warns about);
  :meth:`~ZkToKRaftMigration.delete_migration_znode` removes it later.
* after step 3, :meth:`~ZkToKRaftMigration.revert_brokers_to_zookeeper` first: each broker back
  in ZooKeeper mode with its ``broker.id`` and ``zookeeper.connect``, the migration flag still on;
  then the same steps as above. In Kafka 3.9's table that row does not delete ``/migration``
  (KAFKA-17146 added the step to the other row only), so following it leaves the znode behind.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from typing import Any

from kazoo.client import KazooClient

from kafka_zk_operator.devstack import java, ports
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.devstack.kafka import KafkaBroker
from kafka_zk_operator.devstack.kraft import (
    BROKER,
    CONTROLLER,
    CONTROLLER_LISTENER,
    FIRST_CONTROLLER_ID,
    KRaftNode,
    format_storage,
    quorum_voters,
    stop_together,
    wait_brokers_unfenced,
)
from kafka_zk_operator.devstack.processes import wait_until
from kafka_zk_operator.devstack.stack import LocalStack

#: The metadata.version the controller is formatted with and the IBP the brokers migrate at.
MIGRATION_VERSION = "3.9"
#: The controller's log line when it activates with the flag off on a migrated log (finalized).
FINALIZED_LOG_LINE = "Completing the ZK migration"
#: The main class of Kafka's ``bin/zookeeper-shell.sh`` (in the kafka_2.13 jar).
ZOOKEEPER_SHELL = "org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka"
#: What ``zookeeper-shell`` prints when a command failed (its exit code stays 0 for some).
SHELL_FAILURES = ("Node does not exist", "KeeperErrorCode", "Exception in thread")
#: What a broker drops to leave migration mode (the revert table: "remove the
#: zookeeper.metadata.migration.enable, controller.listener.names, and
#: controller.quorum.bootstrap.servers configurations"; this stack's quorum is static voters).
MIGRATION_ONLY_PROPERTIES = (
    "zookeeper.metadata.migration.enable",
    "controller.listener.names",
    "controller.quorum.voters",
)


def read_json(client: KazooClient, path: str) -> dict[str, Any] | None:
    """A znode's JSON, or None when it does not exist."""
    if not client.exists(path):
        return None
    data, _ = client.get(path)
    decoded: dict[str, Any] = json.loads(data.decode())
    return decoded


def migration_broker_properties(voters: str) -> dict[str, str]:
    """What a ZooKeeper-mode broker adds to enter migration mode (ops.html "Enter Migration Mode on
    the Brokers"; ``KafkaConfig.validateValues``: IBP >= 3.4, CONTROLLER in the protocol map)."""
    return {
        "inter.broker.protocol.version": MIGRATION_VERSION,
        "zookeeper.metadata.migration.enable": "true",
        "controller.quorum.voters": voters,
        "controller.listener.names": CONTROLLER_LISTENER,
        "listener.security.protocol.map": f"PLAINTEXT:PLAINTEXT,{CONTROLLER_LISTENER}:PLAINTEXT",
    }


def partitions_in_sync(bootstrap: str) -> bool:
    """True when every partition Kafka knows has its whole replica set in its ISR (and a leader)."""
    from kafka import errors as kafka_errors
    from kafka.admin import KafkaAdminClient

    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    except kafka_errors.KafkaError:
        return False
    try:
        for topic in admin.describe_topics():
            if topic.get("error_code", 0) != 0:
                return False
            for partition in topic["partitions"]:
                leader, replicas, isr = (partition[k] for k in ("leader_id", "replica_nodes", "isr_nodes"))
                if leader < 0 or set(replicas) - set(isr):
                    return False
        return True
    except kafka_errors.KafkaError:
        return False
    finally:
        admin.close()


class ZkToKRaftMigration:
    """The migration of one devstack ZooKeeper-mode cluster (see the module docstring)."""

    def __init__(self, stack: LocalStack, *, controller_id: int = FIRST_CONTROLLER_ID) -> None:
        if stack.zookeeper is None or stack.kafka_libs is None or not stack.brokers:
            raise StackError("the migration needs a running ZooKeeper-mode stack with brokers")
        self.stack = stack
        self.controller_id = controller_id
        self.controller_port = ports.free_port()
        self.voters = quorum_voters([(controller_id, self.controller_port)])
        self.controller: KRaftNode | None = None
        #: Brokers already restarted as KRaft brokers (removed from ``stack.brokers``).
        self.kraft_brokers: dict[int, KRaftNode] = {}
        #: The ZooKeeper-mode brokers step 3 replaced (a revert starts them again).
        self.zk_brokers: dict[int, KafkaBroker] = {}
        #: Broker id → rack, port and work folder, as the ZooKeeper-mode stack started them.
        self.broker_ids = sorted(stack.brokers)

    # ------------------------------------------------------------------ reading ZooKeeper
    def znode(self, path: str) -> dict[str, Any] | None:
        """The JSON of ``path`` under the cluster's chroot (None: absent)."""
        client = self.stack.zk_client()
        try:
            return read_json(client, path)
        finally:
            client.stop()
            client.close()

    def registered_brokers(self) -> list[int]:
        """The ids under ``/brokers/ids`` (ZooKeeper-mode brokers only; KRaft brokers never register)."""
        client = self.stack.zk_client()
        try:
            return sorted(int(child) for child in client.get_children("/brokers/ids"))
        finally:
            client.stop()
            client.close()

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{ports.LOOPBACK}:{port}" for port in self._broker_ports().values())

    def _broker_ports(self) -> dict[int, int]:
        found = {i: b.port for i, b in self.stack.brokers.items()}
        found.update({i: n.broker_port for i, n in self.kraft_brokers.items() if n.broker_port is not None})
        return dict(sorted(found.items()))

    def _wait_in_sync(self, timeout: float) -> None:
        bootstrap = self.bootstrap_servers
        wait_until(
            lambda: partitions_in_sync(bootstrap),
            timeout=timeout,
            what="every partition to be back in sync",
            interval=0.5,
        )

    # ------------------------------------------------------------------ (a)
    def start_controller(self, timeout: float = 120.0) -> float:
        """Step 1: format and start the migration-mode controller; wait until ``/migration`` exists.

        :returns: the seconds it took.
        """
        started = time.monotonic()
        cluster = self.znode("/cluster/id")
        if cluster is None:
            raise StackError("ZooKeeper has no /cluster/id: start the brokers before the migration")
        assert self.stack.kafka_libs is not None
        self.controller = KRaftNode(
            self.controller_id,
            CONTROLLER,
            self.stack.state_dir / f"kraft-controller-{self.controller_id}",
            self.stack.kafka_libs,
            self.voters,
            controller_port=self.controller_port,
            zk_connect=f"{self.stack.zk_hosts}{self.stack.spec.chroot}",
            heap="256m",
        )
        format_storage([self.controller], cluster["id"], release_version=MIGRATION_VERSION)
        self.controller.start()
        self.controller.wait_listening(timeout)
        wait_until(
            lambda: self.znode("/migration") is not None,
            timeout=timeout,
            what="the KRaft controller to create /migration",
            process=self.controller.process,
        )
        return time.monotonic() - started

    # ------------------------------------------------------------------ (b)
    def enter_migration_mode(
        self, timeout: float = 240.0, *, before_last_broker: Callable[[], None] | None = None
    ) -> float:
        """Step 2: roll every broker into migration mode; wait for the KRaft controller's claim of
        ``/controller`` (``kraftControllerEpoch`` > 0) and the end of the copy (``/migration``
        ``kraft_metadata_offset`` > 0).

        ``before_last_broker``: called before the last broker's restart, whose registration with
        the quorum lets the KRaft controller take over (e.g. to start a reassignment that is then
        in flight at the takeover; the restart waits for it to finish, as for every partition).

        :returns: the seconds it took.
        """
        started = time.monotonic()
        controller = self._controller()
        for broker_id in self.broker_ids:
            if broker_id == self.broker_ids[-1] and before_last_broker is not None:
                before_last_broker()
            broker = self.stack.brokers[broker_id]
            broker.stop()
            broker.extra_properties.update(migration_broker_properties(self.voters))
            self.stack.restart_broker(broker_id)
            self._wait_in_sync(timeout)

        def migrated() -> bool:
            znode_controller = self.znode("/controller") or {}
            migration = self.znode("/migration") or {}
            epoch: int = znode_controller.get("kraftControllerEpoch", -1)
            offset: int = migration.get("kraft_metadata_offset", -1)
            return epoch > 0 and offset > 0

        wait_until(
            migrated,
            timeout=timeout,
            what="the KRaft controller to claim /controller and finish copying the metadata",
            process=controller.process,
            interval=0.5,
        )
        return time.monotonic() - started

    # ------------------------------------------------------------------ (c)
    def migrate_brokers_to_kraft(self, timeout: float = 240.0) -> float:
        """Step 3: restart every broker as a KRaft broker with the same id, port, rack and data;
        each must be unfenced and every partition in sync before the next; then ``/brokers/ids``
        must be empty.

        :returns: the seconds it took.
        """
        started = time.monotonic()
        self._controller()
        for broker_id in self.broker_ids:
            old = self.stack.brokers.pop(broker_id)
            old.stop()
            self.zk_brokers[broker_id] = old
            node = KRaftNode(
                broker_id,
                BROKER,
                old.workdir,
                old.libs,
                self.voters,
                broker_port=old.port,
                rack=old.rack,
                cluster_size=len(self.broker_ids),
                heap=old.heap,
            )
            self.kraft_brokers[broker_id] = node
            node.start()
            node.wait_listening(timeout)
            wait_brokers_unfenced(self.bootstrap_servers, {broker_id}, timeout=timeout, process=node.process)
            self._wait_in_sync(timeout)
        wait_until(
            lambda: not self.registered_brokers(),
            timeout=timeout,
            what="/brokers/ids to be empty (every broker in KRaft mode)",
        )
        return time.monotonic() - started

    # ------------------------------------------------------------------ (d)
    def finalize(self, timeout: float = 120.0) -> float:
        """Step 4: restart the controller without the migration flag and ``zookeeper.connect``;
        wait for its "Completing the ZK migration" log line and for every broker to be unfenced.

        :returns: the seconds it took.
        """
        started = time.monotonic()
        controller = self._controller()
        controller.stop()
        controller.zk_connect = None
        log_offset = controller.log_size()
        controller.start()
        controller.wait_listening(timeout)
        wait_until(
            lambda: controller.log_contains(FINALIZED_LOG_LINE, since=log_offset),
            timeout=timeout,
            what=f"the controller to log {FINALIZED_LOG_LINE!r}",
            process=controller.process,
        )
        wait_brokers_unfenced(self.bootstrap_servers, set(self.broker_ids), timeout=timeout)
        return time.monotonic() - started

    # ------------------------------------------------------------------ reverting
    def zookeeper_shell(self, *command: str, timeout: float = 60.0) -> str:
        """Run one command of Kafka's ``zookeeper-shell`` on the cluster's chroot; its output.

        :raises StackError: the shell failed or printed an exception.
        """
        assert self.stack.kafka_libs is not None
        log4j = java.write_log4j(self.stack.state_dir / "zookeeper-shell-log4j.properties")
        argv = java.java_argv(
            self.stack.kafka_libs,
            ZOOKEEPER_SHELL,
            ["-server", f"{self.stack.zk_hosts}{self.stack.spec.chroot}", *command],
            heap="128m",
            log4j=log4j,
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0 or any(sign in done.stdout + done.stderr for sign in SHELL_FAILURES):
            raise StackError(
                f"zookeeper-shell {' '.join(command)} failed (exit code {done.returncode}): "
                f"{(done.stdout + done.stderr).strip()[-500:]}"
            )
        return done.stdout

    def delete_migration_znode(self) -> dict[str, Any]:
        """``get /migration`` (kept "for debugging", as the docs say: returned), then
        ``deleteall /migration``; the sign is the znode's absence.

        :raises StackError: there is no ``/migration``.
        """
        shown = self.zookeeper_shell("get", "/migration")
        line = next((text for text in shown.splitlines() if text.startswith("{")), None)
        if line is None:
            raise StackError(f"zookeeper-shell get /migration printed no znode: {shown.strip()[-300:]}")
        self.zookeeper_shell("deleteall", "/migration")
        wait_until(lambda: self.znode("/migration") is None, timeout=30, what="/migration to be deleted")
        found: dict[str, Any] = json.loads(line)
        return found

    def revert_brokers_to_zookeeper(self, timeout: float = 240.0) -> float:
        """The first roll of the revert after step 3: each KRaft broker restarted as the
        ZooKeeper-mode broker it was (``broker.id``, ``zookeeper.connect``), still with the
        migration flag and the quorum; each must register in ``/brokers/ids`` and every partition
        be in sync before the next. Then :meth:`revert_migration_mode` finishes the revert.

        :returns: the seconds it took.
        """
        started = time.monotonic()
        self._controller()
        for broker_id in self.broker_ids:
            node = self.kraft_brokers.pop(broker_id)
            node.stop()
            self.stack.brokers[broker_id] = self.zk_brokers.pop(broker_id)
            self.stack.restart_broker(broker_id)
            self._wait_in_sync(timeout)
        return time.monotonic() - started

    def revert_migration_mode(self, timeout: float = 240.0, *, delete_migration_znode: bool = True) -> float:
        """The revert after step 2 (see the module docstring): the controller stopped,
        ``deleteall /controller`` (sign: a ZooKeeper-mode broker is controller again, Kafka's
        ``/controller`` without a ``kraftControllerEpoch``), ``/migration`` deleted unless
        ``delete_migration_znode`` is False, then the brokers rolled out of migration mode, each
        registered and every partition in sync before the next.

        :returns: the seconds it took.
        """
        started = time.monotonic()
        controller = self._controller()
        if self.kraft_brokers:
            raise StackError("brokers run in KRaft mode: revert_brokers_to_zookeeper first")
        controller.stop()
        self.controller = None
        self.zookeeper_shell("deleteall", "/controller")

        def zk_broker_elected() -> bool:
            found = self.znode("/controller") or {}
            epoch: int = found.get("kraftControllerEpoch", -1)
            return found.get("brokerid") in self.broker_ids and epoch <= 0

        wait_until(zk_broker_elected, timeout=timeout, what="a ZooKeeper-mode broker to become controller")
        if delete_migration_znode:
            self.delete_migration_znode()
        for broker_id in self.broker_ids:
            broker = self.stack.brokers[broker_id]
            broker.stop()
            for key in MIGRATION_ONLY_PROPERTIES:
                broker.extra_properties.pop(key, None)
            self.stack.restart_broker(broker_id)
            self._wait_in_sync(timeout)
        wait_until(zk_broker_elected, timeout=timeout, what="a ZooKeeper-mode controller after the roll")
        return time.monotonic() - started

    def _controller(self) -> KRaftNode:
        if self.controller is None:
            raise StackError("start the migration controller first (start_controller)")
        return self.controller

    def stop(self) -> None:
        """Stop everything, the cluster being thrown away: KRaft brokers and the controller
        gracefully, ZooKeeper-mode brokers (before step 3 or after a revert) killed: stopped one by
        one, each after the first waits ~10 s for controlled-shutdown retries that cannot move its
        leaders (their other replicas are gone), then the stack (ZooKeeper)."""
        stop_together(self.kraft_brokers.values())
        if self.controller is not None:
            self.controller.stop()
        for broker_id in list(self.stack.brokers):
            self.stack.brokers.pop(broker_id).kill()  # popped: down() signals no reaped pid again
        self.stack.down()
