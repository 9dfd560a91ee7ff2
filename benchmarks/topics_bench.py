"""KafkaTopic throughput benchmark (a script that prints figures; not a test).

For each N: a fresh local stack (ZooKeeper, 3 racked Kafka brokers, kube-apiserver), the CRDs,
the operator as a process; then N KafkaTopic resources are created at once and the script
measures the time until all are Ready (observedGeneration current), the ZooKeeper writes per
topic (operator metric ``kzo_zookeeper_writes_total``) and the operator's API writes per topic
(kube-apiserver's ``apiserver_request_total``: patches, Events), the operator's CPU time and peak RSS;
then, once each topic's first resync is done (a whole period without a full reconcile), over
two resync periods with nothing to do, the ZooKeeper and API writes (must be 0) and the
operator CPU per period; then a fresh operator's adoption of the N topics: the time until it
has reconciled each once, and its writes (must be 0). With ``--adopt-during-reassignment P``,
one more restart while a reassignment of P partitions is pending (one that cannot finish), then
two resync periods in which that reassignment is rewritten every 3 s, as Kafka's controller does
when partitions finish: the full reconciles, the resyncs without a read, writes and CPU.

Usage: .venv/bin/python benchmarks/topics_bench.py --topics 100,1000 [--partitions 1] [--rf 3]
       [--operator-env KEY=VALUE ...] [--profile-noop DIR] [--profile-burst DIR] [--burst-only]
       [--adopt-during-reassignment PARTITIONS] [--more-adoptions K [--other-env KEY=VALUE ...]]

``--more-adoptions K`` restarts the operator K more times after the first adoption and prints
each adoption's time, CPU and ZooKeeper requests per topic; with ``--other-env``, every other one
of those runs with that environment too (an A/B of two settings or, with ``PYTHONPATH``, of two
versions of the code on the same stack, alternating so that the machine's drift falls on both).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from kazoo.client import KazooClient
from kubernetes import client, config
from ready_watch import ReadyWatch

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec

ROOT = Path(__file__).resolve().parents[1]
GROUP, VERSION = "kafka.zk-operator.io", "v1alpha1"
TICKS = os.sysconf("SC_CLK_TCK")


def proc_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def proc_peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def zookeeper_requests(zk_port: int) -> int:
    """Requests ZooKeeper has received from every client so far (``mntr``'s
    ``zk_packets_received``; the pings of idle sessions included, a few a second)."""
    with socket.create_connection(("127.0.0.1", zk_port), timeout=10) as conn:
        conn.sendall(b"mntr")
        answer = b"".join(iter(lambda: conn.recv(65536), b""))
    for line in answer.decode().splitlines():
        key, _, value = line.partition("\t")
        if key == "zk_packets_received":
            return int(value)
    raise SystemExit(f"ZooKeeper's mntr did not report zk_packets_received: {answer[:200]!r}")


def install_crds(api: client.ApiClient) -> None:
    ext = client.ApiextensionsV1Api(api)
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        ext.create_custom_resource_definition(yaml.safe_load(path.read_text()))
    time.sleep(2)


def apiserver_mutations(api: client.ApiClient) -> Counter[str]:
    """Mutating requests the API server has served (its own ``apiserver_request_total``) by verb
    and resource, leaving out Leases (the API server renews its own identity Lease every 10 s)."""
    headers = {}
    token = api.configuration.get_api_key_with_prefix("authorization")
    if token:
        headers["Authorization"] = token
    response = api.call_api("GET", f"{api.configuration.host}/metrics", header_params=headers)
    response.read()
    counts: Counter[str] = Counter()
    for line in response.data.decode().splitlines():
        if not line.startswith("apiserver_request_total{") or re.search(
            r'resource="(leases|endpoints|endpointslices)"', line
        ):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}", 1)[0]))
        if labels.get("verb") in ("POST", "PUT", "PATCH", "DELETE", "APPLY"):
            what = "/".join(part for part in (labels.get("resource"), labels.get("subresource")) if part)
            counts[f"{labels['verb']} {what}"] += int(float(line.rsplit(" ", 1)[1]))
    return counts


def writes_between(before: Counter[str], after: Counter[str]) -> tuple[int, str]:
    """How many mutating requests came between two readings, and which (``PATCH kafkatopics/status: 3``)."""
    delta = after - before
    return sum(delta.values()), ", ".join(f"{key}: {value}" for key, value in sorted(delta.items()))


def kafkatopic_counts(operator: OperatorProcess, metric: str, label: str) -> Counter[str]:
    """One of the operator's counters of KafkaTopics by its second label: ``kzo_reconciliations_total``
    by ``result`` (``InSync``, ``Adopted`` ...), ``kzo_status_fields_patched_total`` by ``field``."""
    counts: Counter[str] = Counter()
    for line in operator.metrics([metric]).splitlines():
        match = re.match(rf"{metric}\{{([^}}]*)\}} (\S+)", line)
        if match is None:
            continue
        # prometheus_client writes the labels in name order: ``field`` before ``kind``.
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
        if labels.get("kind") == "kafkatopic" and label in labels:
            counts[labels[label]] += int(float(match.group(2)))
    return counts


def wait_for_first_resyncs(operator: OperatorProcess, resync: int) -> float:
    """Seconds until a whole resync period (plus 5 s) passed without a full reconcile."""
    started = time.monotonic()
    last = operator.metric_sum("kzo_reconciliations_total")
    while True:
        time.sleep(resync + 5)
        now = operator.metric_sum("kzo_reconciliations_total")
        if now == last:
            return time.monotonic() - started
        last = now
        if time.monotonic() - started > 1800:
            raise SystemExit("full reconciles still running 30 min after all topics were Ready")


def log(message: str) -> None:
    """A figure as soon as it is measured (a later failure must not lose it)."""
    print(f"  [bench] {time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


def create_burst(
    custom: client.CustomObjectsApi, n: int, partitions: int, rf: int, namespace: str, prefix: str = "bench"
) -> float:
    """Create N KafkaTopics ``{prefix}-00000`` .. at once from 16 client threads; the seconds it took."""

    def create(i: int) -> None:
        body = {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "KafkaTopic",
            "metadata": {"name": f"{prefix}-{i:05d}"},
            "spec": {
                "partitions": partitions,
                "replicationFactor": rf,
                "config": {"retention.ms": "3600000"},
            },
        }
        custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "kafkatopics", body)

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(create, range(n)))
    return time.monotonic() - started


def broker_heap_for(n: int, partitions: int, rf: int) -> str:
    """Each broker's JVM heap for ``n`` topics: 512m up to ~3,000 partition replicas per broker,
    then 128m more per 1,000 (at 10,000 x RF 3 the default 512m went into constant full GCs)."""
    replicas_per_broker = n * partitions * rf // StackSpec().brokers
    return f"{max(512, 512 + 128 * ((replicas_per_broker - 3000 + 999) // 1000))}m"


def start_profile(
    pid: int, seconds: int | None, out: Path, *, idle: bool = False
) -> subprocess.Popen[bytes] | None:
    """py-spy sampling the operator (collapsed stacks, threads apart) for ``seconds`` (``None``:
    until SIGINT); ``idle``: waiting threads too, to see where the wall time goes. ``None``
    without py-spy (``pip install py-spy``: a profiler, not a dependency of the project)."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        log("py-spy not found: no profile (pip install py-spy)")
        return None
    command = [spy, "record", "--pid", str(pid), "--format", "raw", "--threads", "--rate", "50",
               "--nonblocking", "--output", str(out)]  # fmt: skip
    if seconds is not None:
        command += ["--duration", str(seconds)]
    if idle:
        command.append("--idle")
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def restart_and_adopt(
    state: Any, log_path: Path, n: int, env: dict[str, str], profile: Path | None
) -> tuple[OperatorProcess, float]:
    """A fresh operator, timed until it has reconciled each of the ``n`` topics once."""
    adopting = OperatorProcess(
        kubeconfig=Path(state.kubeconfig), zk_connect=state.zk_connect, log_path=log_path, extra_env=env
    )
    restarted = time.monotonic()
    adopting.start()
    profiler = start_profile(adopting.pid, None, profile) if profile and adopting.pid else None
    while adopting.metric_sum("kzo_reconciliations_total") < n:
        time.sleep(0.5)
        if time.monotonic() - restarted > 1800:
            adopting.stop()
            raise SystemExit(f"the restarted operator did not adopt {n} topics in 30 min")
    adopted = time.monotonic() - restarted
    if profiler is not None:
        profiler.send_signal(signal.SIGINT)
        profiler.wait(timeout=60)
        log(f"N={n}: adoption profile (py-spy, collapsed stacks): {profile}")
    return adopting, adopted


