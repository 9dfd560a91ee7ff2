"""``kzo snapshot`` (and ``kzo import``'s reading side) against real Kafka 3.9 brokers on ZooKeeper.

Topics are created with Kafka's own Admin API (kafka-python), never with our code, and the
snapshot is compared with what Kafka itself describes. The snapshot must load with the placement
engine's loader (``domain.documents.snapshot``) and must write nothing to ZooKeeper, shown twice: in-process
with a kazoo client whose every write method raises, and as a subprocess by comparing the stats
(data/child versions, mzxid, pzxid) of the znodes it reads before and after. (ZooKeeper's global
zxid cannot be used: opening and closing a session are transactions themselves.)
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from kafka_zk_operator.adapters.zk import store as store_module
from kafka_zk_operator.cli import main as cli_main
from kafka_zk_operator.domain.documents import snapshot as snapshot_loader
from tests.conftest import KafkaCluster
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for

REPO = Path(__file__).resolve().parents[2]
THROTTLE_KEYS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
BROKER_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")


def kzo(*args: str, stderr: Any = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """The real command in a subprocess, as users run it."""
    env = {k: v for k, v in os.environ.items() if k not in ("KZO_ZOOKEEPER", "SOURCE_DATE_EPOCH")}
    env["PYTHONPATH"] = str(REPO / "operator")
    return subprocess.run(
        [sys.executable, "-m", "kafka_zk_operator", *args],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def topics(kafka: KafkaView, kafka_cluster: KafkaCluster) -> dict[str, dict[int, dict[str, Any]]]:
    """Three topics made with Kafka's Admin API (one with a name Kubernetes would not accept), and
    ``__consumer_offsets`` (created by Kafka when a consumer group first looks up its coordinator).
    Returns Kafka's own description of each."""
    prefix = f"snap-{os.getpid()}-{time.monotonic_ns() % 10**6}"
    specs = {
        f"{prefix}.orders": (6, 3, {"retention.ms": "86400000", "cleanup.policy": "compact"}),
        f"{prefix}.Audit_Log": (2, 2, {"max.message.bytes": "2000000"}),
        f"{prefix}.single": (3, 1, {}),
    }
    for name, (partitions, rf, config) in specs.items():
        kafka.create_topic(name, partitions, rf, config)
    consumer = KafkaConsumer(bootstrap_servers=kafka_cluster.bootstrap_servers, group_id=f"{prefix}-group")
    try:
        consumer.assign([TopicPartition(f"{prefix}.single", 0)])
        consumer.commit({TopicPartition(f"{prefix}.single", 0): OffsetAndMetadata(0, "", -1)})
    finally:
        consumer.close()
    described = {name: _described(kafka, name, count) for name, (count, _, _) in specs.items()}
    wait_for(lambda: "__consumer_offsets" in kafka.topic_names(), what="__consumer_offsets")
    return described


def _described(kafka: KafkaView, name: str, partitions: int) -> dict[int, dict[str, Any]]:
    """Kafka's description of ``name`` once every partition has a leader."""

    def probe() -> dict[int, dict[str, Any]] | None:
        described = kafka.describe(name)
        ready = (
            described and len(described) == partitions and all(p["leader"] >= 0 for p in described.values())
        )
        return described if ready else None

    return wait_for(probe, what=f"Kafka to describe {name} with leaders")


def _znode_stats(client: KazooClient, paths: list[str]) -> dict[str, tuple[int, ...]]:
    """(version, cversion, aversion, mzxid, pzxid, children) of each path and its subtree."""
    found: dict[str, tuple[int, ...]] = {}
    pending = list(paths)
    while pending:
        path = pending.pop()
        try:
            children, stat = client.get_children(path, include_data=True)
        except NoNodeError:
            found[path] = (-1,)
            continue
        found[path] = (stat.version, stat.cversion, stat.aversion, stat.mzxid, stat.pzxid, len(children))
        pending.extend(f"{path.rstrip('/')}/{child}" for child in children)
    return found


def _read_paths(names: list[str]) -> list[str]:
    return [
        "/brokers/ids",
        "/admin",
        *(f"/brokers/topics/{n}" for n in names),
        *(f"/config/topics/{n}" for n in names),
    ]


