"""Unit tests for ``kzo snapshot`` and ``kzo import`` that need no cluster: flags, one-line errors
with exit code 2 (in-process and as a real subprocess), output files, progress display.

"Unreachable ZooKeeper" is a loopback port nobody listens on. A real ZooKeeper (a missing chroot,
the actual output) is exercised in ``tests/integration/test_snapshot_cli.py`` and
``tests/e2e/test_import.py``.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_zk_operator.adapters.zk.store import Versioned
from kafka_zk_operator.cli import import_cmd, snapshot_cmd, zk_reading
from kafka_zk_operator.cli import main as cli_main
from kafka_zk_operator.devstack.ports import free_port
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.documents import snapshot_export
from kafka_zk_operator.domain.model import Broker, TopicAssignment
from kafka_zk_operator.domain.reassignment.replica_views import ReassignmentView
from tests.unit.cli_support import run_kzo

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_zookeeper_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KZO_ZOOKEEPER", raising=False)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``kzo ARGS`` in-process."""
    return run_kzo(capsys, *args)


def one_error_line(err: str, command: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, f"expected exactly one line on stderr, got:\n{err}"
    assert lines[0].startswith(f"kzo {command}: error: "), lines[0]
    assert "Traceback" not in err
    return lines[0]


def dead_zookeeper() -> str:
    return f"127.0.0.1:{free_port()}"


# --- argument validation -------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["snapshot", "import"])
def test_zookeeper_is_required_without_the_environment_variable(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code, out, err = run(capsys, command)
    assert (code, out) == (2, "")
    assert "--zookeeper is required (or set KZO_ZOOKEEPER)" in one_error_line(err, command)


@pytest.mark.parametrize(
    ("connect", "message"),
    [
        ("localhost:abc", "invalid ZooKeeper connect string"),
        ("localhost:99999", "invalid ZooKeeper connect string"),
        ("a:1,,b:2", "invalid ZooKeeper connect string"),
        ("", "invalid ZooKeeper connect string"),
        ("zk:2181//kafka", "invalid chroot"),
        ("zk:2181/kafka/", "invalid chroot"),
    ],
)
@pytest.mark.parametrize("command", ["snapshot", "import"])
def test_a_malformed_connect_string_is_one_line(
    capsys: pytest.CaptureFixture[str], command: str, connect: str, message: str
) -> None:
    code, _, err = run(capsys, command, "--zookeeper", connect)
    assert code == 2
    assert message in one_error_line(err, command)


@pytest.mark.parametrize(
    "connect",
    ["zk:2181", "zk-0:2181,zk-1:2181,zk-2:2181/kafka", "10.0.0.1:2181/a/b", "[::1]:2181/kafka", "zk"],
)
def test_valid_connect_strings(connect: str) -> None:
    assert zk_reading.connect_string(connect) == connect


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--topics", "["], "invalid --topics regular expression"),
        (["--namespace", "Kafka_Topics"], "invalid namespace"),
        (["--deletion-policy", "Orphan"], "invalid choice: 'Orphan'"),
        (["-o", "a.yaml", "--output-dir", "out"], "not allowed with argument"),
        (["--connect-timeout", "0"], "expected a number of seconds greater than 0 and at most 3600"),
    ],
)
def test_import_flag_errors(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, _, err = run(capsys, "import", "--zookeeper", "zk:2181", *args)
    assert code == 2
    assert message in one_error_line(err, "import")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--broker-rack", "4"], "expected ID:RACK"),
        (["--broker-rack", "x:rack"], "expected ID:RACK"),
        (["--reassigning", "current"], "invalid choice: 'current'"),
    ],
)
def test_snapshot_flag_errors(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, _, err = run(capsys, "snapshot", "--zookeeper", "zk:2181", *args)
    assert code == 2
    assert message in one_error_line(err, "snapshot")


@pytest.mark.parametrize("command", ["snapshot", "import"])
@pytest.mark.parametrize("value", ["0", "-1", "0.0", "3600.5", "abc", "nan", "inf"])
def test_connect_timeout_refusals_say_what_is_accepted(
    capsys: pytest.CaptureFixture[str], command: str, value: str
) -> None:
    code, _, err = run(capsys, command, "--zookeeper", "zk:2181", "--connect-timeout", value)
    assert code == 2
    assert one_error_line(err, command) == (
        f"kzo {command}: error: argument --connect-timeout: expected a number of seconds greater than 0 "
        f"and at most 3600, got {value!r} (see 'kzo {command} --help')"
    )


@pytest.mark.parametrize("value", ["0.001", "1", "3600"])
def test_connect_timeout_accepts_what_its_message_says(value: str) -> None:
    for command in ("snapshot", "import"):
        args = cli_main.build_parser().parse_args([command, "--connect-timeout", value])
        assert args.connect_timeout == float(value)


# --- runtime errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["snapshot", "import"])
def test_an_unreachable_zookeeper_is_one_line_with_exit_2(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    connect = dead_zookeeper()
    code, out, err = run(capsys, command, "--zookeeper", connect, "--connect-timeout", "1")
    assert (code, out) == (2, "")
    line = one_error_line(err, command)
    assert f"cannot connect to ZooKeeper at {connect} within 1 s" in line


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("{tmp}/missing-dir/cluster.json", "missing-dir does not exist"),
        ("{tmp}/a-file/cluster.json", "a-file is not a directory"),
        ("{tmp}", "it is a directory"),
    ],
)
@pytest.mark.parametrize("command", ["snapshot", "import"])
def test_an_unwritable_output_fails_before_connecting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, output: str, message: str
) -> None:
    (tmp_path / "a-file").write_text("x")
    # A connect timeout this long would show if the command tried ZooKeeper first.
    code, _, err = run(
        capsys,
        command,
        "--zookeeper",
        dead_zookeeper(),
        "--connect-timeout",
        "600",
        "-o",
        output.format(tmp=tmp_path),
    )
    assert code == 2
    line = one_error_line(err, command)
    assert "cannot write" in line and message in line