def changed_fields(operator: OperatorProcess) -> str:
    fields = kafkatopic_counts(operator, "kzo_status_fields_patched_total", "field")
    if not fields:
        return ""
    return f" (status fields changed: {', '.join(f'{k}: {v}' for k, v in sorted(fields.items()))})"


def create_stuck_reassignment(zk_connect: str, partitions: int) -> int:
    """Create ``/admin/reassign_partitions`` for the first ``partitions`` partitions (topics in
    name order), each given one more replica on a broker id no broker has: Kafka's controller
    adds it and waits for it forever, so the znode stays. Returns its size in bytes."""
    zk = KazooClient(hosts=zk_connect)
    zk.start()
    try:
        absent = max(int(b) for b in zk.get_children("/brokers/ids")) + 1
        entries: list[dict[str, Any]] = []
        for topic in sorted(zk.get_children("/brokers/topics")):
            assigned = json.loads(zk.get(f"/brokers/topics/{topic}")[0])["partitions"]
            for partition, replicas in sorted(assigned.items(), key=lambda item: int(item[0])):
                entries.append({"topic": topic, "partition": int(partition), "replicas": [*replicas, absent]})
                if len(entries) == partitions:
                    break
            if len(entries) == partitions:
                break
        data = json.dumps({"version": 1, "partitions": entries}).encode()
        zk.create("/admin/reassign_partitions", data)
        return len(data)
    finally:
        zk.stop()
        zk.close()


