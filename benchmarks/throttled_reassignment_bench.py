"""Throttled add-brokers reassignment, end to end on a real local cluster with real data: how long
the operator takes against the throttle's bound, and whether every acknowledged message survives
and every throttle is removed (a script that prints figures; not part of ``make test``).

The stack (``devstack.LocalStack``): one ZooKeeper, ``--brokers-before + --brokers-added`` racked
Kafka brokers (racks rack-a and rack-b alternate: broker ``i`` is in ``racks[(i - 1) % 2]``),
etcd + kube-apiserver, the CRDs, and the operator as a process (``kzo operator``) watching one
namespace, with a clusters file that gives it the brokers' ``bootstrapServers`` so it can read
partition sizes (``spec.balance: bytes``). Every broker is registered from the start; the added
ones (the highest ids) hold nothing until the reassignment.

1. Topics are created with Kafka's Admin API on the first ``--brokers-before`` brokers only, rack
   diverse, round-robin leaders, ``retention.bytes = retention.ms = -1``: 8 topics whose shares
   of ``--gigabytes`` follow a Zipf shape (rank ** -1.2: a Pareto tail), seeded, 2-12 partitions each.
2. The data is produced with a Kafka producer (``acks=all``): values of 100 KB whose first 16
   bytes are (partition, sequence number) and the rest a slice of a random buffer
   (incompressible). A message counts as acknowledged when its send future succeeded.
3. A ``PartitionReassignment`` (mode AddBrokers onto the added brokers, ``spec.throttle`` =
   ``--throttle-mb`` MB/s, ``--balance``, approval Auto, ``--max-partitions`` /
   ``--max-moves-per-broker`` per batch) is created and followed until Completed: the status
   every 0.5 s, the ``/admin/reassign_partitions`` znode with a ZooKeeper watch (when Kafka got
   each batch and when it finished it), and the resource's Events.
4. The bound: from DescribeLogDirs before and after, the bytes each broker received (the sizes of
   the partitions it newly holds) and sent (the moved partitions it led before, times their new
   replicas); ``B_max`` is the largest of these and the bound is ``B_max / throttle``: no broker
   can take in or send out its bytes faster. The same per batch (from the znode's contents) gives
   the batched bound: the bound once the plan is cut into batches that each wait for their
   slowest broker.

Checks (``check NAME: ok|FAIL (detail)``; exit code 1 if any fails): every acknowledged message is
read back (a consumer on every partition from the beginning to its end offset, after the run);
no throttle is left (DescribeConfigs on every broker and topic); no reassignment znode is left
(raw kazoo); the run took at most 1.15 x the bound, from the first batch submitted (copying
starts there; before it the operator plans) to Completed.

Usage: .venv/bin/python benchmarks/throttled_reassignment_bench.py [--gigabytes 3] [--throttle-mb 20]
       [--brokers-before 4] [--brokers-added 2] [--replication-factor 2] [--balance bytes]
       [--max-partitions 50] [--max-moves-per-broker 5] [--seed 7] [--report figures.json] [--keep]

Takes about 6 minutes plus the bound at the defaults (4 + 2 brokers, 3 GB, 20 MB/s).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import math
import random
import shutil
import struct
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import yaml
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient
from kazoo.client import KazooClient
from kazoo.recipe.watchers import DataWatch
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "operator"))

from placement_bench import _print_table as print_table  # noqa: E402

from kafka_zk_operator.devstack import demo  # noqa: E402
from kafka_zk_operator.devstack.operator_process import OperatorProcess  # noqa: E402
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec  # noqa: E402
from kafka_zk_operator.devstack.state_file import StackState  # noqa: E402
from kafka_zk_operator.domain.crd_identity import GROUP, PARTITION_REASSIGNMENT, VERSION  # noqa: E402

Key = tuple[str, int]

NAMESPACE = "throttle-bench"
NAME = "add-brokers"
PLURAL = PARTITION_REASSIGNMENT.plural
RACKS = ("rack-a", "rack-b")
TOPICS = 8
VALUE_SIZE = 100_000
HEADER = struct.Struct(">qq")  # (partition, sequence number)
BUFFER_SIZE = 8 * 1024 * 1024
MB = 1_000_000
REASSIGN_ZNODE = "/admin/reassign_partitions"
RATE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
REPLICA_KEYS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
WITHIN = 1.15
POLL = 0.5


class BenchError(Exception):
    """The run cannot go on (the reassignment failed, a timeout): printed, exit code 2."""


def say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


class Clock:
    """One monotonic clock for everything this script observes; wall-clock times (the operator's
    status timestamps, Events) are mapped onto it with one offset taken at the start."""

    def __init__(self) -> None:
        self.offset = time.time() - time.monotonic()

    def now(self) -> float:
        return time.monotonic()

    def from_wall(self, epoch: float) -> float:
        return epoch - self.offset

    def from_timestamp(self, value: object) -> float | None:
        if isinstance(value, datetime):
            moment = value if value.tzinfo else value.replace(tzinfo=UTC)
            return self.from_wall(moment.timestamp())
        if not isinstance(value, str) or not value:
            return None
        try:
            return self.from_wall(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
        except ValueError:
            return None


# ---------------------------------------------------------------------------------------- arguments
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--brokers-before", type=int, default=4, help="brokers holding the data (default 4)")
    parser.add_argument("--brokers-added", type=int, default=2, help="empty brokers to fill (default 2)")
    parser.add_argument(
        "--gigabytes", type=float, default=3.0, help="GB (1e9 bytes) produced, before replication (default 3)"
    )
    parser.add_argument("--replication-factor", type=int, default=2)
    parser.add_argument(
        "--throttle-mb", type=float, default=20.0, help="spec.throttle in MB/s (1e6 bytes/s; default 20)"
    )
    parser.add_argument("--balance", choices=("replicas", "bytes", "both"), default="bytes")
    parser.add_argument("--max-partitions", type=int, default=50, help="spec.batch.maxPartitions")
    parser.add_argument("--max-moves-per-broker", type=int, default=5, help="spec.batch.maxMovesPerBroker")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--report", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--keep", action="store_true", help="leave the stack running and print where")
    args = parser.parse_args(argv)
    if args.brokers_before < 1 or args.brokers_added < 1:
        parser.error("--brokers-before and --brokers-added must be at least 1")
    if args.brokers_before + args.brokers_added > 50:
        parser.error("at most 50 brokers in all (each is a JVM on this machine)")
    if not 1 <= args.replication_factor <= args.brokers_before:
        parser.error(f"--replication-factor must be between 1 and --brokers-before ({args.brokers_before})")
    if not (math.isfinite(args.gigabytes) and args.gigabytes > 0):
        parser.error("--gigabytes must be a positive number")
    if not (math.isfinite(args.throttle_mb) and int(args.throttle_mb * MB) >= 1):
        parser.error("--throttle-mb must be a positive number (at least 1 byte/s)")
    if not 1 <= args.max_partitions <= 10_000:
        parser.error("--max-partitions must be between 1 and 10000")
    if not 1 <= args.max_moves_per_broker <= 1000:
        parser.error("--max-moves-per-broker must be between 1 and 1000")
    if args.report is not None and not args.report.parent.is_dir():
        parser.error(f"--report: directory {args.report.parent} does not exist")
    return args


# ---------------------------------------------------------------------------------------- topics
@dataclass(frozen=True)
class Layout:
    topics: tuple[str, ...]
    partitions: dict[str, int]
    replicas: dict[Key, list[int]]
    messages: dict[Key, int]

    @property
    def keys(self) -> list[Key]:
        return sorted(self.replicas)


def rack_of(broker: int) -> str:
    return RACKS[(broker - 1) % len(RACKS)]


def rack_diverse(brokers: list[int], start: int, rf: int) -> list[int]:
    """``rf`` brokers from ``start`` round the ring, a new rack first while one is left."""
    order = brokers[start % len(brokers) :] + brokers[: start % len(brokers)]
    chosen: list[int] = []
    for broker in order:
        if len(chosen) < rf and rack_of(broker) not in {rack_of(b) for b in chosen}:
            chosen.append(broker)
    chosen += [b for b in order if b not in chosen][: rf - len(chosen)]
    return chosen


def make_layout(args: argparse.Namespace, rng: random.Random) -> Layout:
    # Zipf-shaped shares (rank ** -1.2, a Pareto tail), jittered and shuffled by the seed.
    weights = [(rank + 1) ** -1.2 * rng.lognormvariate(0, 0.25) for rank in range(TOPICS)]
    rng.shuffle(weights)
    counts = [rng.randint(2, 12) for _ in range(TOPICS)]
    total_bytes = args.gigabytes * 1e9
    brokers = list(range(1, args.brokers_before + 1))
    slot = rng.randrange(len(brokers))
    topics, partitions, replicas, messages = [], {}, {}, {}
    for index, (weight, count) in enumerate(zip(weights, counts, strict=True)):
        name = f"bench-{index:02d}"
        topics.append(name)
        partitions[name] = count
        for p in range(count):
            replicas[(name, p)] = rack_diverse(brokers, slot, args.replication_factor)
            slot += 1
            share = total_bytes * weight / sum(weights) / count
            messages[(name, p)] = max(1, round(share / VALUE_SIZE))
    return Layout(tuple(topics), partitions, replicas, messages)


def create_topics(admin: Any, layout: Layout) -> None:
    admin.create_topics(
        {
            name: {
                "assignments": {p: layout.replicas[(name, p)] for p in range(layout.partitions[name])},
                "configs": {"retention.bytes": "-1", "retention.ms": "-1"},
            }
            for name in layout.topics
        },
        wait_for_metadata=True,
    )


def _field(data: Mapping[str, Any], *names: str) -> Any:
    return next(data[n] for n in names if n in data)


@dataclass(frozen=True)
class PartitionState:
    leader: int
    replicas: list[int]
    isr: list[int]


def describe(admin: Any, topics: Iterable[str]) -> dict[Key, PartitionState]:
    """Leader, replicas and ISR of every partition of ``topics`` (Kafka's metadata)."""
    out = {}
    for topic in admin.describe_topics(sorted(topics)):
        name = str(_field(topic, "name", "topic"))
        for p in topic.get("partitions") or []:
            out[(name, int(_field(p, "partition_index", "partition")))] = PartitionState(
                int(_field(p, "leader_id", "leader")),
                [int(b) for b in _field(p, "replica_nodes", "replicas")],
                [int(b) for b in _field(p, "isr_nodes", "isr")],
            )
    return out


def wait_metadata(admin: Any, layout: Layout, timeout: float = 120.0) -> dict[Key, PartitionState]:
    """Kafka's metadata once every partition has a leader and a full ISR."""
    deadline = time.monotonic() + timeout
    while True:
        found = describe(admin, layout.topics)
        if set(found) == set(layout.keys) and all(
            s.leader >= 0 and sorted(s.isr) == sorted(s.replicas) for s in found.values()
        ):
            return found
        if time.monotonic() > deadline:
            raise BenchError("the topics did not get a leader and a full ISR in time")
        time.sleep(1)


# ---------------------------------------------------------------------------------------- data
def payload(buffer: bytes, topic_index: int, partition: int, seq: int) -> bytes:
    """The value of message ``seq`` of a partition: (partition, seq) and a slice of ``buffer``."""
    span = len(buffer) - VALUE_SIZE
    offset = (topic_index * 1_000_003 + partition * 10_007 + seq * 7_919) % span
    return HEADER.pack(partition, seq) + buffer[offset : offset + VALUE_SIZE - HEADER.size]


class Acks:
    """Send outcomes, filled by the producer's I/O thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.acked: dict[Key, set[int]] = defaultdict(set)
        self.failed: dict[Key, int] = defaultdict(int)
        self.first_error: str | None = None

    def ok(self, key: Key, seq: int, _metadata: Any) -> None:
        with self.lock:
            self.acked[key].add(seq)

    def error(self, key: Key, _seq: int, exc: BaseException) -> None:
        with self.lock:
            self.failed[key] += 1
            self.first_error = self.first_error or f"{key[0]}-{key[1]}: {exc!r}"


def send_order(layout: Layout) -> list[tuple[Key, int]]:
    """Every (partition, seq), interleaved so that each partition fills at its own pace."""
    slots = [((seq + 0.5) / n, key, seq) for key, n in layout.messages.items() for seq in range(n)]
    slots.sort()
    return [(key, seq) for _, key, seq in slots]


def produce(bootstrap: str, layout: Layout, buffer: bytes) -> tuple[Acks, float]:
    order = send_order(layout)
    index = {name: i for i, name in enumerate(layout.topics)}
    acks = Acks()
    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        linger_ms=20,
        batch_size=1_000_000,
        max_request_size=1_000_000,
        compression_type=None,
    )
    started = time.monotonic()
    step = max(1, len(order) // 10)
    try:
        for done, (key, seq) in enumerate(order, start=1):
            future = producer.send(key[0], payload(buffer, index[key[0]], key[1], seq), partition=key[1])
            future.add_callback(acks.ok, key, seq)
            future.add_errback(acks.error, key, seq)
            if done % step == 0 or done == len(order):
                took = time.monotonic() - started
                mb = done * VALUE_SIZE / MB
                with acks.lock:
                    acked = sum(len(s) for s in acks.acked.values())
                say(
                    f"produce: {done}/{len(order)} handed to the producer ({mb:,.0f} MB), {acked} acknowledged, "
                    f"{took:.0f} s"
                )
        producer.flush(timeout=600)
    finally:
        producer.close(timeout=60)
    took = time.monotonic() - started
    total = sum(len(s) for s in acks.acked.values())
    say(
        f"produce: {total} of {len(order)} acknowledged in {took:.1f} s ({total * VALUE_SIZE / MB / took:.1f} MB/s)"
    )
    if acks.first_error:
        say(f"produce: {sum(acks.failed.values())} sends failed, first: {acks.first_error}")
    return acks, took


# ---------------------------------------------------------------------------------------- sizes
def log_dir_sizes(admin: Any, brokers: list[int], topics: Iterable[str]) -> dict[int, dict[Key, int]]:
    """Bytes of each partition of ``topics`` on each broker, as the broker reports them
    (DescribeLogDirs; future logs and offline log directories left out)."""
    wanted = set(topics)
    held: dict[int, dict[Key, int]] = {b: {} for b in brokers}
    for broker in brokers:
        for response in admin.describe_log_dirs(brokers=[broker]):
            node = int(response.get("broker", broker))
            for log_dir in response.get("log_dirs") or []:
                if log_dir.get("error_code", 0) != 0:
                    continue
                for topic in log_dir.get("topics") or []:
                    name = str(topic.get("name"))
                    if name not in wanted:
                        continue
                    for partition in topic.get("partitions") or []:
                        if partition.get("is_future_key"):
                            continue
                        key = (name, int(partition["partition_index"]))
                        size = max(0, int(partition.get("partition_size", 0)))
                        held[node][key] = max(size, held[node].get(key, 0))
    return held


def stable_sizes(
    admin: Any, brokers: list[int], topics: Iterable[str], timeout: float = 180.0
) -> dict[int, dict[Key, int]]:
    """DescribeLogDirs once two reads a second apart agree."""
    names = list(topics)
    deadline = time.monotonic() + timeout
    last = log_dir_sizes(admin, brokers, names)
    while True:
        time.sleep(1)
        now = log_dir_sizes(admin, brokers, names)
        if now == last:
            return now
        if time.monotonic() > deadline:
            say("log sizes still changing; using the last read")
            return now
        last = now


def partition_sizes(held: Mapping[int, Mapping[Key, int]]) -> dict[Key, int]:
    """A partition's size: its largest replica's."""
    sizes: dict[Key, int] = {}
    for per_broker in held.values():
        for key, size in per_broker.items():
            sizes[key] = max(size, sizes.get(key, 0))
    return sizes


def holders(held: Mapping[int, Mapping[Key, int]]) -> dict[Key, set[int]]:
    out: dict[Key, set[int]] = defaultdict(set)
    for broker, per_broker in held.items():
        for key in per_broker:
            out[key].add(broker)
    return out


def per_broker_bytes(held: Mapping[int, Mapping[Key, int]]) -> dict[int, int]:
    return {broker: sum(per_broker.values()) for broker, per_broker in held.items()}


@dataclass(frozen=True)
class Traffic:
    """Bytes each broker receives and sends for a set of new replicas, and the throttle's bound."""

    received: dict[int, int]
    sent: dict[int, int]

    @property
    def b_max(self) -> int:
        return max([*self.received.values(), *self.sent.values(), 0])

    @property
    def moved(self) -> int:
        return sum(self.received.values())

    def busiest(self) -> str:
        if self.b_max == 0:
            return "-"
        for what, table in (("receives", self.received), ("sends", self.sent)):
            for broker, value in sorted(table.items()):
                if value == self.b_max:
                    return f"broker {broker} {what}"
        return "-"


def traffic(
    new: Mapping[Key, Iterable[int]], sizes: Mapping[Key, int], leaders: Mapping[Key, int]
) -> Traffic:
    received: dict[int, int] = defaultdict(int)
    sent: dict[int, int] = defaultdict(int)
    for key, brokers in new.items():
        added = set(brokers)
        if not added:
            continue
        for broker in added:
            received[broker] += sizes.get(key, 0)
        sent[leaders[key]] += sizes.get(key, 0) * len(added)
    return Traffic(dict(received), dict(sent))


def spread(per_broker: Mapping[int, int]) -> float:
    mean = sum(per_broker.values()) / len(per_broker)
    return max(per_broker.values()) / mean if mean else 0.0


# ---------------------------------------------------------------------------------------- the run
@dataclass
class ZnodeBatch:
    created: float
    partitions: list[dict[str, Any]]
    deleted: float | None = None


class ZnodeWatch:
    """When ``/admin/reassign_partitions`` appears (a batch submitted, with its contents) and
    disappears (Kafka finished the batch), from a ZooKeeper watch."""

    def __init__(self, zk: KazooClient, clock: Clock) -> None:
        self.clock = clock
        self.lock = threading.Lock()
        self.batches: list[ZnodeBatch] = []
        self._czxid: int | None = None
        DataWatch(zk, REASSIGN_ZNODE, self._changed)

    def _changed(self, data: bytes | None, stat: Any, _event: Any) -> None:
        at = self.clock.now()
        with self.lock:
            current = self.batches[-1] if self.batches else None
            if stat is None:
                if current is not None and current.deleted is None:
                    current.deleted = at
                self._czxid = None
                return
            if stat.czxid == self._czxid:
                return  # the controller rewrote the znode as partitions completed
            if current is not None and current.deleted is None:
                current.deleted = at  # deleted and re-created between two watch firings
            self._czxid = stat.czxid
            try:
                partitions = list(json.loads(data or b"{}").get("partitions") or [])
            except ValueError:
                partitions = []
            self.batches.append(ZnodeBatch(at, partitions))

    def snapshot(self) -> list[ZnodeBatch]:
        with self.lock:
            return [ZnodeBatch(b.created, list(b.partitions), b.deleted) for b in self.batches]


@dataclass
class Observed:
    created: float
    phases: dict[str, float] = field(default_factory=dict)
    current_batch: dict[int, float] = field(default_factory=dict)
    batches_done: dict[int, float] = field(default_factory=dict)
    status: dict[str, Any] = field(default_factory=dict)
    completed: float | None = None
    events: list[tuple[float, str, str]] = field(default_factory=list)


def planned_new_replicas(status: Mapping[str, Any]) -> dict[Key, set[int]] | None:
    if status.get("planTruncated") or not status.get("plan"):
        return None
    return {
        (str(e["topic"]), int(e["partition"])): set(e.get("to") or []) - set(e.get("from") or [])
        for e in status["plan"]
    }


def run_reassignment(
    api: client.ApiClient,
    args: argparse.Namespace,
    added: list[int],
    clock: Clock,
    bound_of_plan: Callable[[Mapping[str, Any]], float | None],
) -> Observed:
    custom = client.CustomObjectsApi(api)
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": PARTITION_REASSIGNMENT.kind,
        "metadata": {"name": NAME},
        "spec": {
            "mode": "AddBrokers",
            "brokers": added,
            "throttle": int(args.throttle_mb * MB),
            "balance": args.balance,
            "approval": "Auto",
            "batch": {"maxPartitions": args.max_partitions, "maxMovesPerBroker": args.max_moves_per_broker},
        },
    }
    custom.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, body)
    seen = Observed(created=clock.now())
    deadline = seen.created + 900  # planning; replaced by 6 x the plan's bound + 300 s
    bound: float | None = None
    phase = ""
    while True:
        time.sleep(POLL)
        now = clock.now()
        try:
            current = cast(
                "dict[str, Any]", custom.get_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, NAME)
            )
        except ApiException as exc:
            say(f"reading the resource failed ({exc.status}); retrying")
            if now > deadline:
                raise BenchError("timed out reading the PartitionReassignment") from exc
            continue
        status = current.get("status") or {}
        seen.status = status
        progress = status.get("progress") or {}
        if bound is None and (bound := bound_of_plan(status)) is not None:
            deadline = seen.created + 6 * bound + 300
            say(
                f"plan: {(status.get('proposal') or {}).get('moves')} moves, bound {bound:.0f} s; timeout {deadline - now:.0f} s"
            )
        if status.get("phase") and status["phase"] != phase:
            phase = status["phase"]
            seen.phases.setdefault(phase, now)
            say(f"phase {phase}: {status.get('message', '')}")
        batch = progress.get("currentBatch")
        if phase == "Running" and isinstance(batch, int) and batch not in seen.current_batch:
            seen.current_batch[batch] = now
            say(f"batch {batch}/{progress.get('batchesTotal')} current ({status.get('progressText')})")
        done = progress.get("batchesDone")
        if isinstance(done, int) and done not in seen.batches_done:
            seen.batches_done[done] = now
        if phase == "Completed":
            seen.completed = now
            break
        if phase in ("Failed", "Stopped"):
            raise BenchError(f"the reassignment ended {phase}: {status.get('message')}")
        if now > deadline:
            raise BenchError(
                f"the reassignment did not complete in time (phase {phase}: {status.get('message')})"
            )
    time.sleep(2)  # kopf posts Events from a queue
    try:
        listed = client.CoreV1Api(api).list_namespaced_event(
            NAMESPACE, field_selector=f"involvedObject.name={NAME}"
        )
        for event in listed.items:
            at = clock.from_timestamp(event.event_time or event.last_timestamp or event.first_timestamp)
            if at is not None:
                seen.events.append((at, str(event.reason), str(event.message)))
        seen.events.sort()
    except ApiException as exc:
        say(f"listing Events failed ({exc.status})")
    return seen


