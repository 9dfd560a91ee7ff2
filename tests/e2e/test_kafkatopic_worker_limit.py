"""An operator whose kopf workers are bounded far below the number of its resources
(``KZO_WORKER_LIMIT``): it handles a burst, and after a restart adopts every resource and
handles their changes, with name conflicts still settled by seniority from the first handler on.

With kopf's own indexes such a restart never handled anything: kopf holds each resource's worker
until every resource is indexed, and the bound kept the rest from starting (kopf issue #1243).
The operator's own indexes are filled from a listing before kopf starts (``handlers.indexes``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic, scoped_operator
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for

LIMIT = 3
TOPICS = 12


@pytest.fixture
def bounded_operator(
    kafka_cluster: KafkaCluster, operator: OperatorProcess, namespace: str, tmp_path: Path
) -> Iterator[OperatorProcess]:
    clusters = {"main": kafka_cluster.zk_connect}
    env = {"KZO_WORKER_LIMIT": str(LIMIT), "KZO_CREATE_WAIT_SECONDS": "10"}
    with scoped_operator(kafka_cluster, operator, namespace, tmp_path, clusters, env=env) as scoped:
        yield scoped


def test_a_restart_with_fewer_workers_than_resources_adopts_them_all_and_keeps_the_owner(
    bounded_operator: OperatorProcess,
    api_client: client.ApiClient,
    kafka: KafkaView,
    namespace: str,
    unique_topic: str,
) -> None:
    topics = Resources(api_client, "kafkatopics")
    names = [f"bounded-{n}" for n in range(TOPICS)]
    for name in names:  # a burst four times the bound
        topics.create(
            namespace, kafkatopic(name, partitions=1, rf=1, topicName=f"{unique_topic[:40]}-{name}")
        )
    topics.create(namespace, kafkatopic("owner", partitions=1, rf=1, topicName=unique_topic))
    for name in names:
        topics.wait_ready(namespace, name, timeout=180)
    topics.wait_ready(namespace, "owner")
    # Named to come first in the restarted operator's listing, before the owner: its handler runs
    # before the owner's own event is handled, so only an index filled beforehand knows the owner.
    topics.create(namespace, kafkatopic("a-rival", partitions=4, rf=1, topicName=unique_topic))
    topics.wait_reason(namespace, "a-rival", "ResourceConflict")

    bounded_operator.stop()
    # While it is down, every resource changes: the restarted operator must handle all of them,
    # LIMIT at a time, and the rival (now asking for 6 partitions) must still not touch the topic.
    for name in names:
        topics.patch(namespace, name, {"spec": {"partitions": 2}})
    topics.patch(namespace, "a-rival", {"spec": {"partitions": 6}})
    bounded_operator.start()

    def all_grown() -> bool:
        described = [kafka.describe(f"{unique_topic[:40]}-{name}") for name in names]
        return all(d is not None and len(d) == 2 for d in described)

    wait_for(all_grown, timeout=180, what=f"all {TOPICS} topics grown to 2 partitions in Kafka")

    def all_reported() -> bool:
        statuses = [(topics.get(namespace, name) or {}).get("status", {}) for name in names]
        return all(status.get("partitions") == 2 for status in statuses)

    wait_for(all_reported, timeout=60, what="every status reporting 2 partitions")
    owned = kafka.describe(unique_topic)
    assert owned is not None and len(owned) == 1, "the rival must not have changed the topic"
    cond = topics.wait_reason(namespace, "a-rival", "ResourceConflict")
    assert "owner" in cond["message"]
    assert f"indexed {TOPICS + 2} KafkaTopics" in bounded_operator.log_path.read_text()
