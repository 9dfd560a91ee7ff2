"""The stack's own floor for N topics, without the operator (a script that prints figures).

``topics_bench.py`` measures the operator on a local stack that shares this machine's cores with
it. This script measures what that stack needs for the same N when no operator runs at all, so
the operator's share of "all Ready" can be told apart from the rest:

- ``kafka``: N topics created in Kafka, until Kafka's metadata (Kafka's own AdminClient) shows a
  leader and a full ISR for every partition of every one. ``--via zookeeper`` (the default) writes
  each topic's znodes in one transaction with plain kazoo, as the operator does; ``--via admin``
  uses Kafka's CreateTopics through a broker (which, in ZooKeeper mode, writes the same znodes);
- ``api``: N KafkaTopic resources created through the API server (16 client threads, as
  ``topics_bench.py`` does), and then the least any operator must write for each: one status
  patch (``Ready``, ``observedGeneration``);
- both at once (the default): the two run side by side, as they do when the operator works.

The same fresh stack, broker heap and CRDs as ``topics_bench.py``; the CPU seconds each
component used during the run are read from ``/proc``.

Usage: .venv/bin/python benchmarks/stack_floor_bench.py --topics 1000,10000 [--parts kafka,api]
       [--via zookeeper|admin] [--rate TOPICS_PER_SECOND] [--batch TOPICS_PER_TRANSACTION]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kafka.admin import KafkaAdminClient, NewTopic
from kazoo.client import KazooClient
from kubernetes import client, config

from kafka_zk_operator.devstack.stack import LocalStack, StackSpec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from topics_bench import GROUP, VERSION, broker_heap_for, create_burst, install_crds, log, proc_cpu_seconds

#: Topics per CreateTopics request (a whole 10,000 in one request outlives the request timeout),
#: and the clients sending them side by side.
CREATE_BATCH = 250
CREATE_CLIENTS = 8


def write_znodes(
    zk_connect: str,
    names: list[str],
    partitions: int,
    rf: int,
    brokers: list[int],
    rate: float = 0.0,
    batch: int = 1,
) -> None:
    """Each topic's config and topic znodes in one ZooKeeper transaction, in Kafka's own formats
    (``AdminZkClient``'s writes; topic znode v3 with a topic id), written with plain kazoo (not the
    operator's code), 64 transactions in flight; at most ``rate`` topics a second when ``rate`` is
    set (as they come when someone creates them one at a time); ``batch`` topics share one
    transaction (so Kafka's controller sees one change of ``/brokers/topics`` for them)."""
    zk = KazooClient(hosts=zk_connect)
    zk.start(timeout=30)
    try:
        pending: list[Any] = []
        started = time.monotonic()
        tx = zk.transaction()
        in_tx = 0
        for i, name in enumerate(names):
            if rate > 0:
                time.sleep(max(0.0, started + i / rate - time.monotonic()))
            replicas = {
                str(p): [brokers[(i + p + r) % len(brokers)] for r in range(rf)] for p in range(partitions)
            }
            topic_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            tx.create(
                f"/config/topics/{name}",
                json.dumps({"version": 1, "config": {"retention.ms": "3600000"}}).encode(),
            )
            tx.create(
                f"/brokers/topics/{name}",
                json.dumps({"version": 3, "partitions": replicas, "adding_replicas": {}, "removing_replicas": {},
                            "topic_id": topic_id}).encode(),
            )  # fmt: skip
            in_tx += 1
            if in_tx < batch and i + 1 < len(names):
                continue
            pending.append(tx.commit_async())
            tx, in_tx = zk.transaction(), 0
            if len(pending) >= 64:
                pending.pop(0).get(timeout=60)
        for result in pending:
            result.get(timeout=60)
    finally:
        zk.stop()
        zk.close()


def create_in_kafka(
    bootstrap: str,
    zk_connect: str | None,
    n: int,
    partitions: int,
    rf: int,
    rate: float = 0.0,
    batch: int = 1,
) -> float:
    """Seconds until Kafka's metadata shows a leader and a full ISR for every partition of the N
    new topics. Created through ZooKeeper (``zk_connect``: :func:`write_znodes`, the operator's
    path) or with Kafka's CreateTopics: batches of ``CREATE_BATCH`` sent by ``CREATE_CLIENTS``
    clients at once, so that the controller sees many new topics at a time."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=120_000)
    names = [f"floor-{i:05d}" for i in range(n)]

    def create(first: int) -> None:
        sender = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=300_000)
        try:
            sender.create_topics(
                [
                    NewTopic(name, partitions, rf, topic_configs={"retention.ms": "3600000"})
                    for name in names[first : first + CREATE_BATCH]
                ],
                timeout_ms=300_000,
            )
        finally:
            sender.close()

    try:
        started = time.monotonic()
        if zk_connect is not None:
            brokers = sorted(broker["broker_id"] for broker in admin.describe_cluster()["brokers"])
            write_znodes(zk_connect, names, partitions, rf, brokers, rate, batch)
            log(f"N={n}: kafka: {n} topics written to ZooKeeper in {time.monotonic() - started:.1f} s")
        else:
            with ThreadPoolExecutor(max_workers=CREATE_CLIENTS) as pool:
                list(pool.map(create, range(0, n, CREATE_BATCH)))
            log(f"N={n}: kafka: CreateTopics answered for all in {time.monotonic() - started:.1f} s")
        wanted = set(names)
        while True:
            led = {
                topic["name"]
                for topic in admin.describe_topics()
                if topic["name"] in wanted
                and len(topic["partitions"]) == partitions
                and all(p["leader_id"] >= 0 and len(p["isr_nodes"]) == rf for p in topic["partitions"])
            }
            if len(led) == n:
                return time.monotonic() - started
            if time.monotonic() - started > 1800:
                raise SystemExit(f"kafka: only {len(led)}/{n} topics have leaders after 30 min")
            time.sleep(max(1.0, n / 5000))
    finally:
        admin.close()


def create_in_api(kubeconfig: str, n: int, partitions: int, rf: int) -> tuple[float, float]:
    """Seconds to create the N KafkaTopics, and then until each has had one status patch."""
    api = config.new_client_from_config(config_file=kubeconfig)
    api.configuration.connection_pool_maxsize = 16
    custom = client.CustomObjectsApi(api)
    started = time.monotonic()

    def mark_ready(i: int) -> None:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        status = {
            "status": {
                "observedGeneration": 1,
                "topicName": f"floor-{i:05d}",
                "conditions": [
                    {"type": "Ready", "status": "True", "reason": "Created", "lastTransitionTime": now,
                     "message": "floor benchmark"},
                ],
            }
        }  # fmt: skip
        custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, "bench", "kafkatopics", f"floor-{i:05d}", status
        )

    created = create_burst(custom, n, partitions, rf, "bench", prefix="floor")
    log(f"N={n}: api: {n} KafkaTopics created in {created:.1f} s")
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(mark_ready, range(n)))
    return created, time.monotonic() - started


def run(
    n: int, parts: set[str], partitions: int, rf: int, via_zookeeper: bool, rate: float, batch: int
) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"kzo-floor-{n}-"))
    heap = broker_heap_for(n, partitions, rf)
    log(f"N={n}: broker heap {heap}; parts: {', '.join(sorted(parts))}")
    stack = LocalStack(
        StackSpec(broker_heap=heap),
        workdir / "stack",
        progress=lambda m: print(f"  [stack] {m}", file=sys.stderr),
    )
    state = stack.up()
    try:
        assert state.kubeconfig is not None
        api = config.new_client_from_config(config_file=state.kubeconfig)
        install_crds(api)
        client.CoreV1Api(api).create_namespace({"metadata": {"name": "bench"}})
        cpu0 = {name: proc_cpu_seconds(pid) for name, pid in state.pids.items()}
        results: dict[str, Any] = {"n": n}
        errors: list[BaseException] = []

        def kafka_part() -> None:
            try:
                zk_connect = state.zk_connect if via_zookeeper else None
                results["kafka_s"] = create_in_kafka(
                    state.bootstrap_servers, zk_connect, n, partitions, rf, rate, batch
                )
                log(f"N={n}: kafka: every partition has a leader after {results['kafka_s']:.1f} s")
            except BaseException as error:  # reported by the main thread
                errors.append(error)

        def api_part() -> None:
            try:
                results["api_create_s"], results["api_s"] = create_in_api(
                    state.kubeconfig or "", n, partitions, rf
                )
                log(f"N={n}: api: one status patch each done after {results['api_s']:.1f} s")
            except BaseException as error:
                errors.append(error)

        started = time.monotonic()
        threads = [
            threading.Thread(target=part)
            for name, part in (("kafka", kafka_part), ("api", api_part))
            if name in parts
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        results["total_s"] = time.monotonic() - started
        cpu = {name: proc_cpu_seconds(pid) - cpu0[name] for name, pid in state.pids.items()}
        results["cpu"] = cpu
        log(
            f"N={n}: all done after {results['total_s']:.1f} s; CPU seconds used: "
            + ", ".join(f"{name} {seconds:.1f}" for name, seconds in sorted(cpu.items()))
            + f" (total {sum(cpu.values()):.1f}, over {results['total_s']:.1f} s on {os.cpu_count() or 1} cores)"
        )
        return results
    finally:
        stack.down()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", default="1000", help="comma-separated N values")
    parser.add_argument(
        "--parts", default="kafka,api", help="kafka, api or both (comma-separated; run side by side)"
    )
    parser.add_argument(
        "--via", choices=("zookeeper", "admin"), default="zookeeper",
        help="create the Kafka topics by writing their znodes (the operator's way) or with CreateTopics",
    )  # fmt: skip
    parser.add_argument(
        "--rate", type=float, default=0.0,
        help="with --via zookeeper: write at most this many topics a second (default: all at once)",
    )  # fmt: skip
    parser.add_argument(
        "--batch", type=int, default=1,
        help="with --via zookeeper: this many topics in one transaction (default: one each, as the operator writes)",
    )  # fmt: skip
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--rf", type=int, default=3)
    args = parser.parse_args()
    parts = {part.strip() for part in args.parts.split(",") if part.strip()}
    if not parts or parts - {"kafka", "api"}:
        parser.error(f"--parts takes kafka, api or both, comma-separated (got {args.parts!r})")
    if args.batch < 1:
        parser.error(f"--batch takes a whole number of at least 1 (got {args.batch})")
    try:
        sizes = [int(n) for n in args.topics.split(",")]
    except ValueError:
        parser.error(f"--topics takes comma-separated whole numbers (got {args.topics!r})")
    rows = [
        run(n, parts, args.partitions, args.rf, args.via == "zookeeper", args.rate, args.batch) for n in sizes
    ]
    print(
        f"Kafka topics created via {args.via}"
        + (f", at most {args.rate:g} a second" if args.rate else "")
        + (f", {args.batch} per transaction" if args.batch > 1 else "")
    )
    print(
        "| N | parts | Kafka: all leaders (s) | API: created (s) | API: one status patch each (s) | all done (s) | CPU s: brokers / apiserver / ZooKeeper / etcd |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        cpu = r["cpu"]
        brokers = sum(v for k, v in cpu.items() if k.startswith("kafka"))
        others = [
            sum(v for k, v in cpu.items() if k.startswith(prefix))
            for prefix in ("kube-apiserver", "zookeeper", "etcd")
        ]
        print(
            f"| {r['n']:,} | {args.parts} | {r.get('kafka_s', float('nan')):.1f} | {r.get('api_create_s', float('nan')):.1f} | "
            f"{r.get('api_s', float('nan')):.1f} | {r['total_s']:.1f} | {brokers:.1f} / "
            + " / ".join(f"{v:.1f}" for v in others)
            + " |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
