"""Offloaded planning on a real node: the PySpark job as spark-submit, driver and executor pods,
against the in-process core on the same snapshot (issue #13, item 5).

Starts the local stack with its node (``kzo dev up --node``'s code: ZooKeeper, etcd,
kube-apiserver, containerd, kubelet, controller-manager, scheduler, kube-proxy, CoreDNS; no Kafka
brokers: planning reads a snapshot), builds the ``spark`` image (cached), renders the chart's Spark
objects into a namespace and, for each tier's ``add`` case of ``placement_bench.py`` (the same
cached ``.npz`` snapshots), submits the job the operator would submit (``service.plan_offload``)
and follows it:

* ``submit``: prepare + create the input ConfigMaps, pod template and Job (``plan_offload.submit``);
* ``to driver``: until the driver pod runs (spark-submit's JVM in the Job's pod creates it);
* ``to result``: until every result ConfigMap is there (the driver read the input, Spark planned);
* ``decode``: ``plan_offload.collect`` (read, check the digest, rebuild the plan): what the operator
  does before it stores the proposal;
* peak memory of the driver and of the largest executor, read from their pods' memory cgroups
  (``memory.max_usage_in_bytes``, sampled every 0.5 s while they run: cgroup v1 here).

The in-process column runs ``placement.plan`` in a child process (``placement_bench.py --child``:
time and its own peak RSS, ``VmHWM``). ``same`` compares the replica matrices. Run:

    .venv/bin/python benchmarks/spark_k8s_bench.py --tiers M,L

It needs root and ``kzo dev prepare --node`` (the node's packages); about 5 min for M and L.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "operator"))
sys.path.insert(0, str(REPO / "benchmarks"))

from placement_bench import TIERS, _cases, _load, _request, run_child  # noqa: E402

from kafka_zk_operator.adapters.k8s.spark_jobs import SparkJobs  # noqa: E402
from kafka_zk_operator.devstack import images, tools  # noqa: E402
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec  # noqa: E402
from kafka_zk_operator.service import plan_offload  # noqa: E402

CGROUP_MEMORY = Path("/sys/fs/cgroup/memory")
NAMESPACE = "kzo-spark-bench"


@dataclass
class Offloaded:
    submit_s: float
    to_driver_s: float
    to_result_s: float
    decode_s: float
    driver_peak_mb: float
    executor_peak_mb: float
    executors_seen: int
    digest: str


def _digest(replicas: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(replicas).tobytes()).hexdigest()[:16]


def _pod_peak_mb(uid: str) -> float | None:
    """The pod cgroup's peak memory (cgroup v1, the kubelet's cgroupfs layout), or None when gone."""
    for qos in ("", "burstable/", "besteffort/"):
        path = CGROUP_MEMORY / f"kubepods/{qos}pod{uid}/memory.max_usage_in_bytes"
        try:
            return int(path.read_text()) / 2**20
        except OSError:
            continue
    return None


def _kubectl(kubeconfig: Path, *args: str) -> str:
    argv = [str(tools.kubectl_binary()), f"--kubeconfig={kubeconfig}", *args]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def _install_spark_objects(kubeconfig: Path, image: images.BuiltImage, work: Path, memory: str) -> None:
    _kubectl(kubeconfig, "create", "namespace", NAMESPACE)
    values = {
        "fullnameOverride": "kzo",
        "spark": {
            "enabled": True,
            "image": image.reference,
            "pullPolicy": "Never",
            "driverRequestCores": "250m",
            "executorRequestCores": "250m",
            "driverMemory": memory,
            "executorMemory": memory,
        },
    }
    values_path = work / "values.yaml"
    values_path.write_text(yaml.safe_dump(values))
    rendered = subprocess.run(
        [str(tools.helm_binary()), "template", "kzo", str(REPO / "charts/kafka-zk-operator"),
         "--namespace", NAMESPACE, "-f", str(values_path)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    docs = [d for d in yaml.safe_load_all(rendered) if d and "spark" in d["metadata"]["name"]]
    manifest = work / "spark.yaml"
    manifest.write_text(yaml.safe_dump_all(docs))
    _kubectl(kubeconfig, "apply", "--server-side", "-f", str(manifest))


def _offload(jobs: SparkJobs, core_api: Any, settings: plan_offload.OffloadSettings, case: Any) -> Offloaded:
    cluster = _load(case.cluster_file)
    request = _request(case.request)
    name = plan_offload.job_name("bench", case.tier, uuid.uuid4().hex)
    started = time.perf_counter()
    plan_offload.submit(jobs, plan_offload.prepare(name, settings.spark, cluster, request))
    submitted = time.perf_counter()
    driver_at: float | None = None
    peaks: dict[str, tuple[str, float]] = {}  # pod uid -> (role, peak MB)
    while True:
        pods = core_api.list_namespaced_pod(
            NAMESPACE, label_selector=f"kafka.zk-operator.io/spark-job={name}"
        )
        for pod in pods.items:
            role = (pod.metadata.labels or {}).get("spark-role")
            if role is None:
                continue  # the Job's pod (spark-submit)
            if role == "driver" and driver_at is None and pod.status.phase == "Running":
                driver_at = time.perf_counter()
            peak = _pod_peak_mb(pod.metadata.uid)
            if peak is not None:
                peaks[pod.metadata.uid] = (role, max(peak, peaks.get(pod.metadata.uid, (role, 0.0))[1]))
        if jobs.configmaps(NAMESPACE, name, "result"):
            decoding = time.perf_counter()
            try:
                result = plan_offload.collect(jobs, NAMESPACE, name, cluster)
            except plan_offload.OffloadFailed:
                result = None  # chunks still arriving, or the job failed: state() tells below
            if result is not None:
                decoded = time.perf_counter()
                break
        state, why = plan_offload.state(jobs, NAMESPACE, name)
        if state is plan_offload.JobState.FAILED:
            raise SystemExit(f"Spark job {name} failed: {why}")
        time.sleep(0.5)
    plan_offload.cleanup(jobs, NAMESPACE, name)
    executors = [mb for role, mb in peaks.values() if role == "executor"]
    drivers = [mb for role, mb in peaks.values() if role == "driver"]
    return Offloaded(
        submit_s=submitted - started,
        to_driver_s=(driver_at or decoding) - submitted,
        to_result_s=decoding - (driver_at or submitted),
        decode_s=decoded - decoding,
        driver_peak_mb=max(drivers, default=0.0),
        executor_peak_mb=max(executors, default=0.0),
        executors_seen=len(executors),
        digest=_digest(result.replicas),
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tiers", default="M,L", help="comma-separated tiers of placement_bench.py (M, L)")
    parser.add_argument("--scenario", default="add", help="placement_bench.py scenario (default: add)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--memory", default="2g", help="driver and executor memory (default 2g)")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path.home() / ".cache/kafka-zk-operator/bench",
        help="snapshot cache",
    )
    args = parser.parse_args()
    tiers = [t.strip().upper() for t in args.tiers.split(",") if t.strip()]
    unknown = [t for t in tiers if t not in TIERS]
    if unknown:
        raise SystemExit(f"unknown tier(s) {', '.join(unknown)} (choose from {', '.join(TIERS)})")
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    cases = [case for tier in tiers for case in _cases(tier, [args.scenario], args.cache_dir, args.seed)]

    from kubernetes import client, config

    with tempfile.TemporaryDirectory(prefix="kzo-spark-bench-") as tmp:
        work = Path(tmp)
        stack = LocalStack(
            StackSpec(brokers=0, with_node=True),
            work / "stack",
            progress=lambda m: print(f"  {m}", file=sys.stderr),
        )
        stack.up()
        try:
            assert stack.node is not None and stack.controlplane is not None
            kubeconfig = stack.controlplane.admin_kubeconfig
            image = images.project_image("spark")
            stack.node.import_image(image.archive)
            _install_spark_objects(kubeconfig, image, work, args.memory)
            api = config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
            jobs, core_api = SparkJobs(api), client.CoreV1Api(api)
            settings = plan_offload.load_settings(jobs, NAMESPACE)
            assert settings is not None
            rows = []
            for case in cases:
                print(f"  {case.tier}/{case.scenario}: in-process ...", file=sys.stderr)
                core = run_child(
                    [sys.executable, str(REPO / "benchmarks/placement_bench.py"), "--child", str(case.cluster_file),
                     json.dumps(case.request)],
                    f"{case.tier}/{case.scenario}",
                )  # fmt: skip
                print(f"  {case.tier}/{case.scenario}: offloaded to Spark on the node ...", file=sys.stderr)
                offloaded = _offload(jobs, core_api, settings, case)
                rows.append((case, core, offloaded))
        finally:
            stack.down()
    print(
        f"# spark_k8s_bench: {args.scenario}, driver/executor memory {args.memory}, 2 executors, node of this machine"
    )
    print(
        "tier  partitions  core_s  core_MB  submit_s  to_driver_s  to_result_s  decode_s  offload_s  "
        "driver_MB  executor_MB  executors  same"
    )
    failures = []
    for case, core, off in rows:
        total = off.submit_s + off.to_driver_s + off.to_result_s + off.decode_s
        same = off.digest == core["digest"]
        partitions = TIERS[case.tier][1]
        print(
            f"{case.tier:<5} {partitions:>10,}  {core['seconds']:6.1f}  {core['vmhwm_mb']:7.0f}  {off.submit_s:8.1f}  "
            f"{off.to_driver_s:11.1f}  {off.to_result_s:11.1f}  {off.decode_s:8.1f}  {total:9.1f}  "
            f"{off.driver_peak_mb:9.0f}  {off.executor_peak_mb:11.0f}  {off.executors_seen:9}  {'yes' if same else 'NO'}"
        )
        if not same:
            failures.append(f"{case.tier}: the offloaded plan differs from the core's")
        if off.executors_seen < 2:
            failures.append(f"{case.tier}: {off.executors_seen} executor pod(s) seen, 2 asked")
    for failure in failures:
        print(f"[FAIL] {failure}")
    if not failures:
        print("[ok] every offloaded plan equals the core's, with 2 executor pods")


if __name__ == "__main__":
    main()
