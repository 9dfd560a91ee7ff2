"""``kzo plan``: data per broker in the summary and report, and ``--broker-capacity`` warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_zk_operator.domain.documents.snapshot import arrays_to_snapshot
from kafka_zk_operator.domain.placement.capacity import NO_SIZES
from kafka_zk_operator.domain.placement.synthetic import synthetic_cluster
from tests.unit.test_placement_cli import _kzo_subprocess, run
from tests.unit.test_plan_bytes_capacity import HAND_MADE

COUNT_HEADER = "broker  rack  role     replicas  before  after  target  leaders  before  after  target"


@pytest.fixture
def hand_made(tmp_path: Path) -> Path:
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(HAND_MADE))
    return path


@pytest.fixture
def no_sizes(tmp_path: Path) -> Path:
    doc = json.loads(json.dumps(HAND_MADE))
    del doc["topics"]["t"]["sizes"]
    path = tmp_path / "no-sizes.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def racked(tmp_path: Path) -> Path:
    path = tmp_path / "racked.json"
    path.write_text(json.dumps(arrays_to_snapshot(synthetic_cluster(6, 3, 240, seed=4, layout="kafka"))))
    return path


def _remove_3(capsys: pytest.CaptureFixture[str], snapshot: Path, *extra: str) -> tuple[int, str, str]:
    out = snapshot.parent / "plan.json"
    return run(
        capsys,
        "--snapshot",
        str(snapshot),
        "--mode",
        "remove-brokers",
        "--brokers",
        "3",
        "-o",
        str(out),
        *extra,
    )


def _table(out: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("broker "))
    return lines[start : start + 4]


def test_summary_shows_data_before_and_after_with_sizes(
    hand_made: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _remove_3(capsys, hand_made)
    assert (code, err) == (0, "")
    assert "data to move:     1010 B" in out and "disk capacity" not in out
    assert _table(out) == [
        COUNT_HEADER + "  data   before    after",
        "1       -     kept                    3      4       4                2      2       2        1.1 KiB  1.1 KiB",
        "2       -     kept                    3      4       4                1      2       2          115 B  1.1 KiB",
        "3       -     removed                 2      0       0                1      0       0         1010 B      0 B",
    ]


def test_without_sizes_there_are_no_byte_columns(no_sizes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _remove_3(capsys, no_sizes)
    assert (code, err) == (0, "")
    assert _table(out)[0] == COUNT_HEADER
    assert "data to move:     unknown (the snapshot has no sizes)" in out
    assert not any("B" in line for line in _table(out))  # no byte figure anywhere in the table


def test_capacity_for_every_broker_warns_on_stderr_and_exits_0(
    hand_made: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _remove_3(capsys, hand_made, "--broker-capacity", "1000")
    assert code == 0
    assert err.splitlines() == [
        "kzo plan: warning: broker 1 is already above its capacity of 1000 B with 1.1 KiB (110%) and the plan "
        "adds 10 B: 1.1 KiB after (112%)",
        "kzo plan: warning: broker 2 would hold 1.1 KiB after the plan, above its capacity of 1000 B (112%); "
        "it holds 115 B before (12%)",
    ]
    assert "disk capacity:    2 of 3 broker(s) checked above capacity after the plan (2 before)" in out
    table = _table(out)
    assert table[0].endswith("data   before    after  capacity       used")
    assert table[1].endswith("1000 B  112% over") and table[3].endswith("1000 B         0%")


def test_capacity_per_broker_and_with_units(hand_made: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _remove_3(capsys, hand_made, "--broker-capacity", "2=1114,3=2KiB")
    assert code == 0
    assert err.splitlines() == [
        "kzo plan: warning: broker 2 would hold 1.1 KiB after the plan, above its capacity of 1.1 KiB "
        "(100.1%); it holds 115 B before (10%)"
    ]
    table = _table(out)
    assert table[1].split()[-6:] == ["1.1", "KiB", "1.1", "KiB", "-", "-"]  # no capacity: not checked
    assert table[2].split()[-3:] == ["KiB", "100.1%", "over"]
    assert table[3].split()[-3:] == ["2.0", "KiB", "0%"]
    code, _, err = _remove_3(capsys, hand_made, "--broker-capacity", "1KiB")  # 1024 bytes
    assert code == 0 and [line.split(":")[1] for line in err.splitlines()] == [" warning"] * 2


def test_report_json_carries_bytes_capacity_and_warnings(
    hand_made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    code, _, err = _remove_3(capsys, hand_made, "--broker-capacity", "1=1000", "--report", str(report))
    assert code == 0
    data = json.loads(report.read_text())
    assert data["sizes_known"] is True and data["bytes_moved"] == 1010
    assert [
        (b["broker_id"], b["bytes_before"], b["bytes_after"], b["capacity"]) for b in data["brokers"]
    ] == [
        (1, 1105, 1115, 1000),
        (2, 115, 1115, None),
        (3, 1010, 0, None),
    ]
    assert data["warnings"] == [line.removeprefix("kzo plan: warning: ") for line in err.splitlines()]
    assert len(data["warnings"]) == 1 and data["notes"] == []


def test_capacity_without_sizes_says_how_to_get_them(
    no_sizes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    code, out, err = _remove_3(capsys, no_sizes, "--broker-capacity", "1TiB", "--report", str(report))
    assert code == 0
    assert err == f"kzo plan: warning: {NO_SIZES}\n"
    assert "--sizes-from-bootstrap" in err and "capacity" not in _table(out)[0]
    data = json.loads(report.read_text())
    assert data["sizes_known"] is False and data["warnings"] == [NO_SIZES]
    assert all(b["capacity"] is None and b["bytes_after"] == 0 for b in data["brokers"])


MODES = {
    "add": ["--mode", "add-brokers", "--brokers", "6:rack-a,7:rack-b"],
    "remove": ["--mode", "remove-brokers", "--brokers", "2"],
    "rebalance": ["--mode", "rebalance", "--seed", "5"],
    "rf": ["--mode", "replication-factor", "--replication-factor", "2", "--tolerance", "1"],
}


@pytest.mark.parametrize("name", sorted(MODES))
def test_the_plan_is_byte_identical_with_and_without_a_capacity(
    name: str, racked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs, reports = [], []
    capacities = (None, "100GiB", "0=1TB,1=2GiB,6=1")
    for i, capacity in enumerate(capacities):
        out, report = tmp_path / f"plan-{i}.json", tmp_path / f"report-{i}.json"
        extra = ["--broker-capacity", capacity] if capacity else []
        code, _, _ = run(
            capsys, "--snapshot", str(racked), *MODES[name], "-o", str(out), "--report", str(report), *extra
        )
        if name != "add" and capacity and "6=" in capacity:
            assert code == 2  # broker 6 exists only when added
            continue
        assert code == 0
        outputs.append(out.read_bytes())
        reports.append(json.loads(report.read_text()))
    assert all(o == outputs[0] for o in outputs[1:]) and json.loads(outputs[0])["partitions"]
    for data in reports:
        data.pop("warnings")
        for line in data["brokers"]:
            line.pop("capacity")
    assert all(r == reports[0] for r in reports[1:])


def test_a_broker_added_on_the_command_line_can_have_a_capacity(
    racked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    code, out, err = run(
        capsys, "--snapshot", str(racked), *MODES["add"], "-o", str(tmp_path / "o.json"),
        "--broker-capacity", "6=1GiB", "--report", str(report),
    )  # fmt: skip
    assert code == 0
    lines = {b["broker_id"]: b for b in json.loads(report.read_text())["brokers"]}
    assert lines[6]["capacity"] == 2**30 and lines[6]["bytes_before"] == 0
    assert (lines[6]["bytes_after"] > 2**30) == ("kzo plan: warning: broker 6 would hold" in err)
    assert "1 broker(s) checked" in out


BAD_CAPACITIES = {
    "ambiguous unit": ("5G", "ambiguous size '5G': write GiB (powers of 1024) or GB (powers of 1000)"),
    "not a size": ("lots", "invalid size 'lots'"),
    "zero": ("0", "must be at least 1 byte"),
    "colon instead of equals": ("7:1TiB", "expected SIZE for every broker, or ID=SIZE,ID=SIZE,..."),
    "twice": ("1=1TiB,1=2TiB", "broker 1 is given a capacity more than once"),
    "empty": ("", "invalid size ''"),
    "unknown broker": (
        "1=1TiB,9=1TiB,8=1TiB",
        "--broker-capacity names broker(s) not in the snapshot or --brokers: 8, 9",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_CAPACITIES))
def test_bad_capacities_are_one_line_exit_2(
    name: str, hand_made: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    value, message = BAD_CAPACITIES[name]
    code, out, err = _remove_3(capsys, hand_made, "--broker-capacity", value)
    assert (code, out) == (2, "")
    assert err.startswith("kzo plan: error: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (hand_made.parent / "plan.json").exists()


def test_subprocess_capacity_warning_and_error(hand_made: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "plan.json")
    args = ("--snapshot", str(hand_made), "--mode", "remove-brokers", "--brokers", "3", "-o", out)
    ok = _kzo_subprocess(*args, "--broker-capacity", "1=1000")
    assert ok.returncode == 0 and ok.stderr.startswith("kzo plan: warning: broker 1 is already above")
    assert ok.stderr.count("\n") == 1
    bad = _kzo_subprocess(*args, "--broker-capacity", "1=2T")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "ambiguous size '2T'" in bad.stderr