# ---------------------------------------------------------------------------------------- checks
def read_back(
    bootstrap: str, layout: Layout, buffer: bytes, timeout: float
) -> tuple[dict[Key, set[int]], int, list[str]]:
    """Every message of every partition from the beginning to its end offset: the sequence
    numbers read per partition, how many values were not what was produced, and problems."""
    index = {name: i for i, name in enumerate(layout.topics)}
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=4 * 1024 * 1024,
        fetch_max_bytes=64 * 1024 * 1024,
        check_crcs=False,  # every value is compared byte for byte with what was produced instead
    )
    seen: dict[Key, set[int]] = defaultdict(set)
    corrupt, problems = 0, []
    try:
        tps = [TopicPartition(t, p) for t, p in layout.keys]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = {(tp.topic, tp.partition): int(o) for tp, o in consumer.end_offsets(tps).items()}
        starts = {(tp.topic, tp.partition): int(o) for tp, o in consumer.beginning_offsets(tps).items()}
        problems += [f"{t}-{p} starts at offset {o}" for (t, p), o in sorted(starts.items()) if o]
        next_offset = dict(starts)
        deadline = time.monotonic() + timeout
        while any(next_offset[k] < ends[k] for k in ends):
            if time.monotonic() > deadline:
                short = [f"{t}-{p}" for (t, p) in ends if next_offset[(t, p)] < ends[(t, p)]]
                problems.append(f"read timed out short of the end offset on {', '.join(short[:10])}")
                break
            for tp, records in consumer.poll(timeout_ms=1000, max_records=2000).items():
                key = (tp.topic, tp.partition)
                for record in records:
                    next_offset[key] = max(next_offset[key], int(record.offset) + 1)
                    value = bytes(record.value or b"")
                    if len(value) != VALUE_SIZE:
                        corrupt += 1
                        continue
                    partition, seq = HEADER.unpack_from(value)
                    if partition != tp.partition or value != payload(buffer, index[tp.topic], partition, seq):
                        corrupt += 1
                        continue
                    seen[key].add(seq)
    finally:
        consumer.close()
    return seen, corrupt, problems