#: How often the benchmark rewrites the pending reassignment, as Kafka's controller does when
#: partitions of a running one finish (every completion rewrites it with the rest).
REWRITE_EVERY_S = 3.0


def settle(operator: OperatorProcess, resync: int, most: float = 600.0) -> None:
    """Wait until a resync period passes with fewer than 1% of the topics read in full (at most
    ``most`` seconds)."""
    started = time.monotonic()
    while time.monotonic() - started < most:
        before = operator.metric_sum("kzo_reconciliations_total")
        unchanged_before = operator.metric_sum("kzo_resyncs_unchanged_total")
        time.sleep(resync)
        full = operator.metric_sum("kzo_reconciliations_total") - before
        if full < 0.01 * (full + operator.metric_sum("kzo_resyncs_unchanged_total") - unchanged_before) + 1:
            return


def rewritten_reassignment_window(
    operator: OperatorProcess, zk_connect: str, zk_port: int, api: Any, n: int, resync: int
) -> str:
    """The resyncs while the pending reassignment is rewritten every :data:`REWRITE_EVERY_S`
    for two resync periods, once the operator settled: the figures as one report line (the
    ZooKeeper requests per resync are every client's, the brokers' and the benchmark's own
    rewrites included, divided by the resyncs of the window).

    The znode is rewritten once and the operator left to settle again before the window: before
    ``e38de99`` an adoption's records held no stamps (``runtime.unchanged``), so the first change
    anywhere in ZooKeeper after a restart read every topic once; the warm-up keeps runs of either
    code comparable."""
    zk = KazooClient(hosts=zk_connect)
    zk.start()
    try:
        path = "/admin/reassign_partitions"
        data, _ = zk.get(path)
        settle(operator, resync)
        zk.set(path, data)
        settle(operator, resync)
        full0 = operator.metric_sum("kzo_reconciliations_total")
        stamped0 = operator.metric_sum("kzo_resyncs_unchanged_total")
        writes0 = operator.metric_sum("kzo_zookeeper_writes_total")
        api0 = apiserver_mutations(api)
        cpu0 = proc_cpu_seconds(operator.pid) if operator.pid else 0.0
        requests0 = zookeeper_requests(zk_port)
        started, rewrites = time.monotonic(), 0
        while time.monotonic() - started < 2 * resync:
            zk.set(path, data)  # the same entries: a new state of the znode, as a completion makes
            rewrites += 1
            time.sleep(REWRITE_EVERY_S)
        cpu = (proc_cpu_seconds(operator.pid) if operator.pid else 0.0) - cpu0
        requests = zookeeper_requests(zk_port) - requests0
        full = operator.metric_sum("kzo_reconciliations_total") - full0
        stamped = operator.metric_sum("kzo_resyncs_unchanged_total") - stamped0
        api_writes, api_detail = writes_between(api0, apiserver_mutations(api))
        return (
            f"N={n}: the pending reassignment rewritten {rewrites} times in {2 * resync} s (every "
            f"{REWRITE_EVERY_S:.0f} s): {full:.0f} full reconciles, {stamped:.0f} resyncs without a read, "
            f"{operator.metric_sum('kzo_zookeeper_writes_total') - writes0:.0f} ZooKeeper and {api_writes} "
            f"API writes ({api_detail or 'none'}), {cpu * resync / (2 * resync):.1f} s of operator CPU per period, "
            f"{requests:,} ZooKeeper requests ({requests / max(1.0, full + stamped):.2f} per resync)"
        )
    finally:
        zk.stop()
        zk.close()


