"""SASL GSSAPI (Kerberos) against a real MIT KDC, a real ZooKeeper that demands it, and two real Kafka
brokers (MAIN_KAFKA_VERSION) logged in to it from a keytab with ``zookeeper.set.acl=true``.

The set-up is docs/zookeeper.md's (``tests/integration/kerberos_stack.py``). Every connection
goes the operator's own way: a clusters file read by ``config.load``, then ``ClusterRuntime.store()``
(``session.connect``: the Kerberos login from the keytab, then kazoo's SASL login, then
``ZkStore``). What Kafka makes of the operator's writes is checked with a Kafka client
(``KafkaView``) and with kazoo on the raw znodes, never with the operator's code.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kazoo.client import KazooClient
from kazoo.exceptions import SessionClosedRequireSaslError
from kazoo.security import Permissions

from kafka_zk_operator import config
from kafka_zk_operator.adapters.zk import session, znodes_admin
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.devstack import ports
from kafka_zk_operator.devstack.zookeeper import ZooKeeperServer
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.topic.resource import parse_resource
from kafka_zk_operator.runtime.clusters import ClusterRuntime
from kafka_zk_operator.service.topics import TopicPolicies, reconcile_topic
from tests.conftest import MAIN_KAFKA_VERSION
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for
from tests.integration.kerberos_stack import (
    KAFKA_IDENTITY,
    ZOOKEEPER_SETTINGS,
    KerberizedKafka,
    environment,
    jaas_section,
    kerberized_kafka,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the MIT KDC of these tests runs on Linux")

CHROOT = "/kafka-kerberos"
KAFKAS_ACL = {("sasl", KAFKA_IDENTITY, Permissions.ALL), ("world", "anyone", Permissions.READ)}


def _cluster(tmp_path: Path, entry: dict[str, Any]) -> ClusterRuntime:
    """The operator's runtime for one cluster described by ``entry`` in a clusters file."""
    path = tmp_path / f"clusters-{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump({"clusters": [{"name": "main", **entry}]}))
    return ClusterRuntime(config.load({"KZO_CLUSTERS_FILE": str(path)}).clusters[0], patcher=None)


def _refusal(runtime: ClusterRuntime, within_s: float, caplog: pytest.LogCaptureFixture) -> str:
    """The one-line ``ClusterUnavailable`` the operator reports, within ``within_s`` and without a
    traceback in the log."""
    caplog.clear()
    started = time.monotonic()
    try:
        with pytest.raises(errors.ClusterUnavailable) as raised:
            runtime.store()
    finally:
        runtime.close()
    elapsed, message = time.monotonic() - started, str(raised.value)
    assert "\n" not in message and "Traceback" not in message, message
    assert elapsed < within_s, f"took {elapsed:.1f} s: {message}"
    assert not [r.getMessage() for r in caplog.records if r.exc_info], "logged with a traceback"
    return message


def _acl(client: KazooClient, path: str) -> set[tuple[str, str, int]]:
    return {(a.id.scheme, a.id.id, a.perms) for a in client.get_acls(path)[0]}


@pytest.fixture(scope="module")
def krb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KerberizedKafka]:
    """The KDC, ZooKeeper demanding GSSAPI and two brokers, registered, with a controller."""
    workdir = tmp_path_factory.mktemp("kerberos")
    with (
        kerberized_kafka(workdir, brokers=2, kafka_version=MAIN_KAFKA_VERSION, chroot=CHROOT) as cluster,
        environment(cluster.env),
    ):
        runtime = _cluster(workdir, cluster.entry())
        try:
            store = runtime.store()
            wait_for(
                lambda: store.broker_ids() == [1, 2] and store.controller() is not None,
                timeout=120,
                what="both Kerberized brokers to register and one to become controller",
            )
        finally:
            runtime.close()
        yield cluster


