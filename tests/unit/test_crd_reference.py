"""docs/crd-reference.md is generated from crds/ and must be up to date."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_crd_reference_is_generated_from_the_current_crds() -> None:
    spec = importlib.util.spec_from_file_location("gen_crd_docs", ROOT / "scripts" / "gen_crd_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.render()
    actual = (ROOT / "docs" / "crd-reference.md").read_text()
    assert actual == expected, "docs/crd-reference.md is stale: run .venv/bin/python scripts/gen_crd_docs.py"
    assert "## KafkaTopic" in actual and "## PartitionReassignment" in actual