def test_an_output_dir_that_is_a_file_fails_before_connecting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for target, message in (
        (blocker, "exists and is not a directory"),
        (blocker / "sub", "is not a directory"),
    ):
        code, _, err = run(
            capsys,
            "import",
            "--zookeeper",
            dead_zookeeper(),
            "--connect-timeout",
            "600",
            "--output-dir",
            str(target),
        )
        assert code == 2
        assert message in one_error_line(err, "import")


def test_a_bad_source_date_epoch_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    code, _, err = run(capsys, "import", "--zookeeper", dead_zookeeper())
    assert code == 2
    assert "SOURCE_DATE_EPOCH" in one_error_line(err, "import")


@pytest.mark.parametrize(
    "args",
    [
        ["snapshot", "--connect-timeout", "1"],
        ["import", "--connect-timeout", "1", "--namespace", "kafka"],
    ],
)
def test_real_subprocess_prints_one_line_and_exits_2(args: list[str], tmp_path: Path) -> None:
    """The installed entry point, as users run it: no traceback, no kazoo log lines."""
    env = {k: v for k, v in os.environ.items() if k not in ("KZO_ZOOKEEPER", "SOURCE_DATE_EPOCH")}
    env["PYTHONPATH"] = str(REPO / "operator")
    connect = dead_zookeeper()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafka_zk_operator",
            *args,
            "--zookeeper",
            connect,
            "-o",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    line = one_error_line(result.stderr, args[0])
    assert f"cannot connect to ZooKeeper at {connect}" in line
    assert not (tmp_path / "out").exists(), "nothing is written on failure"


def test_real_subprocess_unwritable_output() -> None:
    env = {k: v for k, v in os.environ.items() if k != "KZO_ZOOKEEPER"}
    env["PYTHONPATH"] = str(REPO / "operator")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafka_zk_operator",
            "snapshot",
            "--zookeeper",
            "zk:2181",
            "-o",
            "/dev/null/x.json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert one_error_line(result.stderr, "snapshot") == (
        "kzo snapshot: error: cannot write /dev/null/x.json: /dev/null is not a directory"
    )


