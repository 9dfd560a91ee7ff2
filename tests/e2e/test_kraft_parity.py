"""The core KafkaTopic and PartitionReassignment behaviours on native KRaft clusters (no ZooKeeper).

Every test runs twice: on the session's KRaft 3.9 cluster (``kraft_cluster``) and on a KRaft 4.1
cluster of this module's own (:data:`~tests.kraft_stack.KAFKA_4_VERSION`, same layout: controller
3000, brokers 1-3 in racks rack-a/b/c), stopped when the module is done with it. The operator runs
as a real process with a clusters file whose only cluster is that one (``bootstrapServers``, no
``zookeeper``, no ``kafkaVersion``): every read and write goes through the Kafka Admin API backend.
The assertions are the ZooKeeper e2e tests' (``test_kafkatopic.py``, ``test_partitionreassignment.py``),
checked with Kafka's own view: a plain kafka-python client and Kafka's ``TopicCommand``. One more
compares the operator's verdict on a topic config with Kafka's own (a validate-only CreateTopics)
on each line: 4.x has no ``message.format.version`` and 4.1 no segments under 1 MiB.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from kafka_zk_operator.devstack import artifacts
from kafka_zk_operator.devstack.kraft import KRaftSpec
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic, serving_alone, wait_gone
from tests.e2e.kafka_client import KafkaView, expect_out_of_band_change_reverted
from tests.e2e.reassignment_helpers import (
    SLOW_RATE,
    create_topic,
    explicit_moves,
    fill,
    fill_slow,
    kafka_broker_throttles,
    kafka_topic_throttles,
    reassignment,
    wait_phase,
)
from tests.integration.helpers import wait_for
from tests.kraft_stack import (
    KAFKA_4_VERSION,
    TOPIC_COMMAND,
    KRaftCluster,
    describe_replicas,
    start_kraft_cluster,
)

#: The Kafka releases the behaviours run on: the session's KRaft 3.9 cluster, and a 4.x one.
PARITY_VERSIONS = (artifacts.DEFAULT_KAFKA_VERSION, KAFKA_4_VERSION)


@pytest.fixture(scope="module", params=PARITY_VERSIONS)
def parity_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KRaftCluster]:
    """The session's ``kraft_cluster`` (3.9), or a 4.x cluster of the same layout started for this
    module (~10 s) and stopped after its last test."""
    if request.param == artifacts.DEFAULT_KAFKA_VERSION:
        yield request.getfixturevalue("kraft_cluster")
        return
    cluster = start_kraft_cluster(
        tmp_path_factory.mktemp("kraft4"), KRaftSpec(controllers="separate", kafka_version=request.param)
    )
    try:
        yield cluster
    finally:
        cluster.stack.down()


@pytest.fixture(scope="module")
def kraft_operator(
    kafka_cluster: KafkaCluster,
    parity_cluster: KRaftCluster,
    operator: OperatorProcess,
    crds: None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[OperatorProcess]:
    """``kzo operator`` serving only the module's KRaft cluster (the session operator stopped meanwhile)."""
    entry = {"name": "kraft", "bootstrapServers": parity_cluster.bootstrap_servers}
    with serving_alone(kafka_cluster, operator, tmp_path_factory.mktemp("kraft-operator"), entry) as process:
        yield process


@pytest.fixture
def view(parity_cluster: KRaftCluster) -> Iterator[KafkaView]:
    """A client of each test's own: one kept across a broker's restart (the under-replication
    test) answered requests to the controller with ``UnknownBrokerIdError: 3`` afterwards."""
    kafka = KafkaView(parity_cluster.bootstrap_servers)
    try:
        yield kafka
    finally:
        kafka.close()


@pytest.fixture
def kts(api_client: client.ApiClient, kraft_operator: OperatorProcess) -> Resources:
    return Resources(api_client, "kafkatopics")


@pytest.fixture
def kprs(api_client: client.ApiClient, kraft_operator: OperatorProcess) -> Resources:
    return Resources(api_client, "partitionreassignments")


def _racks(cluster: KRaftCluster) -> dict[int, str | None]:
    return {b.id: b.rack for b in cluster.brokers}