def throttles_left(admin: Any, brokers: list[int], topics: Iterable[str]) -> list[str]:
    """Throttle rates on brokers and throttled-replica lists on topics (DescribeConfigs)."""
    left = []
    resources = [ConfigResource(ConfigResourceType.BROKER, str(b)) for b in brokers]
    result = admin.describe_configs(resources)
    for name, configs in sorted((result.get("broker") or {}).items()):
        for key in RATE_KEYS:
            if key in configs:
                data = configs[key]
                value = data.get("value") if isinstance(data, dict) else data
                source = data.get("config_source") if isinstance(data, dict) else "?"
                left.append(f"broker {name} {key}={value} ({source})")
    result = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, t) for t in sorted(topics)])
    for name, configs in sorted((result.get("topic") or {}).items()):
        for key in REPLICA_KEYS:
            data = configs.get(key)
            value = data.get("value") if isinstance(data, dict) else data
            if value:
                left.append(f"topic {name} {key}={value}")
    return left


def check(name: str, ok: bool, detail: str) -> tuple[str, bool]:
    return f"check {name}: {'ok' if ok else 'FAIL'} ({detail})", ok


# ---------------------------------------------------------------------------------------- figures
def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def megabytes(value: float) -> str:
    return f"{value / MB:,.1f}"


