"""One version everywhere: ``kafka_zk_operator.__version__`` is the wheel's, ``kzo --version``'s,
``/healthz``'s and ``kzo_build_info``'s, Chart.yaml's ``version``/``appVersion``, and the image
label's (the Dockerfile's build argument, checked against the wheel); ``scripts/version.py``
resolves it deterministically without tags and refuses a tag that disagrees (docs/versioning.md).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tomllib
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import cast

import prometheus_client
import pytest
import yaml

from kafka_zk_operator import __version__, metrics
from kafka_zk_operator.cli.main import main
from kafka_zk_operator.devstack.ports import free_port
from kafka_zk_operator.runtime.standby import StandbyHealth

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "kafka-zk-operator" / "Chart.yaml"


def version_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kzo_version_script", ROOT / "scripts" / "version.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_version_is_x_y_z() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__), __version__


def test_chart_version_and_app_version_are_the_package_version() -> None:
    chart = yaml.safe_load(CHART.read_text())
    assert (chart["version"], chart["appVersion"]) == (__version__, __version__), (
        f"Chart.yaml says {chart['version']}/{chart['appVersion']}, the package {__version__}: "
        f"run 'python3 scripts/version.py --set {__version__}'"
    )


def test_the_wheel_reads_its_version_from_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"], "pyproject.toml must not repeat the version"
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "kafka_zk_operator.__version__"}


def test_kzo_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"kzo {__version__}\n"


def test_build_info_metric_carries_the_version() -> None:
    assert metrics.BUILD_INFO is not None
    sample = prometheus_client.REGISTRY.get_sample_value("kzo_build_info", {"version": __version__})
    assert sample == 1.0


def test_healthz_of_the_leader_and_of_a_standby_name_the_version() -> None:
    import kafka_zk_operator.main as operator_main

    probe = cast("Callable[[], str]", operator_main.version)  # kopf types it as an activity
    assert probe() == __version__  # kopf's /healthz answers {"version": ..., ...}
    port = free_port()
    health = StandbyHealth(port, lambda: "replica-0")
    health.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            body = json.loads(response.read())
    finally:
        health.stop()
    assert body == {"role": "standby", "leader": "replica-0", "version": __version__}


def test_image_label_is_the_build_argument_checked_against_the_wheel() -> None:
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    assert 'org.opencontainers.image.version="${VERSION}"' in text
    assert 'org.opencontainers.image.licenses="Apache-2.0"' in text
    assert '"/wheels/kafka_zk_operator-${VERSION:-unset}-py3-none-any.whl"' in text, (
        "the builder must refuse a VERSION that is not the wheel's"
    )
    assert text.count("ARG VERSION\n") == 2, "builder and base stages each declare ARG VERSION"
    assert "COPY LICENSE /usr/share/doc/kafka-zk-operator/LICENSE" in text


def test_version_script_agrees_with_the_package() -> None:
    script = version_script()
    assert script.tree_version() == __version__
    assert script.chart_versions() == {"version": __version__, "appVersion": __version__}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    script = version_script()
    for relative in (script.INIT, script.CHART):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text((ROOT / relative).read_text())
    return tmp_path


def test_version_script_without_tags_or_git_is_the_tree_version(tree: Path) -> None:
    script = version_script()
    assert script.head_tags(tree) == []  # not a clone
    assert script.resolve(tree) == __version__
    with pytest.raises(script.VersionError, match=rf"git tag -a v{re.escape(__version__)}"):
        script.resolve(tree, release=True)


def test_version_script_refuses_a_tag_that_disagrees(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = version_script()
    monkeypatch.setattr(script, "head_tags", lambda root: ["v9.9.9"])
    with pytest.raises(script.VersionError, match=r"tagged v9\.9\.9 .*--set 9\.9\.9"):
        script.resolve(tree)
    monkeypatch.setattr(script, "head_tags", lambda root: [f"v{__version__}"])
    assert script.resolve(tree, release=True) == __version__


def test_version_script_sets_every_copy_and_refuses_a_stale_chart(tree: Path) -> None:
    script = version_script()
    script.set_version("12.3.4", tree)
    assert script.resolve(tree) == "12.3.4"
    chart = yaml.safe_load((tree / script.CHART).read_text())
    assert (chart["version"], chart["appVersion"]) == ("12.3.4", "12.3.4")
    init = tree / script.INIT
    init.write_text(init.read_text().replace('"12.3.4"', '"12.3.5"'))
    with pytest.raises(script.VersionError, match=r"--set 12\.3\.5"):
        script.resolve(tree)
    with pytest.raises(script.VersionError, match=r"is not X\.Y\.Z"):
        script.set_version("1.2", tree)
