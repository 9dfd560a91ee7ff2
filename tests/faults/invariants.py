"""The invariant checker every fault test ends with: desired state == Kafka's state, nothing leaked.

Desired state is read from the API server (every KafkaTopic of the test's namespace); Kafka's
state through a Kafka client (kafka-python's admin client: partitions, replication factor, topic
configs). What the operator may leave behind is read with a plain kazoo client straight from
ZooKeeper (no project code): ``/admin/reassign_partitions``, deletion markers under
``/admin/delete_topics``, throttle rates under ``/config/brokers``, throttled-replica lists on
topics. Resources with a ``deletionTimestamp`` must be gone (no finalizer left behind).
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any, cast

from kazoo.client import KazooClient
from kubernetes import client

from kafka_zk_operator.devstack.stack import LocalStack
from tests.e2e.conftest import GROUP, VERSION
from tests.e2e.kafka_client import KafkaView

THROTTLE_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
THROTTLED_REPLICAS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def _items(api_client: client.ApiClient, namespace: str, plural: str) -> list[dict[str, Any]]:
    api = client.CustomObjectsApi(api_client)
    listed = cast("dict[str, Any]", api.list_namespaced_custom_object(GROUP, VERSION, namespace, plural))
    return list(listed.get("items") or [])


def _ready(body: dict[str, Any]) -> bool:
    status = body.get("status") or {}
    fresh = status.get("observedGeneration") == (body.get("metadata") or {}).get("generation")
    return fresh and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
    )


def _held_by_finalizer(ref: str, meta: dict[str, Any], found: list[str]) -> bool:
    """A deleted resource still present (a finalizer left behind) is a violation."""
    if not meta.get("deletionTimestamp"):
        return False
    found.append(f"{ref}: still present with a deletionTimestamp (finalizers {meta.get('finalizers')})")
    return True


def topic_violations(api_client: client.ApiClient, namespace: str, kafka: KafkaView) -> list[str]:
    """Every KafkaTopic of ``namespace`` Ready and exactly as its spec says in Kafka (Kafka asked
    for all of them in a few batched requests: a checker polled while a thousand topics converge
    must not load the brokers it checks)."""
    found: list[str] = []
    bodies = _items(api_client, namespace, "kafkatopics")
    wanted = {str((body.get("spec") or {}).get("topicName") or body["metadata"]["name"]) for body in bodies}
    described_all = kafka.describe_many(wanted)
    configs_all = kafka.configs_many(described_all)
    for body in bodies:
        meta, spec = body["metadata"], body.get("spec") or {}
        ref = f"{namespace}/{meta['name']}"
        if _held_by_finalizer(ref, meta, found):
            continue
        if not _ready(body):
            found.append(f"{ref}: not Ready ({(body.get('status') or {}).get('conditions')})")
        topic = str(spec.get("topicName") or meta["name"])
        if topic not in described_all:
            found.append(f"{ref}: Kafka has no topic {topic!r}")
            continue
        described = described_all[topic]
        if len(described) != int(spec["partitions"]):
            found.append(f"{ref}: {len(described)} partitions in Kafka, spec says {spec['partitions']}")
        wrong_rf = sorted(
            p for p, d in described.items() if len(d["replicas"]) != int(spec["replicationFactor"])
        )
        if wrong_rf:
            found.append(f"{ref}: partitions {wrong_rf} do not have {spec['replicationFactor']} replicas")
        configs = configs_all.get(topic, {})
        for key, value in (spec.get("config") or {}).items():
            if configs.get(key) != str(value):
                found.append(f"{ref}: {key}={configs.get(key)!r} in Kafka, spec says {value!r}")
        leaked = {key: configs[key] for key in THROTTLED_REPLICAS if configs.get(key)}
        if leaked:
            found.append(f"{ref}: throttled replicas left on topic {topic}: {leaked}")
    return found


def zookeeper_violations(zk: KazooClient) -> list[str]:
    """No reassignment znode, no deletion marker, no throttle rate left in ZooKeeper."""
    found: list[str] = []
    if zk.exists("/admin/reassign_partitions"):
        found.append("/admin/reassign_partitions still exists")
    if zk.exists("/admin/delete_topics"):
        markers = zk.get_children("/admin/delete_topics")
        if markers:
            found.append(f"deletion markers left under /admin/delete_topics: {sorted(markers)}")
    for broker, rates in throttle_rates_by_broker(zk).items():
        found.append(f"broker {broker} keeps replication throttle rates {rates}")
    return found


def throttle_rates_by_broker(zk: KazooClient) -> dict[str, dict[str, str]]:
    """The replication throttle rates each broker's dynamic config holds (brokers with none left out)."""
    found: dict[str, dict[str, str]] = {}
    if zk.exists("/config/brokers"):
        for broker in zk.get_children("/config/brokers"):
            data, _ = zk.get(f"/config/brokers/{broker}")
            config = (json.loads(data) if data else {}).get("config") or {}
            rates = {key: config[key] for key in THROTTLE_RATES if key in config}
            if rates:
                found[broker] = rates
    return found


