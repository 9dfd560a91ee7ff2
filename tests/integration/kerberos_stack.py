"""A Kerberized Kafka cluster for the tests: MIT's KDC, ZooKeeper demanding SASL GSSAPI, and Kafka
brokers that log in to it from a keytab with ``zookeeper.set.acl=true``; set up as
docs/zookeeper.md ("Kerberos (SASL/GSSAPI)") tells an operator of a real cluster to.

- The realm ``KZO.TEST`` (``devstack.kerberos.KerberosRealm``) has three principals:
  ``zookeeper/localhost`` (ZooKeeper's JAAS ``Server`` section), ``kafka/localhost`` (every
  broker's JAAS ``Client`` section) and ``kafka/kafka-zk-operator`` (the operator's keytab).
- ZooKeeper runs the SASL authentication provider with ``sessionRequireClientSASLAuth=true`` and
  ``kerberos.removeHostFromPrincipal`` / ``kerberos.removeRealmFromPrincipal``: both Kafka
  principals are the ZooKeeper identity ``sasl:kafka``, which Kafka's ACLs name, so the operator
  has its own key yet the brokers' rights on their znodes, and the brokers on the operator's.
- Every client reaches ZooKeeper as ``localhost:<port>``: ZooKeeper's principal names that host.

The tests run the realm with whatever is installed; ``make prepare`` (``kzo dev prepare``) installs
MIT Kerberos and the Python binding, and their absence fails the fixture with that advice.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_zk_operator.devstack import artifacts, ports
from kafka_zk_operator.devstack.kafka import KafkaBroker
from kafka_zk_operator.devstack.kerberos import KerberosRealm
from kafka_zk_operator.devstack.zookeeper import ZooKeeperServer

ZOOKEEPER_PRINCIPAL = "zookeeper/localhost"
BROKER_PRINCIPAL = "kafka/localhost"
OPERATOR_PRINCIPAL = "kafka/kafka-zk-operator"
#: The ZooKeeper identity of both Kafka principals once host and realm are removed.
KAFKA_IDENTITY = "kafka"
ZOOKEEPER_SETTINGS = {
    "authProvider.1": "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
    "sessionRequireClientSASLAuth": "true",
    "kerberos.removeHostFromPrincipal": "true",
    "kerberos.removeRealmFromPrincipal": "true",
}


def jaas_section(section: str, keytab: Path, principal: str) -> str:
    return (
        f"{section} {{\n  com.sun.security.auth.module.Krb5LoginModule required\n  useKeyTab=true\n"
        f'  storeKey=true\n  useTicketCache=false\n  keyTab="{keytab}"\n  principal="{principal}";\n}};\n'
    )


@dataclass
class KerberizedKafka:
    realm: KerberosRealm
    zookeeper: ZooKeeperServer
    chroot: str
    operator_keytab: Path
    operator_principal: str
    brokers: list[KafkaBroker] = field(default_factory=list)

    @property
    def zk_hosts(self) -> str:
        return f"localhost:{self.zookeeper.port}"

    @property
    def connect(self) -> str:
        return f"{self.zk_hosts}{self.chroot}"

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(broker.bootstrap for broker in self.brokers)

    def entry(self, **sasl: Any) -> dict[str, Any]:
        """This cluster's entry of a clusters file, as docs/zookeeper.md shows it."""
        settings = {
            "mechanism": "GSSAPI",
            "principal": self.operator_principal,
            "keytab": str(self.operator_keytab),
            **sasl,
        }
        return {"zookeeper": self.connect, "secureAcls": True, "sasl": settings}

    @property
    def env(self) -> dict[str, str]:
        """The environment the operator needs: MIT's library reads this realm's krb5.conf."""
        return {"KRB5_CONFIG": str(self.realm.krb5_conf)}


def _stop(process_owner: ZooKeeperServer | KafkaBroker | KerberosRealm) -> None:
    if process_owner.process is not None:
        process_owner.process.stop()


@contextlib.contextmanager
def kerberized_kafka(
    workdir: Path, *, brokers: int, kafka_version: str, chroot: str
) -> Iterator[KerberizedKafka]:
    """Start the realm, ZooKeeper and ``brokers`` Kafka brokers; stop them all afterwards."""
    realm = KerberosRealm(workdir / "kdc")
    keytabs = workdir / "keytabs"
    started: list[ZooKeeperServer | KafkaBroker | KerberosRealm] = []
    try:
        realm.start()
        started.append(realm)
        realm.add_principal(ZOOKEEPER_PRINCIPAL, keytabs / "zookeeper.keytab")
        broker_principal = realm.add_principal(BROKER_PRINCIPAL, keytabs / "kafka.keytab")
        operator_principal = realm.add_principal(OPERATOR_PRINCIPAL, keytabs / "kafka-zk-operator.keytab")

        libs = artifacts.kafka_libs(kafka_version)
        zk_jaas = workdir / "zookeeper-jaas.conf"
        zk_jaas.write_text(
            jaas_section("Server", keytabs / "zookeeper.keytab", realm.principal(ZOOKEEPER_PRINCIPAL))
        )
        zookeeper = ZooKeeperServer(
            workdir / "zookeeper",
            ports.free_port(),
            libs,
            extra_config=dict(ZOOKEEPER_SETTINGS),
            jvm_options=(f"-Djava.security.auth.login.config={zk_jaas}", *realm.java_options),
        )
        zookeeper.start()
        started.append(zookeeper)
        zookeeper.wait_ready(timeout=60)

        cluster = KerberizedKafka(
            realm, zookeeper, chroot, keytabs / "kafka-zk-operator.keytab", operator_principal
        )
        kafka_jaas = workdir / "kafka-jaas.conf"
        kafka_jaas.write_text(jaas_section("Client", keytabs / "kafka.keytab", broker_principal))
        for broker_id in range(1, brokers + 1):
            broker = KafkaBroker(
                broker_id=broker_id,
                rack=None,
                port=ports.free_port(),
                workdir=workdir / f"kafka-{broker_id}",
                libs=libs,
                zk_connect=cluster.connect,
                cluster_size=brokers,
                extra_properties={"zookeeper.set.acl": "true"},
                jvm_options=(f"-Djava.security.auth.login.config={kafka_jaas}", *realm.java_options),
            )
            broker.start()
            started.append(broker)
            cluster.brokers.append(broker)
        for broker in cluster.brokers:
            broker.wait_listening()
        yield cluster
    finally:
        for owner in reversed(started):  # brokers before ZooKeeper, the KDC last
            _stop(owner)


@contextlib.contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Set process environment variables for a while (MIT's library reads them at each login)."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
