"""Generate docs/crd-reference.md from the CRD schemas in crds/ (the single source of truth).

Run: .venv/bin/python scripts/gen_crd_docs.py   (tests/unit/test_crd_reference.py fails when stale)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "crd-reference.md"


def _type(schema: dict[str, Any]) -> str:
    kind = str(schema.get("type", "object" if "properties" in schema else "any"))
    if kind == "array":
        return f"[]{_type(schema.get('items', {}))}"
    if (
        kind == "object"
        and "additionalProperties" in schema
        and isinstance(schema["additionalProperties"], dict)
    ):
        return f"map[string]{_type(schema['additionalProperties'])}"
    if schema.get("format"):
        kind += f" ({schema['format']})"
    return kind


def _constraints(schema: dict[str, Any]) -> str:
    parts = []
    for key, label in (
        ("enum", "one of"), ("default", "default"), ("minimum", "≥"), ("maximum", "≤"),
        ("minLength", "min length"), ("maxLength", "max length"), ("maxItems", "max items"),
        ("pattern", "pattern"),
    ):  # fmt: skip
        if key in schema:
            value = schema[key]
            shown = ", ".join(f"`{v}`" for v in value) if isinstance(value, list) else f"`{value}`"
            parts.append(f"{label} {shown}")
    for rule in schema.get("x-kubernetes-validations", []) or []:
        parts.append(f"rule: {rule.get('message') or rule.get('rule')}")
    return "; ".join(parts)


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def _walk(
    schema: dict[str, Any], prefix: str, rows: list[tuple[str, str, str, str]], required: set[str]
) -> None:
    for name, sub in (schema.get("properties") or {}).items():
        path = f"{prefix}.{name}" if prefix else name
        req = " (required)" if name in required else ""
        rows.append(
            (f"`{path}`{req}", _type(sub), _one_line(sub.get("description")), _one_line(_constraints(sub)))
        )
        if sub.get("type") == "object" or "properties" in sub:
            _walk(sub, path, rows, set(sub.get("required", [])))
        elif sub.get("type") == "array" and "properties" in (sub.get("items") or {}):
            _walk(sub["items"], path + "[]", rows, set(sub["items"].get("required", [])))


def render() -> str:
    out = [
        "# CRD reference",
        "",
        "Generated from `crds/*.yaml` by `scripts/gen_crd_docs.py`; do not edit by hand.",
        "",
    ]
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        names = crd["spec"]["names"]
        for version in crd["spec"]["versions"]:
            schema = version["schema"]["openAPIV3Schema"]
            out += [
                f"## {names['kind']} (`{crd['spec']['group']}/{version['name']}`)",
                "",
                f"Plural `{names['plural']}`, short names {', '.join(f'`{s}`' for s in names.get('shortNames', []))}, "
                f"categories {', '.join(f'`{c}`' for c in names.get('categories', []))}, "
                f"scope {crd['spec']['scope']}; fully qualified `{crd['metadata']['name']}`.",
                "",
                _one_line(schema.get("description")),
                "",
            ]
            for rule in schema.get("x-kubernetes-validations", []) or []:
                out.append(f"- Validation: {_one_line(rule.get('message') or rule.get('rule'))}")
            out.append("")
            columns = version.get("additionalPrinterColumns", [])
            if columns:
                out += [
                    "Printer columns: " + ", ".join(f"{c['name']} (`{c['jsonPath']}`)" for c in columns),
                    "",
                ]
            for section in ("spec", "status"):
                sub = schema["properties"].get(section)
                if not sub:
                    continue
                rows: list[tuple[str, str, str, str]] = []
                _walk(sub, section, rows, set(sub.get("required", [])))
                out += [
                    f"### {section}",
                    "",
                    "| field | type | description | constraints |",
                    "|---|---|---|---|",
                ]
                out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
                out.append("")
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    OUT.write_text(render())
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
