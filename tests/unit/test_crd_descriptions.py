"""Every field of both CRDs has a description, which is what ``kubectl explain`` shows for it.

A field is every named property at any depth: ``.spec``, ``.status.phase``, the fields of list
items (``.status.conditions[].reason``) and of map values. The item and map-value schemas
themselves need none: ``kubectl explain`` shows the description of the field that holds them.
``apiVersion``, ``kind`` and ``metadata`` are the exception: the API server publishes its own
descriptions for them (one of ours on apiVersion or kind is not shown), and refuses a CRD whose
schema says anything about metadata but its type.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.test_crds import Schema, load_crd, root_schema

CRD_FILES = ("kafkatopics.yaml", "partitionreassignments.yaml")
#: Described by the API server itself, whatever the CRD says.
SERVER_DESCRIBED = {".apiVersion", ".kind", ".metadata"}


def fields(schema: Schema, path: str = "") -> Iterator[tuple[str, Schema]]:
    """``(path, schema)`` of every named property below ``schema``."""
    for name, child in (schema.get("properties") or {}).items():
        child_path = f"{path}.{name}"
        yield child_path, child
        yield from fields(child, child_path)
        if isinstance(child.get("items"), dict):
            yield from fields(child["items"], f"{child_path}[]")
        if isinstance(child.get("additionalProperties"), dict):
            yield from fields(child["additionalProperties"], f"{child_path}[*]")


@pytest.mark.parametrize("crd_file", CRD_FILES)
def test_every_field_has_a_description(crd_file: str) -> None:
    schema = root_schema(load_crd(crd_file))
    assert (schema.get("description") or "").strip(), f"{crd_file}: the resource itself has no description"
    missing = [
        path
        for path, node in fields(schema)
        if path not in SERVER_DESCRIBED and not str(node.get("description") or "").strip()
    ]
    assert not missing, (
        f"{crd_file}: fields without a description (kubectl explain shows none):\n" + "\n".join(missing)
    )


@pytest.mark.parametrize("crd_file", CRD_FILES)
def test_metadata_is_left_to_the_api_server(crd_file: str) -> None:
    """A description there makes the API server refuse the CRD ("must not specify anything other
    than name and generateName, but metadata is implicitly specified")."""
    assert root_schema(load_crd(crd_file))["properties"]["metadata"] == {"type": "object"}


@pytest.mark.parametrize("crd_file", CRD_FILES)
def test_the_walk_reaches_nested_item_fields(crd_file: str) -> None:
    """The check above would pass vacuously if it missed the fields of list items."""
    paths = {path for path, _ in fields(root_schema(load_crd(crd_file)))}
    assert {
        ".spec",
        ".status",
        ".status.conditions[].reason",
        ".status.conditions[].lastTransitionTime",
    } <= paths


def test_a_field_without_a_description_is_named() -> None:
    schema: Schema = {
        "description": "x",
        "properties": {
            "status": {
                "description": "s",
                "properties": {"items": {"description": "i", "items": {"properties": {"id": {}}}}},
            }
        },
    }
    assert [path for path, node in fields(schema) if not node.get("description")] == [".status.items[].id"]
