"""The operator under the chart's memory limit, hit with the worst case of each KafkaTopic and
PartitionReassignment field.

A fresh operator process is started inside a memory cgroup limited to the Helm chart's
``resources.limits.memory`` with no swap (cgroup v2 ``memory.max``/``memory.swap.max``, or v1
``memory.limit_in_bytes``/``memory.memsw.limit_in_bytes``; only v1 has run so far: the machines
of the suite are cgroup v1), then given, through the real API server, the largest resources the
CRDs admit: each must get a clear reason in status, the process must never be OOM-killed or
restarted, and a normal topic created afterwards must become Ready in Kafka. The peak per case is
printed as a ``[figures]`` line (docs/reliability.md, memory bound).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import ROOT, Resources, kafkatopic, operator_running
from tests.e2e.kafka_client import KafkaView
from tests.e2e.reassignment_helpers import create_topic, reassignment
from tests.integration.helpers import wait_for

_UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def chart_memory_limit() -> int:
    values = yaml.safe_load((ROOT / "charts" / "kafka-zk-operator" / "values.yaml").read_text())
    text = str(values["resources"]["limits"]["memory"])
    return int(text[:-2]) * _UNITS[text[-2:]] if text[-2:] in _UNITS else int(text)


class MemoryCgroup:
    """A memory cgroup (v2 if the memory controller is there, else v1) holding one process."""

    def __init__(self, limit: int) -> None:
        unified = Path("/sys/fs/cgroup")
        self.v2 = (unified / "cgroup.controllers").exists() and "memory" in (
            unified / "cgroup.controllers"
        ).read_text().split()
        if self.v2:
            own = Path(Path("/proc/self/cgroup").read_text().split("::", 1)[1].strip().lstrip("/"))
            self.parent = unified / own
        else:
            line = next(x for x in Path("/proc/self/cgroup").read_text().splitlines() if ":memory:" in x)
            own_v1 = line.split(":memory:", 1)[1].strip().lstrip("/")
            self.parent = Path("/sys/fs/cgroup/memory") / own_v1
        self.path = self.parent / f"kzo-test-membound-{os.getpid()}"
        self.path.mkdir()
        if self.v2:
            control = self.parent / "cgroup.subtree_control"
            if "memory" not in control.read_text().split():
                control.write_text("+memory")
            (self.path / "memory.max").write_text(str(limit))
            (self.path / "memory.swap.max").write_text("0")
        else:
            (self.path / "memory.limit_in_bytes").write_text(str(limit))
            (self.path / "memory.memsw.limit_in_bytes").write_text(str(limit))

    def _read(self, name: str) -> str:
        return (self.path / name).read_text()

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def leave(self, pid: int) -> None:
        (self.parent / "cgroup.procs").write_text(str(pid))

    def remove(self) -> None:
        self.path.rmdir()

    def current(self) -> int:
        return int(self._read("memory.current" if self.v2 else "memory.usage_in_bytes"))

    def reset_peak(self) -> None:
        if not self.v2:
            (self.path / "memory.max_usage_in_bytes").write_text("0")

    def peak(self) -> int:
        name = "memory.peak" if self.v2 else "memory.max_usage_in_bytes"
        return int(self._read(name)) if (self.path / name).exists() else self.current()

    def oom_kills(self) -> int:
        text = self._read("memory.events" if self.v2 else "memory.oom_control")
        return int(dict(line.split() for line in text.splitlines() if line.strip()).get("oom_kill", 0))


@pytest.fixture
def limited(
    operator: OperatorProcess, kafka_cluster: KafkaCluster, tmp_path: Path
) -> Iterator[tuple[MemoryCgroup, OperatorProcess]]:
    """A fresh operator process started inside the cgroup (pages are charged where they are
    faulted in, so a process moved in later would leave its imports outside); the session
    operator is stopped meanwhile."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create a memory cgroup")
    try:
        group = MemoryCgroup(chart_memory_limit())
    except OSError as exc:
        pytest.skip(f"no writable memory cgroup here: {exc}")
    operator.stop()
    try:
        group.add(os.getpid())  # the child started now inherits the cgroup
        try:
            with operator_running(
                kafka_cluster, tmp_path, {"KZO_CREATE_WAIT_SECONDS": "10"}
            ) as limited_operator:
                group.leave(os.getpid())
                yield group, limited_operator
        finally:
            group.leave(os.getpid())
    finally:
        operator.start()
        group.remove()