def test_a_kafkatopic_creates_a_rack_diverse_topic_through_the_admin_api(
    kts: Resources, namespace: str, view: KafkaView, parity_cluster: KRaftCluster, unique_topic: str
) -> None:
    kts.create(namespace, kafkatopic(unique_topic, partitions=6, rf=3, config={"retention.ms": "7200000"}))
    ready = kts.wait_ready(namespace, unique_topic)
    described = wait_for(lambda: view.describe(unique_topic), what="Kafka to describe the topic")
    assert sorted(described) == list(range(6))
    racks = _racks(parity_cluster)
    for partition in described.values():
        assert len({racks[b] for b in partition["replicas"]}) == 3, "replicas must span three racks"
    wait_for(lambda: view.configs(unique_topic).get("retention.ms") == "7200000", what="retention.ms")
    status = ready["status"]
    assert (status["migrationPhase"], status["backend"]) == ("KRaft", "AdminAPI")
    assert status["partitions"] == 6 and status["replicationFactor"] == 3
    assert status["underReplicatedPartitions"] == 0
    cli = parity_cluster.kafka_cli(TOPIC_COMMAND, "--describe", "--topic", unique_topic)
    assert f"TopicId: {status['topicId']}" in cli, cli


#: Topic configs whose verdict differs between the lines: Kafka 4.0 removed message.format.version
#: (KIP-724), and 4.1 made segment.bytes at least 1 MiB.
LINE_CONFIGS = (
    (
        {"message.format.version": "3.0"},
        "message.format.version: Kafka 3.9 was the last line with this config; "
        "this cluster runs Kafka 4.1 (its finalized metadata.version is level 27, which Kafka 4.1 introduced",
    ),
    ({"segment.bytes": "1000"}, "segment.bytes='1000': must be at least 1048576"),
)


def _kafka_refuses(view: KafkaView, topic: str, config: dict[str, str]) -> tuple[int, str] | None:
    """Kafka's own verdict on a topic with ``config``: a validate-only CreateTopics (nothing is
    created); its error code and message when Kafka refuses it, else None."""
    spec = {"num_partitions": 1, "replication_factor": 1, "configs": config}
    response = view.admin.create_topics({topic: spec}, validate_only=True, raise_errors=False)
    (answer,) = response["topics"]
    code = int(answer["error_code"])
    return None if code == 0 else (code, str(answer["error_message"]))


@pytest.mark.parametrize(("config", "refusal"), LINE_CONFIGS, ids=[next(iter(c)) for c, _ in LINE_CONFIGS])
def test_a_topic_config_is_judged_by_the_clusters_own_line(
    kts: Resources,
    namespace: str,
    view: KafkaView,
    parity_cluster: KRaftCluster,
    unique_topic: str,
    config: dict[str, str],
    refusal: str,
) -> None:
    """No kafkaVersion: the operator takes the line of the cluster's finalized metadata.version,
    and refuses exactly what that Kafka refuses (3.9 takes both configs, 4.1 neither)."""
    kafka_says = _kafka_refuses(view, unique_topic, config)
    kts.create(namespace, kafkatopic(unique_topic, partitions=1, rf=1, config=config))
    if parity_cluster.kafka_version.startswith("3."):
        assert kafka_says is None
        kts.wait_ready(namespace, unique_topic)
        wait_for(lambda: unique_topic in view.topic_names(), what="Kafka to list the topic")
        return
    assert kafka_says is not None and kafka_says[0] == 40, kafka_says  # INVALID_CONFIG
    cond = kts.wait_reason(namespace, unique_topic, "InvalidSpec")
    assert refusal in cond["message"], cond
    assert unique_topic not in view.topic_names()


def test_an_explicit_assignment_is_what_kafka_holds(
    kts: Resources, namespace: str, parity_cluster: KRaftCluster, unique_topic: str
) -> None:
    wanted = {0: [1, 2], 1: [2, 3], 2: [3, 1]}
    kts.create(
        namespace,
        kafkatopic(unique_topic, partitions=3, rf=2, assignment={str(p): r for p, r in wanted.items()}),
    )
    kts.wait_ready(namespace, unique_topic)
    cli = parity_cluster.kafka_cli(TOPIC_COMMAND, "--describe", "--topic", unique_topic)
    assert describe_replicas(cli) == wanted


