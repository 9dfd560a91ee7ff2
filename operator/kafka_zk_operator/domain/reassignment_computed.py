"""Plans for the computed modes (AddBrokers, RemoveBrokers, Rebalance, ReplicationFactor).

A thin bridge to the placement engine (:mod:`kafka_zk_operator.domain.placement`): the
:class:`~kafka_zk_operator.domain.reassignment_plan.ClusterView` becomes the engine's arrays, the
request becomes one :class:`~kafka_zk_operator.domain.placement.PlanRequest` (one per distinct
target replication factor in ReplicationFactor mode, applied one after the other), and the changed
rows come back as :class:`~kafka_zk_operator.domain.reassignment_plan.PartitionMove` values with
the engine's lower bound M_LB and its optimality verdict.

Topic selection: AddBrokers and RemoveBrokers consider every topic (a removed broker must end
empty, internal topics included). Rebalance takes ``spec.topics`` and ``spec.topicsRegex`` (full
match, union; every non-internal topic when neither is given) and leaves Kafka's internal topics
alone unless ``spec.topics`` names them. ReplicationFactor changes exactly the named topics.

Pure (numpy through the engine); deterministic for a given cluster and request.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain import errors, placement, topic_names
from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.reassignment_plan import ClusterView, PartitionMove, ReassignmentPlan
from kafka_zk_operator.domain.reassignment_request import Mode, ReassignmentRequest
from kafka_zk_operator.domain.wording import brokers_are

_ENGINE_MODE = {
    Mode.ADD_BROKERS: placement.Mode.ADD_BROKERS,
    Mode.REMOVE_BROKERS: placement.Mode.REMOVE_BROKERS,
    Mode.REBALANCE: placement.Mode.REBALANCE,
    Mode.REPLICATION_FACTOR: placement.Mode.REPLICATION_FACTOR,
}


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
    return placement.build_arrays(
        brokers,
        topics,
        np.array([topic_index[t] for t, _, _ in rows], dtype=np.int64),
        np.array([p for _, p, _ in rows], dtype=np.int64),
        replicas,
    )


def _alternation(names: Iterable[str]) -> str:
    return "|".join(re.escape(name) for name in sorted(names))


def _rebalance_selection(request: ReassignmentRequest, cluster: ClusterView) -> tuple[str | None, str | None]:
    """(topics regex, exclude regex) for Rebalance mode."""
    named = set(request.topics)
    unknown = sorted(named - set(cluster.assignments))
    if unknown:
        raise errors.InvalidSpec(f"spec.topics names topics that do not exist: {', '.join(unknown)}")
    parts = []
    if named:
        parts.append(_alternation(named))
    if request.topics_regex:
        parts.append(f"(?:{request.topics_regex})")
    include = "|".join(f"(?:{p})" for p in parts) if parts else None
    internal = sorted(t for t in cluster.assignments if topic_names.is_internal(t) and t not in named)
    exclude = _alternation(internal) if internal else None
    if include is not None and not any(re.fullmatch(include, t) for t in cluster.assignments):
        raise errors.InvalidSpec("spec.topics / spec.topicsRegex select no existing topic")
    return include, exclude


def _requests(request: ReassignmentRequest, cluster: ClusterView) -> list[placement.PlanRequest]:
    mode = _ENGINE_MODE[request.mode]
    tolerance = request.tolerance
    if request.mode in (Mode.ADD_BROKERS, Mode.REMOVE_BROKERS):
        unknown = sorted(set(request.brokers) - set(cluster.brokers))
        if unknown:
            raise errors.InvalidSpec(
                f"spec.brokers: {brokers_are(unknown)} not registered "
                f"(registered: {', '.join(map(str, sorted(cluster.brokers)))})"
            )
        return [placement.PlanRequest(mode=mode, brokers=request.brokers, tolerance=tolerance)]
    if request.mode is Mode.REBALANCE:
        include, exclude = _rebalance_selection(request, cluster)
        return [placement.PlanRequest(mode=mode, topics=include, exclude_topics=exclude, tolerance=tolerance)]
    missing = sorted(set(request.replication_factors) - set(cluster.assignments))
    if missing:
        raise errors.InvalidSpec(
            f"spec.replicationFactors names topics that do not exist: {', '.join(missing)}"
        )
    too_big = {t: rf for t, rf in request.replication_factors.items() if rf > len(cluster.brokers)}
    if too_big:
        raise errors.InvalidSpec(
            f"replication factor above the {len(cluster.brokers)} registered brokers: "
            + ", ".join(f"{t}={rf}" for t, rf in sorted(too_big.items()))
        )
    by_rf: dict[int, list[str]] = {}
    for topic, rf in sorted(request.replication_factors.items()):
        by_rf.setdefault(rf, []).append(topic)
    return [
        placement.PlanRequest(
            mode=mode, topics=_alternation(names), replication_factor=rf, tolerance=tolerance
        )
        for rf, names in sorted(by_rf.items())
    ]


@dataclass(frozen=True, eq=False)
class EngineInputs:
    """The engine's arrays of the cluster, its request(s) (applied in order) and notes so far."""

    arrays: placement.ClusterArrays
    requests: tuple[placement.PlanRequest, ...]
    notes: tuple[str, ...] = ()


def engine_inputs(request: ReassignmentRequest, cluster: ClusterView) -> EngineInputs:
    """What to hand the engine for a computed mode. :raises InvalidSpec, NotSupported:"""
    if request.mode is Mode.EXPLICIT:
        raise ValueError("Explicit mode is planned by reassignment_validation.plan_explicit")
    deleting = sorted(set(cluster.deleting) & set(cluster.assignments))
    view = cluster
    notes: tuple[str, ...] = ()
    if deleting:  # topics queued for deletion are left alone
        view = dataclasses.replace(
            cluster, assignments={t: p for t, p in cluster.assignments.items() if t not in cluster.deleting}
        )
        notes = (f"topics being deleted are left out: {', '.join(deleting)}",)
    return EngineInputs(cluster_arrays(view), tuple(_requests(request, view)), notes)


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


def plan_computed(request: ReassignmentRequest, cluster: ClusterView) -> ReassignmentPlan:
    """Run the placement engine in-process for a computed mode. :raises InvalidSpec, NotSupported:"""
    inputs = engine_inputs(request, cluster)
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
