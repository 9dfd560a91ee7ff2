"""The placement benchmark scripts still run: tier S, one scenario, one run each (a few seconds).

Not a measurement (the figures are the scripts' job); this keeps them from breaking unnoticed when
the code they drive changes (``placement_bench.py`` once did: it built ``Mode`` from a CLI name).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
