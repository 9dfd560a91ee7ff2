"""What a *failed* fault test leaves behind, cleared so that it fails no later test.

A fault test that fails half-way may stop its operator replicas with a throttled batch in flight:
its PartitionReassignment would be resumed by the next operator that handles its namespace, and
the batch's throttle rates, global to the brokers, would fail every later invariant check. One
failure then shows up as three (a CI run on 2026-12-02: two of its failures were another test's
leftovers). After a failed test, therefore: its PartitionReassignments are deleted without their
finalizers (no operator resumes them), the throttles left are removed with Kafka's own
``kafka-configs`` (``kafka.admin.ConfigCommand`` through the Admin API), and the batch in flight
is left to finish (ZooKeeper mode cannot cancel one). ZooKeeper is read with plain kazoo.
"""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any, cast

from kazoo.client import KazooClient
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.devstack import artifacts, java
from tests.conftest import MAIN_KAFKA_VERSION, KafkaCluster
from tests.e2e.conftest import GROUP, VERSION
from tests.faults.invariants import THROTTLED_REPLICAS, throttle_rates_by_broker

#: How long the batch left in flight may take once its throttles are gone.
BATCH_DRAIN_S = 180.0


def clear_after_failure(ensemble: KafkaCluster, api: client.ApiClient, namespace: str) -> list[str]:
    """Clear what the failed test in ``namespace`` left; what was done, one line each."""
    done = [
        f"deleted PartitionReassignment {namespace}/{name}" for name in _drop_reassignments(api, namespace)
    ]
    zk = ensemble.zk_client()
    try:
        for entity_type, name, keys in _throttles_left(zk, namespace):
            _delete_configs(ensemble, entity_type, name, keys)
            done.append(f"removed {', '.join(keys)} from {entity_type} {name}")
        deadline = time.monotonic() + BATCH_DRAIN_S
        while zk.exists("/admin/reassign_partitions") and time.monotonic() < deadline:
            time.sleep(1.0)
        if zk.exists("/admin/reassign_partitions"):
            done.append(f"/admin/reassign_partitions still there after {BATCH_DRAIN_S:.0f} s (left alone)")
    finally:
        zk.stop()
        zk.close()
    return done


def _drop_reassignments(api: client.ApiClient, namespace: str) -> list[str]:
    custom = client.CustomObjectsApi(api)
    listed = cast(
        "dict[str, Any]",
        custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "partitionreassignments"),
    )
    names = [item["metadata"]["name"] for item in listed.get("items") or []]
    for name in names:
        try:
            custom.patch_namespaced_custom_object(
                GROUP, VERSION, namespace, "partitionreassignments", name, {"metadata": {"finalizers": None}}
            )
            custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, "partitionreassignments", name)
        except ApiException as exc:
            if exc.status != 404:
                raise
    return names


def _throttles_left(zk: KazooClient, namespace: str) -> list[tuple[str, str, list[str]]]:
    """Throttle rates on any broker, throttled replicas on the namespace's topics (the fault tests
    name their topics ``<namespace>-...``)."""
    found = [
        ("brokers", broker, list(rates)) for broker, rates in sorted(throttle_rates_by_broker(zk).items())
    ]
    for topic in sorted(zk.get_children("/config/topics")) if zk.exists("/config/topics") else []:
        if not topic.startswith(f"{namespace}-"):
            continue
        data, _ = zk.get(f"/config/topics/{topic}")
        config = (json.loads(data) if data else {}).get("config") or {}
        present = [key for key in THROTTLED_REPLICAS if key in config]
        if present:
            found.append(("topics", topic, present))
    return found


def _delete_configs(ensemble: KafkaCluster, entity_type: str, name: str, keys: list[str]) -> None:
    workdir = ensemble.stack.state_dir
    argv = java.java_argv(
        artifacts.kafka_libs(MAIN_KAFKA_VERSION),
        "kafka.admin.ConfigCommand",
        [
            "--bootstrap-server",
            ensemble.bootstrap_servers,
            "--alter",
            "--entity-type",
            entity_type,
            "--entity-name",
            name,
            "--delete-config",
            ",".join(keys),
        ],
        heap="256m",
        log4j=java.write_log4j(workdir / "leftovers-log4j.properties"),
    )
    ran = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if ran.returncode != 0:
        print(f"[leftovers] kafka-configs on {entity_type} {name} failed: {ran.stderr.strip()[-500:]}")
