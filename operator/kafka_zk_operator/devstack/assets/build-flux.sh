#!/usr/bin/env bash
# Build Flux's source-controller and kustomize-controller from Go modules into a cache folder, for the
# GitOps end-to-end test (tests/e2e/test_flux_gitops.py). `go install pkg@version` cannot build them
# (their go.mod files carry replace directives), so per controller a wrapper module takes the
# controller's own go.mod at the tag (renamed, the `./api` replace dropped: the api module comes from
# the proxy) and builds the command. The Go module cache stays in the cache folder (the CRDs are read
# from it at run time); the multi-GB build cache is deleted after a successful build.
# Usage: build-flux.sh [SOURCE_CONTROLLER_VERSION] [KUSTOMIZE_CONTROLLER_VERSION]
# Prints the folder holding the binaries on its last line. A no-op when cached.
set -euo pipefail
SC="${1:-v1.9.1}"
KC="${2:-v1.9.4}"
cache="${KZO_CACHE_DIR:-$HOME/.cache/kafka-zk-operator}"
out="$cache/tools/flux-sc-$SC-kc-$KC"
mkdir -p "$out"
exec 9>"$out/.build.lock"
flock 9
export GOMODCACHE="$cache/go/mod" GOCACHE="$cache/build/flux-gocache"
export GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0
build() {  # name version
  local name="$1" version="$2" mod="github.com/fluxcd/$1"
  [ -x "$out/$name" ] && return 0
  local work="$cache/build/flux-$name-$version"
  rm -rf "$work"; mkdir -p "$work"; cd "$work"
  local gomod
  gomod="$(go mod download -json "$mod@$version" | sed -n 's/^\s*"GoMod": "\(.*\)",\?$/\1/p')"
  local zipdir
  zipdir="$(go mod download -json "$mod@$version" | sed -n 's/^\s*"Dir": "\(.*\)",\?$/\1/p')"
  sed -e "s#^module .*#module kzo.local/flux-$name#" -e '/=> \.\/api/d' "$gomod" > go.mod
  cp "$zipdir/go.sum" go.sum
  go mod edit -require="$mod@$version"
  cat > tools.go <<GO
//go:build tools

package tools

import _ "$mod"
GO
  go build -trimpath -ldflags "-s -w" -o "$out/$name.tmp" "$mod" >&2
  mv "$out/$name.tmp" "$out/$name"
}
if [ ! -x "$out/source-controller" ] || [ ! -x "$out/kustomize-controller" ]; then
  echo "building Flux source-controller $SC + kustomize-controller $KC (first run only, ~7 min)..." >&2
  start=$(date +%s)
  build kustomize-controller "$KC"
  build source-controller "$SC"
  echo "built in $(( $(date +%s) - start )) s; module cache $(du -sh "$GOMODCACHE" | cut -f1), build cache $(du -sh "$GOCACHE" | cut -f1) (deleted)" >&2
  rm -rf "$GOCACHE" "$cache/build/flux-kustomize-controller-$KC" "$cache/build/flux-source-controller-$SC"
fi
# Where the CRDs are (config/crd/bases in each module), for the caller (the build folder is gone).
cd "$cache"
GOFLAGS=-mod=mod go mod download -json "github.com/fluxcd/source-controller@$SC" | sed -n 's/^\s*"Dir": "\(.*\)",\?$/\1/p' > "$out/source-controller.dir"
GOFLAGS=-mod=mod go mod download -json "github.com/fluxcd/kustomize-controller@$KC" | sed -n 's/^\s*"Dir": "\(.*\)",\?$/\1/p' > "$out/kustomize-controller.dir"
echo "$out"
