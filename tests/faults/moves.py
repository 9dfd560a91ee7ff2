"""A throttled reassignment for the fault tests to interrupt: three partitions of ~1.5 MB each,
moved one batch at a time, slowly enough that a batch is still in flight when the fault hits."""

from __future__ import annotations

import json
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError
from kubernetes import client

from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import fill, reassignment, wait_phase
from tests.integration.helpers import wait_for

#: Slow enough that a batch (one partition of ~1.5 MB) is still moving when the fault hits.
RATE = 100_000
BATCH_ZNODE = "/admin/reassign_partitions"


def start_throttled_moves(
    ensemble: KafkaCluster,
    topics: Resources,
    reassignments: Resources,
    kafka_view: KafkaView,
    zk: KazooClient,
    namespace: str,
    name: str,
) -> tuple[str, dict[int, list[int]]]:
    """Create a 3-partition RF 2 topic with data and an Explicit reassignment ``name`` moving each
    partition's first replica to a broker (on another rack) it does not use, one partition per
    batch; return once it is Running and its first batch is in ZooKeeper. Returns the topic and the
    replicas asked for."""
    topic = f"{namespace}-moving"
    topics.create(namespace, kafkatopic(topic, partitions=3, rf=2))
    topics.wait_ready(namespace, topic)
    for partition in range(3):
        fill(kafka_view, topic, count=1500, size=1000, partition=partition)
    described = kafka_view.describe(topic) or {}
    racks = {broker.broker_id: broker.rack for broker in ensemble.stack.brokers.values()}
    wanted = {}
    for partition, data in described.items():
        replicas = list(data["replicas"])
        kept_racks = {racks[b] for b in replicas[1:]}
        # The preferred leader's replica moves to a broker it does not use, on another rack
        # (the default rackPolicy Enforce refuses a plan that puts both replicas on one rack).
        spare = min(b for b in racks if b not in replicas and racks[b] not in kept_racks)
        wanted[partition] = [spare, *replicas[1:]]
    reassignments.create(
        namespace,
        reassignment(
            name,
            mode="Explicit",
            throttle=RATE,
            batch={"maxPartitions": 1},
            partitions=[{"topic": topic, "partition": p, "replicas": r} for p, r in wanted.items()],
        ),
    )
    running = wait_phase(reassignments, namespace, name, ("Running", "Failed", "Completed"), timeout=120)
    assert running["status"]["phase"] == "Running", running["status"].get("message")
    # Running is also the phase of a batch about to be submitted (a retry after a ZooKeeper error,
    # a broker not registered yet): the fault must hit a batch Kafka is moving.
    try:
        wait_for(lambda: zk.exists(BATCH_ZNODE), timeout=60, interval=0.1, what="the first batch's znode")
    except AssertionError as exc:
        status = (reassignments.get(namespace, name) or {}).get("status") or {}
        raise AssertionError(f"{exc}; the reassignment says: {status.get('message')!r}") from None
    return topic, wanted


def event_reasons(api: client.ApiClient, namespace: str, name: str) -> list[str]:
    """The reasons of the Events about ``name``, one per occurrence."""
    events = client.CoreV1Api(api).list_namespaced_event(
        namespace, field_selector=f"involvedObject.name={name}"
    )
    return [str(event.reason) for event in events.items for _ in range(max(1, int(event.count or 1)))]


class BatchRecorder:
    """Every ``/admin/reassign_partitions`` znode seen while it runs (polled every 0.1 s; a batch of
    :func:`start_throttled_moves` lasts seconds), by creation zxid: Kafka's own record of the
    batches started. A batch started twice shows up as two znodes with the same partitions."""

    def __init__(self, zk: KazooClient) -> None:
        self._zk = zk
        self.batches: dict[int, frozenset[tuple[str, int]]] = {}
        self.unreadable: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> BatchRecorder:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _poll(self) -> None:
        while not self._stop.wait(0.1):
            try:
                data, stat = self._zk.get(BATCH_ZNODE)
            except NoNodeError:
                continue
            except KazooException:  # the test's own session reconnecting (a ZooKeeper fault)
                continue
            try:
                moves = json.loads(data)["partitions"]
                batch = frozenset((m["topic"], m["partition"]) for m in moves)
            except (ValueError, KeyError, TypeError) as exc:  # never die silently: the test reports it
                self.unreadable.append(f"{data[:200]!r}: {exc}")
                continue
            self.batches.setdefault(stat.czxid, batch)

    def started_twice(self) -> list[frozenset[tuple[str, int]]]:
        seen = list(self.batches.values())
        return [batch for batch in set(seen) if seen.count(batch) > 1]

    def check(self, expected: int) -> None:
        """``expected`` batches seen, none twice, every znode readable."""
        shown = {czxid: sorted(batch) for czxid, batch in self.batches.items()}
        assert not self.unreadable, self.unreadable
        assert not self.started_twice(), f"a batch was started twice: {shown}"
        assert len(self.batches) == expected, f"{len(self.batches)} batches seen, not {expected}: {shown}"