# --- output and progress helpers ------------------------------------------------------------------


def test_write_output_replaces_a_file_atomically_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "cluster.json"
    target.write_text("old")
    zk_reading.write_output(str(target), "new\n")
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cluster.json"]


def test_write_output_dash_is_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    zk_reading.write_output("-", "{}\n")
    assert capsys.readouterr().out == "{}\n"


def test_file_names_stay_short_and_unique() -> None:
    assert import_cmd.file_name("orders") == "orders.yaml"
    long_a, long_b = "a" * 253, "a" * 252 + "b"
    names = {import_cmd.file_name(long_a), import_cmd.file_name(long_b)}
    assert len(names) == 2 and all(len(n) <= 255 for n in names)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_redraws_in_place_on_a_terminal_and_erases_itself() -> None:
    stream = _Terminal()
    progress = zk_reading.Progress("reading topics", 3, stream, interval_s=0)
    for _ in range(3):
        progress.advance()
    progress.finish()
    text = stream.getvalue()
    assert "\rreading topics 1/3 (33%)" in text and "\rreading topics 3/3 (100%)" in text
    assert "\n" not in text and text.endswith("\r")


def test_progress_is_silent_when_stderr_is_not_a_terminal() -> None:
    stream = io.StringIO()
    progress = zk_reading.Progress("reading topics", 2, stream)
    progress.advance(2)
    progress.finish()
    assert stream.getvalue() == ""


def test_read_each_keeps_the_input_order_and_counts() -> None:
    stream = _Terminal()
    progress = zk_reading.Progress("n", 50, stream, interval_s=0)
    assert zk_reading.read_each(list(range(50)), lambda n: n * n, progress, workers=8) == [
        n * n for n in range(50)
    ]
    assert progress.done == 50


def test_snapshot_notes_name_what_the_user_should_know() -> None:

    moving = TopicAssignment(
        partitions={0: (3, 1, 4, 2)}, adding_replicas={0: (4,)}, removing_replicas={0: (2,)}
    )
    topics = [
        snapshot_export.TopicInput("moving", moving),
        snapshot_export.TopicInput("uneven", TopicAssignment(partitions={0: (1, 2), 1: (1,)})),
        snapshot_export.TopicInput("on-a-dead-broker", TopicAssignment(partitions={0: (1, 4)})),
    ]
    found = snapshot_cmd.ClusterRead(topics, ["__consumer_offsets"], ["old"], ["bad: malformed"])
    built = snapshot_export.build(
        [Broker(1, "a"), Broker(2, "b"), Broker(3, "c")], topics, view=ReassignmentView.ORIGINAL
    )
    notes = snapshot_cmd._notes(found, built, ReassignmentView.ORIGINAL)
    text = "\n".join(notes)
    assert "1 partition(s) of 1 topic(s) are being reassigned; their original replicas are written" in text
    assert "does not keep the original list exactly" in text
    assert "brokers 4 hold replicas but are not registered" in text
    assert "--broker-rack ID:RACK" in text, "broker 4 has no rack while the others have one"
    assert "1 topic (uneven) mix replication factors" in text
    assert "left out 1 Kafka-internal topic (__consumer_offsets); use --with-internal" in text
    assert "left out 1 topic queued for deletion (old)" in text
    assert "warning: left out bad: malformed" in text


class _FakeStore:
    """The read methods the two commands call, over in-memory data (no ZooKeeper)."""

    def __init__(self) -> None:

        self.assignments = {
            "__consumer_offsets": TopicAssignment(partitions={0: (1,)}),
            "orders": TopicAssignment(partitions={0: (1, 2), 1: (2, 1)}),
            "going": TopicAssignment(partitions={0: (1,)}),
            "broken": None,  # malformed znode
            "vanished": None,  # deleted between listing and reading
        }

    def topic_names(self) -> list[str]:
        return sorted(self.assignments)

    def topics_marked_for_deletion(self) -> list[str]:
        return ["going"]

    def pending_reassignment(self) -> object:
        raise errors.MalformedZnode("/admin/reassign_partitions", "is not valid JSON")

    def read_assignment(self, name: str) -> object:
        if name == "broken":
            raise errors.MalformedZnode(f"/brokers/topics/{name}", "is not valid JSON")
        value = self.assignments[name]
        return None if value is None else Versioned(value, 0)

    def read_topic_config(self, name: str) -> object:
        return Versioned({"retention.ms": "1000"}, 0)