def run(
    n: int,
    partitions: int,
    rf: int,
    resync: int,
    operator_env: dict[str, str],
    broker_heap: str | None,
    profile_dir: Path | None = None,
    *,
    burst_profile_dir: Path | None = None,
    burst_only: bool = False,
    reassigning: int = 0,
    more_adoptions: int = 0,
    other_env: dict[str, str] | None = None,
    ready_timeout: float = 1800,
) -> dict[str, Any] | None:
    workdir = Path(tempfile.mkdtemp(prefix=f"kzo-bench-{n}-"))

    run_env = {"KZO_RESYNC_SECONDS": str(resync), **operator_env}

    heap = broker_heap or broker_heap_for(n, partitions, rf)
    log(f"N={n}: broker heap {heap}")
    stack = LocalStack(
        StackSpec(broker_heap=heap),
        workdir / "stack",
        progress=lambda m: print(f"  [stack] {m}", file=sys.stderr),
    )
    state = stack.up()
    operator = None
    try:
        assert state.kubeconfig is not None
        api = config.new_client_from_config(config_file=state.kubeconfig)
        install_crds(api)
        client.CoreV1Api(api).create_namespace({"metadata": {"name": "bench"}})
        operator = OperatorProcess(
            kubeconfig=Path(state.kubeconfig),
            zk_connect=state.zk_connect,
            log_path=workdir / "operator.log",
            extra_env=run_env,
        )
        operator.start()
        assert operator.pid is not None
        custom = client.CustomObjectsApi(api)
        cpu0 = proc_cpu_seconds(operator.pid)
        stack_cpu0 = {name: proc_cpu_seconds(pid) for name, pid in state.pids.items()}
        writes0 = operator.metric_sum("kzo_zookeeper_writes_total")
        refreshes0 = operator.metric_sum("kzo_status_refreshes_total")
        reconciles0 = operator.metric_sum("kzo_reconciliations_total")
        stamped0 = operator.metric_sum("kzo_resyncs_unchanged_total")
        zk_requests0 = zookeeper_requests(state.zk_port)

        api_before_burst = apiserver_mutations(api)
        ready_watch = ReadyWatch(custom, "bench")  # counts from events, not by listing all N
        burst_profile = burst_profile_dir / f"burst-{n}.txt" if burst_profile_dir else None
        burst_profiler = (
            start_profile(operator.pid, None, burst_profile, idle=True) if burst_profile else None
        )
        started = time.monotonic()
        applied = create_burst(custom, n, partitions, rf, "bench")
        log(f"N={n}: {n} KafkaTopics created through the API in {applied:.1f} s")
        if not ready_watch.wait_for(n, ready_timeout - applied):
            # What the run reached is still a figure (a machine where N does not fit, say).
            log(
                f"N={n}: {ready_watch.count()}/{n} Ready after {ready_timeout:.0f} s; operator CPU "
                f"{proc_cpu_seconds(operator.pid) - cpu0:.1f} s, peak RSS {proc_peak_rss_mb(operator.pid):.0f} MB, "
                f"{operator.metric_sum('kzo_zookeeper_writes_total') - writes0:.0f} ZooKeeper writes; "
                "the stack's CPU seconds: "
                + ", ".join(
                    f"{name} {proc_cpu_seconds(pid) - stack_cpu0[name]:.1f}"
                    for name, pid in sorted(state.pids.items())
                )
            )
            raise SystemExit(
                f"only {ready_watch.count()}/{n} Ready after {ready_timeout:.0f} s (--ready-timeout); "
                f"see {operator.log_path}"
            )
        all_ready = time.monotonic() - started
        ready_watch.stop()
        if burst_profiler is not None:
            burst_profiler.send_signal(signal.SIGINT)
            burst_profiler.wait(timeout=60)
            log(f"N={n}: burst profile (py-spy with idle threads, collapsed stacks): {burst_profile}")
        writes = operator.metric_sum("kzo_zookeeper_writes_total") - writes0
        refreshes = operator.metric_sum("kzo_status_refreshes_total") - refreshes0
        # Resyncs while the burst ran: those that ended without a read, and the reconciles beyond
        # one per create (full resyncs, mostly: a create's retry counts here too).
        burst_reconciles = operator.metric_sum("kzo_reconciliations_total") - reconciles0
        burst_stamped = operator.metric_sum("kzo_resyncs_unchanged_total") - stamped0
        zk_requests = zookeeper_requests(state.zk_port) - zk_requests0
        cpu = proc_cpu_seconds(operator.pid) - cpu0
        stack_cpu = {name: proc_cpu_seconds(pid) - stack_cpu0[name] for name, pid in state.pids.items()}
        peak_rss = proc_peak_rss_mb(operator.pid)
        # The operator's API writes until all are Ready (the benchmark's own creates left out).
        burst_delta = apiserver_mutations(api) - api_before_burst
        burst_delta["POST kafkatopics"] -= n
        burst_api_writes, burst_api_detail = writes_between(Counter(), +burst_delta)
        log(
            f"N={n}: all Ready after {all_ready:.1f} s; {writes / n:.2f} ZooKeeper writes and "
            f"{burst_api_writes / n:.2f} API writes per topic ({burst_api_detail}; "
            f"{int(refreshes)} status refreshes after leader/ISR changes){changed_fields(operator)}; "
            f"operator CPU {cpu:.1f} s, peak RSS {peak_rss:.0f} MB; "
            f"{zk_requests / n:.1f} ZooKeeper requests per topic (every client, brokers too); "
            f"resyncs during the burst: {burst_stamped:.0f} without a read, "
            f"{max(0.0, burst_reconciles - n):.0f} reconciles beyond one per create"
        )
        log(
            f"N={n}: the stack's CPU seconds until all Ready: "
            + ", ".join(f"{name} {seconds:.1f}" for name, seconds in sorted(stack_cpu.items()))
        )
        if burst_only:
            return None
        # Each topic's first resync moves its status from Created to InSync (one full read and one
        # status patch each). Once a whole period passed with no full reconcile, two full resync
        # periods (plus margin) with nothing to do must write nothing, and the CPU the operator
        # spends meanwhile, per period, is what a no-op resync of N topics costs.
        settled = wait_for_first_resyncs(operator, resync)
        log(f"N={n}: first resyncs done {settled:.0f} s after all were Ready")
        writes_before_resync = operator.metric_sum("kzo_zookeeper_writes_total")
        api_before_resync = apiserver_mutations(api)
        cpu_before_resync = proc_cpu_seconds(operator.pid)
        full_before_resync = operator.metric_sum("kzo_reconciliations_total")
        stamped_before_resync = operator.metric_sum("kzo_resyncs_unchanged_total")
        refreshes_before_resync = operator.metric_sum("kzo_status_refreshes_total")
        outcomes_before_resync = kafkatopic_counts(operator, "kzo_reconciliations_total", "result")
        window = resync * 2 + 5
        profile = profile_dir / f"noop-{n}.txt" if profile_dir else None
        profiler = start_profile(operator.pid, window, profile) if profile else None
        time.sleep(window)
        if profiler is not None:
            profiler.wait(timeout=60)
            log(f"N={n}: no-op window profile (py-spy, collapsed stacks): {profile}")
        # How the window's resyncs went: full reconciles vs resyncs that found every stamp unchanged.
        resync_full = operator.metric_sum("kzo_reconciliations_total") - full_before_resync
        resync_stamped = operator.metric_sum("kzo_resyncs_unchanged_total") - stamped_before_resync
        resync_writes = operator.metric_sum("kzo_zookeeper_writes_total") - writes_before_resync
        resync_api_writes, resync_api_detail = writes_between(api_before_resync, apiserver_mutations(api))
        resync_cpu = (proc_cpu_seconds(operator.pid) - cpu_before_resync) * resync / window
        # Status patches because Kafka changed leaders or ISR (a broker that lost its ZooKeeper
        # session on an overloaded machine): Kafka's doing, not the resync's; shown apart.
        resync_refreshes = operator.metric_sum("kzo_status_refreshes_total") - refreshes_before_resync
        resync_outcomes = (
            kafkatopic_counts(operator, "kzo_reconciliations_total", "result") - outcomes_before_resync
        )
        log(
            f"N={n}: no-op window: {resync_writes:.0f} ZooKeeper and {resync_api_writes} API writes "
            f"({int(resync_refreshes)} of them status refreshes after leader/ISR changes in Kafka), "
            f"{resync_cpu:.1f} s operator CPU per period, {int(resync_full)} full reconciles "
            f"({', '.join(f'{k}: {v}' for k, v in sorted(resync_outcomes.items())) or 'none'}), "
            f"{int(resync_stamped)} by stamps"
        )
        # A fresh operator adopts the N existing topics: every resource reconciled once (its
        # resume), nothing written.
        operator.stop()
        api_before_adoption = apiserver_mutations(api)
        adopt_profile = profile_dir / f"adopt-{n}.txt" if profile_dir else None
        zk_requests_before_adoption = zookeeper_requests(state.zk_port)
        operator, adopted = restart_and_adopt(
            state, workdir / "operator-restarted.log", n, run_env, adopt_profile
        )
        adopt_zk_requests = zookeeper_requests(state.zk_port) - zk_requests_before_adoption
        log(
            f"N={n}: a restarted operator reconciled all {n} in {adopted:.1f} s; ZooKeeper received "
            f"{adopt_zk_requests:,} requests meanwhile ({adopt_zk_requests / n:.2f} per topic, brokers' included)"
        )
        adopt_api_writes, adopt_api_detail = writes_between(api_before_adoption, apiserver_mutations(api))
        adopt_api_detail += changed_fields(operator)
        adopt_zk_writes = operator.metric_sum("kzo_zookeeper_writes_total")
        adopt_peak_rss = proc_peak_rss_mb(operator.pid) if operator.pid else 0.0
        log(f"N={n}: adoption 1: {adopted:.1f} s, operator CPU {proc_cpu_seconds(operator.pid or 0):.1f} s")
        for number in range(2, more_adoptions + 2):
            other = bool(other_env) and number % 2 == 0
            operator.stop()
            before = zookeeper_requests(state.zk_port)
            operator, seconds = restart_and_adopt(
                state,
                workdir / f"operator-adoption-{number}.log",
                n,
                {**run_env, **(other_env if other else {})},
                None,
            )
            requests = zookeeper_requests(state.zk_port) - before
            log(
                f"N={n}: adoption {number}{' (--other-env)' if other else ''}: {seconds:.1f} s, operator CPU "
                f"{proc_cpu_seconds(operator.pid or 0):.1f} s, {requests / n:.2f} ZooKeeper requests per topic, "
                f"{operator.metric_sum('kzo_zookeeper_writes_total'):.0f} ZooKeeper writes"
            )
        if reassigning:
            # The same restart while a reassignment of that many partitions is pending (one that
            # cannot finish: each partition also gets an absent broker): every topic's reconcile
            # asks whether its topic is in it. Its own topics' statuses change (they are moving).
            operator.stop()
            size = create_stuck_reassignment(state.zk_connect, reassigning)
            api_before = apiserver_mutations(api)
            operator, adopted_moving = restart_and_adopt(
                state, workdir / "operator-reassigning.log", n, run_env, None
            )
            cpu_moving = proc_cpu_seconds(operator.pid) if operator.pid else 0.0
            api_moving, api_moving_detail = writes_between(api_before, apiserver_mutations(api))
            log(
                f"N={n}: with a pending reassignment of {reassigning} partitions ({size:,} bytes), a restarted "
                f"operator reconciled all {n} in {adopted_moving:.1f} s with {cpu_moving:.1f} s of CPU; "
                f"{operator.metric_sum('kzo_zookeeper_writes_total'):.0f} ZooKeeper and {api_moving} API writes "
                f"({api_moving_detail or 'none'}{changed_fields(operator)}), peak RSS "
                f"{proc_peak_rss_mb(operator.pid) if operator.pid else 0.0:.0f} MB"
            )
            log(rewritten_reassignment_window(operator, state.zk_connect, state.zk_port, api, n, resync))
        return {
            "n": n,
            "apply_s": applied,
            "all_ready_s": all_ready,
            "zk_writes_per_topic": writes / n,
            "api_writes_per_topic": burst_api_writes / n,
            "operator_cpu_s": cpu,
            "operator_peak_rss_mb": peak_rss,
            "noop_resync_writes": resync_writes,
            "noop_resync_api_writes": resync_api_writes,
            "noop_resync_status_refreshes": resync_refreshes,
            "noop_resync_cpu_s": resync_cpu,
            "first_resyncs_s": settled,
            "adopt_s": adopted,
            "adopt_zk_writes": adopt_zk_writes,
            "adopt_zk_requests_per_topic": adopt_zk_requests / n,
            "adopt_api_writes": adopt_api_writes,
            "detail": f"API writes until all Ready: {burst_api_detail or 'none'}; "
            f"no-op resync API writes: {resync_api_detail or 'none'}; "
            f"no-op window ({window} s): {int(resync_full)} full reconciles, "
            f"{int(resync_stamped)} resyncs by unchanged stamps; "
            f"adoption API writes: {adopt_api_detail or 'none'}; "
            f"adoption: {adopt_zk_requests / n:.2f} ZooKeeper requests per topic",
            "adopt_peak_rss_mb": adopt_peak_rss,
        }
    finally:
        if operator is not None:
            operator.stop()
        stack.down()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--topics", default="100,1000", help="comma-separated N values")
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--rf", type=int, default=3)
    parser.add_argument("--resync", type=int, default=30, help="operator resync period during the run (s)")
    parser.add_argument(
        "--operator-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra environment of the operator process (repeatable), e.g. MALLOC_ARENA_MAX=2",
    )
    parser.add_argument(
        "--broker-heap",
        default=None,
        help="each Kafka broker's JVM heap, e.g. 2g (default: 512m, more above ~3,000 partitions per broker)",
    )
    parser.add_argument(
        "--profile-noop",
        type=Path,
        default=None,
        metavar="DIR",
        help="sample the operator with py-spy in the no-op window and the adoption; collapsed stacks in DIR",
    )
    parser.add_argument(
        "--profile-burst",
        type=Path,
        default=None,
        metavar="DIR",
        help="sample the operator with py-spy, waiting threads too, from the first create until all Ready",
    )
    parser.add_argument(
        "--burst-only",
        action="store_true",
        help="stop once all are Ready (the burst's figures only: no no-op window, no adoption)",
    )
    parser.add_argument(
        "--adopt-during-reassignment",
        type=int,
        default=0,
        metavar="PARTITIONS",
        help="after the adoption, restart once more while a reassignment of PARTITIONS partitions is pending",
    )
    parser.add_argument(
        "--more-adoptions",
        type=int,
        default=0,
        metavar="K",
        help="restart the operator K more times after the first adoption, timing each",
    )
    parser.add_argument(
        "--other-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --more-adoptions: extra environment of every other one of those restarts (repeatable)",
    )
    parser.add_argument(
        "--ready-timeout",
        type=float,
        default=1800,
        metavar="SECONDS",
        help="give up when not all are Ready this long after the first create, printing what was reached "
        "(default: 1800)",
    )
    args = parser.parse_args()
    for directory in (args.profile_noop, args.profile_burst):
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
    operator_env = dict(item.split("=", 1) for item in args.operator_env)
    results = [
        run(
            int(n),
            args.partitions,
            args.rf,
            args.resync,
            operator_env,
            args.broker_heap,
            args.profile_noop,
            burst_profile_dir=args.profile_burst,
            burst_only=args.burst_only,
            reassigning=args.adopt_during_reassignment,
            more_adoptions=args.more_adoptions,
            other_env=dict(item.split("=", 1) for item in args.other_env),
            ready_timeout=args.ready_timeout,
        )
        for n in args.topics.split(",")
    ]
    rows = [row for row in results if row is not None]
    if not rows:
        return 0
    header = (
        "N",
        "apply (s)",
        "all Ready (s)",
        "ZK writes/topic",
        "API writes/topic",
        "op CPU (s)",
        "op peak RSS (MB)",
        "first resyncs done after all Ready (s)",
        "no-op resync: ZK writes / API writes (of which leader/ISR refreshes) / CPU per period (s)",
        "adoption (s)",
        "adoption: ZK writes / API writes / peak RSS (MB)",
    )
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for r in rows:
        print(
            f"{int(r['n'])} | {r['apply_s']:.1f} | {r['all_ready_s']:.1f} | {r['zk_writes_per_topic']:.2f} | "
            f"{r['api_writes_per_topic']:.2f} | "
            f"{r['operator_cpu_s']:.1f} | {r['operator_peak_rss_mb']:.0f} | {r['first_resyncs_s']:.0f} | "
            f"{int(r['noop_resync_writes'])} / {int(r['noop_resync_api_writes'])} "
            f"({int(r['noop_resync_status_refreshes'])}) / {r['noop_resync_cpu_s']:.1f} | "
            f"{r['adopt_s']:.1f} | {int(r['adopt_zk_writes'])} / {int(r['adopt_api_writes'])} / "
            f"{r['adopt_peak_rss_mb']:.0f}"
        )
    for r in rows:
        print(f"N={int(r['n'])}: {r['detail']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