#: A topic whose name makes ``(a+)+b`` take 2^40 steps in Python's re (the case of topicsRegex).
A_TOPIC = "a" * 40
#: Kafka's reassignment JSON just under its 1 MiB maxLength: 22,500 short entries (1,046,418 bytes).
_JSON_ENTRIES = 22_500


def _json_doc(partitions: list[dict[str, object]]) -> str:
    return json.dumps({"version": 1, "partitions": partitions}, separators=(",", ":"))


def reassignment_cases() -> dict[str, tuple[dict[str, object], str]]:
    """label -> (PartitionReassignment body, words its Ready message must contain)."""
    nested = "(?:" * 200 + "a+" + ")+" * 200 + "b"  # 1,004 characters of nested quantifiers
    return {
        # spec.partitions at maxItems, for a topic that does not exist (each entry is checked).
        "kpr partitions=20000": (
            reassignment(
                "mb-kpr-partitions",
                mode="Explicit",
                partitions=[
                    {"topic": "mb-absent", "partition": p, "replicas": [1, 2, 3]} for p in range(20_000)
                ],
            ),
            "does not exist",
        ),
        # reassignmentJson at about its 1 MiB maxLength: refused by count before entries are built.
        "kpr reassignmentJson=1MiB,22500 entries": (
            reassignment(
                "mb-kpr-json",
                mode="Explicit",
                reassignmentJson=_json_doc(
                    [{"topic": "t", "partition": p, "replicas": [1]} for p in range(_JSON_ENTRIES)]
                ),
            ),
            "at most 20,000",
        ),
        # One partition with 150,000 distinct replicas (~1 MiB): the duplicate check was quadratic.
        "kpr reassignmentJson=1 partition x 150000 replicas": (
            reassignment(
                "mb-kpr-replicas",
                mode="Explicit",
                reassignmentJson=_json_doc(
                    [{"topic": "t", "partition": 0, "replicas": list(range(150_000))}]
                ),
            ),
            "at most 32",
        ),
        # 1 MiB of "[": json.loads raised RecursionError.
        "kpr reassignmentJson=1MiB nesting": (
            reassignment("mb-kpr-nesting", mode="Explicit", reassignmentJson="[" * 1_048_576),
            "too deeply",
        ),
        # spec.brokers at maxItems, none registered.
        "kpr brokers=1000": (
            reassignment("mb-kpr-brokers", mode="AddBrokers", brokers=list(range(1_000, 2_000))),
            "not registered",
        ),
        # spec.topics: as many 249-character names as the API server stores (see the docs).
        "kpr topics=2500x249": (
            reassignment(
                "mb-kpr-topics", mode="Rebalance", topics=[f"{i:05d}-{'x' * 243}" for i in range(2_500)]
            ),
            "and 2,490 more",
        ),
        # Catastrophic backtracking for re against A_TOPIC; matched without backtracking now.
        "kpr topicsRegex=(a+)+b": (
            reassignment("mb-kpr-regex", mode="Rebalance", topicsRegex="(a+)+b"),
            "select no existing topic",
        ),
        # Every field at its maximum at once: 1,004-character nested regex, batch and throttle maxima.
        "kpr combined maxima": (
            reassignment(
                "mb-kpr-combined",
                mode="Rebalance",
                topicsRegex=nested,
                batch={"maxPartitions": 10_000, "maxMovesPerBroker": 1_000},
                throttle=2**63 - 1,
                tolerance=2**31 - 1,
                balance="replicas",
                rackPolicy="Warn",
                approval="Auto",
            ),
            "select no existing topic",
        ),
    }


def _refused(topics: Resources, namespace: str, body: dict[str, object], words: str) -> None:
    with pytest.raises(ApiException) as refused:
        topics.create(namespace, body)
    assert refused.value.status == 422 and words in str(refused.value.body), refused.value.body


