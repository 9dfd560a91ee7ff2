"""Kafka's own view of topics, through a Kafka client (kafka-python), never through our code."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, TypeVar

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka import errors as kafka_errors
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

from tests.integration.helpers import alter_topic_config, wait_for

T = TypeVar("T")

#: How often a read of Kafka's view is sent when the client's request times out.
READ_ATTEMPTS = 3
#: Topics per request of :meth:`KafkaView.describe_many` and :meth:`KafkaView.configs_many`.
CHUNK = 250


def _field(entry: dict[str, Any], *names: str) -> Any:
    """The first of ``names`` the entry has (kafka-python names some fields by protocol version)."""
    return next(entry[n] for n in names if n in entry)


def _partitions(described: dict[str, Any]) -> dict[int, dict[str, Any]] | None:
    """partition → {leader, replicas, isr} of one topic's metadata; None if Kafka does not know it."""
    if described.get("error_code", 0) != 0 or not described.get("partitions"):
        return None
    return {
        _field(p, "partition", "partition_index"): {
            "leader": _field(p, "leader", "leader_id"),
            "replicas": list(_field(p, "replicas", "replica_nodes")),
            "isr": list(_field(p, "isr", "isr_nodes")),
        }
        for p in described["partitions"]
    }


class KafkaView:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)

    def close(self) -> None:
        self.admin.close()

    def asked(self, what: str, read: Callable[[], T]) -> T:
        """``read`` (a request of the admin client that changes nothing), sent again when the
        client's own request timed out: it then closed the connection, and a new one answers.
        Seen once in CI (a FlakyFailure of the spec fuzzing, "Request timed out after 19999 ms"
        on a request no test log could name); Kafka's answer is what the tests check, not one
        connection's. Printed, so a test's output shows it."""
        for attempt in range(1, READ_ATTEMPTS):
            try:
                return read()
            except (kafka_errors.RequestTimedOutError, kafka_errors.KafkaTimeoutError) as exc:
                print(f"[kafka client] {what}: {exc!r}; asking again ({attempt + 1}/{READ_ATTEMPTS})")
        return read()

    def topic_names(self) -> set[str]:
        return set(self.asked("list topics", self.admin.list_topics))

    def describe(self, topic: str) -> dict[int, dict[str, Any]] | None:
        """partition → {leader, replicas, isr}; None if Kafka does not know the topic."""
        return self.describe_many([topic]).get(topic)

    def describe_many(self, topics: Iterable[str]) -> dict[str, dict[int, dict[str, Any]]]:
        """:meth:`describe` of many topics at once: topic → partition → {leader, replicas, isr},
        for each of ``topics`` Kafka knows (absent: Kafka does not). One listing, then one
        metadata request per ``CHUNK`` topics (the listing first, as :meth:`describe` always did:
        a metadata request names only topics Kafka knows)."""
        known = sorted(set(topics) & self.topic_names())
        found: dict[str, dict[int, dict[str, Any]]] = {}
        for start in range(0, len(known), CHUNK):
            chunk = known[start : start + CHUNK]
            described = self.asked(
                f"describe {len(chunk)} topics", partial(self.admin.describe_topics, chunk)
            )
            for entry in described:
                partitions = _partitions(entry)
                if partitions is not None:
                    found[str(_field(entry, "name", "topic"))] = partitions
        return found

    def configs(self, topic: str) -> dict[str, str]:
        """Topic configs the broker reports as overridden (non-default)."""
        return self.configs_many([topic]).get(topic, {})

    def configs_many(self, topics: Iterable[str]) -> dict[str, dict[str, str]]:
        """:meth:`configs` of many topics at once (one request per ``CHUNK`` topics)."""
        names = sorted(set(topics))
        found: dict[str, dict[str, str]] = {}
        for start in range(0, len(names), CHUNK):
            chunk = names[start : start + CHUNK]
            result = self.asked(
                f"the configs of {chunk[0]}" if len(chunk) == 1 else f"the configs of {len(chunk)} topics",
                partial(
                    self.admin.describe_configs,
                    [ConfigResource(ConfigResourceType.TOPIC, topic) for topic in chunk],
                ),
            )
            for per_topic in result.values():
                for topic, configs in per_topic.items():
                    found[topic] = {
                        key: data["value"] if isinstance(data, dict) else data
                        for key, data in configs.items()
                    }
        return found

    def create_topic(
        self, topic: str, partitions: int, rf: int, configs: dict[str, str] | None = None
    ) -> None:
        self.admin.create_topics([NewTopic(topic, partitions, rf, topic_configs=configs or {})])

    def delete_topic(self, topic: str, *, timeout: float = 120.0) -> None:
        """Delete ``topic`` with Kafka's Admin API and wait until Kafka no longer lists it.

        The broker is asked to answer within 5 s: its ``REQUEST_TIMED_OUT`` then only says the
        controller is still deleting (the deletion goes on). Left to the client's default, the
        broker waits as long as the client's own request timeout (20 s), so a controller slower
        than that fails the request on the client's side although the deletion goes on: the
        likeliest of the requests that timed out after 19,999 ms once in CI (the spec fuzzing's
        case was a Retain topic, which the test deletes this way; see :meth:`asked`).
        """
        response = self.admin.delete_topics([topic], timeout_ms=5000, raise_errors=False)
        for result in response["topics"]:
            code = int(result["error_code"])
            if code not in (0, kafka_errors.RequestTimedOutError.errno):
                error = kafka_errors.for_code(code)
                raise error(
                    f"Kafka refused to delete {topic}: {result.get('error_message') or error.message}"
                )
        wait_for(lambda: topic not in self.topic_names(), timeout=timeout, what=f"Kafka to delete {topic}")

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
