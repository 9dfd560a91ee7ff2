#!/usr/bin/env bash
# The main job on the embedded default: a local stack (ZooKeeper + 3 racked Kafka 3.9 brokers +
# kube-apiserver/etcd), the operator, and the example KafkaTopics, then their live status.
# Stop it with: make demo-down (or .venv/bin/kzo dev down)
set -euo pipefail
cd "$(dirname "$0")/.."
if .venv/bin/kzo dev status >/dev/null 2>&1; then
  echo "demo: a stack is already running; stopping it first" >&2
  .venv/bin/kzo dev down
fi
.venv/bin/kzo dev up --operator --apply examples/kafkatopic-orders.yaml --apply examples/kafkatopic-compacted.yaml
cat <<'TXT'
Try next:
  eval "$(.venv/bin/kzo dev env)"                    # KUBECONFIG, KZO_ZOOKEEPER, KZO_BOOTSTRAP
  .venv/bin/kzo dev kubectl get kzt -A              # printer columns: Topic, Partitions, RF, Ready, Under-replicated
  .venv/bin/kzo dev logs operator
  make demo-down
TXT
