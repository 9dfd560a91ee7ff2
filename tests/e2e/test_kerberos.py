"""The operator process against a Kerberized Kafka cluster: a real MIT KDC, ZooKeeper demanding SASL
GSSAPI, two Kafka brokers logged in from a keytab with ``zookeeper.set.acl=true``
(``tests/integration/kerberos_stack.py``, the set-up of docs/zookeeper.md).

``kzo operator`` runs as the chart's Deployment would: a clusters file whose ``sasl`` section names
the operator's principal and keytab, ``KRB5_CONFIG`` pointing at krb5.conf, no ``kinit`` and no
credentials cache of its own (it must make one). A KafkaTopic and a PartitionReassignment of it go
through the real API server; Kafka's view is read with a Kafka client, the znodes' ACLs with a bare
kazoo client logged in with the same keytab.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.security import Permissions
from kubernetes import client

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import MAIN_KAFKA_VERSION, KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic, scoped_operator
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import reassignment, wait_phase
from tests.integration.helpers import wait_for
from tests.integration.kerberos_stack import KAFKA_IDENTITY, KerberizedKafka, environment, kerberized_kafka

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the MIT KDC of these tests runs on Linux")

CLUSTER = "kerberos"
KAFKAS_ACL = {("sasl", KAFKA_IDENTITY, Permissions.ALL), ("world", "anyone", Permissions.READ)}


@pytest.fixture(scope="module")
def krb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KerberizedKafka]:
    workdir = tmp_path_factory.mktemp("kerberos-e2e")
    with kerberized_kafka(
        workdir, brokers=2, kafka_version=MAIN_KAFKA_VERSION, chroot="/kafka-krb-e2e"
    ) as cluster:
        yield cluster


@pytest.fixture
def krb_operator(
    kafka_cluster: KafkaCluster,
    operator: OperatorProcess,
    krb: KerberizedKafka,
    namespace: str,
    tmp_path: Path,
) -> Iterator[OperatorProcess]:
    """``kzo operator`` serving only the Kerberized cluster, in ``namespace`` (the session's API server)."""
    entry = krb.entry()
    del entry["zookeeper"]
    # As in the pod: krb5.conf named, no credentials cache or client keytab inherited from the tests.
    env = {**krb.env, "KRB5CCNAME": "", "KRB5_CLIENT_KTNAME": ""}
    with scoped_operator(
        kafka_cluster,
        operator,
        namespace,
        tmp_path,
        {CLUSTER: krb.connect},
        env=env,
        settings={CLUSTER: entry},
    ) as scoped:
        yield scoped


@contextlib.contextmanager
def _bare_kazoo(krb: KerberizedKafka, workdir: Path) -> Iterator[KazooClient]:
    """kazoo alone (not the operator's code), logged in with the operator's keytab."""
    cache = workdir / "ccache"
    cache.mkdir(mode=0o700)
    values = {"KRB5_CLIENT_KTNAME": f"FILE:{krb.operator_keytab}", "KRB5CCNAME": f"DIR:{cache}", **krb.env}
    with environment(values):
        zk = KazooClient(
            hosts=krb.connect,
            sasl_options={"mechanism": "GSSAPI", "service": "zookeeper", "principal": krb.operator_principal},
        )
        zk.start(timeout=20)
        try:
            yield zk
        finally:
            zk.stop()
            zk.close()


def _acl(zk: KazooClient, path: str) -> set[tuple[str, str, int]]:
    return {(a.id.scheme, a.id.id, a.perms) for a in zk.get_acls(path)[0]}


def _replicas(view: KafkaView, topic: str) -> dict[int, list[int]] | None:
    described = view.describe(topic)
    if not described or any(p["leader"] < 0 for p in described.values()):
        return None
    return {p: list(d["replicas"]) for p, d in described.items()}


def test_a_kafkatopic_and_its_reassignment_on_a_kerberized_cluster(
    krb_operator: OperatorProcess,
    krb: KerberizedKafka,
    api_client: client.ApiClient,
    namespace: str,
    unique_topic: str,
    tmp_path: Path,
) -> None:
    topics = Resources(api_client, "kafkatopics")
    topics.create(
        namespace, kafkatopic("krb-topic", partitions=2, rf=1, cluster=CLUSTER, topicName=unique_topic)
    )
    ready = topics.wait_ready(namespace, "krb-topic")
    assert ready["status"]["topicName"] == unique_topic

    view = KafkaView(krb.bootstrap_servers)
    try:
        placed = wait_for(
            lambda: _replicas(view, unique_topic), timeout=60, what=f"Kafka to serve {unique_topic}"
        )
        assert sorted(placed) == [0, 1] and all(len(r) == 1 for r in placed.values())
        view.produce(unique_topic, [b"kerberos"])

        # Each partition moves to the other broker, throttled (the operator writes /config/brokers).
        target = {p: [3 - r[0]] for p, r in placed.items()}
        moves: list[dict[str, Any]] = [
            {"topic": unique_topic, "partition": p, "replicas": r} for p, r in target.items()
        ]
        kprs = Resources(api_client, "partitionreassignments")
        kprs.create(
            namespace,
            reassignment("krb-move", mode="Explicit", cluster=CLUSTER, throttle=50_000_000, partitions=moves),
        )
        done = wait_phase(kprs, namespace, "krb-move", ("Completed", "Failed"), timeout=180)
        assert done["status"]["phase"] == "Completed", done["status"]
        assert wait_for(
            lambda: _replicas(view, unique_topic) == target and target,
            timeout=30,
            what="Kafka's new replicas",
        )
        assert view.consume_all(unique_topic, expected=1) == [b"kerberos"]
    finally:
        view.close()

    with _bare_kazoo(krb, tmp_path) as zk:
        assert zk.exists("/admin/reassign_partitions") is None
        assert _acl(zk, "/brokers/topics") == KAFKAS_ACL  # created by the brokers
        assert _acl(zk, f"/brokers/topics/{unique_topic}") == KAFKAS_ACL
        assert _acl(zk, f"/config/topics/{unique_topic}") == KAFKAS_ACL
        for broker in zk.get_children("/config/brokers"):  # the throttle's znodes: no world-read
            assert _acl(zk, f"/config/brokers/{broker}") == {("sasl", KAFKA_IDENTITY, Permissions.ALL)}
    log = krb_operator.log_path.read_text()
    assert "Traceback" not in log, krb_operator.log_tail(80)
