"""``kzo plan`` with brokers the snapshot marks ``"live": false``: no partition it changes may name one.

Kafka completes a reassignment only when every broker of the new replica list is in sync, so a plan
placing (or keeping) replicas on a down broker in partitions it changes would never finish. Such a
plan is refused with one line and exit code 2, nothing written; a plan that leaves the down brokers
alone (removing them) is written as usual; snapshots without down brokers plan exactly as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.documents.snapshot import arrays_to_snapshot, parse_snapshot, snapshot_to_arrays
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement import PlanRequest, plan
from kafka_zk_operator.domain.placement.liveness import check_down_brokers, down_broker_use
from kafka_zk_operator.domain.placement.synthetic import synthetic_cluster
from tests.unit.cli_support import run_kzo

RACKS = {0: "rack-a", 1: "rack-b", 2: "rack-c", 3: "rack-a", 4: "rack-b", 5: "rack-c"}


def _document(down: tuple[int, ...] = (4,)) -> dict[str, Any]:
    """Topic ``old`` spread over brokers 0-5; topic ``new`` created while broker 4 was down (none
    on it), so a rebalance fills broker 4."""
    order = [0, 1, 2, 3, 4, 5]
    old = {str(p): [order[(p + j) % 6] for j in range(3)] for p in range(24)}
    lists = [[0, 1, 2], [1, 2, 3], [2, 3, 1], [3, 1, 5], [5, 0, 1], [1, 5, 3]] * 4
    new = {str(p): r for p, r in enumerate(lists)}
    brokers: dict[str, dict[str, object]] = {str(b): {"rack": r} for b, r in RACKS.items()}
    for b in down:
        brokers[str(b)]["live"] = False
    return {"brokers": brokers, "topics": {"old": {"partitions": old}, "new": {"partitions": new}}}


def _write(tmp_path: Path, document: dict[str, Any], name: str = "cluster.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``kzo plan ARGS`` in-process."""
    return run_kzo(capsys, "plan", *args)


def test_a_plan_placing_replicas_on_a_down_broker_is_refused_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snapshot = _write(tmp_path, _document())
    out, report, chart = tmp_path / "plan.json", tmp_path / "report.json", tmp_path / "chart.png"
    code, stdout, err = run(
        capsys,
        *("--snapshot", str(snapshot), "--mode", "rebalance", "-o", str(out)),
        *("--report", str(report), "--plot", str(chart)),
    )
    assert code == 2
    assert stdout == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith('kzo plan: error: broker 4 is down ("live": false in the snapshot), but the plan ')
    assert "would place 12 new replica(s) on it" in err
    assert "--mode remove-brokers --brokers 4" in err and "take a fresh snapshot" in err
    assert not out.exists() and not report.exists() and not chart.exists()


def test_the_same_cluster_with_every_broker_live_fills_broker_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snapshot = _write(tmp_path, _document(down=()))
    out = tmp_path / "plan.json"
    code, _, err = run(capsys, "--snapshot", str(snapshot), "--mode", "rebalance", "-o", str(out))
    assert (code, err) == (0, "")
    before = _document(down=())["topics"]
    placed = [
        e
        for e in json.loads(out.read_text())["partitions"]
        if 4 in e["replicas"] and 4 not in before[e["topic"]]["partitions"][str(e["partition"])]
    ]
    assert len(placed) == 12


def test_removing_the_down_broker_plans_normally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = _write(tmp_path, _document())
    out = tmp_path / "plan.json"
    code, stdout, err = run(
        capsys, "--snapshot", str(snapshot), "--mode", "remove-brokers", "--brokers", "4", "-o", str(out)
    )
    assert (code, err) == (0, "")
    assert "removed" in stdout
    doc = json.loads(out.read_text())
    assert doc["partitions"] and all(4 not in e["replicas"] for e in doc["partitions"])


def test_removing_another_broker_names_both_in_the_way_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snapshot = _write(tmp_path, _document())
    code, _, err = run(
        capsys, "--snapshot", str(snapshot), "--mode", "remove-brokers", "--brokers", "0",
        "-o", str(tmp_path / "plan.json"),
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1
    assert "--mode remove-brokers --brokers 0,4" in err


def test_a_plan_moving_other_replicas_of_partitions_on_a_down_broker_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Broker 4 receives nothing here, but partitions that keep a replica on it change (Kafka
    would wait for broker 4 to join their ISR)."""
    document = arrays_to_snapshot(synthetic_cluster(6, 3, 240, seed=4, layout="kafka"), with_sizes=False)
    document["brokers"]["4"]["live"] = False  # type: ignore[index]
    snapshot = _write(tmp_path, document)
    out = tmp_path / "plan.json"
    code, _, err = run(capsys, "--snapshot", str(snapshot), "--mode", "rebalance", "-o", str(out))
    assert code == 2 and err.count("\n") == 1
    assert "the plan would change 3 partition(s) that keep a replica on it" in err
    assert not out.exists()


def test_several_down_brokers_are_named_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = _document(down=(4, 5))
    snapshot = _write(tmp_path, document)
    code, _, err = run(
        capsys, "--snapshot", str(snapshot), "--mode", "rebalance", "-o", str(tmp_path / "p.json")
    )
    assert code == 2 and err.count("\n") == 1
    assert "brokers 4, 5 are down" in err and "--brokers 4,5" in err


def test_live_true_or_absent_plans_byte_identically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = _document(down=())
    marked = _document(down=())
    for entry in marked["brokers"].values():
        entry["live"] = True
    outputs = []
    for name, document in (("plain", plain), ("marked", marked)):
        out = tmp_path / f"{name}-plan.json"
        code, _, _ = run(
            capsys, "--snapshot", str(_write(tmp_path, document, f"{name}.json")), "--mode", "rebalance",
            "-o", str(out),
        )  # fmt: skip
        assert code == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_the_snapshot_keeps_the_down_brokers() -> None:
    document = _document(down=(4,))
    document["brokers"]["2"]["live"] = True
    assert parse_snapshot(document).down == frozenset({4})
    assert parse_snapshot(_document(down=())).down == frozenset()


@pytest.mark.parametrize("value", ["false", 0, None, []])
def test_live_must_be_a_boolean(value: object) -> None:
    document = _document(down=())
    document["brokers"]["4"]["live"] = value
    with pytest.raises(errors.InvalidSpec, match=r"brokers\['4'\].live must be true or false"):
        parse_snapshot(document)


def test_the_check_reads_the_finished_plan() -> None:
    snap = parse_snapshot(_document())
    request = PlanRequest(Mode.REBALANCE)
    result = plan(snapshot_to_arrays(snap), request)
    use = down_broker_use(result, snap.down)
    assert use is not None
    assert (use.brokers, use.new_replicas, use.holders) == ((4,), 12, (4,))
    assert down_broker_use(result, ()) is None
    assert down_broker_use(result, {99}) is None  # not a broker of this cluster
    with pytest.raises(errors.InvalidSpec):
        check_down_brokers(result, snap.down, request)
    removal = plan(snapshot_to_arrays(snap), PlanRequest(Mode.REMOVE_BROKERS, brokers=(4,)))
    assert down_broker_use(removal, snap.down) is None
    check_down_brokers(removal, snap.down, PlanRequest(Mode.REMOVE_BROKERS, brokers=(4,)))
