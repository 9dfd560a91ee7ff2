#!/usr/bin/env bash
# Fetch Kafka (and its ZooKeeper dependency) jars from Maven Central into a cache folder.
# Usage: scripts/fetch-kafka.sh VERSION [SCALA]   -> prints the libs folder
set -euo pipefail
v="${1:?kafka version}"; scala="${2:-2.13}"
cache="${KZO_CACHE_DIR:-$HOME/.cache/kafka-zk-operator}"
out="$cache/kafka/$v/libs"
if [ ! -f "$out/.complete" ]; then
  work="$(mktemp -d)"
  cat > "$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>kzo.local</groupId><artifactId>kafka-fetch</artifactId><version>1</version>
<dependencies><dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_$scala</artifactId><version>$v</version></dependency></dependencies>
</project>
POM
  mkdir -p "$out"
  mvn -q -f "$work/pom.xml" dependency:copy-dependencies -DoutputDirectory="$out" -DincludeScope=runtime >&2
  touch "$out/.complete"; rm -rf "$work"
fi
echo "$out"