# --- the snapshot is Kafka's view --------------------------------------------------------------------


def test_snapshot_matches_kafkas_own_view_and_loads_with_the_planner(
    kafka_cluster: KafkaCluster, topics: dict[str, dict[int, dict[str, Any]]], tmp_path: Path
) -> None:
    out = tmp_path / "cluster.json"
    result = kzo("snapshot", "--zookeeper", kafka_cluster.zk_connect, "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert f"written to {out}" in result.stderr.splitlines()[-1]

    text = out.read_text()
    loaded = snapshot_loader.parse_snapshot_json(text)
    assert {(b.id, b.rack) for b in loaded.brokers} == {(b.id, b.rack) for b in kafka_cluster.brokers}
    for name, described in topics.items():
        assert dict(loaded.topics[name].partitions) == {
            p: tuple(info["replicas"]) for p, info in described.items()
        }, f"{name}: replica lists (leader first) must be exactly Kafka's"
    assert "__consumer_offsets" not in loaded.topics, "internal topics only with --with-internal"
    assert "Kafka-internal topic (__consumer_offsets)" in result.stderr
    arrays = snapshot_loader.snapshot_to_arrays(loaded)
    assert arrays.n_brokers == len(kafka_cluster.brokers)

    again = kzo("snapshot", "--zookeeper", kafka_cluster.zk_connect, "-q", "-o", "-")
    assert again.returncode == 0 and again.stderr == ""
    mine = {n: b for n, b in json.loads(again.stdout)["topics"].items() if n in topics}
    assert mine == {n: b for n, b in json.loads(text)["topics"].items() if n in topics}, "stable output"


def test_with_internal_includes_consumer_offsets(
    kafka_cluster: KafkaCluster, kafka: KafkaView, topics: dict[str, Any]
) -> None:
    result = kzo("snapshot", "--zookeeper", kafka_cluster.zk_connect, "--with-internal", "-q")
    assert result.returncode == 0, result.stderr
    loaded = snapshot_loader.parse_snapshot_json(result.stdout)
    offsets = loaded.topics["__consumer_offsets"].partitions
    described = kafka.describe("__consumer_offsets")
    assert described is not None
    assert dict(offsets) == {p: tuple(info["replicas"]) for p, info in described.items()}


# --- read-only ------------------------------------------------------------------------------------


class _WriteAttempted(AssertionError):
    pass


def test_snapshot_and_import_never_write_in_process(
    kafka_cluster: KafkaCluster,
    topics: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every kazoo write entry point raises; the store's write counter stays at zero."""

    def refuse(name: str) -> Any:
        def method(self: KazooClient, *args: Any, **kwargs: Any) -> Any:
            raise _WriteAttempted(f"kzo tried KazooClient.{name}{args!r}")

        return method

    for name in (
        "create",
        "create_async",
        "set",
        "set_async",
        "delete",
        "delete_async",
        "ensure_path",
        "ensure_path_async",
        "set_acls",
        "set_acls_async",
        "transaction",
        "reconfig",
    ):
        monkeypatch.setattr(KazooClient, name, refuse(name))
    stores: list[store_module.ZkStore] = []
    original_init = store_module.ZkStore.__init__

    def recording_init(self: store_module.ZkStore, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        stores.append(self)

    monkeypatch.setattr(store_module.ZkStore, "__init__", recording_init)
    for command in (["snapshot", "--with-internal"], ["import", "--with-internal"]):
        code = cli_main.main([*command, "--zookeeper", kafka_cluster.zk_connect, "-q"])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert captured.err == ""
        assert any(name in captured.out for name in topics)
    assert len(stores) == 2 and all(s.writes == 0 for s in stores)


def test_snapshot_subprocess_leaves_every_znode_it_reads_unchanged(
    kafka_cluster: KafkaCluster, topics: dict[str, Any]
) -> None:
    names = sorted(topics)
    with kafka_cluster.zk_session() as client:
        before = _znode_stats(client, _read_paths(names))
        for args in (["snapshot"], ["snapshot", "--with-internal", "--reassigning", "original"], ["import"]):
            result = kzo(*args, "--zookeeper", kafka_cluster.zk_connect, "-q")
            assert result.returncode == 0, result.stderr
        after = _znode_stats(client, _read_paths(names))
    assert after == before


# --- errors against a real ZooKeeper --------------------------------------------------------------


@pytest.mark.parametrize("command", ["snapshot", "import"])
def test_a_chroot_without_a_kafka_cluster_is_one_line_and_is_not_created(
    kafka_cluster: KafkaCluster, command: str, tmp_path: Path
) -> None:
    chroot = f"/no-kafka-here-{os.getpid()}"
    connect = f"{kafka_cluster.zk_hosts}{chroot}"
    result = kzo(command, "--zookeeper", connect, "-o", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr == (
        f"kzo {command}: error: no Kafka cluster at {connect}: /brokers/ids does not exist\n"
    )
    assert not (tmp_path / "out").exists()
    root = KazooClient(hosts=kafka_cluster.zk_hosts)
    root.start(timeout=15)
    try:
        assert root.exists(chroot) is None, "the command must not create the chroot"
    finally:
        root.stop()
        root.close()


# --- reassignments in flight ----------------------------------------------------------------------


@pytest.fixture
def stalled_reassignment(
    kafka_cluster: KafkaCluster, kafka: KafkaView
) -> Iterator[tuple[str, int, list[int]]]:
    """A partition moving from one broker to two others, held in flight by a 1 byte/s replication
    throttle (all through Kafka's Admin API, as kafka-reassign-partitions does); undone afterwards."""
    brokers = sorted(b.id for b in kafka_cluster.brokers)
    source, targets = brokers[0], brokers[1:3]
    topic = f"snap-moving-{os.getpid()}-{time.monotonic_ns() % 10**6}"
    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, request_timeout_ms=20000)
    admin.create_topics(
        [
            NewTopic(
                topic, -1, -1, replica_assignments={0: [source]}, topic_configs={"retention.ms": "3600000"}
            )
        ]
    )
    wait_for(lambda: kafka.describe(topic), what=f"{topic} to exist")
    kafka.produce(topic, [b"x" * 10_000] * 100)
    tp = TopicPartition(topic, 0)
    try:
        for broker in brokers:
            admin.alter_configs(
                [
                    ConfigResource(
                        ConfigResourceType.BROKER, str(broker), configs=dict.fromkeys(BROKER_THROTTLES, "1")
                    )
                ],
                raise_on_unknown=False,
            )
        admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic, configs=dict.fromkeys(THROTTLE_KEYS, "*"))],
            raise_on_unknown=False,
        )
        assert admin.alter_partition_reassignments({tp: targets}) == {tp: None}
        wait_for(lambda: tp in admin.list_partition_reassignments(), what="the reassignment to be listed")
        yield topic, source, targets
    finally:
        admin.alter_partition_reassignments({tp: None})
        wait_for(lambda: tp not in admin.list_partition_reassignments(), what="the cancellation")
        delete = (AlterConfigOp.DELETE, None)
        for broker in brokers:
            admin.alter_configs(
                [
                    ConfigResource(
                        ConfigResourceType.BROKER,
                        str(broker),
                        configs=dict.fromkeys(BROKER_THROTTLES, delete),
                    )
                ],
                raise_on_unknown=False,
            )
        admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic, configs=dict.fromkeys(THROTTLE_KEYS, delete))],
            raise_on_unknown=False,
        )
        admin.close()


