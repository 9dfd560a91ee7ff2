"""spec.placement: Balanced on the real stack: new replicas avoid the broker other topics load.

Broker 1 is loaded with a 30-partition topic (RF 1, explicit assignment). A Balanced topic of 6
partitions (RF 1) then lands on brokers 2 and 3 only (3 each: the topic stays spread), where
Kafka's own placement would put one partition in three on broker 1; growing it to 10 partitions
keeps partitions 0-5 where they are and puts the 4 new ones on brokers 2 and 3 as well. What
Kafka reports (through a Kafka client) is what is checked.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for


def _partitions(kafka: KafkaView, topic: str, count: int) -> dict[int, dict[str, Any]]:
    def described() -> dict[int, dict[str, Any]] | None:
        found = kafka.describe(topic)
        return found if found is not None and len(found) == count else None

    return wait_for(described, what=f"Kafka to describe {count} partitions of {topic}")


def test_balanced_placement_fills_the_brokers_the_other_topics_left_empty(
    topics: Resources, namespace: str, kafka: KafkaView, unique_topic: str
) -> None:
    hot, cool = f"{unique_topic}-hot", f"{unique_topic}-cool"
    topics.create(
        namespace, kafkatopic(hot, partitions=30, rf=1, assignment={str(p): [1] for p in range(30)})
    )
    topics.wait_ready(namespace, hot)

    topics.create(namespace, kafkatopic(cool, partitions=6, rf=1, placement="Balanced"))
    topics.wait_ready(namespace, cool)
    first = _partitions(kafka, cool, 6)
    assert Counter(p["replicas"][0] for p in first.values()) == {2: 3, 3: 3}, first

    topics.patch(namespace, cool, {"spec": {"partitions": 10}})
    topics.wait_ready(namespace, cool)
    grown = _partitions(kafka, cool, 10)
    assert {p: grown[p]["replicas"] for p in first} == {p: first[p]["replicas"] for p in first}
    assert Counter(grown[p]["replicas"][0] for p in range(6, 10)) == {2: 2, 3: 2}, grown
    assert all(len(p["replicas"]) == 1 for p in grown.values())
