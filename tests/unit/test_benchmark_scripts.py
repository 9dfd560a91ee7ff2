"""The benchmark scripts still run: the placement ones on tier S, one scenario, one run each (a few
seconds); the throttled-reassignment one (a real cluster, minutes: not run here) refuses bad flags
and computes the same throttle bound as the operator.

Not a measurement (the figures are the scripts' job); this keeps them from breaking unnoticed when
the code they drive changes (``placement_bench.py`` once did: it built ``Mode`` from a CLI name).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_zk_operator.domain.reassignment.batches import copy_bound_seconds
from kafka_zk_operator.domain.reassignment.plan import PartitionMove

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "args",
    [
        ["benchmarks/placement_bench.py", "--scenarios", "skew,remove", "--no-generate"],
        ["benchmarks/byte_balance_bench.py", "--scenarios", "skew,add"],
    ],
    ids=["placement_bench", "byte_balance_bench"],
)
def test_the_script_prints_its_table_and_checks(args: list[str], tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, *args, "--tiers", "S", "--runs", "1", "--cache-dir", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("# ") and any(line.startswith("S ") for line in lines), proc.stdout
    checks = [line for line in lines if line.startswith("[")]
    assert checks and not [line for line in checks if line.startswith("[FAIL]")], proc.stdout


def _throttle_bench() -> Any:
    spec = importlib.util.spec_from_file_location(
        "throttle_bench", REPO / "benchmarks/throttled_reassignment_bench.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["throttle_bench"] = module
    spec.loader.exec_module(module)
    return module


def test_the_throttle_bench_and_the_operator_agree_on_the_bound() -> None:
    """The benchmark measures the bound from Kafka's log dirs with its own code; on the same moves
    it must equal what the operator's batching aims at (``copy_bound_seconds``)."""
    bench = _throttle_bench()
    moves = [
        PartitionMove("t", 0, (1, 2), (5, 6), 900),  # leader 1 sends it twice
        PartitionMove("t", 1, (2, 1), (5, 1), 300),
        PartitionMove("u", 0, (3, 4), (3, 6), 400),
    ]
    new = {(m.topic, m.partition): set(m.added) for m in moves}
    sizes = {(m.topic, m.partition): m.replica_bytes for m in moves}
    leaders = {(m.topic, m.partition): m.source[0] for m in moves}
    traffic = bench.traffic(new, sizes, leaders)
    assert traffic.received == {5: 1200, 6: 1300} and traffic.sent == {1: 1800, 2: 300, 3: 400}
    assert traffic.b_max == copy_bound_seconds(moves, 1.0) == 1800


@pytest.mark.parametrize("flags", [["--throttle-mb", "0"], ["--gigabytes", "-1"], ["--balance", "weight"]])
def test_the_throttle_bench_refuses_bad_flags_in_one_line(flags: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "benchmarks/throttled_reassignment_bench.py", *flags],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "error:" in proc.stderr, proc.stderr


def test_the_spark_on_kubernetes_bench_imports_and_refuses_an_unknown_tier() -> None:
    """It needs root and a node for a real run (minutes); here it must load and check its flags."""
    proc = subprocess.run(
        [sys.executable, "benchmarks/spark_k8s_bench.py", "--tiers", "Q"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode != 0 and "unknown tier(s) Q" in proc.stderr, proc.stderr[-2000:]


@pytest.mark.parametrize(
    ("flags", "said"),
    [(["--batch-seconds", "-1"], "--batch-seconds"), (["--topics", "ten"], "--topics")],
    ids=["negative-window", "not-a-number"],
)
def test_the_lean_operator_floor_refuses_bad_flags_in_one_line(flags: list[str], said: str) -> None:
    """A real run needs a whole stack (minutes); here it must load and refuse before starting one."""
    proc = subprocess.run(
        [sys.executable, "benchmarks/lean_operator_floor.py", *flags],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert f"{said} takes" in proc.stderr, proc.stderr[-2000:]
