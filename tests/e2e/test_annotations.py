"""The operator's annotations take effect at once, not at the next resync.

kopf leaves every annotation under the prefix of its own storage out of its change detection.
With that storage under the operator's group, ``kafka.zk-operator.io/paused`` (and managed,
approve, stop, refresh) reached the handlers only through timers: up to a full resync period
(60 s by default). This module runs an operator with a one-hour resync to show they no longer
wait, including for a resource that still carries the annotations of the earlier storage.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic, scoped_operator
from tests.integration.helpers import wait_for

PAUSED = "kafka.zk-operator.io/paused"
LEGACY = {
    "kafka.zk-operator.io/kopf-managed": "yes",
    "kafka.zk-operator.io/last-handled-configuration": '{"spec": {}}',
    "kopf.kafka.zk-operator.io/last-handled-configuration": '{"spec": {}}',
}


@pytest.fixture
def slow_resync_operator(
    kafka_cluster: KafkaCluster, operator: OperatorProcess, namespace: str, tmp_path: Path
) -> Iterator[OperatorProcess]:
    clusters = {"main": kafka_cluster.zk_connect}
    with scoped_operator(
        kafka_cluster, operator, namespace, tmp_path, clusters, env={"KZO_RESYNC_SECONDS": "3600"}
    ) as scoped:
        yield scoped


def _kopf_status(topics: Resources, namespace: str, name: str) -> dict[str, object]:
    return dict(((topics.get(namespace, name) or {}).get("status") or {}).get("kopf") or {})


def _paused(topics: Resources, namespace: str, name: str) -> bool:
    condition = topics.condition(namespace, name, "ReconciliationPaused")
    return condition is not None and condition["status"] == "True"


@pytest.mark.parametrize("legacy", [False, True], ids=["fresh", "with-legacy-kopf-annotations"])
def test_pausing_takes_effect_without_waiting_for_the_resync(
    slow_resync_operator: OperatorProcess, topics: Resources, namespace: str, unique_topic: str, legacy: bool
) -> None:
    body = kafkatopic(unique_topic, partitions=1, rf=1)
    if legacy:
        body["metadata"]["annotations"] = dict(LEGACY)
    topics.create(namespace, body)
    topics.wait_ready(namespace, unique_topic)
    if legacy:
        wait_for(
            lambda: (
                not set(LEGACY)
                & set((topics.get(namespace, unique_topic) or {})["metadata"].get("annotations") or {})
            ),
            timeout=15,
            what="the earlier kopf annotations to be removed",
        )
    # kopf's copy of the handled spec is in the status (one PATCH per handled change), not in an annotation.
    wait_for(
        lambda: "last-handled-configuration" in _kopf_status(topics, namespace, unique_topic),
        timeout=15,
        what="kopf's copy of the handled spec in the status",
    )
    body = topics.get(namespace, unique_topic) or {}
    copy = json.loads(body["status"]["kopf"]["last-handled-configuration"])
    assert copy["spec"] == body["spec"]
    assert not [key for key in body["metadata"].get("annotations") or {} if "last-handled" in key]
    topics.patch(namespace, unique_topic, {"metadata": {"annotations": {PAUSED: "true"}}})
    try:
        wait_for(lambda: _paused(topics, namespace, unique_topic), timeout=20, what="ReconciliationPaused")
    except AssertionError:
        pytest.fail(f"not paused within 20 s; operator log:\n{slow_resync_operator.log_tail(60)}")
    topics.patch(namespace, unique_topic, {"metadata": {"annotations": {PAUSED: None}}})
    wait_for(lambda: not _paused(topics, namespace, unique_topic), timeout=20, what="the pause to end")
