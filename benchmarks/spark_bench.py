"""The Spark column of ``placement_bench.py``: the PySpark job on one case, in its own process tree.

``run_spark_case(cluster_file, request_json, master)`` starts ``spark_bench.py --child`` (which loads
the cached ``.npz``, starts a SparkSession on ``master`` and runs ``spark.job.run_plan``) and
samples the resident memory of the whole process tree every 50 ms: the Python driver, the JVM
and the Python workers the JVM forks (``wait4``'s ``ru_maxrss`` would see only the driver). It
returns the session start time, the plan time (``run_plan``: stage 1, the Spark stage, stage 3),
the peak of the summed RSS and the digest of the replica matrix (same digest as the core's rows).

``contract_digest`` runs the contract in one process without Spark (stage 2 group by group,
``spark.stage2.select_by_groups``): when the Spark plan differs from the core's, it tells whether
the Spark job or the core's ``plan()`` strays from the contract.

Run alone: ``python benchmarks/spark_bench.py --child NPZ REQUEST_JSON local[2]`` prints one JSON line.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "operator"))
sys.path.insert(0, str(REPO / "benchmarks"))

from placement_bench import _load, _request  # noqa: E402

from kafka_zk_operator.domain.placement import broker_stage, finish_plan  # noqa: E402

#: Local-mode JVM heap: the 1 GB default is tight for tier L's Arrow batches.
DRIVER_MEMORY = "3g"


def digest(replicas: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(replicas).tobytes()).hexdigest()[:16]


def child(cluster_file: Path, request_json: str, master: str) -> None:
    from kafka_zk_operator.spark.job import run_plan
    from kafka_zk_operator.spark.session import local_session

    cluster = _load(cluster_file)
    request = _request(json.loads(request_json))
    started = time.perf_counter()
    spark = local_session(master, app_name="kzo-bench", **{"spark.driver.memory": DRIVER_MEMORY})
    ready = time.perf_counter()
    result = run_plan(spark, cluster, request)
    done = time.perf_counter()
    spark.stop()
    out = {
        "session_s": ready - started,
        "plan_s": done - ready,
        "moves": result.report.moves,
        "m_lb": result.report.m_lb,
        "digest": digest(result.replicas),
    }
    print(json.dumps(out))


def _tree(root: int) -> list[int]:
    """``root`` and every process below it (from ``/proc/<pid>/stat``)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            parent[int(entry)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, ppid in parent.items() if ppid in frontier]
        found += frontier
    return found


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def run_spark_case(cluster_file: Path, request_json: str, master: str = "local[2]") -> dict[str, object]:
    """One Spark run in a child process tree (module docstring)."""
    cmd = [sys.executable, __file__, "--child", str(cluster_file), request_json, master]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak_kb = 0
    wall_start = time.perf_counter()
    while proc.poll() is None:
        peak_kb = max(peak_kb, sum(_rss_kb(pid) for pid in _tree(proc.pid)))
        time.sleep(0.05)
    wall = time.perf_counter() - wall_start
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"spark child failed for {cluster_file.name}:\n{stderr[-4000:]}")
    result: dict[str, object] = json.loads(stdout.strip().splitlines()[-1])
    result["peak_tree_mb"] = peak_kb / 1024
    result["wall_s"] = wall
    return result


def contract_digest(cluster_file: Path, request_json: str) -> str:
    """Digest of the plan with stage 2 run group by group in one process (the contract)."""
    from kafka_zk_operator.spark.stage2 import select_by_groups

    stage = broker_stage(_load(cluster_file), _request(json.loads(request_json)))
    return digest(finish_plan(stage, select_by_groups(stage)).replicas)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        raise SystemExit(__doc__)
