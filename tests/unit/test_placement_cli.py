"""``kzo plan``: reassignment JSON, summary, plot, and one-line exit-2 errors (in-process and subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_zk_operator.domain.documents.snapshot import arrays_to_snapshot
from kafka_zk_operator.domain.placement.synthetic import synthetic_cluster
from tests.unit.cli_support import run_kzo

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(arrays_to_snapshot(synthetic_cluster(6, 3, 240, seed=4, layout="kafka"))))
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``kzo plan ARGS`` in-process."""
    return run_kzo(capsys, "plan", *args)


def test_add_brokers_given_with_racks(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "plan.json"
    code, out, err = run(
        capsys,
        *("--snapshot", str(snapshot), "--mode", "add-brokers", "--brokers", "6:rack-a,7:rack-b,8:rack-c"),
        *("-o", str(out_file)),
    )
    assert (code, err) == (0, "")
    doc = json.loads(out_file.read_text())
    assert doc["version"] == 1 and doc["partitions"]
    before = json.loads(snapshot.read_text())["topics"]
    for entry in doc["partitions"]:
        assert set(entry) == {"topic", "partition", "replicas"}
        assert entry["replicas"] != before[entry["topic"]]["partitions"][str(entry["partition"])]
    moved_in = sum(1 for e in doc["partitions"] for b in e["replicas"] if b in (6, 7, 8))
    assert moved_in == 240 * 3 * 3 // 9
    assert "M_LB: 240" in out and "provably optimal: yes" in out
    assert "added" in out and "rack violations:  0 after" in out


def test_remove_broker_with_report_plot_and_stdout(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    png, report = tmp_path / "chart.png", tmp_path / "report.json"
    code, out, err = run(
        capsys,
        *("--snapshot", str(snapshot), "--mode", "remove-brokers", "--brokers", "2", "-o", "-"),
        *("--plot", str(png), "--report", str(report)),
    )
    assert code == 0
    doc = json.loads(out)
    assert all(2 not in e["replicas"] for e in doc["partitions"])
    assert "replica moves:" in err  # the summary goes to stderr when the plan goes to stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(report.read_text())
    assert data["moves"] == data["m_lb"] and data["rack_violations_after"] == 0


def test_replication_factor_and_topic_selection(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "plan.json"
    code, _, err = run(
        capsys,
        *("--snapshot", str(snapshot), "--mode", "replication-factor", "--replication-factor", "2"),
        *("--topics", "topic-1.*", "-o", str(out_file), "--seed", "3", "--tolerance", "1"),
    )
    assert (code, err) == (0, "")
    doc = json.loads(out_file.read_text())
    assert doc["partitions"] and all(
        e["topic"].startswith("topic-1") and len(e["replicas"]) == 2 for e in doc["partitions"]
    )


def test_same_input_same_output(snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for name in ("a.json", "b.json"):
        run(capsys, "--snapshot", str(snapshot), "--mode", "rebalance", "-o", str(tmp_path / name))
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1]


def _bad_snapshot(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bad.json"
    path.write_text(text)
    return str(path)


GOOD = {
    "brokers": {"0": {"rack": "a"}, "1": {"rack": "b"}, "2": {"rack": "c"}},
    "topics": {"t": {"partitions": {"0": [0, 1], "1": [1, 2]}}},
}


def _doc(**topics: object) -> str:
    return json.dumps({"brokers": GOOD["brokers"], "topics": topics})


BAD_SNAPSHOTS = {
    "unknown broker": (_doc(t={"partitions": {"0": [0, 7]}}), "names broker 7, which is not in"),
    "duplicate replicas": (_doc(t={"partitions": {"0": [1, 1]}}), "lists broker 1 twice"),
    "mixed rf": (_doc(t={"partitions": {"0": [0, 1], "1": [0]}}), "mixes replication factors"),
    "malformed json": ('{"brokers": {"0": {}', "not valid JSON"),
    "wrong type": (_doc(t={"partitions": {"0": "0,1"}}), "must be a non-empty list of broker ids"),
    # Found by fuzzing the CLI: each of these used to end in a traceback or be accepted silently.
    "no topics": (_doc(), "has no topics: there is nothing to plan"),
    "repeated key": ('{"brokers": {"0": {}, "0": {}}, "topics": {}}', "repeats the key '0'"),
    "nested too deeply": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "number too long": (
        _doc(t={"partitions": {"0": [0]}}).replace("[0]", "[" + "1" * 5000 + "]"),
        "unreadable value",
    ),
    "illegal topic name": (_doc(**{"a/b c": {"partitions": {"0": [0, 1]}}}), "not a Kafka topic name"),
    "lone surrogate in a rack": (
        '{"brokers": {"0": {"rack": "\\ud800"}}, "topics": {"t": {"partitions": {"0": [0]}}}}',
        "must be printable text",
    ),
    "size overflow": (
        _doc(t={"partitions": {"0": [0, 1]}, "sizes": {"0": 2**63}}),
        "non-negative integer number of bytes",
    ),
    "sizes adding up past int64": (
        _doc(
            t={
                "partitions": {str(p): [0, 1] for p in range(600)},
                "sizes": {str(p): 2**53 for p in range(600)},
            }
        ),
        "sizes add up to",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_SNAPSHOTS))
def test_bad_snapshots_are_one_line_exit_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = BAD_SNAPSHOTS[name]
    code, out, err = run(
        capsys,
        "--snapshot",
        _bad_snapshot(tmp_path, text),
        "--mode",
        "rebalance",
        "-o",
        str(tmp_path / "o.json"),
    )
    assert code == 2 and out == ""
    assert err.startswith("kzo plan: error: ") and message in err
    assert err.count("\n") == 1


BAD_ARGS = {
    "missing file": (
        ["--snapshot", "/nonexistent/cluster.json", "--mode", "rebalance"],
        "cannot read snapshot",
    ),
    "bad regex": (["--mode", "rebalance", "--topics", "("], "invalid topic regular expression"),
    "rf too large": (
        ["--mode", "replication-factor", "--replication-factor", "9"],
        "larger than the 6 eligible",
    ),
    "rf missing": (["--mode", "replication-factor"], "needs the new replication factor"),
    "new broker without rack": (["--mode", "add-brokers", "--brokers", "9"], "give its rack as 9:RACK"),
    "added broker not new": (["--mode", "add-brokers", "--brokers", "1"], "already holds"),
    "remove unknown": (["--mode", "remove-brokers", "--brokers", "42"], "not in the snapshot"),
    "remove all": (["--mode", "remove-brokers", "--brokers", "0,1,2,3,4,5"], "cannot remove every broker"),
    "bad broker list": (["--mode", "remove-brokers", "--brokers", "1,x"], "invalid broker 'x'"),
    "bad mode": (["--mode", "shuffle"], "invalid choice"),
    "no topic": (["--mode", "rebalance", "--topics", "nothing.*"], "no topic matches"),
    "rf beyond a 16-bit int": (
        ["--mode", "replication-factor", "--replication-factor", "99999999999999999999"],
        "expected a replication factor from 1 to 32767",
    ),
    "tolerance beyond reason": (
        ["--mode", "rebalance", "--tolerance", "9223372036854775807"],
        "up to 1,000,000",
    ),
    "chart format": (["--mode", "rebalance", "--plot", "chart.xyz"], "must end in .png, .svg, .pdf"),
}


@pytest.mark.parametrize("name", sorted(BAD_ARGS))
def test_bad_arguments_are_one_line_exit_2(
    name: str, snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, message = BAD_ARGS[name]
    if "--snapshot" not in args:
        args = ["--snapshot", str(snapshot), *args]
    code, _, err = run(capsys, *args, "-o", str(tmp_path / "o.json"))
    assert code == 2
    assert message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def _kzo_subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "operator")}
    return subprocess.run(
        [sys.executable, "-m", "kafka_zk_operator.cli.main", "plan", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", ["unknown broker", "malformed json"])
def test_subprocess_bad_snapshot_has_no_traceback(name: str, tmp_path: Path) -> None:
    text, message = BAD_SNAPSHOTS[name]
    result = _kzo_subprocess(
        "--snapshot", _bad_snapshot(tmp_path, text), "--mode", "rebalance", "-o", str(tmp_path / "o.json")
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert "Traceback" not in result.stderr


def test_subprocess_success(snapshot: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "plan.json"
    result = _kzo_subprocess(
        "--snapshot",
        str(snapshot),
        "--mode",
        "remove-brokers",
        "--brokers",
        "0",
        "-o",
        str(out_file),
        "--progress",
    )
    assert result.returncode == 0, result.stderr
    assert "100% done" in result.stderr and "Traceback" not in result.stderr
    assert json.loads(out_file.read_text())["partitions"]


def test_nothing_is_written_when_an_output_cannot_be(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o.json"
    code, _, err = run(
        capsys, "--snapshot", str(snapshot), "--mode", "rebalance", "-o", str(out),
        "--report", str(tmp_path / "missing" / "r.json"),
    )  # fmt: skip
    assert code == 2 and "does not exist" in err and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--report", "--plot"])
def test_two_outputs_naming_one_file_are_refused(
    flag: str, snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    same = str(tmp_path / "o.png")
    code, _, err = run(capsys, "--snapshot", str(snapshot), "--mode", "rebalance", "-o", same, flag, same)
    assert code == 2 and "is the same file as -o" in err
    code, _, err = run(capsys, "--snapshot", str(snapshot), "--mode", "rebalance", "-o", str(snapshot))
    assert code == 2 and "is the same file as --snapshot" in err
    assert json.loads(snapshot.read_text())["topics"], "the input was not overwritten"
