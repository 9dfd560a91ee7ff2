"""requirements/ (scripts/lock.sh) against pyproject.toml and the installed environment.

The operator image installs exactly ``requirements/runtime.txt`` and CI's venv is constrained by
``requirements/dev.txt``: a dependency added to pyproject.toml without refreshing them, a pin
outside what pyproject.toml allows, a runtime package without hashes, or the two files disagreeing
would each make the image and CI run something other than what was tested.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "requirements" / "runtime.txt"
DEV = ROOT / "requirements" / "dev.txt"
REFRESH = "run scripts/lock.sh (make lock) and commit requirements/"


def pins(path: Path) -> dict[str, tuple[str, list[str]]]:
    """Name → (version, its hashes) of every ``name==version`` entry of a uv/pip-compile file."""
    text = path.read_text().replace("\\\n", " ")
    result: dict[str, tuple[str, list[str]]] = {}
    for line in text.splitlines():
        match = re.match(r"([A-Za-z0-9._-]+)==(\S+)(.*)", line)
        if match:
            hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", match.group(3))
            result[canonicalize_name(match.group(1))] = (match.group(2), hashes)
    return result


def project() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def declared(*extras: str) -> list[Requirement]:
    meta = project()
    deps = list(meta["dependencies"])  # type: ignore[call-overload]
    for extra in extras:
        deps += meta["optional-dependencies"][extra]  # type: ignore[index]
    return [Requirement(dep) for dep in deps]


def test_the_runtime_lock_pins_every_dependency_within_pyproject_with_hashes() -> None:
    locked = pins(RUNTIME)
    for requirement in declared("kerberos"):
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} (pyproject.toml) is not in {RUNTIME.name}: {REFRESH}"
        version = locked[name][0]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{RUNTIME.name} pins {name}=={version}, outside pyproject.toml's {requirement}: {REFRESH}"
        )
    unhashed = [name for name, (_, hashes) in locked.items() if not hashes]
    assert not unhashed, f"{RUNTIME.name}: no hashes for {unhashed}: {REFRESH}"


def test_ci_constraints_cover_every_extra_and_agree_with_the_runtime_lock() -> None:
    dev, runtime = pins(DEV), pins(RUNTIME)
    for requirement in declared("dev", "spark", "plot", "kerberos"):
        name = canonicalize_name(requirement.name)
        assert name in dev, f"{name} (pyproject.toml) is not in {DEV.name}: {REFRESH}"
        assert requirement.specifier.contains(dev[name][0], prereleases=True), (
            f"{DEV.name} pins {name}=={dev[name][0]}, outside pyproject.toml's {requirement}: {REFRESH}"
        )
    differ = {name: (version, dev.get(name, ("-",))[0]) for name, (version, _) in runtime.items()
              if dev.get(name, ("",))[0] != version}  # fmt: skip
    assert not differ, f"{RUNTIME.name} and {DEV.name} differ (runtime, dev): {differ}: {REFRESH}"


@pytest.mark.skipif(os.environ.get("KZO_UNLOCKED") == "1", reason="KZO_UNLOCKED=1: the newest releases")
def test_the_installed_runtime_packages_are_the_locked_ones() -> None:
    differ = {}
    for name, (version, _) in pins(RUNTIME).items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # an extra this venv does not have (kerberos before kzo dev prepare)
        if Version(installed) != Version(version):
            differ[name] = (version, installed)
    assert not differ, (
        f"installed packages differ from {RUNTIME.name} (locked, installed): {differ}; "
        "scripts/bootstrap.sh installs the locked versions (KZO_UNLOCKED=1 the newest)"
    )
