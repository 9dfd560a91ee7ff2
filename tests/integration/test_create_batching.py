"""Topic creates sent together (adapters.zk.group_commit) against the real ZooKeeper and Kafka.

Kafka's view is checked with Kafka's own client (KafkaView); ZooKeeper's with plain kazoo.
"""

from __future__ import annotations

import functools
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain import errors
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for


def _led(kafka: KafkaView, topic: str) -> dict[int, dict[str, Any]] | None:
    """Kafka's view of the topic once every partition has a leader."""
    described = kafka.describe(topic)
    return described if described and all(p["leader"] >= 0 for p in described.values()) else None


def _create_all(store: ZkStore, names: list[str]) -> dict[str, BaseException | None]:
    """Create every name from its own thread, all started at once; each one's outcome."""
    start = threading.Barrier(len(names))

    def create(name: str) -> BaseException | None:
        start.wait()
        try:
            store.create_topic(name, {0: [1, 2], 1: [2, 3]}, {"retention.ms": "3600000"})
        except errors.KzoError as error:
            return error
        return None

    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        return dict(zip(names, pool.map(create, names), strict=True))


def test_creates_from_many_threads_are_one_transaction_and_kafka_creates_every_topic(
    zk: KazooClient, kafka: KafkaView, unique_topic: str
) -> None:
    store = ZkStore(zk, create_batch_seconds=1.0)
    assert store.create_batcher is not None
    names = [f"{unique_topic}-{i}" for i in range(12)]
    writes_before = store.writes

    outcomes = _create_all(store, names)

    assert outcomes == dict.fromkeys(names), outcomes
    assert store.create_batcher.transactions == 1, "the twelve creates were not sent together"
    assert store.writes - writes_before == 1
    for name in names:
        config, _ = zk.get(f"/config/topics/{name}")
        assert b'"retention.ms":"3600000"' in config.replace(b" ", b"")
        described = wait_for(
            functools.partial(_led, kafka, name), what=f"Kafka to elect the leaders of {name}"
        )
        assert {p: v["replicas"] for p, v in described.items()} == {0: [1, 2], 1: [2, 3]}
        assert kafka.configs(name)["retention.ms"] == "3600000"


def test_a_create_that_fails_in_a_batch_fails_alone_and_the_others_are_written(
    zk: KazooClient, kafka: KafkaView, unique_topic: str
) -> None:
    existing = f"{unique_topic}-existing"
    kafka.create_topic(existing, 1, 1, {"retention.ms": "7200000"})
    before = wait_for(lambda: zk.exists(f"/brokers/topics/{existing}"), what="the existing topic's znode")
    store = ZkStore(zk, create_batch_seconds=1.0)
    names = [f"{unique_topic}-{i}" for i in range(5)]

    outcomes = _create_all(store, [*names, existing])

    assert isinstance(outcomes.pop(existing), errors.VersionConflict)
    assert outcomes == dict.fromkeys(names), outcomes
    assert zk.exists(f"/brokers/topics/{existing}").version == before.version, (
        "the existing topic was changed"
    )
    assert kafka.configs(existing)["retention.ms"] == "7200000"
    for name in names:
        wait_for(functools.partial(kafka.describe, name), what=f"Kafka to know {name}")


@pytest.mark.parametrize("window", [0.0, 0.05])
def test_a_single_create_is_written_at_once_or_after_the_window(
    zk: KazooClient, kafka: KafkaView, unique_topic: str, window: float
) -> None:
    store = ZkStore(zk, create_batch_seconds=window)
    assert (store.create_batcher is None) == (window == 0)
    store.create_topic(unique_topic, {0: [1]}, {})
    assert zk.exists(f"/brokers/topics/{unique_topic}") is not None
    wait_for(lambda: kafka.describe(unique_topic), what=f"Kafka to know {unique_topic}")


def test_waiting_for_leaders_ends_when_the_controller_elected_them(
    zk: KazooClient, kafka: KafkaView, unique_topic: str
) -> None:
    store = ZkStore(zk)
    store.create_topic(unique_topic, {0: [1, 2], 1: [2, 3], 2: [3, 1]}, {})
    assert store.wait_for_leaders(unique_topic, 3, timeout=30)
    described = kafka.describe(unique_topic) or wait_for(functools.partial(_led, kafka, unique_topic))
    assert sorted(p["leader"] for p in described.values()) == [1, 2, 3]


def test_waiting_for_leaders_gives_up_after_the_timeout_when_no_replica_is_alive(
    zk: KazooClient, unique_topic: str
) -> None:
    store = ZkStore(zk)
    store.create_topic(unique_topic, {0: [1], 1: [77]}, {})  # broker 77 does not exist
    started = time.monotonic()
    assert not store.wait_for_leaders(unique_topic, 2, timeout=2)
    assert 2 <= time.monotonic() - started < 10
    store.mark_topic_for_deletion(unique_topic)
