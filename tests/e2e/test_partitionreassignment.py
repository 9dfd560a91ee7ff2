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
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.recipe.watchers import DataWatch
from kubernetes import client, config

from kafka_zk_operator.devstack import demo
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec
from tests.conftest import MAIN_KAFKA_VERSION, KafkaCluster
from tests.e2e.conftest import ROOT, Resources, operator_running, wait_gone
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import (
    APPROVE,
    SLOW_RATE,
    STOP,
    ZkProbe,
    create_topic,
    explicit_moves,
    fill,
    fill_slow,
    kafka_broker_throttles,
    kafka_topic_throttles,
    phase,
    ready_reason,
    reassignment,
    wait_phase,
)
from tests.integration.helpers import wait_for

SLOW = SLOW_RATE


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
    api: client.ApiClient = config.new_client_from_config(  # type: ignore[no-untyped-call]  # kubernetes.config is untyped
        config_file=str(kafka_cluster.kubeconfig)
    )
    return api


@pytest.fixture(scope="module")
def crds(api_client: client.ApiClient) -> None:
    demo.install_crds(api_client, ROOT / "crds")


@pytest.fixture(scope="module")
def operator(
    kafka_cluster: KafkaCluster, crds: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    log_dir = tmp_path_factory.mktemp("reassignment-operator")
    env = {"KZO_REASSIGNMENT_POLL_SECONDS": "1", "KZO_RESYNC_SECONDS": "30"}
    with operator_running(kafka_cluster, log_dir, env) as process:
        yield process


@pytest.fixture
def probe(kafka_cluster: KafkaCluster) -> Iterator[ZkProbe]:
    with kafka_cluster.zk_session() as session:
        yield ZkProbe(session)


@pytest.fixture
def kprs(api_client: client.ApiClient, operator: OperatorProcess) -> Resources:
    return Resources(api_client, "partitionreassignments")


def _events(api_client: client.ApiClient, namespace: str, name: str) -> list[tuple[str | None, str | None]]:
    listed = client.CoreV1Api(api_client).list_namespaced_event(namespace)
    return [(e.reason, e.message) for e in listed.items if e.involved_object.name == name]


def _racks(cluster: KafkaCluster) -> dict[int, str | None]:
    return {b.id: b.rack for b in cluster.brokers}


# ------------------------------------------------------------------ computed modes (run first: the
# cluster then holds only these topics, evenly placed, so it is balanced and rack-balanced)
BALANCED = {
    "orders": {p: [1 + (p + j) % 3 for j in range(3)] for p in range(6)},
    "events": {p: [1 + (p + j) % 3 for j in range(2)] for p in range(6)},
}


def _loads(probe: ZkProbe, topics: list[str]) -> Counter[int]:
    return Counter(b for t in topics for replicas in probe.assignment(t).values() for b in replicas)


def _count_lower_bound(loads: Counter[int], eligible: list[int]) -> int:
    """Reference placement §5.1: M_LB = sum over eligible brokers of max(0, t_b - L_b) with
    t_b in {q, q+1}, the s = R mod N extra slots going to the brokers holding the most."""
    total = sum(loads.values())
    q, s = divmod(total, len(eligible))
    by_load = sorted(eligible, key=lambda b: -loads[b])
    targets = {b: q + (1 if i < s else 0) for i, b in enumerate(by_load)}
    return sum(max(0, targets[b] - loads[b]) for b in eligible)


def _plan_targets(body: dict[str, Any]) -> dict[tuple[str, int], list[int]]:
    assert not body["status"].get("planTruncated")
    return {(e["topic"], e["partition"]): e["to"] for e in body["status"]["plan"]}


def _assert_kafka_agrees(kafka: KafkaView, probe: ZkProbe, topics: list[str]) -> None:
    for topic in topics:
        described = kafka.describe(topic) or {}
        assert {p: d["replicas"] for p, d in described.items()} == probe.assignment(topic)


def test_add_brokers_fills_new_brokers_with_exactly_m_lb_moves_and_keeps_every_message(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, kafka_cluster: KafkaCluster
) -> None:
    topics = sorted(BALANCED)
    messages = {}
    for topic, assignment in BALANCED.items():
        create_topic(kafka, topic, assignment)
        messages[topic] = fill(kafka, topic, count=300)
    stack = kafka_cluster.stack
    for broker in (4, 5, 6):
        stack.add_broker(broker, stack.spec.rack_of(broker), wait=False)
    for broker in (4, 5, 6):
        stack.brokers[broker].wait_listening()
    stack.wait_brokers_registered({4, 5, 6})
    racks = _racks(kafka_cluster)
    before = _loads(probe, topics)
    bound = _count_lower_bound(before, [1, 2, 3, 4, 5, 6])
    assignments_before = {t: probe.assignment(t) for t in topics}

    kprs.create(
        namespace,
        reassignment("add-4-5-6", mode="AddBrokers", approval="Auto", brokers=[4, 5, 6], throttle=1_000_000),
    )
    body = wait_phase(kprs, namespace, "add-4-5-6", "Completed", timeout=180)
    proposal = body["status"]["proposal"]
    assert proposal["moves"] == proposal["lowerBound"] == bound == 15
    assert proposal["provablyOptimal"] is True
    after = _loads(probe, topics)
    assert sorted(after.values()) == [5] * 6
    moved = sum(
        len(set(probe.assignment(t)[p]) - set(assignments_before[t][p])) for t in topics for p in BALANCED[t]
    )
    assert moved == bound, "the replicas that actually changed broker are the proposal's moves"
    for (topic, partition), target in _plan_targets(body).items():
        assert probe.assignment(topic)[partition] == target
    for topic in topics:
        for replicas in probe.assignment(topic).values():
            assert len({racks[b] for b in replicas}) == len(replicas), "rack-aware: one replica per rack"
        assert sorted(kafka.consume_all(topic, expected=len(messages[topic]))) == sorted(messages[topic])
    _assert_kafka_agrees(kafka, probe, topics)
    assert probe.operator_throttles([1, 2, 3, 4, 5, 6], topics) == {}


def test_replication_factor_two_to_three_is_rack_aware(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, kafka_cluster: KafkaCluster
) -> None:
    racks = _racks(kafka_cluster)
    kprs.create(
        namespace,
        reassignment(
            "events-rf3", mode="ReplicationFactor", approval="Auto", replicationFactors={"events": 3}
        ),
    )
    body = wait_phase(kprs, namespace, "events-rf3", "Completed", timeout=180)
    proposal = body["status"]["proposal"]
    assert proposal["moves"] == proposal["lowerBound"] >= 6
    for replicas in probe.assignment("events").values():
        assert len(replicas) == 3 and len({racks[b] for b in replicas}) == 3
    for (topic, partition), target in _plan_targets(body).items():
        assert probe.assignment(topic)[partition] == target
    _assert_kafka_agrees(kafka, probe, ["events"])


def test_remove_brokers_drains_them_completely_with_exactly_m_lb_moves(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, kafka_cluster: KafkaCluster
) -> None:
    topics = sorted(BALANCED)
    before = _loads(probe, topics)
    on_removed = sum(before[b] for b in (4, 5, 6))
    kprs.create(
        namespace, reassignment("drain-4-5-6", mode="RemoveBrokers", approval="Auto", brokers=[4, 5, 6])
    )
    body = wait_phase(kprs, namespace, "drain-4-5-6", "Completed", timeout=180)
    proposal = body["status"]["proposal"]
    # Every replica on a removed broker must move, and nothing else needs to: M_LB = their load.
    assert proposal["moves"] == proposal["lowerBound"] == on_removed
    after = _loads(probe, topics)
    assert all(after[b] == 0 for b in (4, 5, 6)) and sum(after.values()) == sum(before.values())
    lines = {line["id"]: line for line in proposal["brokers"]}
    assert all(lines[b]["replicasAfter"] == 0 for b in (4, 5, 6))
    _assert_kafka_agrees(kafka, probe, topics)
    for broker in (4, 5, 6):  # empty now: stop them to spare the test machine
        kafka_cluster.stack.stop_broker(broker)


def test_rebalance_evens_out_a_skewed_topic_with_exactly_m_lb_moves_and_elects_the_new_leaders(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, kafka_cluster: KafkaCluster
) -> None:
    """Brokers 1-3 hold the balanced topics; a new topic sits on brokers 1 and 2 only."""
    skewed = {p: [1, 2] if p % 2 == 0 else [2, 1] for p in range(6)}
    create_topic(kafka, "skewed", skewed)
    topics = [*sorted(BALANCED), "skewed"]
    racks = _racks(kafka_cluster)
    before = _loads(probe, topics)
    assert before[3] < before[1] == before[2], "the scenario needs broker 3 under-loaded"
    bound = _count_lower_bound(before, [1, 2, 3])
    untouched = {t: probe.assignment(t) for t in BALANCED}

    kprs.create(namespace, reassignment("even-out", mode="Rebalance", approval="Auto", topics=["skewed"]))
    body = wait_phase(kprs, namespace, "even-out", "Completed", timeout=180)
    proposal = body["status"]["proposal"]
    assert proposal["moves"] == proposal["lowerBound"] == bound > 0
    after = _loads(probe, topics)
    assert max(after.values()) - min(after.values()) <= 1, after
    assert {t: probe.assignment(t) for t in BALANCED} == untouched, "only spec.topics may move"
    targets = _plan_targets(body)
    assert {topic for topic, _ in targets} == {"skewed"}
    for (topic, partition), target in targets.items():
        assert probe.assignment(topic)[partition] == target
    for replicas in probe.assignment("skewed").values():
        assert len({racks[b] for b in replicas}) == len(replicas)
    _assert_kafka_agrees(kafka, probe, ["skewed"])
    wait_for(
        lambda: all(
            (kafka.describe("skewed") or {}).get(p, {}).get("leader") == target[0]
            for (_, p), target in targets.items()
        ),
        timeout=60,
        what="Kafka's leaders to be the moved partitions' new preferred replicas",
    )


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
    stalled = kprs.condition(namespace, case, "Stalled")  # kstatus: Failed (docs/conditions.md)
    assert stalled is not None and stalled["status"] == "True" and stalled["reason"] == "InvalidSpec"
    assert body["status"]["observedGeneration"] == body["metadata"]["generation"]
    time.sleep(2)  # a few poll periods: still nothing may happen
    assert probe.reassign_znode() is None
    assert probe.assignment(target_topic) == before
    assert probe.client.get_children("/config/changes") == changes_before, "no config change may be written"
    assert probe.operator_throttles([1, 2, 3], [target_topic]) == {}


def test_a_refresh_annotation_replans_a_reassignment_that_failed_before_it_started(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, unique_topic: str
) -> None:
    # The topic does not exist yet: refused. Annotations under the operator's prefix never reach
    # kopf's update handler; the poll timer has to notice the refresh.
    kprs.create(namespace, explicit_moves("later", unique_topic, {0: [3, 1]}))
    failed = wait_phase(kprs, namespace, "later", "Failed", timeout=30)
    assert "does not exist" in failed["status"]["message"]
    create_topic(kafka, unique_topic, {0: [1, 2]})
    kprs.patch(namespace, "later", {"metadata": {"annotations": {"kafka.zk-operator.io/refresh": "true"}}})
    wait_phase(kprs, namespace, "later", "Completed", timeout=120)
    assert probe.assignment(unique_topic) == {0: [3, 1]}
    assert kprs.condition(namespace, "later", "Stalled") is None, "replanned and done: no longer stalled"
    annotations = (kprs.get(namespace, "later") or {})["metadata"].get("annotations") or {}
    assert "kafka.zk-operator.io/refresh" not in annotations


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
    messages = fill_slow(kafka, unique_topic, 0) + fill(kafka, unique_topic, count=50)
    wanted = {0: [3, 1], 1: [2, 3]}
    kprs.create(
        namespace,
        explicit_moves("explicit", unique_topic, wanted, batch={"maxPartitions": 1}),
    )
    # While batch 1 (partition 0: 1,2 -> 3,1) runs: Kafka's throttle lists on exactly the moving
    # replicas, rates on the brokers involved, as ZooKeeper holds them and as Kafka reports them.
    # The topic's and each broker's throttle are separate config writes: wait for all of them.
    seen = wait_for(
        lambda: (
            t
            if (t := probe.operator_throttles([1, 2, 3], [unique_topic]))
            and {f"topics/{unique_topic}", "brokers/1", "brokers/2", "brokers/3"} <= set(t)
            else None
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
    wait_for(
        lambda: (
            kafka_topic_throttles(kafka, unique_topic) == topic_lists
            and kafka_broker_throttles(kafka, 3) == seen["brokers/3"]
        ),
        timeout=10,
        what="Kafka to report the same throttles",
    )
    assert probe.reassign_znode() is not None, "the throttled batch is still in flight"
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


# ------------------------------------------------------------------ throttles of others stay
def test_pre_existing_throttles_are_untouched_and_restored(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, unique_topic: str
) -> None:
    create_topic(kafka, unique_topic, {0: [1, 2]})
    fill(kafka, unique_topic, count=100)
    # Someone else's throttles, written the way ZooKeeper-mode admin tools write them.
    probe.write_config("brokers", "3", {"follower.replication.throttled.rate": "4242"})
    try:
        probe.write_config("topics", unique_topic, {"leader.replication.throttled.replicas": "0:9"})
        wait_for(lambda: probe.broker_config(3).get("follower.replication.throttled.rate") == "4242")
        wait_for(
            lambda: probe.topic_config(unique_topic).get("leader.replication.throttled.replicas") == "0:9"
        )

        kprs.create(
            namespace,
            reassignment(
                "keep-others",
                mode="Explicit",
                throttle=SLOW,
                partitions=[{"topic": unique_topic, "partition": 0, "replicas": [3, 1]}],
            ),
        )
        during = wait_for(
            lambda: (
                c
                if (c := probe.topic_config(unique_topic)).get("follower.replication.throttled.replicas")
                else None
            ),
            interval=0.1,
            what="the operator's throttle",
        )
        assert during["leader.replication.throttled.replicas"].split(",") == ["0:9", "0:1", "0:2"]
        assert probe.broker_config(3)["follower.replication.throttled.rate"] == str(SLOW)

        wait_phase(kprs, namespace, "keep-others", "Completed", timeout=120)
        assert probe.topic_config(unique_topic) == {"leader.replication.throttled.replicas": "0:9"}
        assert probe.broker_config(3) == {"follower.replication.throttled.rate": "4242"}
        assert probe.operator_throttles([1, 2], []) == {}
        # Kafka applies a config change when it processes the notification: eventually, not at once.
        wait_for(
            lambda: kafka_broker_throttles(kafka, 3) == {"follower.replication.throttled.rate": "4242"},
            timeout=15,
            what="Kafka to report the restored rate",
        )
    finally:  # never leave broker 3 throttled to 4 KB/s for the tests that follow
        probe.write_config("brokers", "3", {})


# ------------------------------------------------------------------ approval, queue, stop, delete
def test_manual_approval_moves_nothing_before_the_annotation(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, unique_topic: str
) -> None:
    create_topic(kafka, unique_topic, {0: [1, 2], 1: [2, 3]})
    kprs.create(
        namespace,
        reassignment(
            "manual",
            mode="Explicit",
            approval="Manual",
            throttle=SLOW,
            partitions=[{"topic": unique_topic, "partition": 0, "replicas": [3, 2]}],
        ),
    )
    body = wait_phase(kprs, namespace, "manual", "ProposalReady")
    proposal = body["status"]["proposal"]
    assert proposal["moves"] == 1 and len(proposal["id"]) == 10
    assert body["status"]["plan"] == [{"topic": unique_topic, "partition": 0, "from": [1, 2], "to": [3, 2]}]
    assert ready_reason(kprs, namespace, "manual") == "AwaitingApproval"

    kprs.patch(namespace, "manual", {"metadata": {"annotations": {"kafka.zk-operator.io/refresh": "true"}}})
    wait_for(
        lambda: (
            "kafka.zk-operator.io/refresh"
            not in ((kprs.get(namespace, "manual") or {})["metadata"].get("annotations") or {})
        ),
        what="the refresh annotation to be consumed",
    )
    time.sleep(3)  # several poll periods
    assert (kprs.get(namespace, "manual") or {})["status"]["phase"] == "ProposalReady"
    assert probe.reassign_znode() is None
    assert probe.assignment(unique_topic) == {0: [1, 2], 1: [2, 3]}
    assert probe.operator_throttles([1, 2, 3], [unique_topic]) == {}

    kprs.patch(namespace, "manual", {"metadata": {"annotations": {APPROVE: "true"}}})
    wait_phase(kprs, namespace, "manual", "Completed", timeout=60)
    assert probe.assignment(unique_topic) == {0: [3, 2], 1: [2, 3]}


def test_a_second_reassignment_is_queued_until_the_first_completes(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, unique_topic: str
) -> None:
    first, second = f"{unique_topic}-a", f"{unique_topic}-b"
    create_topic(kafka, first, {0: [1, 2]})
    create_topic(kafka, second, {0: [2, 3]})
    fill_slow(kafka, first, 0)
    kprs.create(
        namespace,
        reassignment(
            "first",
            mode="Explicit",
            throttle=SLOW,
            partitions=[{"topic": first, "partition": 0, "replicas": [3, 1]}],
        ),
    )
    wait_phase(kprs, namespace, "first", "Running")
    kprs.create(
        namespace,
        reassignment(
            "second", mode="Explicit", partitions=[{"topic": second, "partition": 0, "replicas": [1, 2]}]
        ),
    )
    queued = wait_phase(kprs, namespace, "second", "Queued")
    assert f"{namespace}/first" in queued["status"]["message"]
    assert probe.assignment(second) == {0: [2, 3]}
    a = wait_phase(kprs, namespace, "first", "Completed", timeout=120)
    b = wait_phase(kprs, namespace, "second", "Completed", timeout=60)
    assert b["status"]["progress"]["startedAt"] >= a["status"]["progress"]["completedAt"]
    assert probe.assignment(first) == {0: [3, 1]} and probe.assignment(second) == {0: [1, 2]}


def _three_batches(kprs: Resources, namespace: str, name: str, kafka: KafkaView, topic: str) -> None:
    create_topic(kafka, topic, {0: [1, 2], 1: [1, 2], 2: [1, 2]})
    fill_slow(kafka, topic, 0)
    kprs.create(
        namespace, explicit_moves(name, topic, {p: [3, 1] for p in range(3)}, batch={"maxPartitions": 1})
    )


def test_throttle_changes_reach_the_batch_in_flight_and_stop_stops_after_it_removing_throttles(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, unique_topic: str
) -> None:
    _three_batches(kprs, namespace, "stop-me", kafka, unique_topic)
    wait_for(lambda: probe.reassign_znode(), interval=0.1, what="batch 1 in flight")
    # spec.throttle is the one field a running reassignment follows: the batch in flight gets it.
    kprs.patch(namespace, "stop-me", {"spec": {"throttle": 2 * SLOW}})
    wait_for(
        lambda: probe.broker_config(3).get("follower.replication.throttled.rate") == str(2 * SLOW),
        timeout=15,
        what="the new rate on the batch in flight",
    )
    kprs.patch(namespace, "stop-me", {"metadata": {"annotations": {STOP: "true"}}})
    body = wait_phase(kprs, namespace, "stop-me", "Stopped", timeout=120)
    assert probe.reassign_znode() is None
    assignment = probe.assignment(unique_topic)
    moved = [p for p, replicas in assignment.items() if replicas == [3, 1]]
    untouched = [p for p, replicas in assignment.items() if replicas == [1, 2]]
    assert moved and untouched and len(moved) + len(untouched) == 3
    assert body["status"]["progress"]["partitionsDone"] == len(moved)
    assert probe.operator_throttles([1, 2, 3], [unique_topic]) == {}
    assert ready_reason(kprs, namespace, "stop-me") == "Stopped"


def test_deleting_the_resource_mid_run_finishes_the_batch_then_removes_throttles(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, unique_topic: str
) -> None:
    _three_batches(kprs, namespace, "delete-me", kafka, unique_topic)
    wait_for(lambda: probe.reassign_znode(), interval=0.1, what="batch 1 in flight")
    assert probe.operator_throttles([1, 2, 3], [unique_topic]) != {}
    kprs.delete(namespace, "delete-me")
    waiting = wait_for(
        lambda: (
            "waiting for batch 1"
            in ((kprs.get(namespace, "delete-me") or {}).get("status") or {}).get("message", "")
        ),
        what="the finalizer to hold the resource while batch 1 runs",
    )
    # The delete handler writes this only while it sees batch 1 in flight (its znode is ours), so
    # the finalizer held the resource during the batch; the znode itself may be gone a moment later
    # (Kafka finishes the batch whenever it does: reading it here raced with that, found in CI).
    assert waiting
    wait_gone(lambda: kprs.get(namespace, "delete-me"), timeout=120, what="the resource to go away")
    assert probe.reassign_znode() is None, "the finalizer is released once the batch in flight is done"
    assert probe.operator_throttles([1, 2, 3], [unique_topic]) == {}
    assignment = probe.assignment(unique_topic)
    assert sorted(map(tuple, assignment.values())).count((1, 2)) >= 1, "later batches never start"


# ------------------------------------------------------------------ crashes and failovers
def test_a_hard_killed_operator_resumes_without_rerunning_finished_batches(
    kprs: Resources,
    namespace: str,
    probe: ZkProbe,
    kafka: KafkaView,
    unique_topic: str,
    operator: OperatorProcess,
) -> None:
    create_topic(kafka, unique_topic, {p: [1, 2] for p in range(4)})
    messages = fill_slow(kafka, unique_topic, 0) + fill(kafka, unique_topic, count=100)
    wanted = {0: [3, 1], 1: [2, 3], 2: [3, 2], 3: [1, 3]}
    submitted: dict[int, list[int]] = {}  # czxid of each /admin/reassign_partitions -> its partitions

    def record(data: bytes | None, stat: Any) -> None:
        if data and stat is not None and stat.czxid not in submitted:
            submitted[stat.czxid] = sorted(e["partition"] for e in json.loads(data)["partitions"])

    DataWatch(probe.client, "/admin/reassign_partitions", record)
    kprs.create(
        namespace,
        explicit_moves("survivor", unique_topic, wanted, batch={"maxPartitions": 2}),
    )
    wait_for(
        lambda: probe.reassign_znode() and phase(kprs, namespace, "survivor") == "Running",
        interval=0.1,
        what="batch 1 in flight",
    )
    operator.kill()
    try:
        wait_for(lambda: probe.reassign_znode() is None, timeout=120, what="Kafka to finish batch 1 alone")
        assert probe.operator_throttles([1, 2, 3], [unique_topic]) != {}, "nobody removed the throttle"
    finally:
        operator.start()
    done = wait_phase(kprs, namespace, "survivor", "Completed", timeout=180)
    assert probe.assignment(unique_topic) == wanted
    assert probe.operator_throttles([1, 2, 3], [unique_topic]) == {}
    assert done["status"]["progressText"] == "4/4" and done["status"]["progress"]["batchesDone"] == 2
    assert list(submitted.values()) == [[0, 1], [2, 3]], "batch 1 is never submitted again"
    assert sorted(kafka.consume_all(unique_topic, expected=len(messages))) == sorted(messages)


def _slow_batch_in_flight(
    kprs: Resources, namespace: str, probe: ZkProbe, kafka: KafkaView, topic: str, name: str
) -> dict[int, list[int]]:
    """Start a slow two-partition Explicit move of a new topic; return once its batch is in flight."""
    create_topic(kafka, topic, {0: [1, 2], 1: [2, 1]})
    fill_slow(kafka, topic, 0)
    wanted = {0: [3, 1], 1: [2, 3]}
    kprs.create(namespace, explicit_moves(name, topic, wanted))
    wait_for(lambda: probe.reassign_znode(), interval=0.1, what="the batch in flight")
    return wanted


def test_restarting_the_controller_broker_mid_run_still_completes(
    kprs: Resources,
    namespace: str,
    probe: ZkProbe,
    kafka: KafkaView,
    unique_topic: str,
    kafka_cluster: KafkaCluster,
) -> None:
    wanted = _slow_batch_in_flight(kprs, namespace, probe, kafka, unique_topic, "failover")
    controller = probe.controller()
    kafka_cluster.stack.stop_broker(controller)
    try:
        wait_for(lambda: probe.client.exists("/controller") and probe.controller() != controller, timeout=60)
    finally:
        kafka_cluster.stack.restart_broker(controller)
    wait_phase(kprs, namespace, "failover", "Completed", timeout=180)
    assert probe.assignment(unique_topic) == wanted
    assert probe.operator_throttles([1, 2, 3], [unique_topic]) == {}


def test_a_dead_target_broker_is_reported_stuck_with_guidance_and_the_move_resumes_when_it_returns(
    kprs: Resources,
    namespace: str,
    probe: ZkProbe,
    kafka: KafkaView,
    unique_topic: str,
    kafka_cluster: KafkaCluster,
) -> None:
    create_topic(kafka, unique_topic, {0: [1, 2]})
    fill_slow(kafka, unique_topic, 0)
    kprs.create(
        namespace,
        reassignment(
            "stuck",
            mode="Explicit",
            throttle=SLOW,
            partitions=[{"topic": unique_topic, "partition": 0, "replicas": [3, 1]}],
        ),
    )
    wait_for(lambda: probe.reassign_znode(), interval=0.1, what="the batch in flight")
    kafka_cluster.stack.stop_broker(3)
    try:
        stuck = wait_for(
            lambda: (c := kprs.condition(namespace, "stuck", "Stuck")) and c["status"] == "True" and c,
            timeout=60,
            what="the Stuck condition",
        )
        assert "target broker 3 is not registered" in stuck["message"]
        body = kprs.get(namespace, "stuck") or {}
        assert body["status"]["phase"] == "Running"
        assert (
            body["status"]["stuck"][0]["partition"] == 0
            and "Start the broker" in body["status"]["stuck"][0]["reason"]
        )
    finally:
        kafka_cluster.stack.restart_broker(3)
    wait_phase(kprs, namespace, "stuck", "Completed", timeout=180)
    assert probe.assignment(unique_topic) == {0: [3, 1]}
    cleared = kprs.condition(namespace, "stuck", "Stuck")
    assert cleared is not None and cleared["status"] == "False"
    assert probe.operator_throttles([1, 2, 3], [unique_topic]) == {}


def test_a_reassignment_started_by_someone_else_is_waited_for_and_never_touched(
    kprs: Resources,
    namespace: str,
    probe: ZkProbe,
    kafka: KafkaView,
    unique_topic: str,
    kafka_cluster: KafkaCluster,
) -> None:
    theirs, ours = f"{unique_topic}-theirs", f"{unique_topic}-ours"
    create_topic(kafka, theirs, {0: [1, 2]})
    create_topic(kafka, ours, {0: [1, 2]})
    kafka_cluster.stack.stop_broker(3)
    try:
        # Someone else's reassignment onto the stopped broker 3: Kafka waits for it to come back.
        foreign = json.dumps(
            {"version": 1, "partitions": [{"topic": theirs, "partition": 0, "replicas": [3, 1]}]}
        )
        probe.client.create("/admin/reassign_partitions", foreign.encode())
        kprs.create(
            namespace,
            reassignment(
                "polite", mode="Explicit", partitions=[{"topic": ours, "partition": 0, "replicas": [2, 1]}]
            ),
        )
        wait_for(
            lambda: ready_reason(kprs, namespace, "polite") == "WaitingForExternalReassignment", timeout=30
        )
        assert phase(kprs, namespace, "polite") == "Queued"
        time.sleep(2)
        assert probe.reassign_znode() == json.loads(foreign), "the foreign znode is never rewritten"
        assert probe.assignment(ours) == {0: [1, 2]}
    finally:
        kafka_cluster.stack.restart_broker(3)
    wait_phase(kprs, namespace, "polite", "Completed", timeout=120)
    assert probe.assignment(theirs) == {0: [3, 1]} and probe.assignment(ours) == {0: [2, 1]}


def test_a_plan_longer_than_the_status_holds_is_kept_in_owned_configmaps(
    kprs: Resources, namespace: str, kafka: KafkaView, unique_topic: str, api_client: client.ApiClient
) -> None:
    create_topic(kafka, unique_topic, {p: [1] for p in range(510)})
    document = json.dumps(
        {
            "version": 1,
            "partitions": [{"topic": unique_topic, "partition": p, "replicas": [2]} for p in range(510)],
        }
    )
    kprs.create(namespace, reassignment("big", mode="Explicit", approval="Manual", reassignmentJson=document))
    body = wait_phase(kprs, namespace, "big", "ProposalReady", timeout=60)
    status = body["status"]
    assert status["planTruncated"] is True and len(status["plan"]) == 500
    # Every move leaves broker 1 and enters broker 2: 5 per batch (the default maxMovesPerBroker).
    assert status["proposal"]["moves"] == 510 and status["proposal"]["batches"] == 102
    core = client.CoreV1Api(api_client)
    entries = []
    for name in status["planConfigMaps"]:
        configmap = core.read_namespaced_config_map(name, namespace)
        assert configmap.metadata is not None and configmap.metadata.owner_references is not None  # narrowing
        (owner,) = configmap.metadata.owner_references
        assert (owner.kind, owner.name, owner.uid) == (
            "PartitionReassignment",
            "big",
            body["metadata"]["uid"],
        )
        assert owner.block_owner_deletion is None, "no blockOwnerDeletion (it blocks pruning)"
        assert configmap.data is not None  # narrowing
        entries += json.loads(configmap.data["plan.json"])
    assert sorted(e["partition"] for e in entries) == list(range(510))
    assert all(e["from"] == [1] and e["to"] == [2] for e in entries)
    kprs.delete(namespace, "big")
    wait_gone(lambda: kprs.get(namespace, "big"), timeout=30)
    kafka.delete_topic(unique_topic)


# ------------------------------------------------------------------ DemoteBrokers
def test_demote_brokers_moves_leadership_off_a_broker_without_moving_data(
    kprs: Resources,
    namespace: str,
    probe: ZkProbe,
    kafka: KafkaView,
    unique_topic: str,
    api_client: client.ApiClient,
) -> None:
    """Every partition led by broker 2 (as preferred leader) gets it last, then a preferred-leader
    election: Kafka reports no leader on broker 2 where another replica exists, and every replica
    set - of every topic - is what it was."""
    create_topic(kafka, unique_topic, {0: [2, 1], 1: [2, 3], 2: [2, 1], 3: [1, 2]})
    wait_for(
        lambda: (
            (d := kafka.describe(unique_topic)) and all(p["leader"] == p["replicas"][0] for p in d.values())
        ),
        what="the preferred leaders to lead",
    )
    # Topics earlier tests delete may still be going: the plan leaves them alone, and so does this check.
    going = probe.marked_for_deletion()
    topics = [t for t in probe.topic_names() if t not in going]
    sets_before = {t: {p: sorted(r) for p, r in probe.assignment(t).items()} for t in topics}

    kprs.create(namespace, reassignment("demote-2", mode="DemoteBrokers", approval="Auto", brokers=[2]))
    body = wait_phase(kprs, namespace, "demote-2", "Completed", timeout=120)
    assert body["status"]["proposal"]["moves"] == 0, "no replica changes broker"
    assert probe.assignment(unique_topic) == {0: [1, 2], 1: [3, 2], 2: [1, 2], 3: [1, 2]}
    sets_after = {t: {p: sorted(r) for p, r in probe.assignment(t).items()} for t in topics}
    assert sets_after == sets_before, "every replica set is what it was"
    for topic in topics:
        for replicas in probe.assignment(topic).values():
            assert replicas[0] != 2 or set(replicas) == {2}, (topic, replicas)
    wait_for(
        lambda: (d := kafka.describe(unique_topic)) and all(p["leader"] != 2 for p in d.values()),
        timeout=60,
        what="Kafka to move every leader of the topic off broker 2",
    )
    reasons = {reason for reason, _ in _events(api_client, namespace, "demote-2")}
    assert "LeaderElection" in reasons and "ThrottleApplied" not in reasons


def test_a_zookeeper_outage_longer_than_every_session_mid_run_is_survived(
    kprs: Resources,
    namespace: str,
    probe: ZkProbe,
    kafka: KafkaView,
    unique_topic: str,
    kafka_cluster: KafkaCluster,
) -> None:
    """Last on purpose: every ZooKeeper session (brokers 10 s, operator 18 s) expires meanwhile."""
    wanted = _slow_batch_in_flight(kprs, namespace, probe, kafka, unique_topic, "outage")
    zookeeper = kafka_cluster.stack.zookeeper
    assert zookeeper is not None and zookeeper.process is not None
    zookeeper.process.stop()
    try:
        time.sleep(20)  # the outage itself: longer than the operator's 18 s session timeout
    finally:
        zookeeper.start()
        zookeeper.wait_ready()
    wait_phase(kprs, namespace, "outage", "Completed", timeout=240)
    assert probe.assignment(unique_topic) == wanted
    assert probe.operator_throttles([1, 2, 3], [unique_topic]) == {}
