"""Unit tests for ``kzo assign``: output format, flag handling, and one-line errors with exit code 2.

Most tests call ``cli.main.main`` in-process; a few run the real command in a subprocess to make
sure no traceback ever reaches the user.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.cli_support import run_kzo

REPO = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``kzo assign ARGS`` in-process."""
    return run_kzo(capsys, "assign", *args)


def partitions_of(out: str) -> dict[str, list[int]]:
    document = json.loads(out)
    assert document["version"] == 1
    partitions: dict[str, list[int]] = document["partitions"]
    return partitions


def test_rack_aware_reference_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        *("--brokers", "0:r1,1:r3,2:r3,3:r2,4:r2,5:r1", "--partitions", "7"),
        *("--replication-factor", "3", "--start-index", "0"),
    )
    assert (code, err) == (0, "")
    assert out == (
        '{"version":1,"partitions":{"0":[0,3,1],"1":[3,1,5],"2":[1,5,4],"3":[5,4,2],'
        '"4":[4,2,0],"5":[2,0,3],"6":[0,4,2]}}\n'
    )


def test_rack_unaware_brokers_are_plain_ids(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "--brokers",
        "0,1,2,3,4",
        "--partitions",
        "6",
        "--replication-factor",
        "3",
        "--start-index",
        "0",
    )
    assert code == 0
    partitions = partitions_of(out)
    assert partitions["0"] == [0, 1, 2]
    assert partitions["4"] == [4, 0, 1]
    assert partitions["5"] == [0, 2, 3]


def test_output_is_one_line_with_keys_in_numeric_order(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "--brokers", "0,1,2", "--partitions", "12", "--replication-factor", "2", "--start-index", "0"
    )
    assert code == 0
    assert out.count("\n") == 1 and " " not in out
    assert list(partitions_of(out)) == [str(p) for p in range(12)]


def test_brokers_are_sorted_by_id_like_kafka_topics(capsys: pytest.CaptureFixture[str]) -> None:
    common = ("--partitions", "4", "--replication-factor", "2", "--start-index", "0")
    _, shuffled, _ = run(capsys, "--brokers", "2,0,1", *common)
    _, ordered, _ = run(capsys, "--brokers", "0,1,2", *common)
    assert shuffled == ordered
    assert partitions_of(ordered)["0"] == [0, 1]


def test_start_partition_sets_the_first_partition_id(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        *("--brokers", "0,1,2,3,4", "--partitions", "2", "--replication-factor", "3"),
        *("--start-index", "0", "--start-partition", "7"),
    )
    assert code == 0
    assert partitions_of(out) == {"7": [2, 3, 4], "8": [3, 4, 0]}


def test_seed_makes_random_start_reproducible(capsys: pytest.CaptureFixture[str]) -> None:
    args = (
        "--brokers",
        ",".join(str(i) for i in range(10)),
        "--partitions",
        "20",
        "--replication-factor",
        "3",
    )
    outputs = {run(capsys, *args, "--seed", "7")[1] for _ in range(3)}
    assert len(outputs) == 1
    leaders = {run(capsys, *args, "--seed", str(seed))[1] for seed in range(20)}
    assert len(leaders) > 1  # the seed really drives the start index


def test_disable_rack_aware_allows_mixed_racks(capsys: pytest.CaptureFixture[str]) -> None:
    common = ("--partitions", "3", "--replication-factor", "2", "--start-index", "0")
    code, mixed, err = run(capsys, "--brokers", "0:a,1,2:b", "--disable-rack-aware", *common)
    assert (code, err) == (0, "")
    _, plain, _ = run(capsys, "--brokers", "0,1,2", *common)
    assert mixed == plain


def test_rack_names_may_contain_dashes_and_dots(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        *("--brokers", "0:eu-west-1a,1:eu-west-1b,2:eu.west.1c", "--partitions", "3"),
        *("--replication-factor", "3", "--start-index", "0"),
    )
    assert code == 0
    assert all(sorted(replicas) == [0, 1, 2] for replicas in partitions_of(out).values())