def batch_rows(
    batches: list[ZnodeBatch],
    seen: Observed,
    sizes: Mapping[Key, int],
    before: Mapping[Key, set[int]],
    leaders: Mapping[Key, int],
    rate: float,
    started: float,
) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """One row per batch Kafka was given: its size, bound, how long Kafka took, the gap before it."""
    rows, figures = [], []
    started_events = [at for at, reason, _ in seen.events if reason in ("BatchStarted", "BatchResubmitted")]
    completed_events = [at for at, reason, _ in seen.events if reason == "BatchCompleted"]
    previous_end: float | None = None
    for number, batch in enumerate(batches, start=1):
        new = {
            (str(e["topic"]), int(e["partition"])): set(e.get("replicas") or [])
            - before.get((str(e["topic"]), int(e["partition"])), set())
            for e in batch.partitions
        }
        load = traffic(new, sizes, leaders)
        bound = load.b_max / rate
        took = None if batch.deleted is None else batch.deleted - batch.created
        gap = batch.created - (started if previous_end is None else previous_end)
        saw = seen.current_batch.get(number)
        figure = {
            "batch": number,
            "partitions": len(batch.partitions),
            "replica_moves": sum(len(b) for b in new.values()),
            "bytes_moved": load.moved,
            "b_max": load.b_max,
            "bound_s": bound,
            "kafka_s": took,
            "gap_before_s": gap,
            "znode_created_s": batch.created - started,
            "status_saw_batch_s": None if saw is None else saw - started,
            "event_started_s": started_events[number - 1] - started
            if number <= len(started_events)
            else None,
            "event_completed_s": (
                completed_events[number - 1] - started if number <= len(completed_events) else None
            ),
        }
        figures.append(figure)
        rows.append(
            {
                "batch": str(number),
                "parts": str(figure["partitions"]),
                "moves": str(figure["replica_moves"]),
                "moved": megabytes(load.moved),
                "bmax": megabytes(load.b_max),
                "bound": seconds(bound),
                "kafka": seconds(took),
                "ratio": "-" if took is None or not bound else f"{took / bound:.2f}",
                "gap": seconds(gap),
                "start": seconds(figure["znode_created_s"]),
                "event": seconds(figure["event_started_s"]),
            }
        )
        previous_end = batch.deleted
    return rows, figures


