"""The operator's identity constants (``domain.crd_identity``) name what ``crds/`` defines, and no
other module of the package spells the API group itself."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kafka_zk_operator.domain import crd_identity

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "operator" / "kafka_zk_operator"


@pytest.mark.parametrize(
    ("crd_file", "resource"),
    [
        ("kafkatopics.yaml", crd_identity.KAFKA_TOPIC),
        ("partitionreassignments.yaml", crd_identity.PARTITION_REASSIGNMENT),
    ],
)
def test_each_kind_is_named_as_its_crd_defines_it(
    crd_file: str, resource: crd_identity.CustomResource
) -> None:
    crd = yaml.safe_load((ROOT / "crds" / crd_file).read_text())
    assert crd["spec"]["group"] == crd_identity.GROUP
    assert crd["spec"]["names"]["kind"] == resource.kind
    assert crd["spec"]["names"]["plural"] == resource.plural
    assert crd["metadata"]["name"] == f"{resource.plural}.{crd_identity.GROUP}"
    served = [v["name"] for v in crd["spec"]["versions"] if v.get("storage")]
    assert served == [crd_identity.VERSION]


def test_the_api_group_is_spelled_in_one_module_only() -> None:
    spelled = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if crd_identity.GROUP in path.read_text(encoding="utf-8")
    )
    assert spelled == ["domain/crd_identity.py"], "import the names from domain.crd_identity instead"
