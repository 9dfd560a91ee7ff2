#!/usr/bin/env bash
# Refresh the dependency locks in requirements/ from pyproject.toml (make lock).
#
#   requirements/runtime.txt  [project].dependencies and the [kerberos] extra, every package
#                             transitively, exact versions with their sha256 hashes: what the
#                             operator image installs (--require-hashes, Dockerfile).
#   requirements/dev.txt      constraints for everything else CI installs (the dev, spark and plot
#                             extras), exact versions, the runtime ones as in runtime.txt:
#                             scripts/bootstrap.sh installs with them.
#
# Without arguments the versions already locked are kept and only what pyproject.toml changed is
# resolved again. Arguments go to `uv pip compile`: --upgrade (the newest versions pyproject.toml
# allows), --upgrade-package kopf, --constraint FILE ...
# uv comes from PyPI, pinned, into a temporary virtualenv. The kerberos sdist's metadata is built
# with MIT Kerberos' krb5-config (Debian libkrb5-dev, as for kzo dev prepare).
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION=0.13.8
PY="${PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$PY" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q --disable-pip-version-check "uv==$UV_VERSION"
compile=("$tmp/venv/bin/uv" pip compile --quiet --python-version 3.11 --python-platform linux
  --custom-compile-command "scripts/lock.sh" --annotation-style line pyproject.toml)
mkdir -p requirements
"${compile[@]}" --extra kerberos --generate-hashes --output-file requirements/runtime.txt "$@"
"${compile[@]}" --extra dev --extra spark --extra plot --extra kerberos \
  --constraint requirements/runtime.txt --output-file requirements/dev.txt "$@"
echo "locked: requirements/runtime.txt ($(grep -c '^[a-z0-9]' requirements/runtime.txt) packages)," \
  "requirements/dev.txt ($(grep -c '^[a-z0-9]' requirements/dev.txt) packages)" >&2
