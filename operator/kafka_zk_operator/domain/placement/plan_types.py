"""What a plan is asked for and what it returns: the request (its :class:`~kafka_zk_operator.domain.modes.Mode`
is one of the engine's modes), the plan."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement.arrays import EMPTY, BoolArray, ClusterArrays, IntArray
from kafka_zk_operator.domain.placement.byte_targets import DEFAULT_BYTE_TOLERANCE
from kafka_zk_operator.domain.placement.report import PlanReport
from kafka_zk_operator.domain.placement.targets import Targets

#: Default size limit (movable partitions x eligible brokers) for the exact check.
EXACT_LIMIT = 200_000


class DataMovement(enum.StrEnum):
    """Which replicas a plan prefers to move; the number of moves is the same either way.

    ``minimal`` moves small partitions first: the least data copied, but brokers that receive
    replicas (added ones above all) get small partitions, so their disks fill far less than their
    replica counts suggest. ``proportional`` ignores sizes when choosing (followers first, then the
    seeded hash): receivers get a sample of typical partitions, so data follows replica counts.
    """

    MINIMAL = "minimal"
    PROPORTIONAL = "proportional"


class Balance(enum.StrEnum):
    """What a plan evens out across brokers.

    ``replicas``: replica counts within ±1 with the fewest moves (M_LB); sizes only choose which
    replicas move. ``bytes``: bytes per broker within ``byte_tolerance`` of the target with few
    bytes copied; replica counts are a secondary aim (``placement.byte_balance``). ``both``: the
    ``replicas`` plan, then bytes evened out by swaps that leave every replica count as it is.
    """

    REPLICAS = "replicas"
    BYTES = "bytes"
    BOTH = "both"


@dataclass(frozen=True)
class PlanRequest:
    """Parameters of a plan.

    :ivar brokers: ids of the brokers being added (they must hold no replica; empty brokers not
        listed receive nothing) or removed (they end empty and receive nothing).
    :ivar topics: regular expression (full match) selecting the topics to change; ``None`` = all.
    :ivar exclude_topics: regular expression (full match) of topics that never change.
    :ivar replication_factor: the new RF of the selected topics (replication-factor mode).
    :ivar tolerance: replicas per broker the balance may deviate (fewer moves); 0 = strict ±1.
    :ivar seed: seeds the tie-break hash (which of equal replicas move); same seed, same plan.
    :ivar n_groups: partition groups of the partition-level stage (default: from the size).
    :ivar exact_limit: movable partitions x eligible brokers up to which the exact min-cost flow
        runs when M_LB is missed (0 disables it).
    :ivar data_movement: which replicas to prefer moving (:class:`DataMovement`).
    :ivar balance: what the plan evens out (:class:`Balance`).
    :ivar byte_tolerance: with ``balance=bytes``, how far (a fraction of the mean bytes per
        broker) a broker may end from its byte target.
    :ivar broker_capacity: ``(broker id, bytes)`` pairs: with ``balance=bytes``, the most each listed
        broker may hold after the plan (a hard limit; read in no other mode).
    """

    mode: Mode
    brokers: tuple[int, ...] = ()
    topics: str | None = None
    exclude_topics: str | None = None
    replication_factor: int | None = None
    tolerance: int = 0
    seed: int = 0
    n_groups: int | None = None
    exact_limit: int = EXACT_LIMIT
    data_movement: DataMovement = DataMovement.MINIMAL
    balance: Balance = Balance.REPLICAS
    byte_tolerance: float = DEFAULT_BYTE_TOLERANCE
    broker_capacity: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, eq=False)
class Plan:
    """A plan: the cluster before, the replica matrix after (broker indexes), the report, and the
    broker-level targets it aimed for (``targets.lo``/``hi``/``klass`` describe the balance band)."""

    cluster: ClusterArrays
    replicas: IntArray
    report: PlanReport
    targets: Targets
    eligible: BoolArray
    movable: BoolArray

    def changed_rows(self) -> IntArray:
        """Rows whose replica list (set or order) changes."""
        before = self.cluster.replicas
        w = max(before.shape[1], self.replicas.shape[1])
        b = np.full((len(before), w), EMPTY, dtype=np.int64)
        a = np.full((len(before), w), EMPTY, dtype=np.int64)
        b[:, : before.shape[1]] = before
        a[:, : self.replicas.shape[1]] = self.replicas
        return np.flatnonzero((a != b).any(axis=1))

    def reassignment(self) -> dict[str, object]:
        """Kafka's reassignment JSON (``kafka-reassign-partitions`` / ``/admin/reassign_partitions``),
        changed partitions only, in (topic, partition) order."""
        ids = self.cluster.broker_ids
        parts: list[dict[str, object]] = []
        for row in self.changed_rows().tolist():
            reps = self.replicas[row]
            parts.append(
                {
                    "topic": self.cluster.topics[int(self.cluster.topic_of[row])],
                    "partition": int(self.cluster.partition_of[row]),
                    "replicas": [int(ids[b]) for b in reps[reps >= 0]],
                }
            )
        return {"version": 1, "partitions": parts}