@pytest.fixture
def view(krb: KerberizedKafka) -> Iterator[KafkaView]:
    kafka = KafkaView(krb.bootstrap_servers)
    try:
        yield kafka
    finally:
        kafka.close()


def _led(view: KafkaView, topic: str) -> dict[int, dict[str, Any]] | None:
    """Kafka's description of ``topic`` once every partition has a leader."""
    described = view.describe(topic)
    return described if described and all(p["leader"] >= 0 for p in described.values()) else None


def _create_through_reconcile(store: ZkStore, topic: str, partitions: int, rf: int) -> dict[int, list[int]]:
    """Create ``topic`` as the operator does for a new KafkaTopic; its assignment."""
    resource = parse_resource(
        {
            "metadata": {"name": topic, "namespace": "ns", "uid": f"u-{topic}", "generation": 1},
            "spec": {
                "partitions": partitions,
                "replicationFactor": rf,
                "config": {"retention.ms": "3600000"},
            },
        }
    )
    result = reconcile_topic(
        resource, store, previous_status={}, policies=TopicPolicies(create_wait_seconds=20)
    )
    assert result.outcome is errors.Reason.CREATED, result.outcome
    assigned = store.read_assignment(topic)
    assert assigned is not None
    return {p: list(replicas) for p, replicas in assigned.value.partitions.items()}


def test_the_operator_logs_in_from_its_keytab_and_kafka_serves_the_topic_it_creates(
    krb: KerberizedKafka, view: KafkaView, tmp_path: Path, unique_topic: str
) -> None:
    runtime = _cluster(tmp_path, krb.entry())
    try:
        store = runtime.store()
        # The KDC issued the operator's own principal a ticket for ZooKeeper (from its keytab, no kinit).
        assert krb.realm.process is not None
        kdc_log = krb.realm.process.log_path.read_text().splitlines()
        assert any(
            "TGS_REQ" in line
            and "ISSUE" in line
            and f"{krb.operator_principal} for zookeeper/localhost@" in line
            for line in kdc_log
        ), kdc_log[-5:]
        assignment = _create_through_reconcile(store, unique_topic, partitions=2, rf=2)

        described = wait_for(
            lambda: _led(view, unique_topic), timeout=60, what=f"Kafka to serve {unique_topic}"
        )
        assert {p: d["replicas"] for p, d in described.items()} == assignment
        assert view.configs(unique_topic).get("retention.ms") == "3600000"
        view.produce(unique_topic, [b"one", b"two", b"three"])
        assert sorted(view.consume_all(unique_topic, expected=3)) == [b"one", b"three", b"two"]

        # The controller rewrote the operator's topic znode (a topic_id) and created the partition
        # state znodes under it: the brokers' principal has every right on what the operator made.
        wait_for(
            lambda: (a := store.read_assignment(unique_topic)) and a.value.topic_id,
            timeout=30,
            what="the controller to add a topic_id",
        )
        client = store.client
        assert _acl(client, "/brokers/topics") == KAFKAS_ACL, "what the brokers create, as Kafka does"
        assert _acl(client, "/brokers/ids/1") == KAFKAS_ACL
        assert _acl(client, f"/brokers/topics/{unique_topic}") == KAFKAS_ACL
        assert _acl(client, f"/config/topics/{unique_topic}") == KAFKAS_ACL
        assert _acl(client, f"/brokers/topics/{unique_topic}/partitions/0/state") == KAFKAS_ACL
    finally:
        runtime.close()


