"""Running the peer planners of ``peers_bench.py`` on a snapshot, each in its own process.

* **topicmappr** (kafka-kit v3.18.1, built once by ``devstack.topicmappr.topicmappr_binary``) reads
  a cluster from ZooKeeper only: :func:`scratch_zookeeper` starts a real ZooKeeper (Kafka's, as
  ``devstack.zookeeper`` does) on a free loopback port in a temp folder, :func:`load_snapshot`
  writes the snapshot there the way Kafka and topicmappr's metricsfetcher would (``/brokers/ids``,
  ``/brokers/topics``, ``/topicmappr/partitionmeta`` with each partition's size in bytes,
  ``/topicmappr/brokermetrics`` with each broker's ``StorageFree``: an assumed capacity less what
  it holds), and :func:`run_topicmappr` runs one command and reads its combined map.
* **Kafka's own planner** (``kafka-reassign-partitions --generate``): ``java/KafkaCalculateAssignment.java``
  calls ``ReassignPartitionsCommand.calculateAssignment`` of the cached Kafka 3.9.2 jars by
  reflection (:class:`KafkaGenerate`).

Each run is timed and its peak RSS sampled from ``/proc/<pid>/status`` (:func:`timed`).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from kazoo.client import KazooClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "operator"))

from kafka_zk_operator.devstack import artifacts, ports
from kafka_zk_operator.devstack.zookeeper import ZooKeeperServer
from kafka_zk_operator.domain.placement import ClusterArrays

JAVA_SOURCE = Path(__file__).resolve().parent / "java" / "KafkaCalculateAssignment.java"
#: ZooKeeper's largest znode (``jute.maxbuffer``): topicmappr's partitionmeta is one znode holding
#: every partition's size (about 32 MB of JSON at tier L).
JUTE_MAXBUFFER = 128 * 2**20
Proposed = dict[tuple[str, int], list[int]]


@dataclass(frozen=True)
class Run:
    """One peer run: its proposed assignment, wall time, peak RSS, and the time it reports itself."""

    proposed: Proposed
    seconds: float
    peak_mb: float
    cpu_seconds: float
    inner_seconds: float | None = None


def vmhwm_mb(pid: int) -> float:
    """Process ``pid``'s peak RSS so far (``VmHWM``; 0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class TimedOut(RuntimeError):
    """A peer run did not finish within its time limit (it was stopped)."""


def timed(cmd: Sequence[str], *, what: str, timeout: float | None = None) -> tuple[str, float, float, float]:
    """Run ``cmd``; (its output, wall seconds, peak RSS MB, CPU seconds). The peak is the child's
    ``VmHWM``, sampled every 20 ms until it exits: ``wait4``'s ``ru_maxrss`` would report at least
    the RSS of this (larger) process, which the child inherits when it is forked. After ``timeout``
    seconds the child is killed and :class:`TimedOut` raised."""
    with tempfile.TemporaryFile("w+") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.STDOUT, text=True)
        peak = 0.0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if timeout is not None and time.perf_counter() - started > timeout:
                proc.kill()
                proc.wait()
                raise TimedOut(f"{what}: did not finish in {timeout:.0f} s (stopped)")
            peak = max(peak, vmhwm_mb(proc.pid))
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {proc.returncode}):\n{text[-3000:]}")
    return text, seconds, peak, usage.ru_utime + usage.ru_stime


# -- ZooKeeper --------------------------------------------------------------------------------------
@contextlib.contextmanager
def scratch_zookeeper(workdir: Path) -> Iterator[str]:
    """A standalone ZooKeeper (Kafka 3.9.2's) on a free loopback port in ``workdir``; yields its
    connect string and stops it on exit."""
    server = ZooKeeperServer(
        workdir=workdir,
        port=ports.free_port(),
        libs=artifacts.kafka_libs(),
        jvm_options=(f"-Djute.maxbuffer={JUTE_MAXBUFFER}",),
    )
    server.start()
    try:
        server.wait_ready()
        yield server.connect
    finally:
        assert server.process is not None
        server.process.stop()


def broker_bytes_by_id(cluster: ClusterArrays) -> dict[int, int]:
    """Bytes each broker holds (the sizes of the partitions it has a replica of)."""
    held = np.zeros(cluster.n_brokers + 1, dtype=np.int64)
    for j in range(cluster.replicas.shape[1]):
        np.add.at(held, cluster.replicas[:, j], cluster.sizes)
    return {int(b): int(held[i]) for i, b in enumerate(cluster.broker_ids.tolist())}


