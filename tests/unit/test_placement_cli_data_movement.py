"""``kzo plan --data-movement``: same moves, different replicas; checked through the CLI's report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafka_zk_operator.domain.documents.snapshot import arrays_to_snapshot
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster
from tests.unit.test_placement_cli import run

ADDED = (90, 91, 92)


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    cluster = synthetic_cluster(12, 3, 3000, seed=4).with_brokers(make_brokers(3, 3, first_id=90))
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(arrays_to_snapshot(cluster)))
    return path


def _plan(capsys: pytest.CaptureFixture[str], snapshot: Path, *extra: str) -> tuple[dict[str, Any], str]:
    tag = "-".join(extra) or "default"
    report, out = snapshot.parent / f"report-{tag}.json", snapshot.parent / f"plan-{tag}.json"
    code, _, err = run(
        capsys, "--snapshot", str(snapshot), "--mode", "add-brokers", "--brokers", ",".join(map(str, ADDED)),
        "-o", str(out), "--report", str(report), *extra,
    )  # fmt: skip
    assert code == 0, err
    return json.loads(report.read_text()), out.read_text()


def _added_share(report: dict[str, Any]) -> list[float]:
    lines = report["brokers"]
    average = sum(b["bytes_after"] for b in lines) / len(lines)
    return [b["bytes_after"] / average for b in lines if b["broker_id"] in ADDED]


def test_default_is_minimal(snapshot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _plan(capsys, snapshot) == _plan(capsys, snapshot, "--data-movement", "minimal")


def test_proportional_moves_as_many_replicas_and_fills_added_brokers_like_the_others(
    snapshot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    minimal, minimal_plan = _plan(capsys, snapshot)
    proportional, proportional_plan = _plan(capsys, snapshot, "--data-movement", "proportional")
    assert minimal["moves"] == proportional["moves"] == proportional["m_lb"]
    assert proportional["rack_violations_after"] == 0 and proportional["balanced"]
    assert minimal_plan != proportional_plan
    assert proportional["bytes_moved"] > 5 * minimal["bytes_moved"]
    assert max(_added_share(minimal)) < 0.3 < 0.75 < min(_added_share(proportional))
    assert max(_added_share(proportional)) < 1.25


def test_an_unknown_preference_is_one_line_exit_2(snapshot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys, "--snapshot", str(snapshot), "--mode", "rebalance", "-o", "-", "--data-movement", "largest"
    )
    assert code == 2 and "--data-movement" in err and "largest" in err
