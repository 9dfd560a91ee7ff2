#!/usr/bin/env bash
# Fetch a Kafka broker (ZooKeeper mode; KRaft only from 4.x) with all its runtime jars from Maven Central into a cache.
# The set includes ZooKeeper's server classes (a Kafka dependency), a log4j binding so brokers log,
# and Kafka's command-line tools. Usage: fetch-kafka.sh VERSION  -> prints the libs folder.
set -euo pipefail
v="${1:?kafka version, e.g. 3.9.2}"
cache="${KZO_CACHE_DIR:-$HOME/.cache/kafka-zk-operator}"
out="$cache/kafka/$v/libs"
major="${v%%.*}"; rest="${v#*.}"; minor="${rest%%.*}"; rest="${rest#*.}"; patch="${rest%%.*}"
scala=2.13
extra=""
# A log binding so brokers write logs: reload4j for 3.x (what Kafka 3.x ships), log4j 1.2.17 before,
# log4j2 from 4.x.
logging="<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>"
if [ "$major" -ge 4 ]; then
  # Kafka 4.x moved to log4j2 (KIP-653) and kept slf4j 1.7: its binding is log4j-slf4j-impl.
  logging="<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>2.24.3</version></dependency><dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.24.3</version></dependency>"
fi
if [ "$major" -lt 3 ]; then
  logging="<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-log4j12</artifactId><version>1.7.30</version></dependency><dependency><groupId>log4j</groupId><artifactId>log4j</artifactId><version>1.2.17</version></dependency>"
fi
if [ "$major" -lt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -lt 4 ]; }; then
  scala=2.12
  # Kafka < 2.4 ships ZooKeeper client 3.4.x, which cannot connect on Java 14+ (ZOOKEEPER-3779).
  # The 3.5.9 client keeps the same API and has the fix; Kafka 2.4+ itself moved to 3.5.x.
  extra="<dependency><groupId>org.apache.zookeeper</groupId><artifactId>zookeeper</artifactId><version>3.5.9</version></dependency>"
fi
if [ "$major" -eq 0 ] && { [ "$minor" -lt 10 ] || { [ "$minor" -eq 10 ] && [ "$patch" -lt 2 ]; }; }; then
  scala=2.11  # kafka_2.12 artifacts start with 0.10.2.0
fi
if [ "$major" -lt 1 ]; then
  # Kafka < 1.0 base64-encodes its cluster id with javax.xml.bind.DatatypeConverter, which left the
  # JDK in Java 11 (JEP 320): brokers die at startup with NoClassDefFoundError without this jar.
  extra="$extra<dependency><groupId>javax.xml.bind</groupId><artifactId>jaxb-api</artifactId><version>2.3.1</version></dependency>"
fi
if [ "$major" -ge 3 ] && [ "$minor" -ge 5 ] || [ "$major" -ge 4 ]; then
  extra="<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$v</version></dependency>"
fi
if [ ! -f "$out/.complete" ]; then
  echo "fetching Kafka $v (kafka_$scala) and its dependencies from Maven Central..." >&2
  work="$(mktemp -d)"
  cat > "$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>kzo.local</groupId><artifactId>kafka-fetch</artifactId><version>1</version>
<dependencies>
<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_$scala</artifactId><version>$v</version></dependency>
$logging
$extra
</dependencies>
</project>
POM
  rm -rf "$out"; mkdir -p "$out"
  mvn -q -B -f "$work/pom.xml" dependency:copy-dependencies -DoutputDirectory="$out" -DincludeScope=runtime >&2
  touch "$out/.complete"; rm -rf "$work"
fi
echo "$out"