BATCH_COLUMNS = (
    ("batch", "batch"),
    ("parts", "partitions"),
    ("moves", "replica moves"),
    ("moved", "MB moved"),
    ("bmax", "B_max MB"),
    ("bound", "bound s"),
    ("kafka", "Kafka took s"),
    ("ratio", "took/bound"),
    ("gap", "gap before s"),
    ("start", "submitted at s"),
    ("event", "BatchStarted at s"),
)
FIGURE_COLUMNS = (("figure", "figure"), ("value", "value"))


# ---------------------------------------------------------------------------------------- main
def write_clusters_file(path: Path, state: StackState) -> None:
    path.write_text(
        yaml.safe_dump(
            {
                "clusters": [
                    {
                        "name": "local",
                        "zookeeper": state.zk_connect,
                        "bootstrapServers": state.bootstrap_servers,
                    }
                ],
                "defaultCluster": "local",
            }
        )
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.getLogger("kafka").setLevel(logging.ERROR)
    logging.getLogger("kazoo").setLevel(logging.ERROR)
    rng = random.Random(args.seed)
    clock = Clock()
    before_ids = list(range(1, args.brokers_before + 1))
    added = list(range(args.brokers_before + 1, args.brokers_before + args.brokers_added + 1))
    every = before_ids + added
    rate = int(args.throttle_mb * MB)
    layout = make_layout(args, rng)
    if importlib.util.find_spec("crc32c") is None:
        say(
            "note: the crc32c package is missing, so kafka-python computes record CRCs in pure Python "
            "(about 4-5 MB/s on this machine): producing is bound by it (pip install crc32c)"
        )
    buffer = rng.randbytes(BUFFER_SIZE)
    wall_started = time.monotonic()

    workdir = Path(tempfile.mkdtemp(prefix="kzo-throttle-bench-"))
    say(f"state in {workdir}")
    stack = LocalStack(
        StackSpec(brokers=len(every), racks=RACKS, broker_heap="768m"),
        workdir / "stack",
        progress=lambda m: print(f"  [stack] {m}", file=sys.stderr, flush=True),
    )
    state = stack.up()
    operator: OperatorProcess | None = None
    admin: Any = None
    zk: KazooClient | None = None
    try:
        assert state.kubeconfig is not None
        api = config.new_client_from_config(config_file=state.kubeconfig)  # type: ignore[no-untyped-call]
        demo.install_crds(api, ROOT / "crds")
        demo.wait_served(api)
        client.CoreV1Api(api).create_namespace(
            client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE))
        )
        clusters_file = workdir / "clusters.yaml"
        write_clusters_file(clusters_file, state)
        operator = OperatorProcess(
            kubeconfig=Path(state.kubeconfig),
            zk_connect="unused",
            log_path=workdir / "operator.log",
            extra_env={
                "KZO_RESYNC_SECONDS": "60",
                "KZO_CREATE_WAIT_SECONDS": "10",
                "KZO_LOG_FORMAT": "json",
                "KZO_CLUSTERS_FILE": str(clusters_file),
                "KZO_ZOOKEEPER": "",
                "KZO_NAMESPACES": NAMESPACE,
            },
            detach=args.keep,
        )
        operator.start()
        say(f"operator running (pid {operator.pid}, log {operator.log_path})")

        admin = KafkaAdminClient(
            bootstrap_servers=state.bootstrap_servers, client_id="throttle-bench", request_timeout_ms=60_000
        )
        create_topics(admin, layout)
        metadata_before = wait_metadata(admin, layout)
        say(
            f"{len(layout.topics)} topics, {len(layout.keys)} partitions on brokers {before_ids}; "
            f"producing {args.gigabytes:g} GB"
        )
        acks, produce_s = produce(state.bootstrap_servers, layout, buffer)
        metadata_before = wait_metadata(admin, layout)
        held_before = stable_sizes(admin, every, layout.topics)
        sizes = partition_sizes(held_before)
        holders_before = holders(held_before)
        leaders_before = {key: s.leader for key, s in metadata_before.items()}
        misplaced = [k for k in layout.keys if holders_before.get(k) != set(layout.replicas[k])]
        if misplaced:
            say(f"warning: log dirs disagree with the assignment for {misplaced[:5]}")

        def bound_of_plan(status: Mapping[str, Any]) -> float | None:
            new = planned_new_replicas(status)
            return None if new is None else traffic(new, sizes, leaders_before).b_max / rate

        zk = KazooClient(hosts=state.zk_connect, timeout=15)
        zk.start(timeout=15)
        watch = ZnodeWatch(zk, clock)
        say(
            f"creating PartitionReassignment {NAMESPACE}/{NAME}: AddBrokers {added}, throttle {args.throttle_mb:g} MB/s"
        )
        seen = run_reassignment(api, args, added, clock, bound_of_plan)
        assert seen.completed is not None
        batches = watch.snapshot()

        # ------------------------------------------------------------------ after the run
        held_after = stable_sizes(admin, every, layout.topics)
        metadata_after = wait_metadata(admin, layout, timeout=300)
        holders_after = holders(held_after)
        new = {k: holders_after.get(k, set()) - holders_before.get(k, set()) for k in layout.keys}
        measured = traffic(new, sizes, leaders_before)
        bound = measured.b_max / rate
        status = seen.status
        progress = status.get("progress") or {}
        proposal = status.get("proposal") or {}
        started_at = clock.from_timestamp(progress.get("startedAt"))
        started = started_at if started_at is not None else seen.phases.get("Running", seen.created)
        run_s = seen.completed - started
        first_submit = batches[0].created if batches else None
        # Copying starts when Kafka gets the first batch; before it the operator plans (reads the
        # cluster, asks the brokers for sizes): that is not what the throttle bound is about.
        execution_s = seen.completed - (first_submit if first_submit is not None else started)
        planned = planned_new_replicas(status)
        plan_matches = planned is None or {k: v for k, v in planned.items() if v} == {
            k: v for k, v in new.items() if v
        }
        metadata_mismatch = [
            k for k in layout.keys if set(metadata_after[k].replicas) != holders_after.get(k, set())
        ]
        rows, batch_figures = batch_rows(batches, seen, sizes, holders_before, leaders_before, rate, started)
        batched_bound = sum(float(f["bound_s"]) for f in batch_figures)
        kafka_busy = sum(float(f["kafka_s"] or 0.0) for f in batch_figures)
        gaps = [float(f["gap_before_s"]) for f in batch_figures[1:]]
        tail = seen.completed - batches[-1].deleted if batches and batches[-1].deleted is not None else None
        bytes_before, bytes_after = per_broker_bytes(held_before), per_broker_bytes(held_after)
        led_by_added = sum(1 for s in metadata_after.values() if s.leader in added)

        # ------------------------------------------------------------------ checks
        say("reading every partition back")
        read, corrupt, problems = read_back(
            state.bootstrap_servers, layout, buffer, timeout=300 + args.gigabytes * 1e9 / (5 * MB)
        )
        acked_total = sum(len(s) for s in acks.acked.values())
        lost = {k: len(acks.acked[k] - read.get(k, set())) for k in layout.keys}
        lost = {k: n for k, n in lost.items() if n}
        lost_text = ", ".join(f"{t}-{p}: {n}" for (t, p), n in sorted(lost.items())[:10])
        left = throttles_left(admin, every, layout.topics)
        znode = zk.exists(REASSIGN_ZNODE)
        checks = [
            check(
                "no acknowledged message lost",
                not lost and not problems and corrupt == 0,
                f"{acked_total - sum(lost.values())} of {acked_total} acknowledged messages read back from "
                f"{len(layout.keys)} partitions, {led_by_added} led by an added broker"
                + (f"; lost {lost_text}" if lost else "")
                + (f"; {corrupt} values not as produced" if corrupt else "")
                + (f"; {'; '.join(problems)}" if problems else ""),
            ),
            check(
                "throttles removed",
                not left,
                "none on brokers " + ",".join(map(str, every)) + f" or {len(layout.topics)} topics"
                if not left
                else "; ".join(left),
            ),
            check(
                "no reassignment in progress",
                znode is None,
                f"{state.chroot}{REASSIGN_ZNODE} absent"
                if znode is None
                else f"{state.chroot}{REASSIGN_ZNODE} exists",
            ),
            check(
                f"within {WITHIN}x bound",
                bound > 0 and execution_s <= WITHIN * bound,
                f"1st batch submitted -> Completed {execution_s:.1f} s / {bound:.1f} s = {execution_s / bound:.2f}"
                if bound
                else "bound is 0: nothing moved",
            ),
        ]

        # ------------------------------------------------------------------ report
        notes = [str(n) for n in proposal.get("notes") or []]
        byte_notes = [n for n in notes if "byte" in n.lower() or "B " in n]
        figures: dict[str, Any] = {
            "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "brokers_before": before_ids,
            "brokers_added": added,
            "topics": len(layout.topics),
            "partitions": len(layout.keys),
            "messages_sent": sum(layout.messages.values()),
            "messages_acked": acked_total,
            "produce_s": produce_s,
            "produce_mb_s": acked_total * VALUE_SIZE / MB / produce_s,
            "throttle_bytes_s": rate,
            "proposal": {
                k: proposal.get(k)
                for k in (
                    "moves",
                    "lowerBound",
                    "partitions",
                    "batches",
                    "bytesMoved",
                    "busiestBrokerBytes",
                    "notes",
                )
            },
            "plan_matches_kafka": plan_matches,
            "plan": status.get("plan"),  # with each partition's bytes: the batches can be recomputed
            "replica_moves": sum(len(v) for v in new.values()),
            "bytes_moved": measured.moved,
            "received_per_broker": measured.received,
            "sent_per_broker": measured.sent,
            "b_max": measured.b_max,
            "bound_s": bound,
            "batched_bound_s": batched_bound,
            "run_s": run_s,
            "run_from_first_submit_s": None if first_submit is None else seen.completed - first_submit,
            "run_from_creation_s": seen.completed - seen.created,
            "execution_s": execution_s,
            "ratio": execution_s / bound if bound else None,
            "ratio_from_started_at": run_s / bound if bound else None,
            "kafka_copy_rate_mb_s": measured.b_max / kafka_busy / MB if kafka_busy else None,
            "kafka_busy_s": kafka_busy,
            "gaps_between_batches_s": gaps,
            "after_last_batch_s": tail,
            "before_first_batch_s": None if first_submit is None else first_submit - started,
            "batches": batch_figures,
            "events": [(at - started, reason, message) for at, reason, message in seen.events],
            "bytes_per_broker_before": bytes_before,
            "bytes_per_broker_after": bytes_after,
            "spread_before": spread(bytes_before),
            "spread_after": spread(bytes_after),
            "partitions_led_by_added_brokers": led_by_added,
            "checks": [line for line, _ in checks],
            "total_s": time.monotonic() - wall_started,
        }
        table = [
            (
                "brokers",
                f"{len(before_ids)} + {len(added)} added ({', '.join(map(str, added))}), racks {', '.join(RACKS)}",
            ),
            (
                "topics / partitions",
                f"{len(layout.topics)} / {len(layout.keys)}, RF {args.replication_factor}",
            ),
            (
                "produced",
                f"{acked_total * VALUE_SIZE / 1e9:.2f} GB in {acked_total} messages acked, "
                f"{figures['produce_mb_s']:.1f} MB/s",
            ),
            ("throttle T", f"{args.throttle_mb:g} MB/s ({rate} bytes/s)"),
            (
                "balance / batch limits",
                f"{args.balance} / {args.max_partitions} partitions, {args.max_moves_per_broker} moves per broker",
            ),
            (
                "plan",
                f"{proposal.get('moves')} moves (lower bound {proposal.get('lowerBound')}), "
                f"{proposal.get('partitions')} partitions, {proposal.get('batches')} batches"
                + ("" if plan_matches else "; Kafka's new replicas differ from status.plan"),
            ),
            ("replica moves (log dirs)", str(figures["replica_moves"])),
            ("bytes moved (sum received)", f"{megabytes(measured.moved)} MB"),
            (
                "plan: bytesMoved / busiestBrokerBytes",
                f"{megabytes(int(proposal.get('bytesMoved') or 0))} MB / "
                f"{megabytes(int(proposal.get('busiestBrokerBytes') or 0))} MB"
                if proposal.get("bytesMoved") is not None
                else "not in status.proposal (no sizes)",
            ),
            ("plan notes on bytes", "; ".join(byte_notes) if byte_notes else "none"),
            ("max received per broker", f"{megabytes(max(measured.received.values(), default=0))} MB"),
            ("max sent per broker", f"{megabytes(max(measured.sent.values(), default=0))} MB"),
            ("B_max", f"{megabytes(measured.b_max)} MB ({measured.busiest()})"),
            ("bound B_max / T", f"{bound:.1f} s"),
            ("batched bound (sum per batch)", f"{batched_bound:.1f} s"),
            ("run: startedAt -> Completed", f"{run_s:.1f} s"),
            ("run: 1st batch submitted -> Completed", seconds(figures["run_from_first_submit_s"]) + " s"),
            ("run: resource created -> Completed", f"{figures['run_from_creation_s']:.1f} s"),
            (
                "ratio (1st batch submitted -> Completed) / bound",
                f"{execution_s / bound:.2f}" if bound else "-",
            ),
            ("ratio (startedAt -> Completed) / bound", f"{run_s / bound:.2f}" if bound else "-"),
            ("ratio run / batched bound", f"{execution_s / batched_bound:.2f}" if batched_bound else "-"),
            ("Kafka busy (sum of batches)", f"{kafka_busy:.1f} s"),
            (
                "B_max / Kafka busy (throttle as Kafka held it)",
                f"{measured.b_max / kafka_busy / MB:.1f} MB/s" if kafka_busy else "-",
            ),
            ("operator between batches and at the end", f"{execution_s - kafka_busy:.1f} s"),
            ("startedAt -> 1st batch submitted", seconds(figures["before_first_batch_s"]) + " s"),
            (
                "gaps between batches",
                f"{sum(gaps):.1f} s in all, max {max(gaps, default=0):.1f} s ({len(gaps)} gaps)",
            ),
            ("last batch done -> Completed seen", seconds(tail) + " s"),
            ("bytes spread max/mean before", f"{figures['spread_before']:.2f}"),
            ("bytes spread max/mean after", f"{figures['spread_after']:.2f}"),
            ("partitions led by added brokers", f"{led_by_added} of {len(layout.keys)}"),
            ("whole script", f"{figures['total_s']:.0f} s"),
        ]
        print()
        print_table([{"figure": k, "value": v} for k, v in table], False, FIGURE_COLUMNS, left=2)
        print()
        if rows:
            print_table(rows, False, BATCH_COLUMNS, left=1)
            print("  (times in s from startedAt; gap before: since the previous batch's znode was deleted)")
            print()
        for broker in every:
            print(
                f"broker {broker} ({rack_of(broker)}): {megabytes(bytes_before.get(broker, 0))} -> "
                f"{megabytes(bytes_after.get(broker, 0))} MB, received {megabytes(measured.received.get(broker, 0))} MB, "
                f"sent {megabytes(measured.sent.get(broker, 0))} MB"
            )
        events = [(at, reason, message) for at, reason, message in seen.events if reason.startswith("Batch")]
        if events:
            print()
            for at, reason, message in events:
                print(f"event +{at - started:7.1f} s  {reason}: {message[:100]}")
        if notes:
            print()
            for note in notes:
                print(f"plan note: {note}")
        if metadata_mismatch:
            print(f"note: metadata replicas differ from log dirs for {metadata_mismatch[:5]}")
        print()
        for line, _ in checks:
            print(line)
        if args.report:
            args.report.write_text(json.dumps(figures, indent=2, default=str) + "\n")
            say(f"figures written to {args.report}")
        return 0 if all(ok for _, ok in checks) else 1
    except BenchError as exc:
        say(f"FAILED: {exc}")
        if operator is not None:
            say(f"operator log tail:\n{operator.log_tail(30)}")
        return 2
    finally:
        if zk is not None:
            zk.stop()
            zk.close()
        if admin is not None:
            admin.close()
        if args.keep:
            say(
                f"--keep: stack left running. state {workdir}; kubeconfig {state.kubeconfig}; "
                f"bootstrap {state.bootstrap_servers}; zookeeper {state.zk_connect}; "
                f"operator pid {operator.pid if operator else '-'} log {workdir / 'operator.log'}; "
                f"stop with: .venv/bin/kzo dev down --state-dir {workdir / 'stack'} (and kill the operator pid)"
            )
        else:
            if operator is not None:
                operator.stop()
            stack.down()
            # The brokers' logs hold the produced data (about 2 x --gigabytes): gone with the
            # stack; operator.log and clusters.yaml stay for a look afterwards.
            shutil.rmtree(workdir / "stack", ignore_errors=True)
            say(f"removed the stack's data; kept {workdir / 'operator.log'}")


if __name__ == "__main__":
    sys.exit(main())
