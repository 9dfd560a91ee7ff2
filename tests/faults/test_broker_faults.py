"""A broker killed (kill -9) in the middle of a throttled reassignment while a producer with
``acks=all`` writes to the topic being moved (``min.insync.replicas=2``, RF 3)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kazoo.client import KazooClient
from kubernetes import client

from tests.conftest import KafkaCluster
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import fill, reassignment, wait_phase
from tests.faults.conftest import assert_converged
from tests.integration.helpers import wait_for

#: Slow enough that the batch is still moving when the broker dies (each partition carries ~1.5 MB).
RATE = 100_000


@dataclass
class AckedProducer:
    """Sends numbered messages one at a time with acks=all; remembers exactly which were acknowledged."""

    bootstrap: str
    topic: str
    acked: list[bytes] = field(default_factory=list)
    failed: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        producer = KafkaProducer(
            bootstrap_servers=self.bootstrap,
            acks="all",
            retries=2_147_483_647,
            max_in_flight_requests_per_connection=1,
            request_timeout_ms=15_000,
        )
        try:
            n = 0
            while not self.stop.is_set():
                value = f"acked-{n:06d}".encode()
                n += 1
                try:
                    producer.send(self.topic, value).get(timeout=30)
                except Exception:  # not acknowledged: it may or may not be in the log
                    self.failed += 1
                    continue
                self.acked.append(value)
        finally:
            producer.close(timeout=10)


def _consume_everything(bootstrap: str, topic: str, partitions: int) -> list[bytes]:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False, group_id=None
    )
    try:
        assigned = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(assigned)
        consumer.seek_to_beginning()
        ends = consumer.end_offsets(assigned)
        out: list[bytes] = []

        def caught_up() -> bool:
            for batch in consumer.poll(timeout_ms=1000).values():
                out.extend(record.value for record in batch)
            return all(consumer.position(tp) >= ends[tp] for tp in assigned)

        wait_for(caught_up, timeout=120, interval=0, what=f"every record of {topic} to be read")
        return out
    finally:
        consumer.close()


def test_broker_killed_during_a_reassignment_under_acks_all_writes(
    ensemble: KafkaCluster,
    api: client.ApiClient,
    topics: Resources,
    reassignments: Resources,
    ns: str,
    kafka_view: KafkaView,
    zk: KazooClient,
    fourth_broker: int,
) -> None:
    """Promise: a broker killed -9 while a throttled reassignment moves a topic that a producer
    writes to with acks=all (min.insync.replicas=2) loses no acknowledged message - every one is
    consumed afterwards, with its content - the reassignment completes once the broker is back,
    and its throttles are gone at the end."""
    topic = f"{ns}-acked"
    on_first_three = {"0": [1, 2, 3], "1": [2, 3, 1], "2": [3, 1, 2]}  # broker 4 holds nothing yet
    topics.create(
        ns,
        kafkatopic(topic, partitions=3, rf=3, config={"min.insync.replicas": "2"}, assignment=on_first_three),
    )
    topics.wait_ready(ns, topic)
    for partition in range(3):
        fill(kafka_view, topic, count=1500, size=1000, partition=partition)
    described = kafka_view.describe(topic) or {}
    wanted = {p: [4 if b == 1 else b for b in d["replicas"]] for p, d in described.items()}

    producer = AckedProducer(ensemble.bootstrap_servers, topic)
    thread = threading.Thread(target=producer.run, name="acked-producer", daemon=True)
    thread.start()
    try:
        wait_for(lambda: len(producer.acked) >= 50, timeout=60, what="the producer to get going")
        reassignments.create(
            ns,
            reassignment(
                "move-off-1",
                mode="Explicit",
                throttle=RATE,
                partitions=[{"topic": topic, "partition": p, "replicas": r} for p, r in wanted.items()],
            ),
        )
        wait_phase(reassignments, ns, "move-off-1", "Running", timeout=120)
        ensemble.stack.kill_broker(2)
        wait_for(lambda: len(producer.acked) >= 200, timeout=120, what="acks=all writes with broker 2 dead")
        ensemble.stack.restart_broker(2)
        wait_phase(reassignments, ns, "move-off-1", "Completed", timeout=300)
        acked_before_stop = len(producer.acked)
        wait_for(lambda: len(producer.acked) >= acked_before_stop + 50, timeout=60, what="more writes")
    finally:
        producer.stop.set()
        thread.join(timeout=60)

    consumed = _consume_everything(ensemble.bootstrap_servers, topic, 3)
    print(f"[figures] acked={len(producer.acked)} not-acked={producer.failed} consumed={len(consumed)}")
    lost = sorted(set(producer.acked) - set(consumed))
    assert not lost, f"{len(lost)} of {len(producer.acked)} acknowledged messages are gone: {lost[:10]}"
    assert len(producer.acked) >= 300
    assert {p: d["replicas"] for p, d in (kafka_view.describe(topic) or {}).items()} == wanted
    assert_converged(api, ns, kafka_view, zk, timeout=120)
