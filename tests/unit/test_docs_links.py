"""The documents' relative links resolve: every ``[text](path#anchor)`` in README.md and docs/*.md names
a file of the repository and, when it has an anchor, a heading of that file (GitHub's slug rules)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
#: ``[text](target)``, the target without a title; images too (``![alt](target)``).
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks (a link in a code block is not a link)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return "\n".join(lines)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link keeps its text
    text = text.lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, with GitHub's ``-1``, ``-2`` suffixes for repeats."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in _prose(path.read_text()).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def _links(document: Path) -> list[str]:
    return LINK.findall(_prose(document.read_text()))


def test_the_slug_follows_githubs_rules() -> None:
    assert slug("Kerberos (SASL/GSSAPI)") == "kerberos-saslgssapi"
    assert slug("A real node: `helm install` on this machine") == "a-real-node-helm-install-on-this-machine"
    assert slug("6.3 Byte balance, measured") == "63-byte-balance-measured"
    assert slug("`--balance`") == "--balance"


def test_the_documents_have_links() -> None:
    assert DOCUMENTS and sum(len(_links(document)) for document in DOCUMENTS) > 50


@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(d.relative_to(REPO)) for d in DOCUMENTS])
def test_every_relative_link_resolves(document: Path) -> None:
    broken = []
    for target in _links(document):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path_part, _, anchor = target.partition("#")
        path = (document.parent / path_part).resolve() if path_part else document
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading with anchor #{anchor} in {path.relative_to(REPO)}")
    assert broken == [], f"{document.relative_to(REPO)}: " + "; ".join(broken)
