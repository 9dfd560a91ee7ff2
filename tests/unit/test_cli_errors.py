"""Every ``kzo`` subcommand answers bad input with one stderr line and exit code 2, no traceback."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_zk_operator.cli import main as cli


def _subcommands() -> list[str]:
    parser = cli.build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(actions[0].choices)


def test_every_documented_subcommand_is_registered() -> None:
    assert {"assign", "dev", "operator"} <= set(_subcommands())


@pytest.mark.parametrize("command", _subcommands())
def test_an_unknown_flag_is_one_line_and_exit_code_2(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main([command, "--no-such-flag"])
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


#: What each subcommand needs besides the unknown flag, so that only the unknown flag is wrong.
REQUIRED = {
    "kzo assign": ["--brokers", "0", "--partitions", "1", "--replication-factor", "1"],
    "kzo plan": ["--snapshot", "cluster.json", "--mode", "rebalance", "-o", "-"],
}


def _every_subcommand() -> list[tuple[str, list[str]]]:
    """``(prog, argv)`` for every subcommand at every depth (``kzo dev`` and ``kzo dev up`` too),
    argv with an unknown flag in the subcommand's own arguments."""
    found: list[tuple[str, list[str]]] = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
                    if nested:  # the flag goes before the action: it is this parser's argument
                        found.append(
                            (sub.prog, [*path, name, "--no-such-flag", next(iter(nested[0].choices))])
                        )
                    else:
                        found.append((sub.prog, [*path, name, *REQUIRED.get(sub.prog, []), "--no-such-flag"]))
                    walk(sub, [*path, name])

    walk(cli.build_parser(), [])
    return found


@pytest.mark.parametrize(("prog", "argv"), _every_subcommand(), ids=[prog for prog, _ in _every_subcommand()])
def test_an_unknown_flag_is_reported_by_its_subcommand(
    prog: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main(argv)
    assert raised.value.code == 2
    assert capsys.readouterr().err == (
        f"{prog}: error: unrecognized arguments: --no-such-flag (see '{prog} --help')\n"
    )


def test_subcommands_at_every_depth_are_covered() -> None:
    progs = {prog for prog, _ in _every_subcommand()}
    assert {"kzo snapshot", "kzo plan", "kzo import", "kzo assign", "kzo operator", "kzo dev"} <= progs
    assert {"kzo dev up", "kzo dev logs", "kzo dev kubectl"} <= progs


def test_an_unknown_flag_before_the_subcommand_is_the_top_level_parsers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main(["--no-such-flag", "snapshot"])
    assert raised.value.code == 2
    assert (
        capsys.readouterr().err == "kzo: error: unrecognized arguments: --no-such-flag (see 'kzo --help')\n"
    )


def test_a_stray_positional_argument_is_reported_by_its_subcommand(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main(["snapshot", "--zookeeper", "zk:2181", "extra"])
    assert raised.value.code == 2
    assert capsys.readouterr().err == (
        "kzo snapshot: error: unrecognized arguments: extra (see 'kzo snapshot --help')\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["dev", "up", "--brokers", "0"],
        ["dev", "up", "--base-port", "99999"],
        ["dev", "up", "--kafka-version", "9.9.9"],
        ["dev", "prepare", "--kafka-versions", "1.2.3"],
        ["dev", "status", "--state-dir", "/nonexistent/kzo-state"],
        ["dev", "kubectl", "--state-dir", "/nonexistent/kzo-state", "get", "pods"],
    ],
)
def test_dev_refuses_impossible_parameters(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = cli.main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "error" in err, err


def test_operator_without_a_cluster_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-m", "kafka_zk_operator.cli.main", "operator"],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "kzo operator: error: no Kafka cluster configured: set KZO_CLUSTERS_FILE or KZO_ZOOKEEPER"
    ]


def test_the_operator_logs_json_in_a_pod_and_plain_text_elsewhere() -> None:
    from kafka_zk_operator.cli.operator_cmd import default_log_format

    assert default_log_format({"KUBERNETES_SERVICE_HOST": "10.0.0.1"}) == "json"
    assert default_log_format({}) == "plain"
    assert default_log_format({"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KZO_LOG_FORMAT": "plain"}) == "plain"


def _stack_with_a_log(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "zookeeper.log"
    log.write_text("".join(f"line {i}\n" for i in range(1, 6)))
    state = {"spec": {}, "zk_port": 2181, "chroot": "", "brokers": [], "logs": {"zookeeper": str(log)}}
    (tmp_path / "stack.json").write_text(json.dumps(state))
    return tmp_path, log


@pytest.mark.parametrize(("lines", "shown"), [("0", ""), ("2", "line 4\nline 5\n"), ("9", None)])
def test_dev_logs_prints_the_last_n_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: str, shown: str | None
) -> None:
    state_dir, log = _stack_with_a_log(tmp_path)
    assert cli.main(["dev", "logs", "--state-dir", str(state_dir), "zookeeper", "-n", lines]) == 0
    assert capsys.readouterr().out == (log.read_text() if shown is None else shown)


@pytest.mark.parametrize("lines", ["-1", "x", "1.5"])
def test_dev_logs_refuses_a_line_count_that_is_not_a_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: str
) -> None:
    state_dir, _ = _stack_with_a_log(tmp_path)
    with pytest.raises(SystemExit) as raised:
        cli.main(["dev", "logs", "--state-dir", str(state_dir), "zookeeper", "-n", lines])
    assert raised.value.code == 2
    assert capsys.readouterr().err == (
        f"kzo dev logs: error: argument -n/--lines: expected a non-negative number of lines, got {lines!r} "
        "(see 'kzo dev logs --help')\n"
    )