def test_worst_case_of_each_field_stays_under_the_chart_limit(
    topics: Resources,
    namespace: str,
    kafka: KafkaView,
    api_client: client.ApiClient,
    limited: tuple[MemoryCgroup, OperatorProcess],
) -> None:
    group, operator = limited
    kprs = Resources(api_client, "partitionreassignments")
    if A_TOPIC not in kafka.topic_names():
        create_topic(kafka, A_TOPIC, {0: [1]})
    pid, limit = operator.pid, chart_memory_limit()
    started = group.current()
    # What the API server refuses never reaches the operator.
    _refused(topics, namespace, kafkatopic("mb-million", partitions=1_000_000, rf=1), "88307")
    _refused(topics, namespace, kafkatopic("mb-product", partitions=60_000, rf=10), "524287")
    # label -> (body, words the Ready condition's message must contain)
    cases: dict[str, tuple[dict[str, object], str]] = {
        # The most partitions the schema admits at RF 3: no znode that long fits in one request.
        "partitions=88307,rf=3": (kafkatopic("mb-partitions", partitions=88_307, rf=3), "jute.maxbuffer"),
        # Close to the most replicas the schema admits: 88307 x 5 = 441535 (the CEL bound is 524287).
        "partitions=88307,rf=5": (kafkatopic("mb-product-max", partitions=88_307, rf=5), "jute.maxbuffer"),
        # RF far above the live brokers.
        "rf=32767": (kafkatopic("mb-rf", partitions=16, rf=32_767), "32767"),
        # An explicit assignment at maxProperties (10000 x 3) naming an unregistered broker.
        "assignment=10000x3": (
            kafkatopic(
                "mb-assignment",
                partitions=10_000,
                rf=3,
                assignment={str(p): [p % 3, (p + 1) % 3, 999_999] for p in range(10_000)},
            ),
            "999999",
        ),
        # config at maxProperties with maxLength values (unknown keys: refused by Kafka's rules).
        "config=100x4096": (
            kafkatopic("mb-config", config={f"x.unknown.{i}": "v" * 4096 for i in range(100)}),
            "x.unknown.",
        ),
    }
    resources = {label: topics for label in cases}
    for label, case in reassignment_cases().items():
        cases[label] = case
        resources[label] = kprs
    peaks: dict[str, int] = {}
    for label, (body, words) in cases.items():
        group.reset_peak()
        start = time.monotonic()
        kind = resources[label]
        kind.create(namespace, body)
        created = time.monotonic() - start  # the API server's part (validation, storage)
        name = str(body["metadata"]["name"])  # type: ignore[index]
        highest = 0

        def reported(name: str = name, kind: Resources = kind) -> dict[str, object] | None:
            nonlocal highest
            highest = max(highest, group.current())
            try:  # one read per poll: the object is up to 1.5 MB
                got = kind.get(namespace, name) or {}
            except ApiException as exc:  # a loaded API server may time out (504): ask again
                if exc.status is not None and exc.status >= 500:
                    return None
                raise
            conditions = {c.get("type"): c for c in (got.get("status") or {}).get("conditions") or []}
            ready, stalled = conditions.get("Ready"), conditions.get("Stalled")
            return (
                ready
                if ready and ready.get("status") == "False" and stalled and stalled.get("status") == "True"
                else None
            )

        ready = wait_for(reported, timeout=120, what=f"{label}: Ready=False and Stalled=True")
        assert ready["reason"] in ("NotSupported", "InvalidSpec") and words in str(ready.get("message")), (
            ready
        )
        assert operator.pid == pid and operator.running(), f"{label}: the operator restarted"
        peaks[label] = max(highest, group.peak())
        print(
            f"[figures] memory bound {label}: peak {peaks[label] / 2**20:.1f} MiB of {limit / 2**20:.0f} MiB "
            f"({ready['reason']}, {time.monotonic() - start:.1f} s, of which create {created:.1f} s)"
        )
    normal = "mb-normal"
    topics.create(namespace, kafkatopic(normal, partitions=3, rf=3))
    topics.wait_ready(namespace, normal, timeout=60)
    described = wait_for(lambda: kafka.describe(normal), timeout=30, what="the normal topic in Kafka")
    assert len(described) == 3 and all(len(p["replicas"]) == 3 for p in described.values())
    assert group.oom_kills() == 0 and operator.pid == pid and operator.running()
    print(
        f"[figures] memory bound overall: peak {max(peaks.values()) / 2**20:.1f} MiB, oom_kill 0, same pid {pid}"
    )
    print(f"[figures] memory bound baseline (operator started, idle): {started / 2**20:.1f} MiB")
