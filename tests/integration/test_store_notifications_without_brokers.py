"""A config written while no broker runs must not stop the brokers of an old line from starting.

With no broker registered the operator cannot tell the cluster's line (``domain.kafka.lines``).
It used to write a v2 ``/config/changes`` notification then; Kafka 0.10.0 brokers reject v2
("requirement failed" in ``DynamicConfigManager``), and at start-up that aborts the broker, and the
notification is never purged. v1 is what every line from 0.9 to 3.9 reads for topics.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from kafka import KafkaProducer

from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.adapters.zk.znodes_config import ConfigEntityType
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import assignment
from tests.conftest import KafkaCluster
from tests.integration.helpers import send_outcome, wait_for


def _led(store: ZkStore, topic: str) -> bool:
    states = store.partition_states(topic, [0])
    return bool(states) and states[0].leader >= 0


def test_0_10_0_brokers_start_after_a_config_change_written_while_all_were_down(
    kafka_cluster_factory: Callable[[str], KafkaCluster], unique_topic: str
) -> None:
    cluster = kafka_cluster_factory("0.10.0.1")
    broker_ids = sorted(cluster.stack.brokers)
    with cluster.zk_session() as client:
        store = ZkStore(client)
        store.create_topic(
            unique_topic, assignment.assign_replicas_to_brokers(store.live_brokers(), 1, 3), {}
        )
        wait_for(lambda: _led(store, unique_topic), what="a leader for the topic")
        for broker_id in broker_ids:
            cluster.stack.kill_broker(broker_id)
        wait_for(lambda: not client.get_children("/brokers/ids"), what="every broker to be gone")

        assert store.update_entity_config(
            ConfigEntityType.TOPICS, unique_topic, lambda c: {**c, "max.message.bytes": "1024"}
        )
        newest = max(client.get_children("/config/changes"))
        written = json.loads(client.get(f"/config/changes/{newest}")[0])
        assert written == {"version": 1, "entity_type": "topics", "entity_name": unique_topic}

        # Kafka 0.10.0 processes pending notifications before it registers; a v2 one aborts it.
        for broker_id in broker_ids:
            cluster.stack.restart_broker(broker_id)
        wait_for(lambda: _led(store, unique_topic), what="a leader after the restart")

    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1, retries=0)
    try:
        assert (
            wait_for(lambda: send_outcome(producer, unique_topic, 4096), what="a broker's answer")
            == "refused"
        )
        assert (
            wait_for(lambda: send_outcome(producer, unique_topic, 100), what="a broker's answer")
            == "accepted"
        )
    finally:
        producer.close()


def test_a_kafka_version_newer_than_the_brokers_registrations_writes_nothing(
    kafka_cluster_factory: Callable[[str], KafkaCluster], unique_topic: str
) -> None:
    """kafkaVersion says 2.0, but real 0.10.0.1 brokers register v3: no notification a 0.10.0
    broker would die on is written; the operator says what to fix."""
    cluster = kafka_cluster_factory("0.10.0.1")
    with cluster.zk_session() as client:
        setup = ZkStore(client)
        setup.create_topic(
            unique_topic, assignment.assign_replicas_to_brokers(setup.live_brokers(), 1, 2), {}
        )
        before = sorted(client.get_children("/config/changes"))
        config_before = client.get(f"/config/topics/{unique_topic}")
        store = ZkStore(client, kafka_version=(2, 0, 0))
        with pytest.raises(errors.KafkaLineMismatch, match="brokers 1, 2, 3 register /brokers/ids v3"):
            store.update_entity_config(
                ConfigEntityType.TOPICS, unique_topic, lambda c: {**c, "retention.ms": "1000"}
            )
        assert store.writes == 0
        assert sorted(client.get_children("/config/changes")) == before
        assert client.get(f"/config/topics/{unique_topic}")[1].version == config_before[1].version
