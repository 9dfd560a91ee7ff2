"""The command table in README.md ("The `kzo` command"): every example parses, and those that need
no running stack (``kzo assign``, ``kzo plan`` on a snapshot written here) run as written."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from kafka_zk_operator.cli import main as cli
from kafka_zk_operator.domain.documents.snapshot import arrays_to_snapshot
from kafka_zk_operator.domain.placement.synthetic import synthetic_cluster

REPO = Path(__file__).resolve().parents[2]
#: Placeholders of the table and the values the tests put in.
PLACEHOLDERS = {
    "N": "6",
    "R": "3",
    "PATH": "examples",
    "HOST:PORT/CHROOT": "zk-0:2181/kafka",
    "component": "zookeeper",
    "...": "get pods",
}


def _table_commands() -> list[str]:
    """The first cell of every row of the README's kzo table, as written (``\\|`` kept)."""
    text = (REPO / "README.md").read_text()
    section = text.split("## The `kzo` command", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(kzo [^`]+)` \|", section, flags=re.MULTILINE)


def _argv(command: str, *, optional: bool = True) -> list[list[str]]:
    """The argument lists a table cell stands for: alternatives split (``kzo dev down \\| status``),
    optional ``[...]`` groups kept (or dropped), placeholders filled in."""
    if not optional:
        command = re.sub(r"\s*\[[^\]]*\]", "", command)
    alternatives = [part.strip() for part in command.split("\\|")]
    first = shlex.split(alternatives[0].replace("[", "").replace("]", ""))
    prefix = first[:-1]
    argvs = []
    for i, part in enumerate(alternatives):
        words = shlex.split(part.replace("[", "").replace("]", ""))
        words = words if i == 0 else [*prefix, *words]
        filled: list[str] = []
        for word in words[1:]:  # without "kzo"
            filled += PLACEHOLDERS.get(word, word).split()
        argvs.append(filled)
    return argvs


def _only(prefix: str) -> str:
    (command,) = [c for c in _table_commands() if c.startswith(prefix)]
    return command


def test_the_table_is_found() -> None:
    commands = _table_commands()
    assert len(commands) >= 8
    for name in ("dev up", "dev prepare", "assign", "snapshot", "plan", "import", "operator"):
        assert any(c.startswith(f"kzo {name}") for c in commands), name


@pytest.mark.parametrize("command", _table_commands())
def test_every_example_parses(command: str) -> None:
    parser = cli.build_parser()
    for argv in _argv(command):
        args = parser.parse_args(argv)
        assert callable(args.func), argv


def test_the_assign_example_runs_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    (argv,) = _argv(_only("kzo assign"))
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    partitions = json.loads(captured.out)["partitions"]
    assert sorted(partitions, key=int) == [str(p) for p in range(6)]
    assert all(len(set(replicas)) == 3 for replicas in partitions.values())


@pytest.mark.parametrize("optional", [False, True], ids=["as written", "with --plot"])
def test_the_plan_example_runs_on_a_snapshot_with_the_new_brokers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], optional: bool
) -> None:
    """Brokers 7 and 8 registered (so ``kzo snapshot`` lists them, without replicas)."""
    document = arrays_to_snapshot(synthetic_cluster(7, 3, 210, seed=1, layout="kafka"), with_sizes=False)
    brokers = document["brokers"]
    assert isinstance(brokers, dict)
    brokers["7"], brokers["8"] = {"rack": "rack-b"}, {"rack": "rack-c"}
    (tmp_path / "cluster.json").write_text(json.dumps(document))
    monkeypatch.chdir(tmp_path)
    (argv,) = _argv(_only("kzo plan"), optional=optional)
    if optional:  # the Spark engine needs Java: tests/integration/test_spark_plan.py runs it
        at = argv.index("--engine")
        del argv[at : at + 2]
    assert cli.main(argv) == 0, capsys.readouterr().err
    moved = json.loads((tmp_path / "plan.json").read_text())["partitions"]
    assert any({7, 8} & set(entry["replicas"]) for entry in moved)
    assert (tmp_path / "p.png").exists() == optional
