"""Faults of the ZooKeeper ensemble itself: its leader killed mid-burst, its quorum lost for 60 s,
and a leader loss overlapping an operator SIGKILL. Each test names its promise in its docstring
and ends with the invariant checker."""

from __future__ import annotations

import time

from kazoo.client import KazooClient
from kubernetes import client

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.faults.burst import creating, wait_under_way
from tests.faults.conftest import assert_converged_despite_controller_defect
from tests.faults.invariants import created_count, written_once
from tests.integration.helpers import wait_for

BURST = 500
#: The ZooKeeper leader dies as soon as ZooKeeper holds this many of the burst's topics: the
#: operator is writing, and the client is still creating the rest (the test fails otherwise).
STRIKE_AT = 20
CONFIG = {"retention.ms": "3600000"}


def test_zookeeper_leader_killed_during_a_topic_burst(
    ensemble: KafkaCluster,
    api: client.ApiClient,
    topics: Resources,
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
    operator_up: OperatorProcess,
) -> None:
    """Promise: killing the ZooKeeper leader (kill -9) in the middle of a burst of KafkaTopic
    creates loses no topic and creates none twice: every topic ends Ready and exactly as specified
    in Kafka, its znodes written once, and the operator never restarts."""
    names = [f"{ns}-burst-{i:03d}" for i in range(BURST)]
    started = time.monotonic()
    with creating(
        topics, ns, [kafkatopic(name, partitions=1, rf=3, config=CONFIG) for name in names]
    ) as burst:
        wait_under_way(zk, names, STRIKE_AT)
        leader = ensemble.stack.zookeeper_leader()
        killed_with = created_count(zk, names)
        ensemble.stack.kill_zookeeper(leader)
        client_still_creating = not burst.done()
    new_leader = ensemble.stack.zookeeper_leader()
    assert new_leader is not leader
    ensemble.stack.restart_zookeeper(leader)
    assert_converged_despite_controller_defect(ensemble, api, ns, kafka_view, zk)
    print(
        f"[figures] ZooKeeper's leader killed with {killed_with}/{BURST} topics in ZooKeeper (the client "
        f"still creating: {client_still_creating}); {BURST} topics converged "
        f"{time.monotonic() - started:.0f} s after the first create"
    )
    assert client_still_creating and killed_with < BURST, "the leader died after the burst, not in it"
    twice = [problem for name in names for problem in written_once(zk, name, zookeeper_leader_lost=True)]
    assert not twice, twice[:20]
    assert operator_up.proc is not None and operator_up.proc.poll() is None, "the operator exited"


def test_quorum_lost_for_60_seconds(
    ensemble: KafkaCluster,
    api: client.ApiClient,
    topics: Resources,
    ns: str,
    kafka_view: KafkaView,
    operator_up: OperatorProcess,
) -> None:
    """Promise: while ZooKeeper has no quorum (2 of 3 servers killed for 60 s) nothing is
    half-written: a topic created meanwhile reports ClusterUnavailable, then is created exactly
    once when the quorum returns; a config change made meanwhile is applied exactly once."""
    kept, created = f"{ns}-kept", f"{ns}-during-outage"
    topics.create(ns, kafkatopic(kept, partitions=2, rf=3, config=CONFIG))
    topics.wait_ready(ns, kept)
    leader = ensemble.stack.zookeeper_leader()
    follower = next(s for s in ensemble.stack.zookeepers if s is not leader)
    lost_at = time.monotonic()
    ensemble.stack.kill_zookeeper(leader)
    ensemble.stack.kill_zookeeper(follower)
    topics.create(ns, kafkatopic(created, partitions=2, rf=3, config=CONFIG))
    topics.patch(ns, kept, {"spec": {"config": {"retention.ms": "7200000"}}})
    reported = wait_for(
        lambda: (
            (topics.condition(ns, created) or {}).get("reason") in ("ClusterUnavailable", "ZooKeeperError")
            or None
        ),
        timeout=55,
        what=f"{created} to report that ZooKeeper is unavailable",
    )
    assert reported
    time.sleep(max(0.0, 60 - (time.monotonic() - lost_at)))
    ensemble.stack.restart_zookeeper(leader, wait=False)
    ensemble.stack.restart_zookeeper(follower)
    # The brokers' sessions expired meanwhile: they register again before the topic can be Ready.
    ensemble.stack.wait_brokers_registered(set(ensemble.stack.brokers), timeout=180)
    with ensemble.zk_session() as zk:  # a session older than the outage has expired with it
        assert_converged_despite_controller_defect(ensemble, api, ns, kafka_view, zk)
        assert not written_once(zk, created)
        config_stat = zk.exists(f"/config/topics/{kept}")
        assert config_stat is not None and config_stat.version == 1, "the config change was not written once"
    assert kafka_view.configs(kept).get("retention.ms") == "7200000"


def test_zookeeper_leader_loss_overlapping_an_operator_sigkill(
    ensemble: KafkaCluster,
    api: client.ApiClient,
    topics: Resources,
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
    operator_up: OperatorProcess,
) -> None:
    """Promise: two overlapping faults (the ZooKeeper leader killed, and the operator SIGKILLed
    while it creates topics) still end with every topic Ready, exactly as specified, and created
    once: the operator started again picks up where the dead one stopped."""
    names = [f"{ns}-overlap-{i:03d}" for i in range(100)]
    for name in names:
        topics.create(ns, kafkatopic(name, partitions=1, rf=3, config=CONFIG))
    wait_for(
        lambda: any((topics.condition(ns, n) or {}).get("status") == "True" for n in names[:20]) or None,
        timeout=60,
        what="the first topics of the burst to be Ready",
    )
    leader = ensemble.stack.zookeeper_leader()
    ensemble.stack.kill_zookeeper(leader)
    operator_up.kill()
    time.sleep(5)
    ensemble.stack.restart_zookeeper(leader)
    operator_up.start()
    assert_converged_despite_controller_defect(ensemble, api, ns, kafka_view, zk)
    twice = [problem for name in names for problem in written_once(zk, name, zookeeper_leader_lost=True)]
    assert not twice, twice[:20]
