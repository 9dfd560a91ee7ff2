"""One evaluator for every planner of ``peers_bench.py``: a plan from any tool, read back as a replica
matrix, is checked for validity and then scored by the project's own report code.

:func:`plan_from_assignment` turns a tool's proposed assignment (``(topic, partition) -> broker
ids``, as in Kafka's reassignment JSON) into the engine's matrix of broker indexes; partitions the
tool does not list keep their replicas (that is how Kafka applies a reassignment). :func:`validate`
lists what is wrong with a plan (unknown partitions or brokers, a replication factor changed, a
broker twice in one partition, a removed broker still holding replicas). :func:`score` computes
the figures with ``placement.report.build_report`` against the targets and the bound M_LB of the
request (``placement.broker_stage``), the byte bound with ``byte_balance.bytes_lower_bound`` for
the plan's own byte balance, and the leader targets with the engine's leader stage, so every tool,
this planner included, is judged by the same code on the same snapshot.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "operator"))

from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement import ClusterArrays, PlanRequest, broker_stage
from kafka_zk_operator.domain.placement.byte_balance import bytes_lower_bound
from kafka_zk_operator.domain.placement.byte_targets import DEFAULT_BYTE_TOLERANCE, byte_targets
from kafka_zk_operator.domain.placement.leaders import balance_leaders
from kafka_zk_operator.domain.placement.planner import count_moves_mask
from kafka_zk_operator.domain.placement.report import broker_bytes, build_report

Assignment = Mapping[tuple[str, int], Sequence[int]]


def plan_from_assignment(cluster: ClusterArrays, proposed: Assignment) -> tuple[np.ndarray, list[str]]:
    """The replica matrix (broker indexes) after ``proposed``, and the problems met reading it
    (unknown partitions, unknown brokers, a broker twice in a partition)."""
    row_of = {
        (cluster.topics[int(t)], int(p)): i
        for i, (t, p) in enumerate(zip(cluster.topic_of.tolist(), cluster.partition_of.tolist(), strict=True))
    }
    index = {int(b): i for i, b in enumerate(cluster.broker_ids.tolist())}
    width = max([cluster.replicas.shape[1], *(len(r) for r in proposed.values())])
    after = np.full((cluster.n_partitions, width), -1, dtype=np.int64)
    after[:, : cluster.replicas.shape[1]] = cluster.replicas
    problems: list[str] = []
    for (topic, partition), replicas in proposed.items():
        row = row_of.get((topic, partition))
        if row is None:
            problems.append(f"unknown partition {topic}-{partition}")
            continue
        unknown = [b for b in replicas if b not in index]
        if unknown:
            problems.append(f"{topic}-{partition}: unknown broker(s) {unknown}")
            continue
        if len(set(replicas)) != len(replicas):
            problems.append(f"{topic}-{partition}: a broker twice in {list(replicas)}")
        after[row] = -1
        after[row, : len(replicas)] = [index[b] for b in replicas]
    return after, problems


def validate(
    cluster: ClusterArrays, after: np.ndarray, *, removed: Iterable[int] = (), rf: int | None = None
) -> list[str]:
    """What is wrong with the plan ``after`` (empty: valid): every partition of the snapshot present
    with its replication factor (or ``rf``), only brokers of the cluster, no broker twice in a
    partition, no replica left on a ``removed`` broker."""
    problems: list[str] = []
    if after.shape[0] != cluster.n_partitions:
        return [f"{after.shape[0]} partitions in the plan, {cluster.n_partitions} in the snapshot"]
    want = np.full(cluster.n_partitions, rf) if rf is not None else cluster.replication_factors()
    have = (after >= 0).sum(axis=1)
    if bad := int((have != want).sum()):
        problems.append(
            f"{bad} partition(s) with a replication factor other than {sorted(set(want.tolist()))}"
        )
    if int(((after >= cluster.n_brokers) | (after < -1)).sum()):
        problems.append("replicas on brokers that do not exist")
    ordered = np.sort(np.where(after >= 0, after, -1 - np.arange(after.shape[1])), axis=1)
    if dup := int((np.diff(ordered, axis=1) == 0).any(axis=1).sum()):
        problems.append(f"{dup} partition(s) with a broker twice")
    for broker in removed:
        left = int((after == cluster.broker_index(broker)).sum())
        if left:
            problems.append(f"removed broker {broker} still holds {left} replica(s)")
    return problems


def score(
    cluster: ClusterArrays,
    request: PlanRequest,
    after: np.ndarray,
    *,
    byte_tolerance: float = DEFAULT_BYTE_TOLERANCE,
) -> dict[str, float | int]:
    """The figures of one plan, computed by the project's report code (module docstring)."""
    stage = broker_stage(cluster, request)
    orig_leader = cluster.replicas[:, 0].copy()
    lead = balance_leaders(
        after,
        orig_leader,
        movable=stage.movable,
        eligible=stage.eligible,
        moved=count_moves_mask(cluster.replicas, after),
        row_hash=stage.row_hash,
    )
    targets = byte_targets(
        stage.replicas,
        sizes=cluster.sizes,
        movable=stage.movable,
        rf_new=stage.rf_new,
        ctx=stage.ctx,
        tolerance=byte_tolerance,
    )
    n = cluster.n_brokers
    change = np.where(stage.movable, stage.rf_new - cluster.replication_factors(), 0)
    bound = bytes_lower_bound(
        broker_bytes(cluster.replicas, cluster.sizes, n + 1)[:n],
        broker_bytes(after, cluster.sizes, n + 1)[:n],
        target=targets.target,
        eligible=stage.eligible,
        placed=int((cluster.sizes * np.maximum(0, change)).sum()),
        dropped=int((cluster.sizes * np.maximum(0, -change)).sum()),
    )
    report = build_report(
        mode=request.mode.cli_name,
        cluster=cluster,
        after=after,
        selected=stage.movable,
        eligible=stage.eligible,
        added=stage.added,
        replica_target=stage.targets.target,
        leader_target=lead.target,
        m_lb=stage.m_lb,
        exact_moves=None,
        leader_changes=int((after[:, 0] != orig_leader).sum()),
        leader_lb=lead.lower_bound,
        replicas_added=stage.replicas_added,
        replicas_removed=stage.replicas_removed,
        unresolved_units=0,
        two_hop_moves=0,
        replica_band=(stage.targets.lo, stage.targets.hi),
        skewed=(),
        notes=(),
        bytes_lower_bound=bound,
    )
    _, max_r, mean_r = report.spread()
    _, max_l, mean_l = report.spread(leaders=True)
    _, max_b, mean_b = report.byte_spread()
    return {
        "moves": report.moves,
        "m_lb": report.m_lb,
        "bytes_moved": report.bytes_moved,
        "bytes_lb": bound,
        "max_mean_replicas": max_r / mean_r if mean_r else 0.0,
        "max_mean_leaders": max_l / mean_l if mean_l else 0.0,
        "max_mean_bytes": max_b / mean_b if mean_b else 0.0,
        "rack_violations": report.rack_violations_after,
        "leader_changes": report.leader_changes,
    }


def request_for(raw: Mapping[str, object]) -> PlanRequest:
    """The :class:`PlanRequest` of a bench case's request dict (``mode``, ``brokers``)."""
    brokers = raw.get("brokers", [])
    assert isinstance(brokers, list)
    return PlanRequest(Mode.parse(str(raw["mode"])), brokers=tuple(int(b) for b in brokers))
