"""The chart's README.md is generated from values.yaml comments (scripts/gen_chart_readme.py) and
kept in sync: every value has a row with its default and its ``# --`` description."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "kafka-zk-operator"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "kzo_gen_chart_readme", ROOT / "scripts" / "gen_chart_readme.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def leaf_paths(data: Any, prefix: str = "") -> list[str]:
    if isinstance(data, dict) and data:
        return [p for key, value in data.items() for p in leaf_paths(value, f"{prefix}{key}.")]
    return [prefix.rstrip(".")]


def test_chart_readme_is_in_sync_with_values_yaml() -> None:
    readme = CHART / "README.md"
    assert readme.exists(), "charts/kafka-zk-operator/README.md is missing: run 'make chart-readme'"
    assert readme.read_text() == generator().generate(CHART), (
        "charts/kafka-zk-operator/README.md is out of date with values.yaml: run 'make chart-readme'"
    )


def test_every_value_has_a_row_with_a_description() -> None:
    values = generator().parse_values((CHART / "values.yaml").read_text())
    keys = [v.key for v in values]
    assert len(keys) == len(set(keys)), keys
    for path in leaf_paths(yaml.safe_load((CHART / "values.yaml").read_text())):
        assert any(path == key or path.startswith(f"{key}.") for key in keys), f"{path} has no row"
    assert all(v.description for v in values), [v.key for v in values if not v.description]


def test_description_is_the_comment_block_above_the_key() -> None:
    text = (
        "# header, not a description\n\n"
        "group:\n"
        "  # -- First line\n"
        "  # --from-file=x continues it.\n"
        "  leaf: 1\n"
        "  # -- A whole map.\n"
        "  whole:\n"
        "    inner: [a]\n"
        "    # not a description\n"
        "  # -- A list.\n"
        "  items:\n"
        "    - name: a\n"
        "      zookeeper: b\n"
    )
    values = generator().parse_values(text)
    assert [(v.key, v.default, v.description) for v in values] == [
        ("group.leaf", 1, "First line --from-file=x continues it."),
        ("group.whole", {"inner": ["a"]}, "A whole map."),
        ("group.items", [{"name": "a", "zookeeper": "b"}], "A list."),
    ]


def test_a_value_without_description_is_refused_with_the_fix() -> None:
    module = generator()
    with pytest.raises(
        module.ValuesError, match=r"line 2: group\.leaf has no description: add a '# -- \.\.\.'"
    ):
        module.parse_values("group:\n  leaf: 1\n")
