"""The placement engine's side of the computed modes.

A thin bridge to the placement engine (:mod:`kafka_zk_operator.domain.placement`): the
:class:`~kafka_zk_operator.domain.reassignment.plan.ClusterView` becomes the engine's arrays, the
mode's engine requests (its rule in ``domain.reassignment.request``: one, or a chain applied one
after the other) run on them, and the changed rows come back as
:class:`~kafka_zk_operator.domain.reassignment.plan.PartitionMove` values with the engine's lower
bound M_LB and its optimality verdict.

Pure (numpy through the engine); deterministic for a given cluster and request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain import errors, placement
from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.reassignment.plan import ClusterView, PartitionMove, ReassignmentPlan


def cluster_arrays(cluster: ClusterView) -> placement.ClusterArrays:
    """The engine's view of the cluster. :raises NotSupported: replicas on unregistered brokers."""
    referenced = {b for parts in cluster.assignments.values() for reps in parts.values() for b in reps}
    absent = sorted(referenced - set(cluster.brokers))
    if absent:
        raise errors.NotSupported(
            f"{_holders(absent)} replicas but {'is' if len(absent) == 1 else 'are'} not registered in "
            "ZooKeeper; "
            "computed plans need every broker that holds replicas to be up (start it again, or move its "
            "replicas with mode Explicit)"
        )
    brokers = [Broker(b, rack) for b, rack in sorted(cluster.brokers.items())]
    index = {broker.id: i for i, broker in enumerate(brokers)}
    topics = sorted(cluster.assignments)
    rows = [(t, p, reps) for ti, t in enumerate(topics) for p, reps in sorted(cluster.assignments[t].items())]
    width = max((len(reps) for _, _, reps in rows), default=0)
    replicas = np.full((len(rows), width), placement.EMPTY, dtype=np.int64)
    for row, (_, _, reps) in enumerate(rows):
        replicas[row, : len(reps)] = [index[b] for b in reps]
    topic_index = {t: i for i, t in enumerate(topics)}
    sizes = (
        np.array([cluster.sizes.get((t, p), 0) for t, p, _ in rows], dtype=np.int64)
        if cluster.sizes
        else None
    )
    return placement.build_arrays(
        brokers,
        topics,
        np.array([topic_index[t] for t, _, _ in rows], dtype=np.int64),
        np.array([p for _, p, _ in rows], dtype=np.int64),
        replicas,
        sizes,
    )


@dataclass(frozen=True, eq=False)
class EngineInputs:
    """The engine's arrays of the cluster, its request(s) (applied in order) and notes so far."""

    arrays: placement.ClusterArrays
    requests: tuple[placement.PlanRequest, ...]
    notes: tuple[str, ...] = ()


def engine_inputs(
    cluster: ClusterView, requests_for: Callable[[ClusterView], Sequence[placement.PlanRequest]]
) -> EngineInputs:
    """The engine's arrays of ``cluster`` and the mode's requests for it (``requests_for``, from the
    mode's rule). Topics queued for deletion are left out. :raises InvalidSpec, NotSupported:"""
    deleting = sorted(set(cluster.deleting) & set(cluster.assignments))
    view = cluster
    notes: tuple[str, ...] = ()
    if deleting:  # topics queued for deletion are left alone
        view = dataclasses.replace(
            cluster, assignments={t: p for t, p in cluster.assignments.items() if t not in cluster.deleting}
        )
        notes = (f"topics being deleted are left out: {', '.join(deleting)}",)
    return EngineInputs(cluster_arrays(view), tuple(requests_for(view)), notes)


def plan_from_engine(
    before: placement.ClusterArrays,
    after: placement.ClusterArrays,
    *,
    lower_bound: int,
    optimal: bool,
    notes: Iterable[str] = (),
) -> ReassignmentPlan:
    """The engine's result as a plan: the rows whose replica list changed."""
    return ReassignmentPlan(
        moves=_moves(before, after), lower_bound=lower_bound, provably_optimal=optimal, notes=tuple(notes)
    )


def plan_with_engine(inputs: EngineInputs) -> ReassignmentPlan:
    """Run the placement engine in-process on ``inputs`` (its requests one after the other)."""
    arrays = inputs.arrays
    lower = 0
    optimal = True
    notes: list[str] = []
    for engine_request in inputs.requests:
        result = placement.plan(arrays, engine_request)
        lower += int(result.report.m_lb)
        optimal = optimal and bool(result.report.optimal)
        notes.extend(result.report.notes)
        arrays = dataclasses.replace(arrays, replicas=result.replicas)
    return plan_from_engine(
        inputs.arrays, arrays, lower_bound=lower, optimal=optimal, notes=[*notes, *inputs.notes]
    )


def _moves(before: placement.ClusterArrays, after: placement.ClusterArrays) -> tuple[PartitionMove, ...]:
    ids = before.broker_ids
    moves = []
    for row in range(before.n_partitions):
        old = before.replicas[row]
        new = after.replicas[row]
        source = tuple(int(ids[b]) for b in old[old >= 0])
        target = tuple(int(ids[b]) for b in new[new >= 0])
        if source != target:
            topic = before.topics[int(before.topic_of[row])]
            moves.append(PartitionMove(topic, int(before.partition_of[row]), source, target))
    return tuple(sorted(moves, key=lambda m: (m.topic, m.partition)))


def _holders(ids: list[int]) -> str:
    names = ", ".join(map(str, ids))
    return f"broker {names} holds" if len(ids) == 1 else f"brokers {names} hold"
