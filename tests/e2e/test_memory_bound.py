"""The operator under the chart's memory limit, hit with the worst case of each KafkaTopic field.

The real operator process (the session fixture) is moved into a memory cgroup limited to the Helm
chart's ``resources.limits.memory`` with no swap (cgroup v2 ``memory.max``/``memory.swap.max``, or
v1 ``memory.limit_in_bytes``/``memory.memsw.limit_in_bytes``), then given, through the real API
server, the largest resources the CRD admits: each must get a clear reason in status, the process
must never be OOM-killed or restarted, and a normal topic created meanwhile must become Ready in
Kafka. The peak per case is printed as a ``[figures]`` line (docs/reliability.md, memory bound).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import ROOT, Resources, kafkatopic, operator_running
from tests.e2e.kafka_client import KafkaView
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


def _refused(topics: Resources, namespace: str, body: dict[str, object], words: str) -> None:
    with pytest.raises(ApiException) as refused:
        topics.create(namespace, body)
    assert refused.value.status == 422 and words in str(refused.value.body), refused.value.body


def test_worst_case_of_each_field_stays_under_the_chart_limit(
    topics: Resources,
    namespace: str,
    kafka: KafkaView,
    limited: tuple[MemoryCgroup, OperatorProcess],
) -> None:
    group, operator = limited
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
    peaks: dict[str, int] = {}
    for label, (body, words) in cases.items():
        group.reset_peak()
        start = time.monotonic()
        topics.create(namespace, body)
        name = str(body["metadata"]["name"])  # type: ignore[index]
        highest = 0

        def reported(name: str = name) -> dict[str, object] | None:
            nonlocal highest
            highest = max(highest, group.current())
            ready = topics.condition(namespace, name)
            stalled = topics.condition(namespace, name, "Stalled")
            return (
                ready
                if ready and ready.get("status") == "False" and stalled and stalled.get("status") == "True"
                else None
            )

        ready = wait_for(reported, timeout=60, what=f"{label}: Ready=False and Stalled=True")
        assert ready["reason"] in ("NotSupported", "InvalidSpec") and words in str(ready.get("message")), (
            ready
        )
        peaks[label] = max(highest, group.peak())
        print(
            f"[figures] memory bound {label}: peak {peaks[label] / 2**20:.1f} MiB of {limit / 2**20:.0f} MiB "
            f"({ready['reason']}, {time.monotonic() - start:.1f} s)"
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
