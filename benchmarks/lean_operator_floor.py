"""What the least a KafkaTopic operator does costs this machine (a script that prints figures).

``stack_floor_bench.py`` measured the stack with no operator: Kafka's side and the API side, each
at its own best pace. ``topics_bench.py`` measures the real operator. This script sits between
them: a *lean operator*, written for this measurement only, does per KafkaTopic exactly what any
operator of KafkaTopics must, with none of what the real one adds:

- one watch of the namespace's KafkaTopics (asyncio, aiohttp, one process, as kopf runs);
- on a new resource: a merge patch that adds a finalizer (so that a deletion cannot leave the
  topic behind in Kafka), then the topic's config and topic znodes written in one ZooKeeper
  transaction shared with every create of the last ``--batch-seconds`` (plain kazoo, Kafka's own
  formats, brokers taken in turn: no rack awareness, no policy, no read of the cluster), then a
  watch until each partition's ``state`` znode exists (Kafka's controller writes it with the
  leader), then one status patch (``Ready``, ``observedGeneration``) and, unless ``--no-events``,
  one Kubernetes Event (the real operator's three API writes per topic);
- nothing else: no reads before the writes, no guards against a KRaft or fenced cluster, no
  conflict checks, no health watches, no metrics, no resyncs, no logs.

The benchmark side is ``topics_bench.py``'s: the same fresh stack, 16 client threads creating the
N KafkaTopics (1 partition, RF 3), all Ready counted from one watch; the CPU seconds of the lean
operator and of each stack process from the first create until all are Ready.

Usage: .venv/bin/python benchmarks/lean_operator_floor.py --topics 1000,10000 [--no-events]
       [--batch-seconds 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
from kazoo.client import KazooClient
from kubernetes import client, config

from kafka_zk_operator.devstack.stack import LocalStack, StackSpec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ready_watch import ReadyWatch
from topics_bench import (
    GROUP,
    VERSION,
    apiserver_mutations,
    broker_heap_for,
    create_burst,
    install_crds,
    log,
    proc_cpu_seconds,
    proc_peak_rss_mb,
    writes_between,
    zookeeper_requests,
)

FINALIZER = "lean.kzo.example/topic"
NAMESPACE = "bench"
#: Creates in one ZooKeeper transaction at most (ZooKeeper's 1-MB request limit holds thousands).
MAX_BATCH = 500


# ---------------------------------------------------------------------------------------- operator
def _ssl_context(kubeconfig_path: str) -> tuple[str, ssl.SSLContext]:
    """The API server's address and a TLS context with the kubeconfig's CA and client certificate
    (the files the Kubernetes client's config loader writes out)."""
    conf = config.new_client_from_config(config_file=kubeconfig_path).configuration
    context = ssl.create_default_context(cafile=conf.ssl_ca_cert)
    context.load_cert_chain(conf.cert_file, conf.key_file)
    return str(conf.host), context


class LeanOperator:
    """The least a KafkaTopic operator does (see the module docstring); one asyncio loop."""

    def __init__(
        self, server: str, session: aiohttp.ClientSession, zk: KazooClient, events: bool, batch_s: float
    ) -> None:
        self.base = f"{server}/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/kafkatopics"
        self.events_url = f"{server}/api/v1/namespaces/{NAMESPACE}/events"
        self.session = session
        self.zk = zk
        self.events = events
        self.batch_s = batch_s
        self.loop = asyncio.get_running_loop()
        self.brokers = sorted(int(b) for b in zk.get_children("/brokers/ids"))
        #: Creates waiting for the next transaction: (name, config znode, topic znode, future).
        self.pending: list[tuple[str, bytes, bytes, asyncio.Future[None]]] = []
        self.flush_scheduled = False
        self.next_broker = 0
        self.tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """List, then watch from the list's version; a watch the API server ends (it closes one
        that falls behind a burst) is opened again from the last version seen, or after a new
        list when that version is gone."""
        seen: set[str] = set()
        version = await self._list(seen)
        print("watching", flush=True)
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        while True:
            params = {"watch": "1", "resourceVersion": version, "allowWatchBookmarks": "true"}
            async with self.session.get(self.base, params=params, timeout=timeout) as response:
                response.raise_for_status()
                async for line in response.content:
                    event = json.loads(line)
                    if event["type"] == "ERROR":  # 410: the version is too old; list again
                        version = await self._list(seen)
                        break
                    version = event["object"]["metadata"]["resourceVersion"]
                    if event["type"] in ("ADDED", "MODIFIED"):
                        self._seen(event["object"], seen)
            print(f"watch ended; opened again from version {version}", file=sys.stderr, flush=True)

    async def _list(self, seen: set[str]) -> str:
        for _ in range(60):  # a CRD just installed answers 404 or 429 for a moment
            async with self.session.get(self.base) as response:
                if response.status in (404, 429, 503):
                    await asyncio.sleep(0.5)
                    continue
                response.raise_for_status()
                listing = await response.json()
                break
        else:
            raise SystemExit(f"could not list {self.base}")
        for item in listing["items"]:
            self._seen(item, seen)
        return str(listing["metadata"]["resourceVersion"])

    def _seen(self, resource: dict[str, Any], seen: set[str]) -> None:
        meta = resource["metadata"]
        if meta["name"] in seen or meta.get("deletionTimestamp"):
            return
        seen.add(meta["name"])
        task = asyncio.create_task(self.create(resource))
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            print(f"create failed: {task.exception()!r}", file=sys.stderr, flush=True)

    async def _patch(self, url: str, body: dict[str, Any]) -> None:
        headers = {"Content-Type": "application/merge-patch+json"}
        async with self.session.patch(url, data=json.dumps(body), headers=headers) as response:
            response.raise_for_status()
            await response.read()

    async def create(self, resource: dict[str, Any]) -> None:
        meta, spec = resource["metadata"], resource["spec"]
        name = meta["name"]
        await self._patch(f"{self.base}/{name}", {"metadata": {"finalizers": [FINALIZER]}})
        await self._write(
            name, int(spec["partitions"]), int(spec["replicationFactor"]), spec.get("config", {})
        )
        await asyncio.gather(*(self._state_exists(name, p) for p in range(int(spec["partitions"]))))
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        condition = {"type": "Ready", "status": "True", "reason": "Created", "lastTransitionTime": now}
        status = {"observedGeneration": meta["generation"], "topicName": name, "conditions": [condition]}
        await self._patch(f"{self.base}/{name}/status", {"status": status})
        if self.events:
            await self._event(meta, now)

    async def _event(self, meta: dict[str, Any], now: str) -> None:
        body = {
            "metadata": {"generateName": f"{meta['name']}.", "namespace": NAMESPACE},
            "involvedObject": {
                "apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaTopic", "name": meta["name"],
                "namespace": NAMESPACE, "uid": meta["uid"],
            },
            "reason": "Created", "message": "topic created", "type": "Normal",
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            "source": {"component": "lean-operator"},
        }  # fmt: skip
        async with self.session.post(self.events_url, json=body) as response:
            response.raise_for_status()
            await response.read()

    # ZooKeeper: creates written together, leaders awaited on watches
    def _write(self, name: str, partitions: int, rf: int, configs: dict[str, str]) -> asyncio.Future[None]:
        future: asyncio.Future[None] = self.loop.create_future()
        replicas = {
            str(p): [self.brokers[(self.next_broker + p + r) % len(self.brokers)] for r in range(rf)]
            for p in range(partitions)
        }
        self.next_broker += 1
        topic_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        config_data = json.dumps({"version": 1, "config": configs}).encode()
        topic_data = json.dumps(
            {
                "version": 3,
                "partitions": replicas,
                "adding_replicas": {},
                "removing_replicas": {},
                "topic_id": topic_id,
            }
        ).encode()
        self.pending.append((name, config_data, topic_data, future))
        if len(self.pending) >= MAX_BATCH:
            self._flush()
        elif not self.flush_scheduled:
            self.flush_scheduled = True
            self.loop.call_later(self.batch_s, self._flush)
        return future

    def _flush(self) -> None:
        self.flush_scheduled = False
        batch, self.pending = self.pending, []
        if not batch:
            return
        transaction = self.zk.transaction()
        for name, config_data, topic_data, _ in batch:
            transaction.create(f"/config/topics/{name}", config_data)
            transaction.create(f"/brokers/topics/{name}", topic_data)
        result = transaction.commit_async()
        result.rawlink(lambda done: self.loop.call_soon_threadsafe(self._committed, batch, done))

    @staticmethod
    def _committed(batch: list[tuple[str, bytes, bytes, asyncio.Future[None]]], done: Any) -> None:
        try:
            outcomes = done.get_nowait()
            failed = next((o for o in outcomes if isinstance(o, Exception)), None)
        except Exception as error:  # the whole transaction failed (connection lost)
            failed = error
        for *_, future in batch:
            if failed is not None:
                future.set_exception(RuntimeError(f"transaction failed: {failed!r}"))
            else:
                future.set_result(None)

    def _state_exists(self, name: str, partition: int) -> asyncio.Future[None]:
        future: asyncio.Future[None] = self.loop.create_future()
        path = f"/brokers/topics/{name}/partitions/{partition}/state"

        def answered(result: Any) -> None:
            if future.done():
                return
            try:
                if result.get_nowait() is not None:
                    future.set_result(None)
            except Exception as error:
                future.set_exception(error)

        def check(_event: Any = None) -> None:
            if future.done():
                return
            self.zk.exists_async(path, watch=check).rawlink(
                lambda result: self.loop.call_soon_threadsafe(answered, result)
            )

        check()
        return future


async def serve(kubeconfig_path: str, zk_connect: str, events: bool, batch_s: float) -> None:
    server, context = _ssl_context(kubeconfig_path)
    zk = KazooClient(hosts=zk_connect)
    zk.start(timeout=30)
    connector = aiohttp.TCPConnector(ssl=context, limit=32)
    async with aiohttp.ClientSession(connector=connector) as session:
        operator = LeanOperator(server, session, zk, events, batch_s)
        await operator.run()


# ---------------------------------------------------------------------------------------- benchmark
def run(n: int, events: bool, batch_s: float) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"kzo-lean-{n}-"))
    heap = broker_heap_for(n, 1, 3)
    log(f"N={n}: broker heap {heap}; lean operator, events {'on' if events else 'off'}, batch {batch_s} s")
    stack = LocalStack(
        StackSpec(broker_heap=heap),
        workdir / "stack",
        progress=lambda m: print(f"  [stack] {m}", file=sys.stderr),
    )
    state = stack.up()
    lean: subprocess.Popen[str] | None = None
    try:
        assert state.kubeconfig is not None
        api = config.new_client_from_config(config_file=state.kubeconfig)
        install_crds(api)
        client.CoreV1Api(api).create_namespace({"metadata": {"name": NAMESPACE}})
        argv = [sys.executable, __file__, "--serve", state.kubeconfig, "--zk", state.zk_connect,
                "--batch-seconds", str(batch_s)] + ([] if events else ["--no-events"])  # fmt: skip
        lean = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=(workdir / "lean.log").open("w"), text=True
        )
        assert lean.stdout is not None
        if lean.stdout.readline().strip() != "watching":
            raise SystemExit(f"the lean operator did not start; see {workdir / 'lean.log'}")
        custom = client.CustomObjectsApi(api)
        cpu0 = proc_cpu_seconds(lean.pid)
        stack_cpu0 = {name: proc_cpu_seconds(pid) for name, pid in state.pids.items()}
        zk_requests0 = zookeeper_requests(state.zk_port)

        api_before = apiserver_mutations(api)
        ready_watch = ReadyWatch(custom, NAMESPACE)
        started = time.monotonic()
        applied = create_burst(custom, n, 1, 3, NAMESPACE)
        log(f"N={n}: {n} KafkaTopics created through the API in {applied:.1f} s")
        if not ready_watch.wait_for(n, 1800 - applied):
            raise SystemExit(f"only {ready_watch.count()}/{n} Ready after 30 min; see {workdir / 'lean.log'}")
        all_ready = time.monotonic() - started
        ready_watch.stop()
        cpu = proc_cpu_seconds(lean.pid) - cpu0
        stack_cpu = {name: proc_cpu_seconds(pid) - stack_cpu0[name] for name, pid in state.pids.items()}
        zk_requests = zookeeper_requests(state.zk_port) - zk_requests0
        delta = apiserver_mutations(api) - api_before
        delta["POST kafkatopics"] -= n
        api_writes, api_detail = writes_between(Counter(), +delta)
        total = cpu + sum(stack_cpu.values())
        failed = (workdir / "lean.log").read_text().count("create failed")
        if failed:  # e.g. an Event the API server refused: the figures are not the lean operator's
            log(f"N={n}: {failed} creates of the lean operator failed; see {workdir / 'lean.log'}")
        log(
            f"N={n}: all Ready after {all_ready:.1f} s; {api_writes / n:.2f} API writes per topic ({api_detail}); "
            f"lean operator CPU {cpu:.1f} s, peak RSS {proc_peak_rss_mb(lean.pid):.0f} MB; "
            f"{zk_requests / n:.1f} ZooKeeper requests per topic (every client, brokers too)"
        )
        log(
            f"N={n}: the stack's CPU seconds until all Ready: "
            + ", ".join(f"{name} {seconds:.1f}" for name, seconds in sorted(stack_cpu.items()))
            + f"; with the lean operator {total:.1f} over {all_ready:.1f} s on {os.cpu_count() or 1} cores"
        )
        return {
            "n": n,
            "applied": applied,
            "ready": all_ready,
            "cpu": cpu,
            "stack": stack_cpu,
            "total": total,
        }
    finally:
        if lean is not None:
            lean.kill()
            lean.wait()
        stack.down()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", default="1000", help="comma-separated N values")
    parser.add_argument(
        "--no-events", action="store_true", help="no Event per topic (two API writes, not three)"
    )
    parser.add_argument(
        "--batch-seconds",
        type=float,
        default=0.2,
        help="how long a create waits for others to share its transaction",
    )
    parser.add_argument("--serve", metavar="KUBECONFIG", help=argparse.SUPPRESS)
    parser.add_argument("--zk", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.batch_seconds < 0:
        parser.error(f"--batch-seconds takes a number of seconds, 0 or more (got {args.batch_seconds})")
    if args.serve:
        asyncio.run(serve(args.serve, args.zk, not args.no_events, args.batch_seconds))
        return 0
    try:
        sizes = [int(n) for n in args.topics.split(",")]
    except ValueError:
        parser.error(f"--topics takes comma-separated whole numbers (got {args.topics!r})")
    rows = [run(n, not args.no_events, args.batch_seconds) for n in sizes]
    print(
        "| N | client creating N (s) | all Ready (s) | CPU s: lean operator / brokers / API server / ZooKeeper / etcd | total CPU s |"
    )
    print("|---|---|---|---|---|")
    for row in rows:
        s = row["stack"]
        brokers = sum(v for k, v in s.items() if k.startswith("kafka"))
        print(
            f"| {row['n']:,} | {row['applied']:.1f} | {row['ready']:.1f} | {row['cpu']:.1f} / {brokers:.1f} / "
            f"{s.get('kube-apiserver', 0):.1f} / {s.get('zookeeper', 0):.1f} / {s.get('etcd', 0):.1f} | {row['total']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
