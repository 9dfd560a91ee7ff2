"""Helper for the unit tests of the ``kzo`` CLI: run it in-process and capture what it printed."""

from __future__ import annotations

import pytest

from kafka_zk_operator.cli import main as cli_main


def run_kzo(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``kzo ARGS`` in-process: (exit code, stdout, stderr); argparse errors exit via ``SystemExit``."""
    try:
        code = cli_main.main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err
