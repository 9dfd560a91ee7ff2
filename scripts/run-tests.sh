#!/usr/bin/env bash
# Run the whole pytest suite (unit, integration, e2e) against the real local stack.
# pytest's exit code 5 ("no tests collected") is a failure here.
set -uo pipefail
cd "$(dirname "$0")/.."
# Two workers (pytest-xdist) by default: much of the suite waits on Kafka, ZooKeeper and the API
# server rather than on the CPU. Each worker starts its own stack; tests/conftest.py groups the
# tests (a file, the real node's tests, the Kafka lines' files: a group runs on one worker) and
# hands the longest groups out first. KZO_TEST_WORKERS=0 runs everything in one process, in file order.
workers="${KZO_TEST_WORKERS:-2}"
.venv/bin/pytest tests -p no:cacheprovider --timeout=900 --durations=30 \
  -n "$workers" --no-loadscope-reorder "$@"
code=$?
if [ "$code" -eq 5 ]; then
  echo "run-tests: pytest collected no tests; that is a failure" >&2
  exit 1
fi
exit "$code"
