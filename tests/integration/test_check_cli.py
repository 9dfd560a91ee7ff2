"""``kzo check`` against the real stack: a subprocess with the settings ``kzo operator`` reads
(a clusters file), checking ZooKeeper (the chroot holds a Kafka cluster with brokers), Kafka
(DescribeCluster through bootstrapServers) and the API server (the CRDs, the resources listable).
Each failure is one ``FAIL`` line naming what failed, and exit code 1, never a traceback. The
chart's ``helm test`` runs the same command in a pod (tests/node/test_release.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from kafka_zk_operator.devstack import tools
from tests.conftest import KafkaCluster

REPO = Path(__file__).resolve().parents[2]


def kzo_check(
    tmp_path: Path, clusters: list[dict[str, str]], *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    clusters_file = tmp_path / "clusters.yaml"
    clusters_file.write_text(yaml.safe_dump({"clusters": clusters}))
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KZO_") and k != "KUBECONFIG"}
    environment.update(PYTHONPATH=str(REPO / "operator"), KZO_CLUSTERS_FILE=str(clusters_file), **env)
    return subprocess.run(
        [sys.executable, "-m", "kafka_zk_operator", "check", "--timeout", "5", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )


def test_a_reachable_cluster_passes_every_check(kafka_cluster: KafkaCluster, tmp_path: Path) -> None:
    cluster = {
        "name": "main",
        "zookeeper": kafka_cluster.zk_connect,
        "bootstrapServers": kafka_cluster.bootstrap_servers,
    }
    done = kzo_check(tmp_path, [cluster], "--no-api")
    assert done.returncode == 0, done.stdout + done.stderr
    ids = ", ".join(str(b.id) for b in sorted(kafka_cluster.brokers, key=lambda b: b.id))
    assert f"ok    zookeeper main: {kafka_cluster.zk_connect}: brokers {ids} registered" in done.stdout
    assert f"ok    kafka main: {kafka_cluster.bootstrap_servers}: brokers {ids} answer" in done.stdout


def test_each_failure_is_a_line_naming_it_and_exit_code_1(
    kafka_cluster: KafkaCluster, tmp_path: Path
) -> None:
    clusters = [
        {"name": "main", "zookeeper": kafka_cluster.zk_connect},
        {"name": "empty", "zookeeper": f"{kafka_cluster.zk_hosts}/no-kafka-here"},
        {"name": "gone", "zookeeper": "127.0.0.1:1/kafka", "bootstrapServers": "127.0.0.1:1"},
    ]
    done = kzo_check(tmp_path, clusters, KUBECONFIG=str(tmp_path / "missing-kubeconfig"))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ok    zookeeper main:"), lines
    assert lines[1].startswith("FAIL  zookeeper empty:") and "no Kafka cluster there" in lines[1], lines
    assert lines[2].startswith("FAIL  zookeeper gone:") and "cannot connect" in lines[2], lines
    assert lines[3].startswith("FAIL  kafka gone:"), lines
    assert lines[4].startswith("FAIL  kubernetes api:"), lines
    assert "Traceback" not in done.stderr
    assert done.stderr.strip() == "kzo check: error: 4 of 5 checks failed"


def test_the_api_check_finds_the_crds_with_the_kubeconfig(
    kafka_cluster: KafkaCluster, tmp_path: Path
) -> None:
    kubectl = [str(tools.kubectl_binary()), f"--kubeconfig={kafka_cluster.kubeconfig}"]
    subprocess.run(
        [*kubectl, "apply", "--server-side", "--force-conflicts", "-f", str(REPO / "crds")],
        check=True,
        capture_output=True,
    )
    done = kzo_check(
        tmp_path,
        [{"name": "main", "zookeeper": kafka_cluster.zk_connect}],
        KUBECONFIG=str(kafka_cluster.kubeconfig),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "ok    kubernetes api: CRDs installed; KafkaTopics and PartitionReassignments listable in all namespaces"
        in (done.stdout)
    )
