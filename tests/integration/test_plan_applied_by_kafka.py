"""``kzo plan`` output, executed by Kafka's OWN reassignment tool, reaches the predicted assignment.

The factory's 3.9.2 cluster (other modules may have topics on it) gets topics and then an empty
fourth broker; then exactly what an operator would type: ``kzo snapshot`` → ``kzo plan --mode add-brokers`` →
``kafka-reassign-partitions --execute`` (Kafka's ReassignPartitionsCommand from the Maven jars)
→ ``--verify`` until done; Kafka's view must equal the plan, replica order included.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from kafka_zk_operator.devstack import artifacts, java
from tests.conftest import KafkaCluster
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for

TOOL = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"


def _kzo(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "kafka_zk_operator", *args], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result


def _kafka_tool(bootstrap: str, plan: Path, action: str) -> str:
    libs = artifacts.kafka_libs(artifacts.DEFAULT_KAFKA_VERSION)
    argv = [java.java_executable(), "-Xmx256m", "-cp", f"{libs}/*", TOOL]
    argv += ["--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan), action]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{action} failed: {result.stdout}\n{result.stderr}"
    return result.stdout


def test_a_kzo_plan_executed_by_kafkas_own_tool_reaches_the_predicted_assignment(
    kafka_cluster_factory: Callable[[str], KafkaCluster], tmp_path: Path
) -> None:
    cluster = kafka_cluster_factory(artifacts.DEFAULT_KAFKA_VERSION)
    view = KafkaView(cluster.bootstrap_servers)
    try:
        view.create_topic("plan-orders", 12, 2)
        view.create_topic("plan-payments", 6, 3)
        for topic, count in (("plan-orders", 12), ("plan-payments", 6)):

            def all_led(t: str = topic, c: int = count) -> object:
                return (d := view.describe(t)) and len(d) == c and all(p["leader"] >= 0 for p in d.values())

            wait_for(all_led)
        cluster.stack.add_broker(4, "rack-a")

        snapshot, plan_file = tmp_path / "cluster.json", tmp_path / "plan.json"
        _kzo("snapshot", "--zookeeper", cluster.zk_connect, "-o", str(snapshot))
        _kzo(
            "plan",
            "--snapshot",
            str(snapshot),
            "--mode",
            "add-brokers",
            "--brokers",
            "4",
            "-o",
            str(plan_file),
        )
        plan = json.loads(plan_file.read_text())
        moves = {(e["topic"], e["partition"]): e["replicas"] for e in plan["partitions"]}
        assert moves, "adding an empty broker must move something onto it"
        assert any(4 in replicas for replicas in moves.values())

        _kafka_tool(cluster.bootstrap_servers, plan_file, "--execute")
        wait_for(
            lambda: "still in progress" not in _kafka_tool(cluster.bootstrap_servers, plan_file, "--verify"),
            timeout=180,
            interval=2,
            what="Kafka's tool to report the reassignment complete",
        )
        expected_on_new_broker = sum(4 in r for r in moves.values())

        def kafka_view_matches_the_plan() -> bool:
            # The brokers' metadata caches catch up with the controller one by one, and describe
            # asks any of them: wait until the answer is the plan, rather than read one stale cache.
            # Every topic the plan moves: the cluster is the factory's 3.9.2 one, which other
            # modules (the Kafka-line matrix) may have given topics too; broker 4 held nothing before.
            described = {
                t: view.describe(t) or {} for t in {"plan-orders", "plan-payments", *(t for t, _ in moves)}
            }
            placed = all(
                described[topic].get(partition, {}).get("replicas") == replicas
                for (topic, partition), replicas in moves.items()
            )
            on_new_broker = sum(4 in p["replicas"] for d in described.values() for p in d.values())
            return placed and on_new_broker == expected_on_new_broker

        wait_for(
            kafka_view_matches_the_plan,
            timeout=60,
            what="Kafka's view to equal the plan, replica order included",
        )
    finally:
        view.close()
