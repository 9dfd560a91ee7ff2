"""Helpers for the PartitionReassignment end-to-end tests: ZooKeeper and Kafka probes, bodies.

Everything here *reads* the cluster the way an observer would (kazoo on the raw znodes, a Kafka
client for Kafka's own view); nothing goes through the operator's code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.retry import KazooRetry

from tests.e2e.conftest import GROUP, VERSION, Resources
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for

THROTTLE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
REPLICA_KEYS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
APPROVE = "kafka.zk-operator.io/approve"
STOP = "kafka.zk-operator.io/stop"


def reassignment(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PartitionReassignment",
        "metadata": {"name": name},
        "spec": spec,
    }


def explicit_moves(name: str, topic: str, wanted: Mapping[int, list[int]], **spec: Any) -> dict[str, Any]:
    """An Explicit PartitionReassignment moving ``topic``'s partitions to ``wanted``, throttled slow."""
    return reassignment(
        name,
        **{"mode": "Explicit", "throttle": SLOW_RATE, **spec},
        partitions=[{"topic": topic, "partition": p, "replicas": r} for p, r in wanted.items()],
    )


class ZkProbe:
    """Read-only views of the znodes the tests assert on.

    Reads are retried through connection losses and session expiry (for up to a minute): the
    outage test stops ZooKeeper long enough to expire this probe's own session too, and kazoo
    answers requests made before its new session is up with ``SessionExpiredError``.
    """

    def __init__(self, client: KazooClient) -> None:
        self.client = client
        self._retry = KazooRetry(max_tries=-1, delay=0.2, max_delay=2.0, deadline=60, ignore_expire=True)

    def _json(self, path: str) -> dict[str, Any] | None:
        try:
            data, _ = self._retry(self.client.get, path)
        except NoNodeError:
            return None
        loaded: dict[str, Any] = json.loads(data)
        return loaded

    def assignment(self, topic: str) -> dict[int, list[int]]:
        znode = self._json(f"/brokers/topics/{topic}") or {}
        return {int(p): list(r) for p, r in (znode.get("partitions") or {}).items()}

    def topic_names(self) -> list[str]:
        return sorted(self._retry(self.client.get_children, "/brokers/topics"))

    def marked_for_deletion(self) -> set[str]:
        try:
            return set(self._retry(self.client.get_children, "/admin/delete_topics"))
        except NoNodeError:
            return set()

    def moving(self, topic: str) -> bool:
        znode = self._json(f"/brokers/topics/{topic}") or {}
        return bool(znode.get("adding_replicas")) or bool(znode.get("removing_replicas"))

    def topic_config(self, topic: str) -> dict[str, str]:
        return dict((self._json(f"/config/topics/{topic}") or {}).get("config") or {})

    def broker_config(self, broker: int) -> dict[str, str]:
        return dict((self._json(f"/config/brokers/{broker}") or {}).get("config") or {})

    def reassign_znode(self) -> dict[str, Any] | None:
        return self._json("/admin/reassign_partitions")

    def controller(self) -> int:
        znode = self._json("/controller") or {}
        return int(znode["brokerid"])

    def leader(self, topic: str, partition: int) -> int:
        return int((self._json(f"/brokers/topics/{topic}/partitions/{partition}/state") or {})["leader"])

    def write_config(self, entity_type: str, name: str, config: dict[str, str]) -> None:
        """Replace an entity config as ZooKeeper-mode admin tools do (config + v2 notification)."""
        path = f"/config/{entity_type}/{name}"
        data = json.dumps({"version": 1, "config": config}).encode()
        if self.client.exists(path):
            self.client.set(path, data)
        else:
            self.client.create(path, data, makepath=True)
        notification = json.dumps({"version": 2, "entity_path": f"{entity_type}/{name}"}).encode()
        self.client.create("/config/changes/config_change_", notification, sequence=True)

    def operator_throttles(self, brokers: list[int], topics: list[str]) -> dict[str, dict[str, str]]:
        """Every throttle key currently set on these brokers and topics."""
        found: dict[str, dict[str, str]] = {}
        for broker in brokers:
            config = {k: v for k, v in self.broker_config(broker).items() if k in THROTTLE_KEYS}
            if config:
                found[f"brokers/{broker}"] = config
        for topic in topics:
            config = {k: v for k, v in self.topic_config(topic).items() if k in REPLICA_KEYS}
            if config:
                found[f"topics/{topic}"] = config
        return found


@contextmanager
def zk_probe(client_factory: Any) -> Iterator[ZkProbe]:
    with client_factory() as client:
        yield ZkProbe(client)


def create_topic(view: KafkaView, topic: str, assignment: dict[int, list[int]]) -> None:
    view.admin.create_topics(
        [NewTopic(topic, replica_assignments={p: list(r) for p, r in assignment.items()})]
    )
    wait_for(lambda: (d := view.describe(topic)) and len(d) == len(assignment) and d, what=f"topic {topic}")


def fill(
    view: KafkaView, topic: str, count: int = 60, size: int = 1000, partition: int | None = None
) -> list[bytes]:
    """Produce ``count`` distinct messages of ``size`` bytes (to one partition if given)."""
    messages = [
        f"{topic}-{i:05d}-".encode() + os.urandom(size).hex().encode()[: size - 20] for i in range(count)
    ]
    producer = KafkaProducer(bootstrap_servers=view.bootstrap, acks="all", retries=5, linger_ms=20)
    try:
        for message in messages:
            producer.send(topic, message, partition=partition)
        producer.flush(timeout=60)
    finally:
        producer.close()
    return messages


#: Kafka lets a throttled replica fetch up to replica.fetch.max.bytes (1 MiB) before the quota bites,
#: so a partition needs well over 1 MiB for a throttled move to take a while: ~1.3 MB at 20 KB/s
#: keeps a batch in flight for about 10 s on the test stack.
SLOW_RATE = 20_480
SLOW_MESSAGES = 1300


def fill_slow(view: KafkaView, topic: str, partition: int) -> list[bytes]:
    return fill(view, topic, count=SLOW_MESSAGES, size=1000, partition=partition)


def kafka_broker_throttles(view: KafkaView, broker: int) -> dict[str, str]:
    """Dynamic throttle rates as broker ``broker`` reports them (DescribeConfigs)."""
    result = view.admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, str(broker))])
    configs = next(iter(result.values()))[str(broker)]
    return {
        key: (data["value"] if isinstance(data, dict) else data)
        for key, data in configs.items()
        if key in THROTTLE_KEYS
    }


def kafka_topic_throttles(view: KafkaView, topic: str) -> dict[str, str]:
    return {k: v for k, v in view.configs(topic).items() if k in REPLICA_KEYS}


def phase(resources: Resources, namespace: str, name: str) -> str | None:
    body = resources.get(namespace, name) or {}
    return (body.get("status") or {}).get("phase")


def wait_phase(
    resources: Resources, namespace: str, name: str, wanted: str | tuple[str, ...], timeout: float = 90
) -> dict[str, Any]:
    targets = (wanted,) if isinstance(wanted, str) else wanted

    def reached() -> dict[str, Any] | None:
        body = resources.get(namespace, name) or {}
        status = body.get("status") or {}
        return body if status.get("phase") in targets else None

    return wait_for(
        reached, timeout=timeout, interval=0.3, what=f"{namespace}/{name} to reach phase {targets}"
    )


def ready_reason(resources: Resources, namespace: str, name: str) -> str | None:
    cond = resources.condition(namespace, name)
    return None if cond is None else cond.get("reason")