FINISHED_PHASES = ("Completed", "Stopped", "Failed")


def throttle_still_recorded(status: dict[str, Any]) -> bool:
    """The status still records a throttle on the cluster. A released throttle keeps only
    ``{"applied": false, "rate": ...}`` (the rate ``spec.throttle`` asked for)."""
    throttle = status.get("throttle") or {}
    return bool(throttle.get("batch") or throttle.get("applied"))


def reassignment_finished(body: dict[str, Any]) -> bool:
    """A PartitionReassignment in a final phase whose throttle is released."""
    status = body.get("status") or {}
    return status.get("phase") in FINISHED_PHASES and not throttle_still_recorded(status)


def reassignment_violations(api_client: client.ApiClient, namespace: str) -> list[str]:
    """Every PartitionReassignment finished, none left half-deleted."""
    found: list[str] = []
    for body in _items(api_client, namespace, "partitionreassignments"):
        meta, status = body["metadata"], body.get("status") or {}
        ref = f"{namespace}/{meta['name']}"
        _held_by_finalizer(ref, meta, found)
        if status.get("phase") not in FINISHED_PHASES:
            found.append(f"{ref}: phase {status.get('phase')!r}, not finished")
        if throttle_still_recorded(status):
            found.append(f"{ref}: status still records an applied throttle {status.get('throttle')}")
    return found


def all_violations(
    api_client: client.ApiClient, namespace: str, kafka: KafkaView, zk: KazooClient
) -> list[str]:
    return (
        topic_violations(api_client, namespace, kafka)
        + reassignment_violations(api_client, namespace)
        + zookeeper_violations(zk)
    )


def created_count(zk: KazooClient, topics: list[str]) -> int:
    """How many of ``topics`` have their ``/brokers/topics`` znode (one listing: a fault test
    polls this to strike in the middle of a burst, so it must not lag behind the burst)."""
    return len(set(zk.get_children("/brokers/topics")).intersection(topics))


def written_once(
    zk: KazooClient, topic: str, config_changes: int = 0, *, zookeeper_leader_lost: bool = False
) -> list[str]:
    """The operator wrote the topic's znodes once: ``/config/topics/<t>`` is at version 0 (or
    ``config_changes`` when the test changed the config that many times), and
    ``/brokers/topics/<t>`` at version 1 - the operator's create, then Kafka's controller writing
    the ``topic_id`` back (a 2.8+ controller does that to a topic created without one, as Kafka's
    own ZooKeeper tools create them).

    ``zookeeper_leader_lost``: the test killed ZooKeeper's leader, and Kafka's controller resends a
    write whose answer it lost with the leader - its ``topic_id`` write is not conditional, so it
    lands twice (seen in CI on 2026-12-01: ZooKeeper's transaction log holds the controller's
    identical ``setData`` at zxids 0x4000001ab and 0x500000001, one on each side of the leader
    change). Version 2 is then accepted if the znode holds its ``topic_id`` and was last written
    before the controller created the partition's ``state`` znode: a write after that (an
    operator writing the topic again) still fails."""
    found = []
    config = zk.exists(f"/config/topics/{topic}")
    if config is None or config.version != config_changes:
        found.append(
            f"/config/topics/{topic}: {'missing' if config is None else f'version {config.version}'}"
        )
    data, stat = zk.get(f"/brokers/topics/{topic}")
    has_id = "topic_id" in json.loads(data)
    if stat.version == 2 and has_id and zookeeper_leader_lost:
        state = zk.exists(f"/brokers/topics/{topic}/partitions/0/state")
        if state is not None and stat.mzxid < state.czxid:
            return found
    if stat.version != 1 or not has_id:
        found.append(f"/brokers/topics/{topic}: version {stat.version}, data {data[:200]!r}")
    return found


#: Kafka's ZooKeeper-mode controller, creating a new partition's state znode: its ZooKeeper client
#: retries the create after a connection loss, gets NodeExists (the first attempt had landed) and
#: leaves the partition in NewPartition - no leader is ever sent to the brokers, so Kafka does not
#: serve the topic although ZooKeeper holds all of it. Only a new controller recovers it.
_CONTROLLER_DEFECT = re.compile(
    r"failed to change state for partition (\S+) from NewPartition to OnlinePartition"
)
_MISSING = re.compile(r": Kafka has no topic '([^']+)'$")


def controller_defect_topics(stack: LocalStack) -> set[str]:
    """Topics a broker's controller log shows stuck by that defect (the NodeExists failure)."""
    stuck = set()
    for broker in stack.brokers.values():
        if broker.process is None:
            continue
        lines = broker.process.log_path.read_text(errors="replace").splitlines()
        for line, following in itertools.pairwise(lines):
            found = _CONTROLLER_DEFECT.search(line)
            if found and "NodeExistsException" in following:
                stuck.add(found.group(1).rsplit("-", 1)[0])
    return stuck


def missing_topics(violations: list[str]) -> set[str]:
    """The topics that violations say Kafka does not serve."""
    return {m.group(1) for line in violations if (m := _MISSING.search(line))}