def test_growing_partitions_and_changing_config_keep_the_topic_id(
    kts: Resources, namespace: str, view: KafkaView, unique_topic: str
) -> None:
    kts.create(namespace, kafkatopic(unique_topic, partitions=2, rf=2, config={"retention.ms": "3600000"}))
    topic_id = kts.wait_ready(namespace, unique_topic)["status"]["topicId"]
    kts.patch(namespace, unique_topic, {"spec": {"partitions": 5, "config": {"retention.ms": "600000"}}})
    kts.wait_ready(namespace, unique_topic)
    described = wait_for(lambda: d if (d := view.describe(unique_topic)) and len(d) == 5 else None)
    assert all(len(p["replicas"]) == 2 for p in described.values())
    wait_for(lambda: view.configs(unique_topic).get("retention.ms") == "600000", what="new retention.ms")
    after = wait_for(
        lambda: b if (b := kts.get(namespace, unique_topic)) and b["status"].get("partitions") == 5 else None
    )
    assert after["status"]["topicId"] == topic_id


def test_an_out_of_band_config_change_is_reverted_by_the_resync(
    kts: Resources, namespace: str, view: KafkaView, unique_topic: str
) -> None:
    kts.create(namespace, kafkatopic(unique_topic, partitions=1, rf=1, config={"retention.ms": "3600000"}))
    kts.wait_ready(namespace, unique_topic)
    expect_out_of_band_change_reverted(
        view, unique_topic, "retention.ms", changed="1000", wanted="3600000", timeout=45
    )


def test_an_existing_topic_is_adopted_with_its_id_and_deleting_the_resource_deletes_it(
    kts: Resources, namespace: str, view: KafkaView, unique_topic: str
) -> None:
    view.create_topic(unique_topic, 3, 2, {"retention.ms": "86400000"})
    before = wait_for(lambda: view.describe(unique_topic), what="the pre-existing topic")
    kts.create(namespace, kafkatopic(unique_topic, partitions=3, rf=2, config={"retention.ms": "86400000"}))
    ready = kts.wait_ready(namespace, unique_topic)
    assert ready["status"]["conditions"][0]["reason"] in ("Adopted", "InSync")
    assert {p: v["replicas"] for p, v in view.describe(unique_topic).items()} == {  # type: ignore[union-attr]
        p: v["replicas"] for p, v in before.items()
    }
    kts.delete(namespace, unique_topic)
    wait_gone(lambda: kts.get(namespace, unique_topic), what="the KafkaTopic to go away")
    wait_for(lambda: unique_topic not in view.topic_names(), what="Kafka to delete the topic")


def test_a_stopped_broker_shows_as_under_replicated_partitions(
    kts: Resources, namespace: str, parity_cluster: KRaftCluster, unique_topic: str
) -> None:
    kts.create(namespace, kafkatopic(unique_topic, partitions=3, rf=3))
    kts.wait_ready(namespace, unique_topic)
    broker = parity_cluster.stack.brokers[-1]
    broker.stop()
    try:
        wait_for(
            lambda: (
                (kts.get(namespace, unique_topic) or {}).get("status", {}).get("underReplicatedPartitions")
                == 3
            ),
            timeout=60,
            what="the resync to report 3 under-replicated partitions",
        )
    finally:
        broker.start()
    wait_for(
        lambda: (
            (kts.get(namespace, unique_topic) or {}).get("status", {}).get("underReplicatedPartitions") == 0
        ),
        timeout=90,
        what="the partitions back in sync",
    )


