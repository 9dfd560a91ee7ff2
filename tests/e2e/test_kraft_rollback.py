"""A real rollback of a ZooKeeper → KRaft migration while the operator runs (issue #54).

A ZooKeeper-mode Kafka 3.9 cluster of its own is taken to the hybrid phase by ``devstack.migration``
(the migration controller, the brokers rolled into migration mode: the KRaft controller owns the
cluster), where a KafkaTopic is created and another changed through the Admin API. Then Kafka 3.9's
revert for that step (docs/ops.html "Reverting to ZooKeeper mode During the Migration", row "Enter
Migration Mode on the brokers"): the controller stopped, ``deleteall /controller`` with Kafka's
``zookeeper-shell``, the brokers rolled out of migration mode, but ``/migration`` left behind (the
step people skip, and the one Kafka 3.9's row for a later step lacks). Checked with Kafka's own
view (a plain kazoo read of Kafka's znodes, a kafka-python client): the operator reports
``RolledBack`` on the ZooKeeper backend with a ``KRaftMigrationWarning`` Event naming the znode to
delete, a config change and a partition growth made then reach Kafka through ZooKeeper (the znodes
change, the Admin API write count does not), the topic ids are Kafka's from before; after
``deleteall /migration`` the phase is ``ZooKeeper`` and no warning follows.

The seconds of each step are printed as ``[figures]`` (docs/kraft-migration.md, "Rolling back").
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from kubernetes import client

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.migration_helpers import (
    Migrating,
    migrating_cluster,
    migration_condition,
    raw_znode,
    ready_in,
    reopened,
    status,
)
from tests.integration.helpers import wait_for


@pytest.fixture(scope="module")
def migration_operator(
    kafka_cluster: KafkaCluster,
    operator: OperatorProcess,
    crds: None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Migrating]:
    """The cluster to migrate and roll back, and ``kzo operator`` serving it alone."""
    with migrating_cluster(kafka_cluster, operator, tmp_path_factory, "rollback") as migrating:
        yield migrating


def _events(api_client: client.ApiClient, namespace: str, name: str, reason: str) -> list[str]:
    """The messages of the Events with ``reason`` on the KafkaTopic ``name``."""
    found = client.CoreV1Api(api_client).list_namespaced_event(
        namespace, field_selector=f"involvedObject.name={name},reason={reason}"
    )
    return [str(event.message) for event in found.items]


def _writes(m: Migrating) -> tuple[float, float]:
    """The operator's ZooKeeper and Admin API write counters."""
    return (
        m.operator.metric_sum("kzo_zookeeper_writes_total"),
        m.operator.metric_sum("kzo_admin_api_writes_total"),
    )


def test_a_rolled_back_migration_is_served_through_zookeeper_again(
    migration_operator: Migrating, api_client: client.ApiClient, namespace: str
) -> None:
    m = migration_operator
    kts = Resources(api_client, "kafkatopics")
    steps, zk = m.steps, m.zk_connect
    started = time.monotonic()
    # Names of this run's own: the operator serves every namespace, so KafkaTopics that earlier
    # tests of the session left behind (e.g. test_kraft_migration.py's "a") are reconciled against
    # this cluster too, and two resources naming one topic conflict.
    a, h = f"a-{namespace}", f"h-{namespace}"

    kts.create(namespace, kafkatopic(a, partitions=2, rf=2, config={"retention.ms": "3600000"}))
    ready_in(kts, namespace, a, "ZooKeeper")
    ids = {a: (raw_znode(zk, f"/brokers/topics/{a}") or {})["topic_id"]}

    # To the hybrid phase; a topic created and one changed there through the Admin API.
    m.figures["controller"] = steps.start_controller()
    m.figures["migration mode"] = steps.enter_migration_mode()
    view = reopened(m)
    kts.create(namespace, kafkatopic(h, partitions=2, rf=2))
    kts.patch(namespace, a, {"spec": {"config": {"retention.ms": "1800000"}}})
    for name in (a, h):
        assert ready_in(kts, namespace, name, "Hybrid")["backend"] == "AdminAPI"
    wait_for(lambda: view.configs(a).get("retention.ms") == "1800000", what="a's config in Hybrid")
    ids[h] = status(kts, namespace, h)["topicId"]

    # Kafka's revert of "Enter Migration Mode on the brokers", leaving /migration behind.
    m.figures["revert"] = steps.revert_migration_mode(delete_migration_znode=False)
    view = reopened(m)
    controller = raw_znode(zk, "/controller") or {}
    assert controller["brokerid"] in (1, 2, 3) and controller["kraftControllerEpoch"] == -1, controller
    assert (raw_znode(zk, "/migration") or {})["kraft_metadata_offset"] > 0, "the stale /migration"
    for name, topic_id in ids.items():
        assert (raw_znode(zk, f"/brokers/topics/{name}") or {})["topic_id"] == topic_id, name

    zk_writes, admin_writes = _writes(m)
    kts.patch(namespace, a, {"spec": {"config": {"retention.ms": "900000"}}})
    kts.patch(namespace, h, {"spec": {"partitions": 3}})
    for name in (a, h):
        shown = ready_in(kts, namespace, name, "RolledBack")
        assert (shown["backend"], shown["topicId"]) == ("ZooKeeper", ids[name]), name
        assert "deleteall /migration" in (migration_condition(shown) or {})["message"], name
    wait_for(lambda: view.configs(a).get("retention.ms") == "900000", what="a's config after the revert")
    wait_for(lambda: len(view.describe(h) or {}) == 3, what="h grown after the revert")
    assert (raw_znode(zk, f"/config/topics/{a}") or {})["config"]["retention.ms"] == "900000"
    assert sorted((raw_znode(zk, f"/brokers/topics/{h}") or {})["partitions"]) == ["0", "1", "2"]
    after_zk, after_admin = _writes(m)
    assert after_zk > zk_writes and after_admin == admin_writes, "through ZooKeeper, not the Admin API"
    warnings = wait_for(
        lambda: _events(api_client, namespace, a, "KRaftMigrationWarning"),
        what="the stale /migration warning",
    )
    assert len(warnings) == 1 and "deleteall /migration" in warnings[0], warnings

    # The znode deleted as the docs say: plain ZooKeeper mode, no warning.
    steps_started = time.monotonic()
    steps.delete_migration_znode()
    m.figures["delete /migration"] = time.monotonic() - steps_started
    assert raw_znode(zk, "/migration") is None
    kts.patch(namespace, h, {"spec": {"config": {"retention.ms": "600000"}}})
    for name in (a, h):
        shown = ready_in(kts, namespace, name, "ZooKeeper", migrated_before=True)
        assert shown["backend"] == "ZooKeeper", name
        assert "deleteall" not in (migration_condition(shown) or {})["message"], "no warning left"
    wait_for(lambda: view.configs(h).get("retention.ms") == "600000", what="h's config in ZooKeeper mode")
    wait_for(
        lambda: any(
            "RolledBack -> ZooKeeper" in e for e in _events(api_client, namespace, a, "KRaftMigrationPhase")
        ),
        what="a's phase event RolledBack -> ZooKeeper",
    )
    assert _events(api_client, namespace, a, "KRaftMigrationWarning") == warnings, "no new warning"
    for name, topic_id in ids.items():
        assert status(kts, namespace, name)["topicId"] == topic_id, f"{name} kept its topic id"
    m.figures["whole walk-through"] = time.monotonic() - started
    print("[figures] " + json.dumps({k: round(v, 1) for k, v in m.figures.items()}))