def test_a_partition_being_reassigned_is_written_as_target_or_original(
    kafka_cluster: KafkaCluster, stalled_reassignment: tuple[str, int, list[int]]
) -> None:
    topic, source, targets = stalled_reassignment
    with kafka_cluster.zk_session() as client:
        raw = json.loads(client.get(f"/brokers/topics/{topic}")[0])
    assert raw["adding_replicas"] == {"0": targets}, "Kafka records the move in the topic znode"

    target = kzo("snapshot", "--zookeeper", kafka_cluster.zk_connect)
    assert target.returncode == 0, target.stderr
    body = json.loads(target.stdout)["topics"][topic]
    assert body["partitions"] == {"0": targets}
    assert body["reassigning"] == {
        "view": "target",
        "partitions": {"0": {"target": targets, "original": [source]}},
    }
    assert "are being reassigned; their target replicas are written" in target.stderr
    assert snapshot_loader.parse_snapshot_json(target.stdout).topics[topic].partitions[0] == tuple(targets)

    original = kzo("snapshot", "--zookeeper", kafka_cluster.zk_connect, "--reassigning", "original")
    assert original.returncode == 0, original.stderr
    assert json.loads(original.stdout)["topics"][topic]["partitions"] == {"0": [source]}
    assert "their original replicas are written" in original.stderr

    imported = kzo("import", "--zookeeper", kafka_cluster.zk_connect, "--topics", topic)
    assert imported.returncode == 0, imported.stderr
    [document] = list(yaml.safe_load_all(imported.stdout))
    assert document["spec"]["replicationFactor"] == len(targets), "the target replication factor"
    assert document["spec"]["config"] == {"retention.ms": "3600000"}, "throttle keys are the operator's"
    assert f"warning: topic {topic}: 1 partition(s) are being reassigned" in imported.stderr


