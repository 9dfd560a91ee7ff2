#!/usr/bin/env bash
# Build kube-apiserver and etcd from Go modules into a cache folder; with a third argument "node",
# also kube-node (kubelet, kube-controller-manager, kube-scheduler and kube-proxy in one binary, for
# `kzo dev up --node`).
# Usage: scripts/build-k8s-bins.sh [K8S_VERSION] [ETCD_VERSION] [node]
# Prints the folder holding the binaries on its last line. A no-op when cached.
set -euo pipefail
K8S_VERSION="${1:-${K8S_VERSION:-1.33.13}}"
ETCD_VERSION="${2:-${ETCD_VERSION:-3.5.21}}"
WITH_NODE="${3:-}"
here="$(cd "$(dirname "$(readlink -f "$0")")" && pwd)"
cache="${KZO_CACHE_DIR:-$HOME/.cache/kafka-zk-operator}"
out="$cache/k8s-bins/$K8S_VERSION"
mkdir -p "$out"
# One build at a time (make prepare and a test session may start together): the second waits, then
# finds the binaries. Each still goes to a .tmp name first, so a killed build leaves none half-written.
exec 9>"$out/.build.lock"
flock 9
export GOFLAGS=-mod=mod GOTOOLCHAIN=auto CGO_ENABLED=0

# build_k8s_command NAME: the wrapper module assets/NAME/main.go against k8s.io/kubernetes, with
# every staging module it names as v0.0.0 replaced by its published version.
build_k8s_command() {
  local name="$1"
  local work="$cache/build/$name-$K8S_VERSION"
  mkdir -p "$work"
  cp "$here/$name/main.go" "$work/main.go"
  cd "$work"
  [ -f go.mod ] || go mod init "kzo.local/$name" >/dev/null 2>&1
  local gomod minor
  gomod="$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')"
  minor="$(echo "$K8S_VERSION" | cut -d. -f2)"
  for mod in $(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$gomod" | sort -u); do
    go mod edit -replace="$mod=$mod@v0.$minor.${K8S_VERSION##*.}"
  done
  local gd
  gd="$(awk '$1=="godebug" && $2 ~ /^default=/ {print $2}' "$gomod" | head -1)"
  [ -n "$gd" ] && go mod edit -godebug="$gd"
  go get "k8s.io/kubernetes@v$K8S_VERSION"
  go mod tidy
  go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" -o "$out/$name.tmp" .
  mv "$out/$name.tmp" "$out/$name"
}

build_etcd() {
  local work="$cache/build/etcd-$ETCD_VERSION"
  mkdir -p "$work"
  cp "$here/etcd/main.go" "$work/main.go"
  cd "$work"
  [ -f go.mod ] || go mod init kzo.local/etcd >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
  go mod tidy
  go build -trimpath -ldflags "-s -w" -o "$out/etcd.tmp" .
  mv "$out/etcd.tmp" "$out/etcd"
}

[ -x "$out/etcd" ] || (echo "building etcd $ETCD_VERSION (first run only, ~2 min)..." >&2; build_etcd >&2)
[ -x "$out/kube-apiserver" ] || (echo "building kube-apiserver $K8S_VERSION (first run only, ~15 min on 2 cores)..." >&2; build_k8s_command kube-apiserver >&2)
if [ "$WITH_NODE" = node ] && [ ! -x "$out/kube-node" ]; then
  echo "building kube-node $K8S_VERSION (kubelet, controller-manager, scheduler, proxy; first run only, ~10 min)..." >&2
  build_k8s_command kube-node >&2
fi
echo "$out"
