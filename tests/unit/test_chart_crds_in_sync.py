"""The Helm chart's ``crds/`` folder holds byte-identical copies of the repository's ``crds/``.

``crds/*.yaml`` is the single source of truth; ``make sync-crds`` copies it into the chart. Helm
installs a chart's ``crds/`` on first install only, so a stale copy would ship an old schema.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "crds"
CHART_CRDS = ROOT / "charts" / "kafka-zk-operator" / "crds"


def test_chart_has_exactly_the_repository_crds() -> None:
    source = sorted(p.name for p in SOURCE.glob("*.yaml"))
    chart = sorted(p.name for p in CHART_CRDS.glob("*.yaml"))
    assert source, "no CRDs in crds/"
    assert chart == source, f"chart crds/ has {chart}, crds/ has {source}: run 'make sync-crds'"


@pytest.mark.parametrize("name", sorted(p.name for p in SOURCE.glob("*.yaml")))
def test_chart_crd_is_byte_identical_to_the_source(name: str) -> None:
    source = (SOURCE / name).read_bytes()
    copy_path = CHART_CRDS / name
    assert copy_path.exists(), f"{copy_path} is missing: run 'make sync-crds'"
    copy = copy_path.read_bytes()
    if copy != source:
        diff = "".join(
            list(
                difflib.unified_diff(
                    copy.decode().splitlines(keepends=True),
                    source.decode().splitlines(keepends=True),
                    fromfile=f"charts/kafka-zk-operator/crds/{name}",
                    tofile=f"crds/{name}",
                )
            )[:40]
        )
        pytest.fail(
            f"charts/kafka-zk-operator/crds/{name} differs from crds/{name}: run 'make sync-crds'\n{diff}"
        )
