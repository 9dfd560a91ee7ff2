"""Kafka's own view of topics, through a Kafka client (kafka-python), never through our code."""

from __future__ import annotations

from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

from tests.integration.helpers import alter_topic_config, wait_for


class KafkaView:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)

    def close(self) -> None:
        self.admin.close()

    def topic_names(self) -> set[str]:
        return set(self.admin.list_topics())

    def describe(self, topic: str) -> dict[int, dict[str, Any]] | None:
        """partition → {leader, replicas, isr}; None if Kafka does not know the topic."""
        if topic not in self.topic_names():
            return None
        described = self.admin.describe_topics([topic])[0]
        if described.get("error_code", 0) != 0 or not described.get("partitions"):
            return None

        def field(p: dict[str, Any], *names: str) -> Any:
            return next(p[n] for n in names if n in p)

        return {
            field(p, "partition", "partition_index"): {
                "leader": field(p, "leader", "leader_id"),
                "replicas": list(field(p, "replicas", "replica_nodes")),
                "isr": list(field(p, "isr", "isr_nodes")),
            }
            for p in described["partitions"]
        }

    def configs(self, topic: str) -> dict[str, str]:
        """Topic configs the broker reports as overridden (non-default)."""
        result = self.admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
        per_topic = next(iter(result.values()))[topic]
        return {key: data["value"] if isinstance(data, dict) else data for key, data in per_topic.items()}

    def create_topic(
        self, topic: str, partitions: int, rf: int, configs: dict[str, str] | None = None
    ) -> None:
        self.admin.create_topics([NewTopic(topic, partitions, rf, topic_configs=configs or {})])

    def produce(self, topic: str, messages: list[bytes]) -> None:
        producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all", retries=5)
        try:
            for message in messages:
                producer.send(topic, message)
            producer.flush(timeout=30)
        finally:
            producer.close()

    def consume_all(self, topic: str, expected: int, timeout_ms: int = 20000) -> list[bytes]:
        consumer = KafkaConsumer(
            bootstrap_servers=self.bootstrap,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            consumer_timeout_ms=timeout_ms,
            group_id=None,
        )
        try:
            partitions = consumer.partitions_for_topic(topic) or set()
            consumer.assign([TopicPartition(topic, p) for p in partitions])
            consumer.seek_to_beginning()
            out: list[bytes] = []
            for record in consumer:
                out.append(record.value)
                if len(out) >= expected:
                    break
            return out
        finally:
            consumer.close()


def expect_out_of_band_change_reverted(
    kafka: KafkaView, topic: str, key: str, *, changed: str, wanted: str, timeout: float
) -> None:
    """Change ``key`` of ``topic`` with Kafka's Admin API behind the operator's back, see Kafka
    take it, then wait for the operator to put ``wanted`` back."""
    alter_topic_config(kafka.admin, topic, {key: changed})
    wait_for(lambda: kafka.configs(topic).get(key) == changed, what="the out-of-band change")
    wait_for(
        lambda: kafka.configs(topic).get(key) == wanted,
        timeout=timeout,
        what="the operator to revert the out-of-band change",
    )
