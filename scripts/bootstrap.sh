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
# The versions of requirements/dev.txt (scripts/lock.sh); KZO_UNLOCKED=1: the newest releases
# pyproject.toml allows instead (docs/development.md#against-the-newest-kopf-and-kazoo).
if [ "${KZO_UNLOCKED:-}" = 1 ]; then
  mode=unlocked; install=(--upgrade --upgrade-strategy eager)
else
  mode=locked; install=(--constraint requirements/dev.txt)
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ requirements/dev.txt -nt "$stamp" ] \
  || [ "$(cat "$stamp")" != "$mode" ] || [ "$mode" = unlocked ]; then
  echo "==> installing Python dependencies, $mode (first run downloads pyspark, ~450 MB; cached afterwards)" >&2
  .venv/bin/pip install -q --upgrade pip >&2
  .venv/bin/pip install -q "${install[@]}" -e '.[dev,spark,plot]' >&2
  echo "$mode" > "$stamp"
fi
