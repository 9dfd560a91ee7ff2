#!/usr/bin/env python3
"""Print the project's version, check it against the git tag, or set it (docs/versioning.md).

The version has one home, ``__version__`` in ``operator/kafka_zk_operator/__init__.py``; the wheel
reads it (pyproject.toml), and Chart.yaml's ``version``/``appVersion`` carry copies this script
writes and tests/unit/test_version.py checks. A release is the commit tagged ``v<version>``.

    python3 scripts/version.py             the version; fails if Chart.yaml or a v* tag on HEAD differs
    python3 scripts/version.py --release   the same, and fails unless HEAD is tagged v<version>
    python3 scripts/version.py --set 0.2.0 write 0.2.0 into __init__.py and Chart.yaml

Without git, outside a clone, in a shallow clone or one without tags, the version is the tree's:
a build never depends on the history it happens to have. Standard library only.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INIT = Path("operator/kafka_zk_operator/__init__.py")
CHART = Path("charts/kafka-zk-operator/Chart.yaml")
#: X.Y.Z: both a PEP 440 version (the wheel) and a SemVer 2 one (Helm), spelled the same.
VERSION_RE = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
_INIT_LINE = re.compile(r'^__version__ = "([^"]*)"$', re.MULTILINE)
_CHART_LINES = {
    "version": re.compile(r"^version: *(\S*)$", re.MULTILINE),
    "appVersion": re.compile(r"^appVersion: *\"?([^\"\s]*)\"?$", re.MULTILINE),
}


class VersionError(Exception):
    """What is wrong and how to fix it (printed as one line)."""


def tree_version(root: Path = ROOT) -> str:
    match = _INIT_LINE.search((root / INIT).read_text())
    if not match:
        raise VersionError(f'{INIT} has no line __version__ = "X.Y.Z"')
    return match.group(1)


def chart_versions(root: Path = ROOT) -> dict[str, str]:
    """Chart.yaml's ``version`` and ``appVersion`` (``""`` when missing)."""
    text = (root / CHART).read_text()
    return {key: (m.group(1) if (m := line.search(text)) else "") for key, line in _CHART_LINES.items()}


def head_tags(root: Path = ROOT) -> list[str]:
    """The ``v*`` tags on HEAD; none without git, outside a clone, or with no such tag."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "tag", "--points-at", "HEAD", "--list", "v[0-9]*"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except OSError:
        return []
    return proc.stdout.split() if proc.returncode == 0 else []


def resolve(root: Path = ROOT, release: bool = False) -> str:
    version = tree_version(root)
    if not VERSION_RE.fullmatch(version):
        raise VersionError(f"{INIT}: __version__ {version!r} is not X.Y.Z (e.g. 0.2.0)")
    chart = chart_versions(root)
    if set(chart.values()) != {version}:
        raise VersionError(
            f"{CHART} says version {chart['version']!r}, appVersion {chart['appVersion']!r}, and {INIT} "
            f"{version}: run 'python3 scripts/version.py --set {version}'"
        )
    tags = head_tags(root)
    wrong = [tag for tag in tags if tag != f"v{version}"]
    if wrong:
        raise VersionError(
            f"HEAD is tagged {', '.join(wrong)} but the tree's version is {version}: "
            f"run 'python3 scripts/version.py --set {wrong[0][1:]}', commit, and move the tag to that commit"
        )
    if release and not tags:
        raise VersionError(
            f"a release is a commit tagged v{version}, and HEAD is not: git tag -a v{version} -m 'v{version}'"
        )
    return version


def set_version(version: str, root: Path = ROOT) -> None:
    if not VERSION_RE.fullmatch(version):
        raise VersionError(f"{version!r} is not X.Y.Z (e.g. 0.2.0)")
    init = root / INIT
    init.write_text(_INIT_LINE.sub(f'__version__ = "{version}"', init.read_text(), count=1))
    chart = root / CHART
    text = chart.read_text()
    text = _CHART_LINES["version"].sub(f"version: {version}", text, count=1)
    text = _CHART_LINES["appVersion"].sub(f'appVersion: "{version}"', text, count=1)
    chart.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--release", action="store_true", help="fail unless HEAD is tagged v<version>")
    group.add_argument("--set", metavar="X.Y.Z", help="write this version into __init__.py and Chart.yaml")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        if args.set:
            set_version(args.set, args.root)
            print(args.set)
        else:
            print(resolve(args.root, release=args.release))
    except VersionError as exc:
        print(f"version.py: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
