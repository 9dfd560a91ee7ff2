"""The compatibility matrix: no topic config the operator accepts stops a broker of its line (issue #15).

For every Kafka line ``make test`` runs (``artifacts.TESTED_KAFKA_VERSIONS``), on its own
three-broker cluster: topics are created through the operator's store with configs at the edge of
what that line accepts (from the line's entry in ``kafka_topic_configs.json``: range bounds, every
choice, the newest ``message.format.version`` it knows, non-default booleans), each config first
accepted by the operator's validation for that line; then **every broker is killed and started
again** - a broker builds every topic's LogConfig from ZooKeeper when it starts - and every broker
must come back and lead and replicate the topics, which Kafka's own view confirms (a Kafka client's
metadata; the configs through DescribeConfigs from 0.11, Kafka's own ``ConfigCommand`` before).
Values only newer lines accept are refused by the operator's planning with nothing written.

A negative control shows the check can fail: a value the line refuses (``compression.type=zstd``
on 2.0), written behind the operator's back, keeps a restarted 2.0.1 broker from coming back.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.devstack import artifacts
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.kafka import topic_configs
from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.topic import config as tc
from kafka_zk_operator.domain.topic.planning import DesiredTopic, plan_topic
from tests.conftest import KafkaCluster, kafka_version_tuple
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import kafka_tool, wait_for

TABLE = json.loads(
    (Path(topic_configs.__file__).parent / topic_configs.TABLE_FILE).read_text(encoding="utf-8")
)
#: Keys no spec may carry (the operator owns them) or that would make the check meaningless.
SKIPPED = {
    *tc.OPERATOR_OWNED_KEYS,
    "remote.log.copy.disable",  # refused in ZooKeeper mode when true; false is the default
    "remote.log.delete.on.disable",
    "min.insync.replicas",  # its edge (1) is the default, above RF is refused by the operator
}
#: Topics per line; each key's edge values are spread over them.
TOPICS_PER_LINE = 3


def _line(version: str) -> kafka_lines.KafkaLine:
    return kafka_lines.parse_line(version)


def _lowest_accepted(key: str, start: int, line: kafka_lines.KafkaLine) -> str:
    """The smallest value from ``start`` up that the operator accepts (its own minimum can be above
    Kafka's validator's: segment.index.bytes)."""
    value = start
    while tc.find_config_problems({key: str(value)}, line=line):
        value += 1
    return str(value)


def _edges(
    key: str, spec: dict[str, Any], newest_versions: list[str], line: kafka_lines.KafkaLine
) -> list[str]:
    """Values at the edge of what the line (and the operator) accepts for one key."""
    validator, kind = spec["validator"], spec["type"]
    if validator["kind"] == "range":
        low = validator["min"]
        values = (
            [] if low is None else [str(low) if kind == "double" else _lowest_accepted(key, int(low), line)]
        )
        if validator["max"] is not None:
            values.append(str(validator["max"]))
        elif kind == "int":
            values.append("2147483647")
        elif kind == "long":
            values.append("9223372036854775807")
        return values
    if validator["kind"] == "choices":
        return list(validator["values"])
    if validator["kind"] == "list-choices":
        return [",".join(validator["values"])]
    if validator["kind"] == "versions":
        known = [v for v in newest_versions if v in validator["values"]]
        bare = [v for v in known if "-" not in v]
        return [known[-1], bare[-1]]  # the newest it knows, with -IVn and as a release
    if validator["kind"] == "gzip-level":
        return ["1", "9"]
    if kind == "boolean":
        return ["false" if spec["default"] == "true" else "true"]
    return []


def edge_configs(line: kafka_lines.KafkaLine) -> list[dict[str, str]]:
    """``TOPICS_PER_LINE`` configs that together carry every edge value of the line."""
    entry = TABLE["lines"][kafka_lines.line_name(line)]["configs"]
    newest = TABLE["lines"][kafka_lines.line_name(kafka_lines.NEWEST_ZK_LINE)]["configs"]
    versions = newest["message.format.version"]["validator"]["values"]
    configs: list[dict[str, str]] = [{} for _ in range(TOPICS_PER_LINE)]
    for key, spec in entry.items():
        if key in SKIPPED or key.startswith("local.retention."):
            continue  # local retention: -2 is the default; other values need the total (3.0-3.5)
        for i, value in enumerate(_edges(key, spec, versions, line)[:TOPICS_PER_LINE]):
            configs[i][key] = value
    if "remote.storage.enable" in entry:
        for config in configs:
            config.pop("remote.storage.enable", None)  # needs a remote storage manager on the brokers
    return [c for c in configs if c]


def newer_only_values(line: kafka_lines.KafkaLine) -> dict[str, str]:
    """One value a newer line accepts that ``line`` refuses, per key that has one."""
    entry = TABLE["lines"][kafka_lines.line_name(line)]["configs"]
    newest = TABLE["lines"][kafka_lines.line_name(kafka_lines.NEWEST_ZK_LINE)]["configs"]
    found: dict[str, str] = {}
    for key in ("compression.type", "cleanup.policy", "message.format.version"):
        ours, theirs = entry[key]["validator"], newest[key]["validator"]
        extra = [v for v in theirs.get("values", []) if v not in ours.get("values", [])]
        if key == "cleanup.policy" and ours["kind"] == "choices":
            extra = ["compact,delete"]
        if extra:
            found[key] = extra[-1]
    unknown = [k for k in newest if k not in entry and k not in SKIPPED]
    if unknown:
        found[unknown[0]] = newest[unknown[0]]["default"] or "1"
    return found


def _restart_every_broker(cluster: KafkaCluster) -> float:
    started = time.monotonic()
    ids = sorted(cluster.stack.brokers)
    for broker_id in ids:
        cluster.stack.kill_broker(broker_id)
    with cluster.zk_session() as client:
        wait_for(lambda: not client.get_children("/brokers/ids"), what="every broker to be gone")
    for broker_id in ids:
        cluster.stack.restart_broker(broker_id)  # waits until it listens and registers
    return time.monotonic() - started


def _reported_configs(cluster: KafkaCluster, version: str, topic: str, tmp_path: Path) -> dict[str, str]:
    """The topic's overrides as Kafka reports them: a broker's DescribeConfigs (0.11+), else Kafka's tool."""
    if kafka_version_tuple(version) >= (0, 11):
        view = KafkaView(cluster.bootstrap_servers)
        try:
            reported = view.configs(topic)
        finally:
            view.close()
        return {key: value for key, value in reported.items() if value is not None}
    out = kafka_tool(
        version,
        "kafka.admin.ConfigCommand",
        cluster.zk_connect,
        tmp_path,
        *("--describe", "--entity-type", "topics", "--entity-name", topic),
    )
    line = next((ln for ln in out.splitlines() if ln.startswith("Configs for topic")), "")
    listed = line.split(" are ", 1)[1].strip() if " are " in line else ""
    return dict(item.split("=", 1) for item in listed.split(",") if "=" in item)


