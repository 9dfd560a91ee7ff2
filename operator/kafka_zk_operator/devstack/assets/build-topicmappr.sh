#!/usr/bin/env bash
# Build kafka-kit's topicmappr (github.com/DataDog/kafka-kit/v3) from Go modules into a cache folder,
# for benchmarks/peers_bench.py. `go install pkg@version` cannot build it (the module's go.mod has a
# replace directive), so a wrapper module requires it with the same replace and builds the command.
# Usage: build-topicmappr.sh [MODULE_VERSION]
# Prints the folder holding the binary on its last line. A no-op when cached.
set -euo pipefail
VERSION="${1:-v3.18.1}"
cache="${KZO_CACHE_DIR:-$HOME/.cache/kafka-zk-operator}"
out="$cache/tools/topicmappr-$VERSION"
mkdir -p "$out"
# One build at a time; the binary goes to a .tmp name first, so a killed build leaves none half-written.
exec 9>"$out/.build.lock"
flock 9
if [ ! -x "$out/topicmappr" ]; then
  echo "building topicmappr $VERSION (first run only, ~20 s)..." >&2
  work="$cache/build/topicmappr-$VERSION"
  mkdir -p "$work"
  cd "$work"
  cat > go.mod <<MOD
module kzo.local/topicmappr

go 1.17

require github.com/DataDog/kafka-kit/v3 $VERSION

replace github.com/spf13/viper v1.10.0 => github.com/spf13/viper v1.10.1
MOD
  export GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=auto CGO_ENABLED=0
  go build -trimpath -ldflags "-s -w" -o "$out/topicmappr.tmp" github.com/DataDog/kafka-kit/v3/cmd/topicmappr >&2
  mv "$out/topicmappr.tmp" "$out/topicmappr"
fi
echo "$out"
