"""A reassignment plan: which partitions get which replica lists, and its reviewable summary.

A :class:`PartitionMove` is one partition's current replicas (``source``) and its target list
(preferred leader first). A replica *move* is one new (partition, broker) membership: moving one
replica from broker 1 to 4 is one move; an RF increase by one is one move per partition; a
reorder is zero moves but may change the preferred leader. :class:`ReassignmentPlan` is the
ordered tuple of moves the operator executes exactly as shown to the reviewer (it is never
recomputed once approved); :func:`plan_id` is its digest, to which an approval applies.

:func:`summarize` compares the cluster before and after the plan (replicas and preferred leaders
per broker and per rack) for ``status.proposal``. :func:`plan_entries` / :func:`plan_from_entries`
convert to and from the ``status.plan`` / ConfigMap form ``{topic, partition, from, to}``.

Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import REFRESH_ANNOTATION
from kafka_zk_operator.domain.model import BrokerId, PartitionId, TopicName
from kafka_zk_operator.domain.reassignment.spec import BatchLimits


@dataclass(frozen=True)
class ClusterView:
    """What the planner needs from ZooKeeper: live brokers and every topic's replicas.

    ``assignments[t][p]`` is the replica list of the topic znode *minus* replicas still being
    added (``adding_replicas``), i.e. the sources Kafka's tool uses for an in-flight partition.
    """

    brokers: Mapping[BrokerId, str | None]
    assignments: Mapping[TopicName, Mapping[PartitionId, tuple[BrokerId, ...]]]
    moving: frozenset[tuple[TopicName, PartitionId]] = frozenset()
    deleting: frozenset[TopicName] = frozenset()
    #: Bytes per partition (the largest replica's log, from the brokers' DescribeLogDirs); empty
    #: unless a plan balances bytes. A partition missing here counts as 0 bytes.
    sizes: Mapping[tuple[TopicName, PartitionId], int] = field(default_factory=dict)

    @property
    def has_racks(self) -> bool:
        return bool(self.brokers) and all(rack is not None for rack in self.brokers.values())

    @property
    def rack_count(self) -> int:
        return len({rack for rack in self.brokers.values() if rack is not None})

    def replicas(self, topic: TopicName, partition: PartitionId) -> tuple[BrokerId, ...] | None:
        return self.assignments.get(topic, {}).get(partition)


@dataclass(frozen=True, slots=True)
class PartitionMove:
    topic: TopicName
    partition: PartitionId
    source: tuple[BrokerId, ...]
    target: tuple[BrokerId, ...]
    #: Bytes of one replica (the partition's largest log) when the brokers reported sizes: what
    #: each added replica copies. ``None``: unknown (batches are then formed by counts alone).
    replica_bytes: int | None = None

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def added(self) -> tuple[BrokerId, ...]:
        """Brokers that gain a replica (each is one move), in target order."""
        return tuple(b for b in self.target if b not in self.source)

    @property
    def removed(self) -> tuple[BrokerId, ...]:
        return tuple(b for b in self.source if b not in self.target)

    @property
    def moves(self) -> int:
        return len(self.added)

    @property
    def leader_changes(self) -> bool:
        return bool(self.source) and bool(self.target) and self.source[0] != self.target[0]


@dataclass(frozen=True)
class ReassignmentPlan:
    moves: tuple[PartitionMove, ...]
    lower_bound: int | None = None
    provably_optimal: bool | None = None
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def replica_moves(self) -> int:
        return sum(move.moves for move in self.moves)

    @property
    def leader_changes(self) -> int:
        return sum(1 for move in self.moves if move.leader_changes)

    def targets(self) -> dict[tuple[TopicName, PartitionId], tuple[BrokerId, ...]]:
        return {(m.topic, m.partition): m.target for m in self.moves}


def plan_id(plan: ReassignmentPlan, limits: BatchLimits) -> str:
    """A short digest of what will run: the targets, in order, and the batch limits."""
    canonical = json.dumps(
        {
            "moves": [[m.topic, m.partition, list(m.target)] for m in plan.moves],
            "batch": [limits.max_partitions, limits.max_moves_per_broker],
        },
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:10]


# ------------------------------------------------------------------ summary
@dataclass(frozen=True)
class BrokerCounts:
    broker: BrokerId
    rack: str | None
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int


@dataclass(frozen=True)
class RackCounts:
    rack: str
    brokers: int
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int


@dataclass(frozen=True)
class ProposalSummary:
    partitions: int
    moves: int
    lower_bound: int
    provably_optimal: bool
    leader_changes: int
    brokers: tuple[BrokerCounts, ...] = field(default=())
    racks: tuple[RackCounts, ...] = field(default=())


def summarize(plan: ReassignmentPlan, cluster: ClusterView) -> ProposalSummary:
    """Replica and preferred-leader counts per broker and rack, before and after the plan."""
    replicas_before: Counter[int] = Counter()
    leaders_before: Counter[int] = Counter()
    for partitions in cluster.assignments.values():
        for replicas in partitions.values():
            replicas_before.update(replicas)
            if replicas:
                leaders_before[replicas[0]] += 1
    replicas_after, leaders_after = Counter(replicas_before), Counter(leaders_before)
    for move in plan.moves:
        replicas_after.subtract(move.source)
        replicas_after.update(move.target)
        if move.source:
            leaders_after[move.source[0]] -= 1
        if move.target:
            leaders_after[move.target[0]] += 1
    ids = sorted(set(cluster.brokers) | {b for b, n in replicas_before.items() if n} | set(replicas_after))
    brokers = tuple(
        BrokerCounts(
            broker=b,
            rack=cluster.brokers.get(b),
            replicas_before=replicas_before[b],
            replicas_after=replicas_after[b],
            leaders_before=leaders_before[b],
            leaders_after=leaders_after[b],
        )
        for b in ids
    )
    racks: dict[str, list[BrokerCounts]] = {}
    for line in brokers:
        if line.rack is not None:
            racks.setdefault(line.rack, []).append(line)
    lower = plan.lower_bound if plan.lower_bound is not None else plan.replica_moves
    return ProposalSummary(
        partitions=len(plan.moves),
        moves=plan.replica_moves,
        lower_bound=lower,
        provably_optimal=plan.provably_optimal
        if plan.provably_optimal is not None
        else plan.replica_moves == lower,
        leader_changes=plan.leader_changes,
        brokers=brokers,
        racks=tuple(
            RackCounts(
                rack=rack,
                brokers=len(lines),
                replicas_before=sum(x.replicas_before for x in lines),
                replicas_after=sum(x.replicas_after for x in lines),
                leaders_before=sum(x.leaders_before for x in lines),
                leaders_after=sum(x.leaders_after for x in lines),
            )
            for rack, lines in sorted(racks.items())
        ),
    )


def summary_fields(summary: ProposalSummary) -> dict[str, Any]:
    """``status.proposal`` fields (without ``id``/``computedAt``) of a summary."""
    return {
        "partitions": summary.partitions,
        "moves": summary.moves,
        "lowerBound": summary.lower_bound,
        "provablyOptimal": summary.provably_optimal,
        "leaderChanges": summary.leader_changes,
        "brokers": [
            {
                "id": b.broker,
                **({"rack": b.rack} if b.rack is not None else {}),
                "replicasBefore": b.replicas_before,
                "replicasAfter": b.replicas_after,
                "leadersBefore": b.leaders_before,
                "leadersAfter": b.leaders_after,
            }
            for b in summary.brokers
        ],
        "racks": [
            {
                "rack": r.rack,
                "brokers": r.brokers,
                "replicasBefore": r.replicas_before,
                "replicasAfter": r.replicas_after,
                "leadersBefore": r.leaders_before,
                "leadersAfter": r.leaders_after,
            }
            for r in summary.racks
        ],
    }


# ------------------------------------------------------------------ status form
def plan_entries(moves: Iterable[PartitionMove]) -> list[dict[str, Any]]:
    """The ``{topic, partition, from, to[, bytes]}`` entries of ``status.plan`` and the plan
    ConfigMaps (``bytes``: one replica's size, when known; the batches are formed from it)."""
    return [
        {
            "topic": m.topic,
            "partition": m.partition,
            "from": list(m.source),
            "to": list(m.target),
            **({"bytes": m.replica_bytes} if m.replica_bytes is not None else {}),
        }
        for m in moves
    ]


def with_sizes(
    plan: ReassignmentPlan, sizes: Mapping[tuple[TopicName, PartitionId], int]
) -> ReassignmentPlan:
    """``plan`` with each move's replica size from ``sizes`` (a partition missing there: 0 bytes).
    Unchanged when ``sizes`` is empty (the brokers were not asked)."""
    if not sizes:
        return plan
    moves = tuple(
        replace(m, replica_bytes=max(0, int(sizes.get((m.topic, m.partition), 0)))) for m in plan.moves
    )
    return replace(plan, moves=moves)


def plan_from_entries(entries: Sequence[Mapping[str, Any]]) -> tuple[PartitionMove, ...]:
    """:raises InvalidSpec: an entry is malformed (the status was edited by hand)."""
    moves: list[PartitionMove] = []
    for index, entry in enumerate(entries):
        try:
            moves.append(
                PartitionMove(
                    topic=str(entry["topic"]),
                    partition=int(entry["partition"]),
                    source=tuple(int(b) for b in entry.get("from") or ()),
                    target=tuple(int(b) for b in entry["to"]),
                    replica_bytes=_stored_bytes(entry.get("bytes")),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise errors.InvalidSpec(
                f"stored plan entry {index} is malformed ({exc!r}); annotate the resource with "
                f"{REFRESH_ANNOTATION}=true to compute a new proposal"
            ) from None
    return tuple(moves)


def _stored_bytes(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"bytes must be a non-negative integer, got {value!r}")
    return value
