"""Soak run (a script that prints figures; not part of ``make test``): random churn of KafkaTopic
and PartitionReassignment resources mixed with real faults, for a bounded time, then a check that
desired state equals Kafka's for every resource.

The stack: a 3-server ZooKeeper ensemble, 4 racked Kafka brokers, etcd + kube-apiserver, and the
operator as a process that reaches ZooKeeper through Toxiproxy (one proxy per server), logging JSON.

Churn (one operation every ``--pace`` seconds, on at most ``--max-topics`` live topics): create,
config change, partition growth, delete, pause and resume (the ``paused`` annotation), and
Explicit reassignments of a topic's replicas; finished reassignments beyond the
``KEEP_FINISHED`` latest are deleted, as a user or a GitOps pruner would, so that the number of
resources stays bounded and the operator's memory can be judged flat or not. Faults (one at a
time, every 40-90 s, each healed after its own duration): kill -9 of the ZooKeeper leader, of a
broker, of the operator (only in the first half, so that the second half measures one process's
memory), of kube-apiserver and of etcd; the operator's ZooKeeper link cut or slowed by 500 ms.

At the end every fault is healed, every paused topic resumed, and the script waits for the
invariant checker of the fault suite (``tests/faults/invariants.py``: every resource Ready and as
specified in Kafka, read with a Kafka client; no reassignment znode, deletion marker or throttle
left) to find nothing. It reports operations done, faults injected, violations left (must be 0),
operator RSS over time, and every error-level operator log line outside a fault's window.

Usage: .venv/bin/python benchmarks/soak.py [--minutes 20] [--seed 7] [--report soak.json]
       [--max-unfinished-reassignments 3]  (level resource counts, to judge memory)
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fault suite's invariant checker and Kafka client

from kafka_zk_operator.devstack import demo, ports  # noqa: E402
from kafka_zk_operator.devstack.operator_process import OperatorProcess  # noqa: E402
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec  # noqa: E402
from kafka_zk_operator.devstack.toxiproxy import Proxy, ToxiproxyServer  # noqa: E402
from tests.e2e.kafka_client import KafkaView  # noqa: E402
from tests.faults.invariants import (  # noqa: E402
    all_violations,
    controller_defect_topics,
    missing_topics,
    reassignment_finished,
)

GROUP, VERSION, NAMESPACE = "kafka.zk-operator.io", "v1alpha1", "soak"
PAUSED = "kafka.zk-operator.io/paused"
BROKERS = (1, 2, 3, 4)
RETENTIONS = ("3600000", "7200000", "86400000", "604800000")
#: Finished PartitionReassignments kept; older ones are deleted (each held resource costs the
#: operator memory: kopf keeps a body and state per resource).
KEEP_FINISHED = 10
#: Error lines logged up to this long after a fault was healed are attributed to it.
FAULT_AFTERMATH = 120.0


@dataclass
class Fault:
    kind: str
    started: float
    heal_at: float
    heal: Callable[[], None]
    healed: float | None = None


@dataclass
class Soak:
    stack: LocalStack
    operator: OperatorProcess
    proxies: list[Proxy]
    api: client.ApiClient
    rng: random.Random
    max_topics: int
    operator_kills_until: float
    ops: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    faults: list[Fault] = field(default_factory=list)
    #: (time, operator pid, RSS in MB, live KafkaTopics, PartitionReassignments at the last operation)
    rss: list[tuple[float, int, float, int, int]] = field(default_factory=list)
    live_topics: int = 0
    live_reassignments: int = 0
    #: Reassignments not finished at the last operation; with ``max_unfinished`` (0: no limit), no
    #: new one is created while that many wait or run, so their number can stay level.
    unfinished_reassignments: int = 0
    max_unfinished: int = 0
    serial: int = 0

    @property
    def custom(self) -> client.CustomObjectsApi:
        return client.CustomObjectsApi(self.api)

    # ------------------------------------------------------------------ churn
    def topics(self) -> list[dict[str, Any]]:
        listed = cast(
            "dict[str, Any]",
            self.custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "kafkatopics"),
        )
        return [t for t in listed["items"] if not t["metadata"].get("deletionTimestamp")]

    def operation(self) -> None:
        try:
            self._operation()
        except ApiException as exc:  # e.g. an API server being killed, a conflict, a CEL refusal
            self.refused[f"HTTP {exc.status}"] += 1
        except (OSError, urllib3.exceptions.HTTPError) as exc:  # kube-apiserver down
            self.refused[type(exc).__name__] += 1

    def _operation(self) -> None:
        live = self.topics()
        self.live_topics = len(live)
        choices = ["create"] * 4 if len(live) < self.max_topics else []
        if live:
            choices += ["config"] * 3 + ["grow"] * 2 + ["delete"] * 2 + ["pause"]
            if not self.max_unfinished or self.unfinished_reassignments < self.max_unfinished:
                choices += ["reassign"] * 2
        kind = self.rng.choice(choices)
        getattr(self, f"_{kind}")(self.rng.choice(live) if live else None)
        self.ops[kind] += 1
        self._delete_old_finished_reassignments()

    def _delete_old_finished_reassignments(self) -> None:
        listed = cast(
            "dict[str, Any]",
            self.custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "partitionreassignments"),
        )
        items = [r for r in listed["items"] if not r["metadata"].get("deletionTimestamp")]
        self.live_reassignments = len(items)
        finished = sorted(
            (r for r in items if reassignment_finished(r)),
            key=lambda r: str(r["metadata"]["creationTimestamp"]),
        )
        self.unfinished_reassignments = len(items) - len(finished)
        for old in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            self.custom.delete_namespaced_custom_object(
                GROUP, VERSION, NAMESPACE, "partitionreassignments", old["metadata"]["name"]
            )
            self.ops["delete finished reassignment"] += 1

    def _patch(self, plural: str, name: str, body: dict[str, Any]) -> None:
        self.custom.patch_namespaced_custom_object(
            GROUP, VERSION, NAMESPACE, plural, name, body, _content_type="application/merge-patch+json"
        )

    def _create(self, _: Any) -> None:
        self.serial += 1
        spec = {
            "partitions": self.rng.randint(1, 4),
            "replicationFactor": self.rng.choice((2, 3)),
            "config": {"retention.ms": self.rng.choice(RETENTIONS)},
        }
        body: dict[str, Any] = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaTopic"}
        body |= {"metadata": {"name": f"soak-{self.serial:05d}"}, "spec": spec}
        self.custom.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "kafkatopics", body)

    def _config(self, topic: dict[str, Any]) -> None:
        retention = self.rng.choice(RETENTIONS)
        self._patch(
            "kafkatopics", topic["metadata"]["name"], {"spec": {"config": {"retention.ms": retention}}}
        )

    def _grow(self, topic: dict[str, Any]) -> None:
        partitions = int(topic["spec"]["partitions"]) + self.rng.randint(1, 2)
        self._patch("kafkatopics", topic["metadata"]["name"], {"spec": {"partitions": min(partitions, 12)}})

    def _delete(self, topic: dict[str, Any]) -> None:
        self.custom.delete_namespaced_custom_object(
            GROUP, VERSION, NAMESPACE, "kafkatopics", topic["metadata"]["name"]
        )

    def _pause(self, topic: dict[str, Any]) -> None:
        paused = (topic["metadata"].get("annotations") or {}).get(PAUSED) == "true"
        annotations = {PAUSED: None if paused else "true"}
        self._patch("kafkatopics", topic["metadata"]["name"], {"metadata": {"annotations": annotations}})

    def _reassign(self, topic: dict[str, Any]) -> None:
        """Move every partition of a Ready topic to a random replica set of its replication factor."""
        status = topic.get("status") or {}
        if not any(
            c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
        ):
            self.ops["reassign skipped (topic not Ready)"] += 1
            return
        name = str(topic["spec"].get("topicName") or topic["metadata"]["name"])
        rf, partitions = int(topic["spec"]["replicationFactor"]), int(topic["spec"]["partitions"])
        self.serial += 1
        moves = [
            {"topic": name, "partition": p, "replicas": self.rng.sample(BROKERS, rf)}
            for p in range(partitions)
        ]
        body: dict[str, Any] = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "PartitionReassignment"}
        body |= {
            "metadata": {"name": f"move-{self.serial:05d}"},
            "spec": {"mode": "Explicit", "throttle": 10_485_760, "partitions": moves},
        }
        self.custom.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "partitionreassignments", body)

    # ------------------------------------------------------------------ faults
    def inject(self, now: float, elapsed_fraction: float) -> None:
        kinds = ["zookeeper-leader", "broker", "apiserver", "etcd", "zk-link-cut", "zk-link-slow"]
        if now < self.operator_kills_until:
            kinds.append("operator")
        kind = self.rng.choice(kinds)
        began = time.time()  # before the fault: the operator may log its effect at once
        heal: Callable[[], None]
        duration = self.rng.uniform(5, 20)
        if kind == "zookeeper-leader":
            leader = self.stack.zookeeper_leader()
            self.stack.kill_zookeeper(leader)
            heal = lambda: self.stack.restart_zookeeper(leader)  # noqa: E731
        elif kind == "broker":
            broker_id = self.rng.choice(BROKERS)
            self.stack.kill_broker(broker_id)
            duration = self.rng.uniform(10, 30)
            heal = lambda: self.stack.restart_broker(broker_id)  # noqa: E731
        elif kind == "operator":
            self.operator.kill()
            heal = self.operator.start
        elif kind in ("apiserver", "etcd"):
            controlplane = self.stack.controlplane
            assert controlplane is not None
            if kind == "apiserver":
                controlplane.kill_apiserver()
                heal = controlplane.start_apiserver
            else:
                controlplane.kill_etcd()
                heal = controlplane.start_etcd
        elif kind == "zk-link-cut":
            for proxy in self.proxies:
                proxy.disable()
            duration = self.rng.uniform(2, 10)
            heal = self.heal_link
        else:
            for proxy in self.proxies:
                proxy.add_toxic("latency", {"latency": 500, "jitter": 100}, stream="downstream")
            duration = 30
            heal = self.heal_link
        self.faults.append(Fault(kind, began, now + duration, heal))
        print(f"  [{elapsed_fraction:4.0%}] fault: {kind} for {duration:.0f} s", file=sys.stderr)

    def heal_link(self) -> None:
        for proxy in self.proxies:
            for toxic in proxy.toxics():
                proxy.remove_toxic(toxic.name)
            proxy.enable()

    def heal_due(self, now: float, force: bool = False) -> None:
        for fault in self.faults:
            if fault.healed is None and (force or now >= fault.heal_at):
                fault.heal()
                fault.healed = time.time()

    def active_fault(self) -> bool:
        return any(f.healed is None for f in self.faults)

    # ------------------------------------------------------------------ observation
    def sample_rss(self) -> None:
        pid = self.operator.pid
        if pid is None:
            return
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    mb = int(line.split()[1]) / 1024
                    self.rss.append((time.time(), pid, mb, self.live_topics, self.live_reassignments))
        except OSError:
            pass

    def unpause_all(self) -> int:
        resumed = 0
        for topic in self.topics():
            if (topic["metadata"].get("annotations") or {}).get(PAUSED) == "true":
                self._patch(
                    "kafkatopics", topic["metadata"]["name"], {"metadata": {"annotations": {PAUSED: None}}}
                )
                resumed += 1
        return resumed


def unexplained_errors(log_path: Path, faults: list[Fault]) -> list[str]:
    """Error-level operator log lines (and tracebacks) outside every fault's window."""
    found = []
    for line in log_path.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:  # not a log record: a traceback printed outside logging is an error too
            if "Traceback (most recent call last)" in line:
                found.append(line)
            continue
        if not isinstance(record, dict) or record.get("severity") not in ("error", "fatal"):
            continue
        at = datetime.datetime.fromisoformat(str(record.get("timestamp"))).timestamp()
        if not any(f.started <= at <= (f.healed or at) + FAULT_AFTERMATH for f in faults):
            found.append(line[:400])
    return found


