"""The checks of the spec fuzzing (``test_fuzz_specs``): the resources through the Kubernetes
client, ZooKeeper read with a plain kazoo client (never the operator's store), and Kafka's own view
through kafka-python (``KafkaView``). Nothing here goes through the operator's code.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from kafka_zk_operator.domain.kafka.topic_configs import TOPIC_CONFIG_KEYS, ConfigType
from tests.e2e.conftest import GROUP, VERSION
from tests.e2e.kafka_client import KafkaView
from tests.e2e.spec_fuzz_values import ANCHOR, SpecCase
from tests.integration.helpers import wait_for

#: How long the operator has to report a case, and to let go of it once deleted.
REPORT_TIMEOUT = 30.0
DELETE_TIMEOUT = 60.0
ADMISSION_REFUSALS = (400, 413, 422)
TRACEBACK = "Traceback (most recent call last)"
THROTTLE_RATE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
THROTTLED_REPLICA_KEYS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


@dataclass
class FuzzRun:
    """What the module's cases share: the clients, the operator and the tally of outcomes."""

    api: client.CustomObjectsApi
    core: client.CoreV1Api
    namespace: str
    zk: KazooClient
    kafka: KafkaView
    operator: OperatorProcess
    pid: int
    log_offset: int
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    serial: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    #: (seconds, kind, metadata.name) of every case that reached the operator.
    durations: list[tuple[float, str, str]] = field(default_factory=list)

    def timed(self, kind: str, name: str, started: float, reached: bool) -> None:
        took = time.monotonic() - started
        self.seconds[kind] = self.seconds.get(kind, 0.0) + took
        if reached:
            self.durations.append((took, kind, name))

    def next_serial(self) -> int:
        self.serial += 1
        return self.serial

    def new_log(self) -> str:
        """The operator's log written since the last call."""
        with self.operator.log_path.open("rb") as log:
            log.seek(self.log_offset)
            data = log.read()
        self.log_offset += len(data)
        return data.decode(errors="replace")


# ------------------------------------------------------------------ raw ZooKeeper reads


def children(zk: KazooClient, path: str) -> set[str]:
    try:
        return set(zk.get_children(path))
    except NoNodeError:
        return set()


def read_json(zk: KazooClient, path: str) -> dict[str, Any] | None:
    try:
        data, _ = zk.get(path)
    except NoNodeError:
        return None
    loaded: dict[str, Any] = json.loads(data) if data else {}
    return loaded


def mzxid(zk: KazooClient, path: str) -> int | None:
    stat = zk.exists(path)
    return None if stat is None else int(stat.mzxid)


@dataclass(frozen=True)
class ZkSnapshot:
    """What a spec that is not carried out must leave as it was."""

    topics: frozenset[str]
    topic_configs: frozenset[str]
    notifications: frozenset[str]
    #: The last write (mzxid) of the anchor's znodes and of every broker's config.
    versions: tuple[tuple[str, int | None], ...]
    #: Children of /admin created or deleted so far (reassign_partitions, preferred_replica_election).
    admin_changes: int
    topic: str | None = None

    @staticmethod
    def take(zk: KazooClient, topic: str | None = None) -> ZkSnapshot:
        """The state now; with ``topic``, its own znodes are watched too (it exists already)."""
        watched = [f"/brokers/topics/{ANCHOR}", f"/config/topics/{ANCHOR}"]
        if topic is not None and is_topic_path(topic):
            watched += [f"/brokers/topics/{topic}", f"/config/topics/{topic}"]
        watched += [f"/config/brokers/{b}" for b in sorted(children(zk, "/brokers/ids"))]
        admin = zk.exists("/admin")
        return ZkSnapshot(
            topics=frozenset(children(zk, "/brokers/topics")),
            topic_configs=frozenset(children(zk, "/config/topics")),
            notifications=frozenset(children(zk, "/config/changes")),
            versions=tuple((path, mzxid(zk, path)) for path in watched),
            admin_changes=0 if admin is None else int(admin.cversion),
            topic=topic,
        )

    def writes_since(self, zk: KazooClient) -> list[str]:
        """The writes a spec that was not carried out could have made since this snapshot."""
        now = ZkSnapshot.take(zk, self.topic)
        found = [f"/brokers/topics/{t} created" for t in sorted(now.topics - self.topics)]
        found += [f"/config/topics/{t} created" for t in sorted(now.topic_configs - self.topic_configs)]
        for child in sorted(now.notifications - self.notifications):
            notice = read_json(zk, f"/config/changes/{child}") or {}
            found.append(f"config change notification {child} for {notice.get('entity_path')}")
        before = dict(self.versions)
        for path, version in now.versions:
            if before.get(path, version) != version:
                found.append(f"{path} written (mzxid {before.get(path)} -> {version})")
        if now.admin_changes != self.admin_changes:
            found.append("a child of /admin (reassign_partitions, preferred_replica_election) came or went")
        return found