def test_a_reassignment_the_operator_writes_is_carried_out_by_kafka(
    krb: KerberizedKafka, view: KafkaView, tmp_path: Path, unique_topic: str
) -> None:
    runtime = _cluster(tmp_path, krb.entry())
    try:
        store = runtime.store()
        assignment = _create_through_reconcile(store, unique_topic, partitions=2, rf=1)
        wait_for(lambda: view.describe(unique_topic), timeout=60, what=f"Kafka to serve {unique_topic}")
        view.produce(unique_topic, [b"before-the-move"])
        # Each partition moves to the other broker.
        target = {p: [3 - replicas[0]] for p, replicas in assignment.items()}
        store.create_reassignment(
            [znodes_admin.PartitionReassignment(unique_topic, p, tuple(r)) for p, r in target.items()]
        )
        wait_for(
            lambda: (
                (d := view.describe(unique_topic))
                and {p: x["replicas"] for p, x in d.items()} == target
                and all(x["leader"] == target[p][0] for p, x in d.items())
            ),
            timeout=90,
            what=f"Kafka to move {unique_topic} to {target}",
        )
        wait_for(
            lambda: store.client.exists("/admin/reassign_partitions") is None,
            timeout=30,
            what="the controller to delete the reassignment znode the operator created",
        )
        assert view.consume_all(unique_topic, expected=1) == [b"before-the-move"]
    finally:
        runtime.close()