def load_snapshot(connect: str, prefix: str, cluster: ClusterArrays, *, capacity_factor: float) -> int:
    """Write ``cluster`` under ``/<prefix>`` (a new chroot, topicmappr's ``--zk-prefix``, metrics
    under ``<prefix>/topicmappr``) into the ZooKeeper at ``connect`` (module docstring). Every
    broker's capacity is ``capacity_factor`` x the most bytes a broker holds; returns that capacity."""
    held = broker_bytes_by_id(cluster)
    capacity = int(capacity_factor * max(held.values()))
    ids = cluster.broker_ids.tolist()
    client = KazooClient(hosts=connect, timeout=30)
    client.start(timeout=30)
    try:
        root = f"/{prefix}"
        for path in ("/brokers/ids", "/brokers/topics", "/topicmappr"):
            client.ensure_path(root + path)
        writes = []
        for i, broker in enumerate(ids):
            rack = cluster.racks[int(cluster.broker_rack[i])]
            meta = {"version": 4, "host": f"broker-{broker}", "port": 9092, "jmx_port": -1,
                    "endpoints": [f"PLAINTEXT://broker-{broker}:9092"], "timestamp": "0",
                    "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"}}  # fmt: skip
            if rack is not None:
                meta["rack"] = rack
            writes.append((f"{root}/brokers/ids/{broker}", meta))
        starts = np.r_[0, np.flatnonzero(np.diff(cluster.topic_of)) + 1, cluster.n_partitions]
        sizes: dict[str, dict[str, dict[str, int]]] = {}
        for t in range(len(starts) - 1):
            lo, hi = int(starts[t]), int(starts[t + 1])
            topic = cluster.topics[int(cluster.topic_of[lo])]
            partitions = {
                str(int(cluster.partition_of[r])): [int(ids[b]) for b in cluster.replicas[r] if b >= 0]
                for r in range(lo, hi)
            }
            writes.append((f"{root}/brokers/topics/{topic}", {"version": 1, "partitions": partitions}))
            sizes[topic] = {
                str(int(cluster.partition_of[r])): {"Size": int(cluster.sizes[r])} for r in range(lo, hi)
            }
        for chunk in range(0, len(writes), 2000):
            pending = [
                client.create_async(path, json.dumps(data).encode())
                for path, data in writes[chunk : chunk + 2000]
            ]
            for result in pending:
                result.get(timeout=60)
        free = {str(b): {"StorageFree": float(capacity - held[b])} for b in ids}
        client.create(f"{root}/topicmappr/partitionmeta", json.dumps(sizes).encode())
        client.create(f"{root}/topicmappr/brokermetrics", json.dumps(free).encode())
    finally:
        client.stop()
        client.close()
    return capacity


def run_topicmappr(
    binary: Path,
    connect: str,
    prefix: str,
    argv: Sequence[str],
    workdir: Path,
    *,
    timeout: float | None = None,
) -> Run:
    """``topicmappr <argv>`` on the snapshot :func:`load_snapshot` wrote under ``prefix``: its
    combined map (``--out-file``)."""
    out_dir = workdir / f"tm-{time.monotonic_ns()}"
    out_dir.mkdir(parents=True)
    cmd = [str(binary), *argv, "--zk-addr", connect, "--zk-prefix", prefix, "--zk-metrics-prefix",
           f"{prefix}/topicmappr", "--ignore-warns", "--out-path", str(out_dir), "--out-file", "combined"]  # fmt: skip
    text, seconds, peak, cpu = timed(cmd, what="topicmappr " + " ".join(argv[:1]), timeout=timeout)
    combined = out_dir / "combined.json"
    if not combined.exists():
        raise RuntimeError(f"topicmappr wrote no combined map ({' '.join(argv)}):\n{text[-3000:]}")
    data = json.loads(combined.read_text())
    proposed = {
        (str(p["topic"]), int(p["partition"])): [int(b) for b in p["replicas"]] for p in data["partitions"]
    }
    for path in out_dir.iterdir():
        path.unlink()
    out_dir.rmdir()
    return Run(proposed, seconds, peak, cpu)


# -- Kafka's calculateAssignment ---------------------------------------------------------------------
class KafkaGenerate:
    """``java/KafkaCalculateAssignment.java`` compiled against Kafka 3.9.2's jars in ``workdir``."""

    def __init__(self, workdir: Path, *, heap: str = "8g") -> None:
        self.libs = artifacts.kafka_libs()
        self.classes = workdir / "kafka-generate-classes"
        self.classes.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.heap = heap
        compiled = subprocess.run(
            ["javac", "-nowarn", "-cp", f"{self.libs}/*", "-d", str(self.classes), str(JAVA_SOURCE)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if compiled.returncode != 0:
            raise RuntimeError(f"javac failed for {JAVA_SOURCE}: {compiled.stderr.strip()}")

    def write_input(self, cluster: ClusterArrays, brokers: Sequence[int]) -> Path:
        """The runner's input file: the target ``brokers`` (ids) and the current assignment."""
        path = self.workdir / "generate-input.txt"
        index = {int(b): i for i, b in enumerate(cluster.broker_ids.tolist())}
        ids = cluster.broker_ids.tolist()
        with path.open("w") as out:
            for b in brokers:
                rack = cluster.racks[int(cluster.broker_rack[index[b]])]
                out.write(f"broker {b} {rack if rack is not None else '-'}\n")
            for r in range(cluster.n_partitions):
                topic = cluster.topics[int(cluster.topic_of[r])]
                reps = ",".join(str(ids[b]) for b in cluster.replicas[r] if b >= 0)
                out.write(f"partition {topic} {int(cluster.partition_of[r])} {reps}\n")
        return path

    def run(self, input_file: Path) -> Run:
        """One JVM: ``calculateAssignment`` on ``input_file`` (its start index is random each run)."""
        output = self.workdir / "generate-output.txt"
        cmd = ["java", f"-Xmx{self.heap}", "-XX:+UseSerialGC", "-cp", f"{self.classes}:{self.libs}/*",
               "KafkaCalculateAssignment", str(input_file), str(output)]  # fmt: skip
        text, seconds, peak, cpu = timed(cmd, what="KafkaCalculateAssignment")
        inner = float(json.loads(text.strip().splitlines()[-1])["seconds"])
        proposed: Proposed = {}
        with output.open() as lines:
            for line in lines:
                topic, partition, reps = line.split()
                proposed[(topic, int(partition))] = [int(b) for b in reps.split(",")]
        output.unlink()
        return Run(proposed, seconds, peak, cpu, inner)
