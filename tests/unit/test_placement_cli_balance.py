"""``kzo plan --balance bytes`` and ``--byte-tolerance``: the summary line, the report, refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafka_zk_operator.domain.documents.snapshot import arrays_to_snapshot
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster
from tests.unit.test_placement_cli import run
from tests.unit.test_placement_cli_capacity import no_sizes  # noqa: F401  (fixture)

ADDED = "90,91,92"


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    cluster = synthetic_cluster(12, 3, 3000, seed=4).with_brokers(make_brokers(3, 3, first_id=90))
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(arrays_to_snapshot(cluster)))
    return path


def _plan(capsys: pytest.CaptureFixture[str], snapshot: Path, *extra: str) -> tuple[dict[str, Any], str]:
    report = snapshot.parent / "report.json"
    code, out, err = run(
        capsys, "--snapshot", str(snapshot), "--mode", "add-brokers", "--brokers", ADDED,
        "-o", str(snapshot.parent / "plan.json"), "--report", str(report), *extra,
    )  # fmt: skip
    assert code == 0, err
    return json.loads(report.read_text()), out


def _spread(report: dict[str, Any]) -> float:
    held = [int(b["bytes_after"]) for b in report["brokers"] if b["role"] != "removed"]
    return max(held) / (sum(held) / len(held))


def test_bytes_balances_data_and_says_so_in_the_summary(
    snapshot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    by_count, count_out = _plan(capsys, snapshot)
    by_bytes, bytes_out = _plan(capsys, snapshot, "--balance", "bytes")
    assert by_count["balance"] == "replicas" and by_count["bytes_lower_bound"] is None
    assert "byte balance:" not in count_out
    assert by_bytes["balance"] == "bytes"
    assert _spread(by_count) > 1.15 and _spread(by_bytes) <= 1.0201
    assert by_bytes["bytes_lower_bound"] <= by_bytes["bytes_moved"] <= 1.1 * by_bytes["bytes_lower_bound"]
    assert by_bytes["rack_violations_after"] == 0 and by_bytes["duplicates_after"] == 0
    (line,) = [ln for ln in bytes_out.splitlines() if ln.startswith("byte balance:")]
    assert "moved/bound: 1.0" in line and "after (min/mean 0.9" in line, line


def test_a_wider_byte_tolerance_moves_fewer_bytes(snapshot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tight, _ = _plan(capsys, snapshot, "--balance", "bytes", "--byte-tolerance", "0.01")
    loose, _ = _plan(capsys, snapshot, "--balance", "bytes", "--byte-tolerance", "0.10")
    assert loose["bytes_moved"] < tight["bytes_moved"]
    assert _spread(tight) <= 1.0101 and _spread(loose) <= 1.1001


@pytest.mark.parametrize("value", ["0", "0.6", "2%", "nan"])
def test_a_bad_byte_tolerance_is_one_line_exit_2(
    value: str, snapshot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "--snapshot", str(snapshot), "--mode", "rebalance", "--balance", "bytes",
        "--byte-tolerance", value, "-o", str(snapshot.parent / "plan.json"),
    )  # fmt: skip
    assert code == 2 and out == ""
    assert "above 0 and at most 0.5" in err and len(err.strip().splitlines()) <= 2, err
    assert not (snapshot.parent / "plan.json").exists()


def test_bytes_without_sizes_says_how_to_get_them(no_sizes: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    code, out, err = run(
        capsys, "--snapshot", str(no_sizes), "--mode", "rebalance", "--balance", "bytes",
        "-o", str(no_sizes.parent / "plan.json"),
    )  # fmt: skip
    assert code == 2 and out == ""
    assert "needs partition sizes" in err and "--sizes-from-bootstrap" in err, err
    assert not (no_sizes.parent / "plan.json").exists()


def test_with_balance_bytes_the_capacity_is_a_limit_not_only_a_warning(
    snapshot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    free, _ = _plan(capsys, snapshot, "--balance", "bytes")
    mean = sum(b["bytes_after"] for b in free["brokers"]) / len(free["brokers"])
    limit = int(0.6 * mean)
    capacity = ",".join(f"{b}={limit}B" for b in ADDED.split(","))
    plain, _ = _plan(capsys, snapshot)
    as_check, _ = _plan(capsys, snapshot, "--broker-capacity", capacity)  # count balance: a check only
    capped, out = _plan(capsys, snapshot, "--balance", "bytes", "--broker-capacity", capacity)
    added = [b for b in capped["brokers"] if str(b["broker_id"]) in ADDED.split(",")]
    assert all(b["bytes_after"] <= limit == b["capacity"] for b in added)
    assert not capped["warnings"], capped["warnings"]
    assert [b["bytes_after"] for b in as_check["brokers"]] == [b["bytes_after"] for b in plain["brokers"]]
    assert "cannot come down to the mean" in out


def test_both_keeps_the_counts_of_the_replicas_plan_and_evens_the_data(
    snapshot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    by_count, _ = _plan(capsys, snapshot)
    both, out = _plan(capsys, snapshot, "--balance", "both")
    assert both["balance"] == "both" and both["balanced"]
    assert [b["replicas_after"] for b in both["brokers"]] == [
        b["replicas_after"] for b in by_count["brokers"]
    ]
    assert _spread(both) <= 1.0201 < 1.15 < _spread(by_count)
    assert "replica counts as the count plan left them" in out and "balanced: yes" in out