def rss_figures(samples: list[tuple[float, int, float, int, int]], warmup: float) -> dict[str, Any]:
    """Peak RSS, and for the last operator process after its warm-up: the median RSS (and live
    KafkaTopics, PartitionReassignments) of the first and of the last quarter of its samples
    (flat: the ratio stays near 1 while the number of resources does), plus one sample per minute
    of the whole run."""
    last_pid = samples[-1][1]
    mine = [(t, mb, live) for t, pid, mb, live, _ in samples if pid == last_pid]
    reassignments = [(t, held) for t, pid, _, _, held in samples if pid == last_pid]
    reassignments = [sample for sample in reassignments if sample[0] >= mine[0][0] + warmup]
    mine = [sample for sample in mine if sample[0] >= mine[0][0] + warmup]
    quarter = max(1, len(mine) // 4)
    first = statistics.median(mb for _, mb, _ in mine[:quarter])
    last = statistics.median(mb for _, mb, _ in mine[-quarter:])
    per_minute: dict[int, tuple[float, int, int]] = {}
    for t, _, mb, live, held in samples:
        per_minute.setdefault(int((t - samples[0][0]) // 60), (round(mb, 1), live, held))
    return {
        "peak_mb": max(sample[2] for sample in samples),
        "window_minutes": (mine[-1][0] - mine[0][0]) / 60,
        "first_quarter_median_mb": first,
        "last_quarter_median_mb": last,
        "growth_ratio": last / first,
        "first_quarter_median_live_topics": statistics.median(live for _, _, live in mine[:quarter]),
        "last_quarter_median_live_topics": statistics.median(live for _, _, live in mine[-quarter:]),
        "first_quarter_median_reassignments": statistics.median(held for _, held in reassignments[:quarter]),
        "last_quarter_median_reassignments": statistics.median(held for _, held in reassignments[-quarter:]),
        "per_minute_mb_live_topics_and_reassignments": [per_minute[m] for m in sorted(per_minute)],
    }


def converge(soak: Soak, bootstrap: str, timeout: float) -> tuple[list[str], float, bool]:
    """Wait for the invariant checker to find nothing; apply Kafka's documented controller
    failover once if all that is left is topics stuck by Kafka's NodeExists controller defect."""
    started = time.monotonic()
    failover = False
    kafka, zk = KafkaView(bootstrap), soak.stack.zk_client()
    try:
        found = all_violations(soak.api, NAMESPACE, kafka, zk)
        while found and time.monotonic() - started < timeout:
            missing = missing_topics(found)
            stuck = not failover and missing and len(missing) == len(found)
            if stuck and missing <= controller_defect_topics(soak.stack):
                print(
                    f"  Kafka controller defect for {sorted(missing)}: controller failover", file=sys.stderr
                )
                zk.delete("/controller")
                failover = True
            time.sleep(5)
            found = all_violations(soak.api, NAMESPACE, kafka, zk)
    finally:
        kafka.close()
        zk.stop()
        zk.close()
    return found, time.monotonic() - started, failover


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=20.0, help="churn duration (default 20)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pace", type=float, default=1.5, help="seconds between operations")
    parser.add_argument("--max-topics", type=int, default=60)
    parser.add_argument(
        "--max-unfinished-reassignments",
        type=int,
        default=0,
        help="create no reassignment while this many wait or run (default 0: no limit)",
    )
    parser.add_argument("--report", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    if args.minutes <= 0 or args.pace <= 0 or args.max_topics <= 0:
        parser.error("--minutes, --pace and --max-topics must be positive")
    if args.max_unfinished_reassignments < 0:
        parser.error("--max-unfinished-reassignments must be 0 (no limit) or positive")

    workdir = Path(tempfile.mkdtemp(prefix="kzo-soak-"))
    print(f"soak: state in {workdir}", file=sys.stderr)
    stack = LocalStack(
        StackSpec(brokers=4, zookeeper_servers=3),
        workdir / "stack",
        progress=lambda m: print(f"  [stack] {m}", file=sys.stderr),
    )
    state = stack.up()
    toxiproxy = ToxiproxyServer(workdir / "toxiproxy", ports.free_port())
    operator: OperatorProcess | None = None
    try:
        toxiproxy.start()
        toxiproxy.wait_ready()
        proxies = [
            toxiproxy.client.create_proxy(f"zookeeper-{i}", ports.free_port(), zk.connect)
            for i, zk in enumerate(stack.zookeepers, start=1)
        ]
        assert state.kubeconfig is not None
        api = config.new_client_from_config(config_file=state.kubeconfig)  # type: ignore[no-untyped-call]
        demo.install_crds(api, ROOT / "crds")
        demo.wait_served(api)
        client.CoreV1Api(api).create_namespace(
            client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE))
        )
        operator = OperatorProcess(
            kubeconfig=Path(state.kubeconfig),
            zk_connect=",".join(p.address for p in proxies) + stack.spec.chroot,
            log_path=workdir / "operator.log",
            extra_env={"KZO_RESYNC_SECONDS": "60", "KZO_CREATE_WAIT_SECONDS": "10", "KZO_LOG_FORMAT": "json"},
        )
        operator.start()
        started, soak_started = time.monotonic(), time.time()
        deadline = started + args.minutes * 60
        soak = Soak(
            stack,
            operator,
            proxies,
            api,
            random.Random(args.seed),
            args.max_topics,
            operator_kills_until=started + args.minutes * 30,
            max_unfinished=args.max_unfinished_reassignments,
        )
        next_fault = started + soak.rng.uniform(40, 90)
        while (now := time.monotonic()) < deadline:
            soak.heal_due(now)
            if now >= next_fault and not soak.active_fault():
                soak.inject(now, (now - started) / (deadline - started))
                next_fault = now + soak.rng.uniform(40, 90)
            soak.operation()
            soak.sample_rss()
            time.sleep(args.pace)
        soak.heal_due(time.monotonic(), force=True)
        stack.wait_brokers_registered(set(BROKERS), timeout=180)
        resumed = soak.unpause_all()
        found, took, failover = converge(soak, state.bootstrap_servers, timeout=900)
        soak.sample_rss()
        report = {
            "minutes": args.minutes,
            "seed": args.seed,
            "max_unfinished_reassignments": args.max_unfinished_reassignments,
            "operations": dict(soak.ops),
            "operations_total": sum(soak.ops.values()),
            "refused_by_api_during_faults": dict(soak.refused),
            "faults": dict(Counter(f.kind for f in soak.faults)),
            "fault_timeline_s": [
                (f.kind, round(f.started - soak_started), round((f.healed or f.started) - soak_started))
                for f in soak.faults
            ],
            "faults_total": len(soak.faults),
            "paused_topics_resumed_at_end": resumed,
            "topics_at_end": len(soak.topics()),
            "converged_after_s": round(took),
            "kafka_controller_failover_applied": failover,
            "violations": found,
            "operator_rss": rss_figures(soak.rss, warmup=120.0),
            "unexplained_error_lines": unexplained_errors(operator.log_path, soak.faults),
        }
    finally:
        if operator is not None:
            operator.stop()
        toxiproxy.stop()
        for broker_id in list(stack.brokers):
            stack.kill_broker(broker_id)
        stack.down()
    print(json.dumps(report, indent=2))
    if args.report:
        args.report.write_text(json.dumps(report, indent=2) + "\n")
    bad = len(report["violations"]) + len(report["unexplained_error_lines"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