def test_a_client_without_sasl_is_refused(
    krb: KerberizedKafka, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    raw = KazooClient(hosts=krb.zk_hosts, timeout=10)  # no chroot: start() reads nothing
    raw.start(timeout=10)
    try:
        with pytest.raises(SessionClosedRequireSaslError):
            raw.exists(CHROOT)
    finally:
        raw.stop()
        raw.close()
    message = _refusal(_cluster(tmp_path, {"zookeeper": krb.connect}), within_s=10, caplog=caplog)
    assert message.startswith(f"ZooKeeper at {krb.connect} requires SASL authentication and closed")


def test_a_missing_keytab_is_one_clear_line_at_load_and_at_connect(
    krb: KerberizedKafka, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    absent = tmp_path / "absent.keytab"
    with pytest.raises(config.SettingsError) as raised:
        _cluster(tmp_path, krb.entry(keytab=str(absent)))
    assert str(raised.value).endswith(
        f"clusters[0].sasl.keytab: cannot read {absent}: No such file or directory; check the path and "
        "that the keytab is mounted and readable by the operator's user"
    )
    # Gone after start-up (e.g. an unmounted Secret): the next session says so.
    copy = tmp_path / "operator.keytab"
    shutil.copyfile(krb.operator_keytab, copy)
    runtime = _cluster(tmp_path, krb.entry(keytab=str(copy)))
    copy.unlink()
    assert _refusal(runtime, within_s=5, caplog=caplog) == (
        f"cannot read the keytab {copy} of {krb.operator_principal!r} for ZooKeeper at {krb.connect}: "
        "No such file or directory; check that it is mounted and readable by the operator's user"
    )


def test_a_stale_keytab_is_refused_by_the_kdc_in_one_line(
    krb: KerberizedKafka, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stale, fresh = tmp_path / "stale.keytab", tmp_path / "fresh.keytab"
    principal = krb.realm.add_principal(f"kafka/stale-{time.monotonic_ns()}", stale)
    krb.realm.export(principal, fresh)  # a new key: the first keytab's no longer opens a ticket
    message = _refusal(
        _cluster(tmp_path, krb.entry(principal=principal, keytab=str(stale))), within_s=5, caplog=caplog
    )
    assert message.startswith(
        f"Kerberos login of {principal!r} from keytab {stale} for ZooKeeper at {krb.connect} (service "
        "zookeeper/localhost) failed: Decrypt integrity check failed; the keytab must hold the "
        "principal's current key"
    ), message
    assert message.endswith(f"(krb5.conf: {krb.realm.krb5_conf})")

    runtime = _cluster(tmp_path, krb.entry(principal=principal, keytab=str(fresh)))
    try:
        assert runtime.store().broker_ids() == [1, 2]
    finally:
        runtime.close()


def test_an_unreachable_kdc_is_one_clear_line(
    krb: KerberizedKafka, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    keytab = tmp_path / "other.keytab"
    principal = krb.realm.add_principal(f"kafka/no-kdc-{time.monotonic_ns()}", keytab)  # no cached ticket
    dead = ports.free_port()
    krb5_conf = tmp_path / "krb5.conf"
    krb5_conf.write_text(krb.realm.krb5_conf.read_text().replace(f":{krb.realm.port}\n", f":{dead}\n"))
    with environment({"KRB5_CONFIG": str(krb5_conf)}):
        message = _refusal(
            _cluster(tmp_path, krb.entry(principal=principal, keytab=str(keytab))), within_s=10, caplog=caplog
        )
    assert "failed: Cannot contact any KDC for realm 'KZO.TEST'" in message, message
    assert "krb5.conf must name a KDC of the principal's realm that this pod can reach" in message
    assert message.endswith(f"(krb5.conf: {krb5_conf})")


def test_a_connect_string_host_without_a_zookeeper_principal_is_named(
    krb: KerberizedKafka, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    by_address = f"{ports.LOOPBACK}:{krb.zookeeper.port}{CHROOT}"  # ZooKeeper's principal names localhost
    message = _refusal(
        _cluster(tmp_path, {**krb.entry(), "zookeeper": by_address}), within_s=5, caplog=caplog
    )
    assert message.startswith(
        f"Kerberos login of {krb.operator_principal!r} from keytab {krb.operator_keytab} for ZooKeeper at "
        f"{by_address} (service zookeeper/{ports.LOOPBACK}) failed: Server zookeeper/{ports.LOOPBACK}@KZO.TEST "
        "not found in Kerberos database; ZooKeeper's principal must be SERVICE/HOST@REALM"
    ), message


def test_a_ticket_zookeeper_cannot_open_is_refused_in_one_line(
    krb: KerberizedKafka, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A second ZooKeeper, with the service name ``zk2`` (``sasl.service``), whose keytab went stale
    after it started: the KDC issues tickets it cannot decrypt, so it drops the login."""
    stale, current = tmp_path / "zk2-stale.keytab", tmp_path / "zk2-current.keytab"
    principal = krb.realm.add_principal("zk2/localhost", stale)
    jaas = tmp_path / "zk2-jaas.conf"
    jaas.write_text(jaas_section("Server", stale, principal))
    server = ZooKeeperServer(
        tmp_path / "zookeeper",
        ports.free_port(),
        krb.zookeeper.libs,
        extra_config=dict(ZOOKEEPER_SETTINGS),
        jvm_options=(f"-Djava.security.auth.login.config={jaas}", *krb.realm.java_options),
    )
    server.start()
    try:
        server.wait_ready(timeout=60)
        connect = f"localhost:{server.port}"
        # While its key is current the operator logs in (sasl.service names ZooKeeper's principal).
        client = session.connect(
            _cluster(tmp_path, {**krb.entry(service="zk2"), "zookeeper": connect}).settings.zk
        )
        try:
            assert client.exists("/") is not None
        finally:
            session.close(client)

        krb.realm.export(principal, current)  # a new key that the running server does not hold
        other_keytab = tmp_path / "other.keytab"
        other = krb.realm.add_principal(f"kafka/zk2-{time.monotonic_ns()}", other_keytab)  # no cached ticket
        entry = {**krb.entry(service="zk2", principal=other, keytab=str(other_keytab)), "zookeeper": connect}
        refused = _cluster(tmp_path, entry)
        message = _refusal(refused, within_s=10, caplog=caplog)
    finally:
        assert server.process is not None
        server.process.stop()
    assert message == (
        f"ZooKeeper at localhost:{server.port} refused the SASL GSSAPI login of {other!r}: it could not "
        "accept the Kerberos ticket; check that ZooKeeper's JAAS Server section logs in as "
        "zk2/HOST@REALM (HOST as in the connect string) with that principal's current key, and that "
        "its authProvider is SASLAuthenticationProvider"
    )