def test_reading_skips_internal_deleting_broken_and_vanished_topics() -> None:

    store: Any = _FakeStore()
    found = snapshot_cmd.read_cluster(store, with_internal=False, progress=None)
    assert [t.name for t in found.topics] == ["orders"]
    assert found.internal_skipped == ["__consumer_offsets"] and found.deleting_skipped == ["going"]
    assert len(found.unreadable) == 1 and found.unreadable[0].startswith("broken: ")
    assert len(found.warnings) == 1 and "ignoring /admin/reassign_partitions" in found.warnings[0]
    with_internal = snapshot_cmd.read_cluster(store, with_internal=True, progress=None)
    assert [t.name for t in with_internal.topics] == ["__consumer_offsets", "orders"]

    selection = import_cmd.select_topics(store.topic_names(), {"going"}, pattern=None, with_internal=False)
    assert selection.wanted == ["broken", "orders", "vanished"]
    topics, unreadable, warnings = import_cmd.read_topics(store, selection, None)
    assert [(t.name, dict(t.config)) for t in topics] == [("orders", {"retention.ms": "1000"})]
    assert len(unreadable) == 1 and len(warnings) == 1


def test_topics_regex_matches_whole_names() -> None:

    names = ["orders", "orders.v2", "old-orders", "__consumer_offsets"]
    pick = import_cmd.select_topics(names, set(), pattern=re.compile(r"orders.*"), with_internal=False)
    assert pick.wanted == ["orders", "orders.v2"]
    internal = import_cmd.select_topics(names, set(), pattern=re.compile(r"__.*"), with_internal=True)
    assert internal.wanted == ["__consumer_offsets"] and internal.internal == []


# --- kzo snapshot --sizes-from-cluster: checked before anything is read ---------------------------


def _clusters_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: list[dict[str, object]]) -> None:
    path = tmp_path / "clusters.yaml"
    path.write_text(json.dumps({"clusters": entries}))
    monkeypatch.setenv("KZO_CLUSTERS_FILE", str(path))
    monkeypatch.delenv("KZO_ZOOKEEPER", raising=False)


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (
            [{"name": "main", "zookeeper": "127.0.0.1:1", "bootstrapServers": "127.0.0.1:2"}],
            "kzo snapshot: error: --sizes-from-cluster 'other': the operator's settings have no such "
            "cluster (they have 'main'; the clusters file is KZO_CLUSTERS_FILE)\n",
        ),
        (
            [{"name": "other", "zookeeper": "127.0.0.1:1"}],
            "kzo snapshot: error: --sizes-from-cluster 'other': that cluster has no bootstrapServers in "
            "the clusters file; add them (clusters[].bootstrapServers) or use --sizes-from-bootstrap HOST:PORT\n",
        ),
    ],
)
def test_sizes_from_a_cluster_the_settings_do_not_serve_is_one_line_before_zookeeper_is_read(
    entries: list[dict[str, object]],
    expected: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _clusters_file(tmp_path, monkeypatch, entries)
    # 127.0.0.1:1 answers nothing: an error about the cluster comes before any connection
    argv = [
        "snapshot",
        "--zookeeper",
        "127.0.0.1:1",
        "--connect-timeout",
        "1",
        "--sizes-from-cluster",
        "other",
    ]
    assert cli_main.main(argv) == 2
    assert capsys.readouterr().err == expected


def test_the_two_sources_of_sizes_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["snapshot", "--zookeeper", "h:1", "--sizes-from-bootstrap", "h:2", "--sizes-from-cluster", "a"]
    with pytest.raises(SystemExit) as raised:
        cli_main.main(argv)
    assert raised.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