def _same(value: str) -> str | float:
    """A config value as compared: brokers report a double as Java prints it (0 -> 0.0)."""
    try:
        return float(value) if "." in value or value.isdigit() else value
    except ValueError:
        return value


def _reported_if_complete(
    cluster: KafkaCluster, version: str, topic: str, config: dict[str, str], tmp_path: Path
) -> dict[str, str] | None:
    reported = _reported_configs(cluster, version, topic, tmp_path)
    return reported if all(key in reported for key in config) else None


def _fully_led(cluster: KafkaCluster, topic: str) -> bool:
    view = KafkaView(cluster.bootstrap_servers)
    try:
        partitions = view.describe(topic) or {}
    finally:
        view.close()
    return bool(partitions) and all(p["leader"] >= 0 and len(p["isr"]) == 3 for p in partitions.values())


@pytest.mark.slow
@pytest.mark.parametrize("version", artifacts.TESTED_KAFKA_VERSIONS)
def test_every_broker_of_the_line_restarts_with_the_edge_configs_the_operator_accepts(
    version: str, kafka_cluster_factory: Callable[[str], KafkaCluster], tmp_path: Path
) -> None:
    line = _line(version)
    cluster = kafka_cluster_factory(version)
    configs = edge_configs(line)
    assert configs, f"no edge values for {version}"
    topics: dict[str, dict[str, str]] = {}
    with cluster.zk_session() as client:
        store = ZkStore(client)
        for i, config in enumerate(configs):
            assert tc.find_config_problems(config, 3, line=line) == [], (version, config)
            topic = f"edge-{i}-{uuid.uuid4().hex[:6]}"
            desired = DesiredTopic(name=topic, partitions=1, replication_factor=3, config=config)
            plan = plan_topic(desired, None, store.live_brokers(), cluster_line=kafka_lines.ClusterLine(line))
            assert plan.create is not None
            store.create_topic(topic, plan.create.assignment, plan.create.config)
            topics[topic] = config
        for topic in topics:
            wait_for(partial(_fully_led, cluster, topic), what=f"{topic} led on {version}")

        refused = newer_only_values(line)
        for key, value in refused.items():
            desired = DesiredTopic(
                name=f"refused-{uuid.uuid4().hex[:6]}",
                partitions=1,
                replication_factor=3,
                config={key: value},
            )
            writes = store.writes
            with pytest.raises(errors.InvalidConfig):
                plan_topic(desired, None, store.live_brokers(), cluster_line=kafka_lines.ClusterLine(line))
            assert store.writes == writes and client.exists(f"/config/topics/{desired.name}") is None

    took = _restart_every_broker(cluster)
    for topic, config in topics.items():
        wait_for(partial(_fully_led, cluster, topic), timeout=90, what=f"{topic} led after the restart")
        reported = wait_for(
            partial(_reported_if_complete, cluster, version, topic, config, tmp_path),
            what=f"{topic}'s configs reported by Kafka {version}",
        )
        assert {key: _same(reported[key]) for key in config} == {k: _same(v) for k, v in config.items()}, (
            version,
            topic,
        )
    print(
        f"Kafka {version}: {len(topics)} topics, {sum(map(len, topics.values()))} edge values; every broker back after {took:.1f} s"
    )


