"""PartitionReassignment end to end: real API server + the operator process + real Kafka 3.9.

These tests run on a cluster of their own (3 brokers in racks rack-a/b/c, grown to 6 and shrunk
back by the broker tests), with its own ZooKeeper, kube-apiserver and operator process: they stop
and restart brokers, kill the operator and move every topic, which the other e2e tests must not
see. The fixtures below override the shared ones of ``tests/e2e/conftest.py`` for this module
only (``kafka_cluster``, ``api_client``, ``crds``, ``operator``), so ``namespace``, ``zk`` and the
failure report (operator log tail) work unchanged.

Mid-flight observations use data plus a low throttle, so that a batch takes a few seconds; every
wait polls.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.devstack.stack import LocalStack, StackSpec
from tests.conftest import MAIN_KAFKA_VERSION, KafkaCluster
from tests.e2e.conftest import ROOT, OperatorProcess, Resources
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import (
    ZkProbe,
    create_topic,
    fill,
    kafka_broker_throttles,
    kafka_topic_throttles,
    reassignment,
    wait_phase,
)
from tests.integration.helpers import wait_for

SLOW = 10_240  # bytes/s: a batch of ~60 KB takes several seconds


# ------------------------------------------------------------------ a cluster of our own
@pytest.fixture(scope="module")
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    stack = LocalStack(
        StackSpec(kafka_version=MAIN_KAFKA_VERSION),
        tmp_path_factory.mktemp("reassignment-stack"),
        progress=lambda message: print(f"[reassignment stack] {message}"),
    )
    stack.up()
    try:
        yield KafkaCluster(stack, MAIN_KAFKA_VERSION)
    finally:
        stack.down()


@pytest.fixture(scope="module")
def api_client(kafka_cluster: KafkaCluster) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(kafka_cluster.kubeconfig))


@pytest.fixture(scope="module")
def crds(api_client: client.ApiClient) -> None:
    ext = client.ApiextensionsV1Api(api_client)
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        body = yaml.safe_load(path.read_text())
        try:
            ext.create_custom_resource_definition(body)
        except ApiException as exc:
            if exc.status != 409:
                raise

        def established(name: str = body["metadata"]["name"]) -> bool:
            crd = ext.read_custom_resource_definition(name)
            return any(c.type == "Established" and c.status == "True" for c in (crd.status.conditions or []))

        wait_for(established, what=f"CRD {body['metadata']['name']}")


@pytest.fixture(scope="module")
def operator(
    kafka_cluster: KafkaCluster, crds: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    process = OperatorProcess(
        kubeconfig=kafka_cluster.kubeconfig,
        zk_connect=kafka_cluster.zk_connect,
        log_path=tmp_path_factory.mktemp("reassignment-operator") / "operator.log",
        extra_env={"KZO_REASSIGNMENT_POLL_SECONDS": "1", "KZO_RESYNC_SECONDS": "30"},
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def kafka(kafka_cluster: KafkaCluster) -> Iterator[KafkaView]:
    view = KafkaView(kafka_cluster.bootstrap_servers)
    try:
        yield view
    finally:
        view.close()


@pytest.fixture
def probe(kafka_cluster: KafkaCluster) -> Iterator[ZkProbe]:
    with kafka_cluster.zk_session() as session:
        yield ZkProbe(session)


@pytest.fixture
def kprs(api_client: client.ApiClient, operator: OperatorProcess) -> Resources:
    return Resources(api_client, "partitionreassignments")


def _events(api_client: client.ApiClient, namespace: str, name: str) -> list[tuple[str, str]]:
    listed = client.CoreV1Api(api_client).list_namespaced_event(namespace)
    return [(e.reason, e.message) for e in listed.items if e.involved_object.name == name]


def _racks(cluster: KafkaCluster) -> dict[int, str | None]:
    return {b.id: b.rack for b in cluster.brokers}


# ------------------------------------------------------------------ invalid input
@pytest.fixture(scope="module")
def target_topic(kafka: KafkaView) -> str:
    create_topic(kafka, "invalid-input-target", {0: [1, 2], 1: [2, 3]})
    return "invalid-input-target"


def _doc(*partitions: dict[str, Any]) -> str:
    return json.dumps({"version": 1, "partitions": list(partitions)})


INVALID = {
    "unknown-topic": (
        {"partitions": [{"topic": "no-such-topic", "partition": 0, "replicas": [1, 2]}]},
        "does not exist",
    ),
    "unknown-partition": (
        {"partitions": [{"topic": "{t}", "partition": 7, "replicas": [1, 2]}]},
        "-7 does not exist",
    ),
    "unknown-broker": (
        {"partitions": [{"topic": "{t}", "partition": 0, "replicas": [1, 9]}]},
        "broker 9 is not a registered",
    ),
    "rf-mismatch": (
        {"partitions": [{"topic": "{t}", "partition": 0, "replicas": [1, 2, 3]}]},
        "mix replication factors",
    ),
    "empty-replicas": (
        {"reassignmentJson": _doc({"topic": "{t}", "partition": 0, "replicas": []})},
        "empty replica list",
    ),
    "duplicate-replicas": (
        {"reassignmentJson": _doc({"topic": "{t}", "partition": 0, "replicas": [3, 3]})},
        "more than once",
    ),
    "malformed-json": ({"reassignmentJson": '{"version":1,"partitions":[{"topic":'}, "not valid JSON"),
    "log-dirs": (
        {
            "reassignmentJson": _doc(
                {"topic": "{t}", "partition": 0, "replicas": [3, 1], "log_dirs": ["/d1", "any"]}
            )
        },
        "intra-broker",
    ),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_input_is_refused_with_a_clear_condition_and_writes_nothing(
    case: str, kprs: Resources, namespace: str, probe: ZkProbe, target_topic: str
) -> None:
    spec, expected = INVALID[case]
    spec = json.loads(json.dumps(spec).replace("{t}", target_topic))
    before = probe.assignment(target_topic)
    changes_before = probe.client.get_children("/config/changes")
    kprs.create(namespace, reassignment(case, mode="Explicit", throttle=SLOW, **spec))

    body = wait_phase(kprs, namespace, case, "Failed", timeout=30)
    cond = kprs.condition(namespace, case)
    assert cond is not None and cond["status"] == "False" and cond["reason"] == "InvalidSpec"
    assert expected in cond["message"], cond["message"]
    assert body["status"]["observedGeneration"] == body["metadata"]["generation"]
    time.sleep(2)  # a few poll periods: still nothing may happen
    assert probe.reassign_znode() is None
    assert probe.assignment(target_topic) == before
    assert probe.client.get_children("/config/changes") == changes_before, "no config change may be written"
    assert probe.operator_throttles([1, 2, 3], [target_topic]) == {}


# ------------------------------------------------------------------ explicit, throttled
def test_explicit_mode_moves_exactly_what_was_asked_throttled_while_it_runs(
    kprs: Resources,
    namespace: str,
    probe: ZkProbe,
    kafka: KafkaView,
    unique_topic: str,
    api_client: client.ApiClient,
) -> None:
    create_topic(kafka, unique_topic, {0: [1, 2], 1: [2, 1], 2: [1, 2]})
    messages = fill(kafka, unique_topic, count=150)
    wanted = {0: [3, 1], 1: [2, 3]}
    kprs.create(
        namespace,
        reassignment(
            "explicit",
            mode="Explicit",
            throttle=SLOW,
            batch={"maxPartitions": 1},
            partitions=[{"topic": unique_topic, "partition": p, "replicas": r} for p, r in wanted.items()],
        ),
    )
    # While batch 1 (partition 0: 1,2 -> 3,1) runs: Kafka's throttle lists on exactly the moving
    # replicas, rates on the brokers involved, as ZooKeeper holds them and as Kafka reports them.
    seen = wait_for(
        lambda: (
            (t := probe.operator_throttles([1, 2, 3], [unique_topic])) and f"topics/{unique_topic}" in t and t
        ),
        timeout=60,
        interval=0.1,
        what="the throttle of batch 1",
    )
    topic_lists = seen[f"topics/{unique_topic}"]
    assert topic_lists == {
        "leader.replication.throttled.replicas": "0:1,0:2",
        "follower.replication.throttled.replicas": "0:3",
    }
    for broker in (1, 2, 3):
        assert seen[f"brokers/{broker}"] == {
            "leader.replication.throttled.rate": str(SLOW),
            "follower.replication.throttled.rate": str(SLOW),
        }
    if probe.reassign_znode() is not None:  # still in flight: Kafka reports the same throttles
        assert kafka_topic_throttles(kafka, unique_topic) in ({}, topic_lists)
        assert kafka_broker_throttles(kafka, 3) in ({}, seen["brokers/3"])
    running = wait_phase(kprs, namespace, "explicit", ("Running", "Completed"))
    assert running["status"]["proposal"]["moves"] == 2

    done = wait_phase(kprs, namespace, "explicit", "Completed", timeout=120)
    assert probe.assignment(unique_topic) == {0: [3, 1], 1: [2, 3], 2: [1, 2]}
    described = kafka.describe(unique_topic) or {}
    assert {p: d["replicas"] for p, d in described.items()} == {0: [3, 1], 1: [2, 3], 2: [1, 2]}
    assert probe.reassign_znode() is None
    assert probe.operator_throttles([1, 2, 3], [unique_topic]) == {}
    assert kafka_topic_throttles(kafka, unique_topic) == {}
    assert all(kafka_broker_throttles(kafka, b) == {} for b in (1, 2, 3))
    status = done["status"]
    assert status["progressText"] == "2/2"
    assert status["progress"]["batchesTotal"] == 2 and status["progress"]["completedAt"]
    assert status["throttle"]["applied"] is False
    assert sorted(kafka.consume_all(unique_topic, expected=len(messages))) == sorted(messages)
    reasons = [reason for reason, _ in _events(api_client, namespace, "explicit")]
    assert reasons.count("BatchStarted") == 2 and reasons.count("BatchCompleted") == 2
    assert "Completed" in reasons and "ThrottleRemoved" in reasons
    wait_for(
        lambda: probe.leader(unique_topic, 0) == 3, timeout=30, what="the preferred leader of partition 0"
    )


def test_embedded_kafka_json_is_accepted_and_log_dirs_any_are_not_written(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, unique_topic: str
) -> None:
    create_topic(kafka, unique_topic, {0: [1, 2]})
    document = _doc({"topic": unique_topic, "partition": 0, "replicas": [2, 3], "log_dirs": ["any", "any"]})
    kprs.create(namespace, reassignment("from-json", mode="Explicit", reassignmentJson=document))
    wait_phase(kprs, namespace, "from-json", "Completed", timeout=60)
    assert probe.assignment(unique_topic) == {0: [2, 3]}
