"""``kzo ... --help`` and the documents agree: the files the help names exist and say what it promises."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_zk_operator.cli import main as cli

REPO = Path(__file__).resolve().parents[2]
#: A repository document named in a help text.
DOCUMENT = re.compile(r"\b(?:docs/[\w.-]+\.md|README\.md)\b")


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def _texts(parser: argparse.ArgumentParser) -> str:
    texts = [parser.description or "", parser.epilog or ""]
    texts += [action.help or "" for action in parser._actions]
    return "\n".join(texts)


def test_every_document_a_help_text_names_exists() -> None:
    named = {
        (parser.prog, name)
        for parser in _parsers(cli.build_parser())
        for name in DOCUMENT.findall(_texts(parser))
    }
    assert named, "no help text names a document (the pattern is broken)"
    missing = sorted((prog, name) for prog, name in named if not (REPO / name).is_file())
    assert missing == []


def test_the_operator_help_points_to_where_its_settings_are_documented() -> None:
    (operator,) = [p for p in _parsers(cli.build_parser()) if p.prog == "kzo operator"]
    documents = DOCUMENT.findall(_texts(operator))
    assert documents
    # every setting the operator reads is described in one of them (README's "Configuration")
    text = "\n".join((REPO / name).read_text() for name in documents if (REPO / name).is_file())
    for variable in ("KZO_ZOOKEEPER", "KZO_CLUSTERS_FILE", "KZO_NAMESPACES", "KZO_RESYNC_SECONDS"):
        assert variable in text, variable


def _plan_synopses(document: str) -> list[str]:
    """The ``kzo plan`` synopsis blocks of a document (fenced blocks starting ``kzo plan --snapshot``)."""
    blocks = re.findall(r"```\n(kzo plan --snapshot .*?)```", (REPO / document).read_text(), flags=re.DOTALL)
    return [str(block) for block in blocks]


@pytest.mark.parametrize("document", ["docs/cli.md", "docs/placement.md"])
def test_the_plan_synopses_list_every_flag_of_kzo_plan_help(document: str) -> None:
    (plan,) = [p for p in _parsers(cli.build_parser()) if p.prog == "kzo plan"]
    synopses = _plan_synopses(document)
    assert len(synopses) == 1, synopses
    synopsis = synopses[0]
    written = set(re.findall(r"(?<![\w-])--?[a-z][a-z-]*", synopsis))
    for action in plan._actions:
        if "--help" in action.option_strings:
            continue
        assert written & set(action.option_strings), f"{document}: {action.option_strings} missing"
        if action.choices is not None and action.dest != "command":
            assert "|".join(map(str, action.choices)) in synopsis, f"{document}: choices of {action.dest}"
    known = {flag for action in plan._actions for flag in action.option_strings}
    assert written <= known, f"{document}: flags kzo plan does not have: {written - known}"