def test_a_value_the_line_refuses_keeps_a_restarted_broker_down(
    kafka_cluster_factory: Callable[[str], KafkaCluster], unique_topic: str
) -> None:
    """The negative control: the restart check above can fail. compression.type=zstd is refused by
    the operator on 2.0; written behind its back, it keeps a 2.0.1 broker from starting again."""
    cluster = kafka_cluster_factory("2.0.1")
    with cluster.zk_session() as client:
        store = ZkStore(client)
        replicas = [Broker(1)]
        store.create_topic(unique_topic, {0: [b.id for b in replicas]}, {})
        wait_for(lambda: _fully_led_by(client, unique_topic, 1), what="the topic on broker 1")
        client.set(f"/config/topics/{unique_topic}", b'{"version":1,"config":{"compression.type":"zstd"}}')
        cluster.stack.kill_broker(1)
        wait_for(lambda: "1" not in client.get_children("/brokers/ids"), what="broker 1 to be gone")
        process = cluster.stack.brokers[1].process
        assert process is not None
        log = process.log_path
        logged_before = log.stat().st_size
        try:
            with pytest.raises(StackError):
                cluster.stack.restart_broker(1)  # exits during start-up, never registers
            died = log.read_bytes()[logged_before:].decode(errors="replace")
            assert "Invalid value zstd for configuration compression.type" in died, died[-3000:]
        finally:
            client.set(f"/config/topics/{unique_topic}", b'{"version":1,"config":{}}')
            store.mark_topic_for_deletion(unique_topic)
            cluster.stack.kill_broker(1)
            cluster.stack.restart_broker(1)
        wait_for(
            lambda: store.topic_fully_deleted(unique_topic), timeout=90, what="the repaired topic's deletion"
        )


def _fully_led_by(client: KazooClient, topic: str, broker: int) -> bool:
    path = f"/brokers/topics/{topic}/partitions/0/state"
    return client.exists(path) is not None and json.loads(client.get(path)[0])["leader"] == broker