# ------------------------------------------------------------------ the API server side


def create(run: FuzzRun, plural: str, body: dict[str, Any]) -> ApiException | None:
    """Create the resource; the API server's refusal when it refuses it."""
    try:
        run.api.create_namespaced_custom_object(GROUP, VERSION, run.namespace, plural, body)
    except ApiException as exc:
        if exc.status in ADMISSION_REFUSALS:
            return exc
        raise
    return None


def get(run: FuzzRun, plural: str, name: str) -> dict[str, Any] | None:
    try:
        return cast(
            "dict[str, Any]",
            run.api.get_namespaced_custom_object(GROUP, VERSION, run.namespace, plural, name),
        )
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def ready_condition(body: dict[str, Any]) -> dict[str, Any] | None:
    for condition in (body.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return dict(condition)
    return None


def reported(body: dict[str, Any] | None) -> bool:
    """The status describes the current generation, with a Ready condition that has a reason."""
    if body is None:
        return False
    status = body.get("status") or {}
    ready = ready_condition(body)
    return (
        status.get("observedGeneration") == body["metadata"].get("generation")
        and ready is not None
        and bool(ready.get("reason"))
    )


def wait_settled(
    run: FuzzRun,
    plural: str,
    name: str,
    settled: Callable[[dict[str, Any]], bool],
    what: str,
    timeout: float = REPORT_TIMEOUT,
) -> dict[str, Any]:
    """The resource once the operator has reported its current generation and ``settled`` holds."""
    deadline = time.monotonic() + timeout
    body = get(run, plural, name)
    while time.monotonic() < deadline:
        body = get(run, plural, name)
        if body is not None and reported(body) and settled(body):
            return body
        time.sleep(0.3)
    status = (body or {}).get("status")
    raise AssertionError(f"{what} {name} was not reported within {timeout:.0f} s; status: {status!r}")


def delete(run: FuzzRun, plural: str, name: str) -> None:
    try:
        run.api.delete_namespaced_custom_object(GROUP, VERSION, run.namespace, plural, name)
    except ApiException as exc:
        if exc.status != 404:
            raise
    wait_for(
        lambda: get(run, plural, name) is None,
        timeout=DELETE_TIMEOUT,
        interval=0.3,
        what=f"{plural} {name} to be deleted (finalizer removed)",
    )


def operator_intact(run: FuzzRun, case: SpecCase) -> None:
    assert run.operator.proc is not None and run.operator.proc.poll() is None, "the operator exited"
    assert run.operator.pid == run.pid, "the operator was restarted"
    new = run.new_log()
    if TRACEBACK in new:
        start = new.index(TRACEBACK)
        raise AssertionError(
            f"the operator logged a traceback during {case.kind} {case.body['metadata']['name']}:\n"
            + new[max(0, start - 2000) : start + 4000]
        )


# ------------------------------------------------------------------ Kafka's view of a Ready topic


def java_trim(text: str) -> str:
    return text.strip("".join(chr(c) for c in range(33)))


def same_config_value(key: str, wanted: str, shown: str | None) -> bool:
    """Whether Kafka shows ``wanted`` (as the spec gave it) for ``key`` (``ConfigDef.convertToString``)."""
    if shown is None:
        return False
    spec = TOPIC_CONFIG_KEYS.get(key)
    text = java_trim(wanted)
    if spec is None or spec.type is ConfigType.STRING:
        return shown == text
    if spec.type in (ConfigType.INT, ConfigType.LONG):
        return int(shown) == int(text)
    if spec.type is ConfigType.DOUBLE:
        number, kafka = float(text.rstrip("dDfF")), float(shown)
        return math.isclose(kafka, number) or kafka == number or (math.isnan(kafka) and math.isnan(number))
    if spec.type is ConfigType.BOOLEAN:
        return shown == text.lower()
    return shown == ",".join(re.split(r"\s*,\s*", text)) if text else shown == ""


def check_topic_in_kafka(run: FuzzRun, topic: str, spec: dict[str, Any]) -> None:
    partitions, rf = int(spec["partitions"]), int(spec["replicationFactor"])

    def served() -> dict[int, dict[str, Any]] | None:
        described = run.kafka.describe(topic)
        if not described or len(described) != partitions:
            return None
        return (
            described
            if all(p["leader"] is not None and p["leader"] >= 0 for p in described.values())
            else None
        )

    described = wait_for(served, timeout=30, what=f"Kafka to serve {topic} with {partitions} partitions")
    for partition, state in described.items():
        assert len(state["replicas"]) == rf, f"{topic}-{partition}: {state['replicas']} for RF {rf}"
    if isinstance(spec.get("assignment"), dict) and spec["assignment"]:
        wanted = {int(p): list(r) for p, r in spec["assignment"].items()}
        assert {p: s["replicas"] for p, s in described.items()} == wanted
    config: dict[str, str] = spec.get("config") or {}
    if config:

        def applied() -> dict[str, str] | None:
            shown = run.kafka.configs(topic)
            ok = all(same_config_value(k, v, shown.get(k)) for k, v in config.items())
            return shown if ok else None

        try:
            wait_for(applied, timeout=30, what=f"Kafka to show the config of {topic}")
        except AssertionError:
            shown = run.kafka.configs(topic)
            raise AssertionError(
                f"Kafka's config of {topic} differs from the spec: "
                + ", ".join(f"{k}: spec {v!r}, Kafka {shown.get(k)!r}" for k, v in sorted(config.items()))
            ) from None


def is_topic_path(topic: str) -> bool:
    return topic not in ("", ".", "..") and re.fullmatch(r"[a-zA-Z0-9._-]+", topic) is not None


def replace_spec(run: FuzzRun, plural: str, name: str, spec: dict[str, Any]) -> ApiException | None:
    """Replace the whole spec (a JSON patch); the API server's refusal when it refuses it."""
    try:
        run.api.patch_namespaced_custom_object(
            GROUP,
            VERSION,
            run.namespace,
            plural,
            name,
            [{"op": "replace", "path": "/spec", "value": spec}],
            _content_type="application/json-patch+json",
        )
    except ApiException as exc:
        if exc.status in ADMISSION_REFUSALS:
            return exc
        raise
    return None


def check_moves_in_kafka(run: FuzzRun, status: dict[str, Any]) -> None:
    plan = status.get("plan") or []
    assert not status.get("planTruncated"), "a fuzz reassignment moves at most the anchor's 3 partitions"

    def placed() -> bool:
        for move in plan:
            described = run.kafka.describe(move["topic"]) or {}
            if (described.get(move["partition"]) or {}).get("replicas") != move["to"]:
                return False
        return True

    wait_for(placed, timeout=30, what=f"Kafka to show the planned replicas {plan}")
    assert read_json(run.zk, "/admin/reassign_partitions") is None, "the reassignment znode was left behind"
    # The election the operator asked for after the last batch: Kafka's controller removes its znode
    # once done (the next case's snapshot must not see that as a write of its own).
    wait_for(
        lambda: run.zk.exists("/admin/preferred_replica_election") is None,
        timeout=30,
        what="Kafka's controller to finish the preferred-leader election",
    )

    def unthrottled() -> list[str]:
        left = [
            f"brokers/{b}: {k}"
            for b in sorted(children(run.zk, "/brokers/ids"))
            for k in THROTTLE_RATE_KEYS
            if k in ((read_json(run.zk, f"/config/brokers/{b}") or {}).get("config") or {})
        ]
        config = (read_json(run.zk, f"/config/topics/{ANCHOR}") or {}).get("config") or {}
        return left + [f"topics/{ANCHOR}: {k}" for k in THROTTLED_REPLICA_KEYS if k in config]

    left = unthrottled()
    assert not left, f"throttles left after the reassignment completed: {left}"