def test_a_throttled_explicit_reassignment_completes_and_leaves_no_throttle(
    kprs: Resources,
    namespace: str,
    view: KafkaView,
    parity_cluster: KRaftCluster,
    unique_topic: str,
    kraft_operator: OperatorProcess,
) -> None:
    create_topic(view, unique_topic, {0: [1, 2], 1: [2, 1]})
    fill_slow(view, unique_topic, 0)
    fill(view, unique_topic, count=20, partition=1)
    kprs.create(namespace, explicit_moves("kraft-explicit", unique_topic, {0: [3, 1], 1: [2, 3]}))
    # While it runs, Kafka reports the operator's throttle on the moving replicas.
    wait_for(
        lambda: kafka_topic_throttles(view, unique_topic).get("follower.replication.throttled.replicas"),
        timeout=60,
        interval=0.2,
        what="the throttle while the batch runs",
    )
    assert kafka_broker_throttles(view, 3).get("follower.replication.throttled.rate") == str(SLOW_RATE)
    done = wait_phase(kprs, namespace, "kraft-explicit", "Completed", timeout=180)
    assert done["status"]["progress"]["partitionsDone"] == 2
    cli = parity_cluster.kafka_cli(TOPIC_COMMAND, "--describe", "--topic", unique_topic)
    assert describe_replicas(cli) == {0: [3, 1], 1: [2, 3]}
    wait_for(lambda: kafka_topic_throttles(view, unique_topic) == {}, what="the topic's throttle removed")
    assert all(kafka_broker_throttles(view, b.id) == {} for b in parity_cluster.brokers)
    # The record is cleared (its rate stays, as what spec.throttle asked for), as on ZooKeeper.
    record = ((kprs.get(namespace, "kraft-explicit") or {}).get("status") or {}).get("throttle")
    assert record == {"applied": False, "rate": SLOW_RATE}


def test_a_computed_rebalance_evens_out_a_skewed_topic_through_the_admin_api(
    kprs: Resources, namespace: str, view: KafkaView, parity_cluster: KRaftCluster, unique_topic: str
) -> None:
    create_topic(view, unique_topic, {p: [1, 2] if p % 2 == 0 else [2, 1] for p in range(6)})
    kprs.create(
        namespace, reassignment("kraft-rebalance", mode="Rebalance", approval="Auto", topics=[unique_topic])
    )
    body = wait_phase(kprs, namespace, "kraft-rebalance", "Completed", timeout=180)
    proposal = body["status"]["proposal"]
    assert proposal["moves"] == proposal["lowerBound"] > 0
    after = describe_replicas(parity_cluster.kafka_cli(TOPIC_COMMAND, "--describe", "--topic", unique_topic))
    assert any(3 in r for r in after.values()), "the skewed topic now has replicas on broker 3"
    # Balanced over the whole cluster (the plan weighs every topic; only spec.topics move).
    loads = {b: 0 for b in (1, 2, 3)}
    for described in view.describe_many(
        sorted(t for t in view.topic_names() if not t.startswith("__"))
    ).values():
        for partition in described.values():
            for broker in partition["replicas"]:
                loads[broker] += 1
    assert max(loads.values()) - min(loads.values()) <= 1, loads
    racks = _racks(parity_cluster)
    assert all(len({racks[b] for b in r}) == len(r) for r in after.values())


def test_demote_brokers_moves_leadership_off_a_broker_without_moving_data(
    kprs: Resources, namespace: str, view: KafkaView, parity_cluster: KRaftCluster, unique_topic: str
) -> None:
    create_topic(view, unique_topic, {0: [2, 1], 1: [2, 3], 2: [2, 1], 3: [1, 2]})
    wait_for(
        lambda: (
            (d := view.describe(unique_topic)) and all(p["leader"] == p["replicas"][0] for p in d.values())
        ),
        what="the preferred leaders to lead",
    )
    kprs.create(namespace, reassignment("kraft-demote", mode="DemoteBrokers", approval="Auto", brokers=[2]))
    body = wait_phase(kprs, namespace, "kraft-demote", "Completed", timeout=120)
    assert body["status"]["proposal"]["moves"] == 0, "no replica changes broker"
    cli = parity_cluster.kafka_cli(TOPIC_COMMAND, "--describe", "--topic", unique_topic)
    assert describe_replicas(cli) == {0: [1, 2], 1: [3, 2], 2: [1, 2], 3: [1, 2]}
    wait_for(
        lambda: (d := view.describe(unique_topic)) and all(p["leader"] != 2 for p in d.values()),
        timeout=60,
        what="Kafka to move every leader of the topic off broker 2 (ElectLeaders)",
    )
