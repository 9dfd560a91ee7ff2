#!/usr/bin/env bash
# Create .venv and install the project with everything the demo and the tests need.
# Idempotent: re-running only installs what changed. Slow parts are cached by pip (~/.cache/pip).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv" >&2
  "$PY" -m venv .venv
fi
stamp=.venv/.kzo-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "==> installing Python dependencies (first run downloads pyspark, ~450 MB; cached afterwards)" >&2
  .venv/bin/pip install -q --upgrade pip >&2
  .venv/bin/pip install -q -e '.[dev,spark,plot]' >&2
  touch "$stamp"
fi
