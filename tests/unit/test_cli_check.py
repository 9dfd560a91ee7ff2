"""``kzo check``'s own input errors (the checks themselves run against the real stack in
tests/integration/test_check_cli.py): one line, exit code 2, before anything connects."""

from __future__ import annotations

import pytest

from kafka_zk_operator.cli import main as cli


def test_no_cluster_configured_is_one_line_and_exit_code_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("KZO_CLUSTERS_FILE", "KZO_ZOOKEEPER"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main(["check", "--no-api"]) == 2
    assert (
        capsys.readouterr().err
        == "kzo check: error: no Kafka cluster configured: set KZO_CLUSTERS_FILE or KZO_ZOOKEEPER\n"
    )


@pytest.mark.parametrize("timeout", ["0", "-1", "601", "soon"])
def test_a_timeout_out_of_range_is_refused(timeout: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        cli.main(["check", "--timeout", timeout])
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert "expected seconds greater than 0 and at most 600" in err and len(err.splitlines()) == 1, err
