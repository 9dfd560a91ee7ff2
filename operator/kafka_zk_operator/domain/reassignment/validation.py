"""Checks a reassignment must pass before anything is written to ZooKeeper (reference §13 rule 8).

:func:`plan_explicit` turns an Explicit request into a plan against the cluster it will run on:
every topic and partition exists and is not being deleted, every replica list is non-empty,
duplicate-free and names only registered brokers, a topic's partitions keep one replication
factor, and replicas spread over racks as ``rackPolicy`` demands. All problems are reported at
once in one :class:`~kafka_zk_operator.domain.errors.InvalidSpec`. Partitions already holding
exactly the requested list are dropped from the plan (Kafka would complete them at once).

:func:`submission_problems` repeats the existence checks for one batch just before its znode is
created (the cluster may have changed since the proposal): the controller silently drops entries
for unknown or deleted topics, so they must never reach the znode.

Pure: no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.model import BrokerId
from kafka_zk_operator.domain.reassignment.plan import ClusterView, PartitionMove, ReassignmentPlan
from kafka_zk_operator.domain.reassignment.spec import RackPolicy, RequestedPartition

MAX_PROBLEMS_SHOWN = 20


def _join(problems: Sequence[str]) -> str:
    shown = "; ".join(problems[:MAX_PROBLEMS_SHOWN])
    more = len(problems) - MAX_PROBLEMS_SHOWN
    return shown + (f" (and {more} more)" if more > 0 else "")


def _live_list(cluster: ClusterView) -> str:
    return ", ".join(str(b) for b in sorted(cluster.brokers)) or "none"


def replica_problems(name: str, replicas: Sequence[BrokerId], cluster: ClusterView) -> list[str]:
    """Empty, duplicate or unregistered brokers in one replica list."""
    if not replicas:
        return [f"partition {name} has an empty replica list (it would delete every replica)"]
    problems = []
    counts = Counter(replicas)
    duplicates = sorted(b for b, n in counts.items() if n > 1)
    if duplicates:
        problems.append(f"partition {name} lists broker {', '.join(map(str, duplicates))} more than once")
    unknown = sorted({b for b in replicas if b not in cluster.brokers})
    if unknown:
        problems.append(
            f"partition {name}: broker {', '.join(map(str, unknown))} is not a registered broker "
            f"(registered: {_live_list(cluster)})"
        )
    return problems


def rack_problem(name: str, replicas: Sequence[BrokerId], cluster: ClusterView) -> str | None:
    """A replica list that leaves a rack out while two replicas share another one."""
    if not cluster.has_racks or any(b not in cluster.brokers for b in replicas):
        return None
    racks = [cluster.brokers[b] for b in replicas]
    wanted = min(len(replicas), cluster.rack_count)
    if len(set(racks)) >= wanted:
        return None
    return (
        f"partition {name}: replicas {list(replicas)} span {len(set(racks))} rack(s) "
        f"({', '.join(sorted({str(r) for r in racks}))}) although {wanted} are possible"
    )


def plan_explicit(
    requested: Sequence[RequestedPartition], cluster: ClusterView, rack_policy: RackPolicy
) -> ReassignmentPlan:
    """Validate an Explicit request and make it a plan. :raises InvalidSpec: every problem found."""
    problems: list[str] = []
    warnings: list[str] = []
    moves: list[PartitionMove] = []
    unchanged = 0
    requested_rf: dict[str, dict[int, int]] = {}
    for entry in requested:
        partitions = cluster.assignments.get(entry.topic)
        if partitions is None:
            problems.append(f"topic '{entry.topic}' does not exist")
            continue
        if entry.topic in cluster.deleting:
            problems.append(f"topic '{entry.topic}' is being deleted")
            continue
        current = partitions.get(entry.partition)
        if current is None:
            problems.append(
                f"partition {entry.name} does not exist (topic '{entry.topic}' has {len(partitions)} partitions)"
            )
            continue
        found = replica_problems(entry.name, entry.replicas, cluster)
        problems.extend(found)
        if found:
            continue
        rack = rack_problem(entry.name, entry.replicas, cluster)
        if rack is not None:
            (problems if rack_policy is RackPolicy.ENFORCE else warnings).append(rack)
        requested_rf.setdefault(entry.topic, {})[entry.partition] = len(entry.replicas)
        if entry.replicas == current:
            unchanged += 1
            continue
        moves.append(PartitionMove(entry.topic, entry.partition, current, entry.replicas))
    problems.extend(_replication_factor_problems(requested_rf, cluster))
    if problems:
        raise errors.InvalidSpec(
            f"{len(problems)} problem(s) in the requested reassignment: {_join(problems)}"
        )
    notes = (
        (f"{unchanged} partition(s) already have the requested replicas and are skipped",)
        if unchanged
        else ()
    )
    ordered = tuple(sorted(moves, key=lambda m: (m.topic, m.partition)))
    return ReassignmentPlan(
        moves=ordered,
        lower_bound=sum(m.moves for m in ordered),
        provably_optimal=True,
        notes=notes,
        warnings=tuple(warnings),
    )


def _replication_factor_problems(requested: dict[str, dict[int, int]], cluster: ClusterView) -> list[str]:
    """A topic whose partitions would end with different replica counts (reference §13 rule 3)."""
    problems = []
    for topic, wanted in sorted(requested.items()):
        current = cluster.assignments[topic]
        if all(len(current[p]) == rf for p, rf in wanted.items()):
            continue
        final = {p: wanted.get(p, len(replicas)) for p, replicas in current.items()}
        counts = sorted(set(final.values()))
        if len(counts) > 1:
            odd = sorted(p for p, rf in final.items() if rf != final[min(final)])[:10]
            problems.append(
                f"topic '{topic}' would mix replication factors {counts} (partition 0 has {final[min(final)]}, "
                f"partitions {odd} differ); change every partition or use mode ReplicationFactor"
            )
    return problems


def submission_problems(moves: Iterable[PartitionMove], cluster: ClusterView) -> list[str]:
    """Why some moves of a batch can never be written to the reassignment znode (fatal)."""
    problems: list[str] = []
    for move in moves:
        partitions = cluster.assignments.get(move.topic)
        if partitions is None:
            problems.append(f"topic '{move.topic}' no longer exists")
        elif move.topic in cluster.deleting:
            problems.append(f"topic '{move.topic}' is being deleted")
        elif move.partition not in partitions:
            problems.append(f"partition {move.name} no longer exists")
    return problems


def unregistered_targets(moves: Iterable[PartitionMove], cluster: ClusterView) -> list[BrokerId]:
    """Target brokers of a batch that are not registered now: submitting would stall the batch."""
    return sorted({b for move in moves for b in move.target if b not in cluster.brokers})
