#!/usr/bin/env bash
# Run the whole pytest suite (unit, integration, e2e) against the real local stack.
# pytest's exit code 5 ("no tests collected") is a failure here.
set -uo pipefail
cd "$(dirname "$0")/.."
.venv/bin/pytest tests -p no:cacheprovider --timeout=900 --durations=30 "$@"
code=$?
if [ "$code" -eq 5 ]; then
  echo "run-tests: pytest collected no tests; that is a failure" >&2
  exit 1
fi
exit "$code"