BAD_INPUTS = {
    "three-part broker": ("--brokers", "a:b:c", "--partitions", "3", "--replication-factor", "1"),
    "rack with two colons": ("--brokers", "0:b:c", "--partitions", "3", "--replication-factor", "1"),
    "non-numeric broker": ("--brokers", "x", "--partitions", "3", "--replication-factor", "1"),
    "empty broker list": ("--brokers", "", "--partitions", "3", "--replication-factor", "1"),
    "empty entry": ("--brokers", "0,,1", "--partitions", "3", "--replication-factor", "1"),
    "empty rack": ("--brokers", "0:,1:a", "--partitions", "3", "--replication-factor", "1"),
    "negative broker id": ("--brokers", "-1,0", "--partitions", "3", "--replication-factor", "1"),
    "broker id beyond int": ("--brokers", "0,2147483648", "--partitions", "3", "--replication-factor", "1"),
    "duplicate broker ids": ("--brokers", "0:a,1:b,0:c", "--partitions", "3", "--replication-factor", "1"),
    "zero partitions": ("--brokers", "0,1", "--partitions", "0", "--replication-factor", "1"),
    "negative partitions": ("--brokers", "0,1", "--partitions", "-3", "--replication-factor", "1"),
    "non-numeric partitions": ("--brokers", "0,1", "--partitions", "many", "--replication-factor", "1"),
    "rf above brokers": ("--brokers", "0,1", "--partitions", "3", "--replication-factor", "3"),
    "zero rf": ("--brokers", "0,1", "--partitions", "3", "--replication-factor", "0"),
    "negative start index": (
        *("--brokers", "0,1", "--partitions", "3", "--replication-factor", "1"),
        *("--start-index", "-1"),
    ),
    "negative start partition": (
        *("--brokers", "0,1", "--partitions", "3", "--replication-factor", "1"),
        *("--start-partition", "-2"),
    ),
    "huge start index": (
        *("--brokers", "0,1", "--partitions", "3", "--replication-factor", "2"),
        *("--start-index", "2147483647"),
    ),
    "mixed racks": ("--brokers", "0:a,1,2:b", "--partitions", "3", "--replication-factor", "2"),
    "unknown flag": ("--brokers", "0,1", "--partitions", "3", "--replication-factor", "1", "--bogus"),
    "missing brokers": ("--partitions", "3", "--replication-factor", "1"),
}


@pytest.mark.parametrize("args", list(BAD_INPUTS.values()), ids=list(BAD_INPUTS))
def test_bad_input_is_one_line_on_stderr_with_exit_code_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("kzo") and "error:" in err
    assert "Traceback" not in err


def test_mixed_racks_error_suggests_disable_rack_aware(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, *BAD_INPUTS["mixed racks"])
    assert "--disable-rack-aware" in err


def test_duplicate_broker_error_names_the_id(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, *BAD_INPUTS["duplicate broker ids"])
    assert "broker id 0 is listed more than once" in err


def test_malformed_broker_error_shows_the_entry_and_the_format(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, *BAD_INPUTS["three-part broker"])
    assert "'a:b:c'" in err and "ID:RACK" in err


def _kzo_subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "operator")}
    return subprocess.run(
        [sys.executable, "-m", "kafka_zk_operator.cli.main", "assign", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    "name",
    ["three-part broker", "non-numeric broker", "duplicate broker ids", "rf above brokers", "mixed racks"],
)
def test_real_command_reports_bad_input_without_traceback(name: str) -> None:
    result = _kzo_subprocess(*BAD_INPUTS[name])
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "error:" in result.stderr


def test_real_command_prints_the_assignment() -> None:
    result = _kzo_subprocess(
        "--brokers",
        "0:r1,1:r3,2:r3,3:r2,4:r2,5:r1",
        "--partitions",
        "7",
        "--replication-factor",
        "3",
        "--start-index",
        "0",
    )
    assert result.returncode == 0, result.stderr
    assert partitions_of(result.stdout)["6"] == [0, 4, 2]