# --- sizes, progress, import ----------------------------------------------------------------------


def test_sizes_from_the_brokers_describe_log_dirs(
    kafka_cluster: KafkaCluster, kafka: KafkaView, topics: dict[str, Any]
) -> None:
    name = next(n for n in topics if n.endswith(".single"))
    kafka.produce(name, [b"y" * 1000] * 20)
    result = kzo(
        "snapshot",
        "--zookeeper",
        kafka_cluster.zk_connect,
        "-q",
        "--sizes-from-bootstrap",
        kafka_cluster.bootstrap_servers,
    )
    assert result.returncode == 0, result.stderr
    sizes = snapshot_loader.parse_snapshot_json(result.stdout).topics[name].sizes
    assert sorted(sizes) == [0, 1, 2]
    assert sum(sizes.values()) >= 20_000


def test_progress_is_drawn_on_a_terminal(
    kafka_cluster: KafkaCluster, topics: dict[str, Any], tmp_path: Path
) -> None:
    primary, secondary = pty.openpty()
    try:
        result = kzo(
            "snapshot",
            "--zookeeper",
            kafka_cluster.zk_connect,
            "-o",
            str(tmp_path / "s.json"),
            stderr=secondary,
        )
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(primary)
    assert result.returncode == 0
    terminal = b"".join(chunks).decode()
    assert "\rkzo snapshot: reading topics " in terminal and "(100%)" in terminal


def test_import_reads_partitions_rf_and_config_overrides_like_kafka(
    kafka_cluster: KafkaCluster,
    kafka: KafkaView,
    topics: dict[str, dict[int, dict[str, Any]]],
    tmp_path: Path,
) -> None:
    prefix = next(iter(topics)).rsplit(".", 1)[0]
    out = tmp_path / "topics"
    result = kzo(
        "import",
        "--zookeeper",
        kafka_cluster.zk_connect,
        "--topics",
        rf"{prefix}\..*",
        "--namespace",
        "kafka",
        "--output-dir",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    documents = {}
    for path in sorted(out.iterdir()):
        [document] = list(yaml.safe_load_all(path.read_text()))
        assert path.name == f"{document['metadata']['name']}.yaml"
        assert path.read_text().startswith(
            f"# Imported by 'kzo import' from ZooKeeper {kafka_cluster.zk_connect} at "
        )
        documents[document["spec"]["topicName"]] = document
    assert sorted(documents) == sorted(topics)
    for name, described in topics.items():
        spec = documents[name]["spec"]
        assert spec["partitions"] == len(described)
        assert spec["replicationFactor"] == len(described[0]["replicas"])
        assert spec.get("config", {}) == kafka.configs(name), "exactly the overrides Kafka reports"
        assert spec["deletionPolicy"] == "Retain"
        assert documents[name]["metadata"]["namespace"] == "kafka"
    audit = next(n for n in topics if n.endswith("Audit_Log"))
    assert documents[audit]["metadata"]["name"].startswith(audit.lower().replace("_", "-") + "-")
