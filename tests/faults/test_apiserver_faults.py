"""Faults of the Kubernetes side: kube-apiserver and etcd killed -9 (and started again with the
same data) while the operator creates topics and applies config changes.

The operator keeps running through them: its watches fail and reconnect, its status patches fail
and are retried, and what it wrote to ZooKeeper before a failed patch is not written again. Each
test names its promise in its docstring and ends with the invariant checker.
"""

from __future__ import annotations

import time

from kazoo.client import KazooClient
from kubernetes import client

from kafka_zk_operator.devstack.controlplane import ControlPlane
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.faults.burst import creating, wait_under_way
from tests.faults.conftest import assert_converged
from tests.faults.invariants import created_count, written_once

CONFIG = {"retention.ms": "3600000"}
CHANGED = {"retention.ms": "7200000"}
#: The burst's client waits this long between two creates, so that the operator has written some
#: topics while the client still has most to create (the fault then strikes in the middle by
#: construction); and sends a create again for this long while the API server cannot take it.
PACE_S = 0.1
OUTAGE_S = 180.0


def _controlplane(ensemble: KafkaCluster) -> ControlPlane:
    assert ensemble.stack.controlplane is not None
    return ensemble.stack.controlplane


def _config_changed(zk: KazooClient, names: list[str]) -> int:
    return sum((getattr(zk.exists(f"/config/topics/{name}"), "version", 0) or 0) >= 1 for name in names)


def _same_process(operator: OperatorProcess, pid: int | None) -> None:
    assert operator.proc is not None and operator.proc.poll() is None, "the operator exited"
    assert operator.pid == pid, "the operator was restarted"


def test_apiserver_killed_during_a_topic_burst(
    ensemble: KafkaCluster,
    api: client.ApiClient,
    topics: Resources,
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
    operator_up: OperatorProcess,
) -> None:
    """Promise: kube-apiserver killed -9 in the middle of a burst of KafkaTopic creates, and
    started again 15 s later, loses no topic and creates none twice: every topic ends Ready and
    exactly as specified in Kafka, its znodes written once, and the operator process never exits."""
    pid = operator_up.pid
    names = [f"{ns}-api-{i:03d}" for i in range(120)]
    bodies = [kafkatopic(name, partitions=1, rf=3, config=CONFIG) for name in names]
    controlplane = _controlplane(ensemble)
    with creating(topics, ns, bodies, pace_s=PACE_S, outage_s=OUTAGE_S) as burst:
        wait_under_way(zk, names, 10)
        controlplane.kill_apiserver()
        client_still_creating = not burst.done()
        killed_with = created_count(zk, names)
        time.sleep(15)
        controlplane.start_apiserver()
        started = time.monotonic()
    assert_converged(api, ns, kafka_view, zk)
    print(
        f"[figures] kube-apiserver killed with {killed_with}/{len(names)} topics in ZooKeeper "
        f"(the client still creating: {client_still_creating}, a create sent again {burst.result()} times); "
        f"converged {time.monotonic() - started:.0f} s after it was back"
    )
    assert client_still_creating and killed_with < len(names), (
        "the API server died after the burst, not in it"
    )
    twice = [problem for name in names for problem in written_once(zk, name)]
    assert not twice, twice[:20]
    _same_process(operator_up, pid)


def test_etcd_killed_during_creates_and_config_changes(
    ensemble: KafkaCluster,
    api: client.ApiClient,
    topics: Resources,
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
    operator_up: OperatorProcess,
) -> None:
    """Promise: etcd killed -9 (kube-apiserver keeps running, answering errors and timeouts) while
    the operator creates topics and applies config changes, and started again 20 s later: every
    topic ends Ready, each create and each config change written to ZooKeeper exactly once (a
    status patch that failed after a ZooKeeper write does not make the next pass write it again),
    and the operator process never exits."""
    pid = operator_up.pid
    changed = [f"{ns}-changed-{i:02d}" for i in range(40)]
    fresh = [f"{ns}-fresh-{i:02d}" for i in range(60)]
    for name in changed:
        topics.create(ns, kafkatopic(name, partitions=1, rf=3, config=CONFIG))
    for name in changed:
        topics.wait_ready(ns, name, timeout=180)
    for name in changed:
        topics.patch(ns, name, {"spec": {"config": CHANGED}})
    bodies = [kafkatopic(name, partitions=1, rf=3, config=CONFIG) for name in fresh]
    controlplane = _controlplane(ensemble)
    with creating(topics, ns, bodies, pace_s=PACE_S, outage_s=OUTAGE_S) as burst:
        wait_under_way(zk, fresh, 5, also=lambda: _config_changed(zk, changed) >= 5)
        controlplane.kill_etcd()
        client_still_creating = not burst.done()
        created_with = created_count(zk, fresh)
        figures = (
            f"{_config_changed(zk, changed)}/{len(changed)} changes, {created_with}/{len(fresh)} creates"
        )
        time.sleep(20)
        controlplane.start_etcd()
        started = time.monotonic()
    assert_converged(api, ns, kafka_view, zk)
    print(
        f"[figures] etcd killed with {figures} done (the client still creating: {client_still_creating}, "
        f"a create sent again {burst.result()} times); "
        f"converged {time.monotonic() - started:.0f} s after"
    )
    assert client_still_creating and created_with < len(fresh), "etcd died after the creates, not during them"
    twice = [problem for name in fresh for problem in written_once(zk, name)]
    twice += [problem for name in changed for problem in written_once(zk, name, config_changes=1)]
    assert not twice, twice[:20]
    assert all(kafka_view.configs(name).get("retention.ms") == CHANGED["retention.ms"] for name in changed)
    _same_process(operator_up, pid)
