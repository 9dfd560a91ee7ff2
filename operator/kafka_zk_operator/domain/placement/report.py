"""What every plan reports: moves against the bound M_LB, balance before and after, rack checks.

Pure value types plus :func:`build_report`, which recomputes every figure from the replica matrices
themselves (before and after), so the report checks the plan rather than trusting the planner.
Bytes per broker are the sums of the sizes of the partitions it holds a replica of; they mean
something only when the cluster has sizes (``PlanReport.sizes_known``: some partition weighs more
than 0 bytes). The optional capacity check (``placement.capacity``) fills ``BrokerLine.capacity``
and ``PlanReport.warnings`` afterwards; the planner never reads either.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kafka_zk_operator.domain.placement.arrays import BoolArray, ClusterArrays, IntArray, loads
from kafka_zk_operator.domain.placement.racks import duplicates, violations


@dataclass(frozen=True)
class BrokerLine:
    """One broker's counts before and after the plan (``role``: kept, added or removed).

    ``bytes_before``/``bytes_after``: sum of the sizes of the partitions the broker holds a replica
    of (0 when the cluster has no sizes). ``capacity``: the disk capacity it was checked against,
    in bytes (``None``: not checked).
    """

    broker_id: int
    rack: str | None
    role: str
    replicas_before: int
    replicas_after: int
    replica_target: int
    leaders_before: int
    leaders_after: int
    leader_target: int
    bytes_before: int
    bytes_after: int
    capacity: int | None = None


@dataclass(frozen=True)
class SkewedRack:
    """A rack the rack rules keep away from the cluster-wide per-broker level (unfixable)."""

    rack: str | None
    brokers: int
    replicas_per_broker_min: int
    replicas_per_broker_max: int
    cluster_level: float
    reason: str


@dataclass(frozen=True)
class PlanReport:
    """The figures of reference §8 for one plan.

    ``moves`` counts new (partition, broker) memberships: relocations plus replicas added by a
    replication-factor increase. ``optimal`` is ``True`` when ``moves == m_lb`` or the exact
    min-cost flow (``exact_moves``) confirmed the minimum for the balance reached.
    ``sizes_known`` says whether the byte figures mean anything (some partition has a size);
    ``warnings`` are the capacity check's findings (``placement.capacity``), empty without one.
    """

    mode: str
    partitions: int
    partitions_selected: int
    partitions_changed: int
    moves: int
    m_lb: int
    optimal: bool
    optimality: str
    exact_moves: int | None
    bytes_moved: int
    sizes_known: bool
    replicas_added: int
    replicas_removed: int
    leader_changes: int
    leader_lb: int
    rack_violations_before: int
    rack_violations_after: int
    duplicates_after: int
    balanced: bool
    leaders_balanced: bool
    unresolved_units: int
    two_hop_moves: int
    skewed_racks: tuple[SkewedRack, ...]
    brokers: tuple[BrokerLine, ...]
    notes: tuple[str, ...] = field(default=())
    warnings: tuple[str, ...] = field(default=())
    balance: str = "replicas"
    bytes_lower_bound: int | None = None

    @property
    def bytes_over_bound(self) -> float | None:
        """``bytes_moved / bytes_lower_bound`` for byte-balanced plans (1.0 when both are 0, infinite
        when only the bound is)."""
        if self.bytes_lower_bound is None:
            return None
        if self.bytes_lower_bound == 0:
            return 1.0 if self.bytes_moved == 0 else float("inf")
        return self.bytes_moved / self.bytes_lower_bound

    def byte_spread(self, after: bool = True) -> tuple[int, int, float]:
        """(min, max, mean) bytes per broker, over the brokers that hold replicas before or after the
        plan (``idle`` ones left out), and after the plan without the removed ones."""
        lines = [b for b in self.brokers if b.role != "idle" and not (after and b.role == "removed")]
        if not lines:
            return (0, 0, 0.0)
        vals = [b.bytes_after if after else b.bytes_before for b in lines]
        return (min(vals), max(vals), sum(vals) / len(vals))

    @property
    def moves_over_bound(self) -> float:
        """``moves / M_LB`` (1.0 when both are 0)."""
        return 1.0 if self.m_lb == 0 else self.moves / self.m_lb

    def spread(self, after: bool = True, leaders: bool = False) -> tuple[int, int, float]:
        """(min, max, mean) over brokers that are not removed."""
        lines = [b for b in self.brokers if b.role != "removed" or not after]
        if not lines:
            return (0, 0, 0.0)
        if leaders:
            vals = [b.leaders_after if after else b.leaders_before for b in lines]
        else:
            vals = [b.replicas_after if after else b.replicas_before for b in lines]
        return (min(vals), max(vals), sum(vals) / len(vals))


def count_moves(before: IntArray, after: IntArray, rows: BoolArray | None = None) -> IntArray:
    """Per row: brokers in ``after`` that are not in ``before`` (new memberships)."""
    wb = before.shape[1]
    member = np.zeros(after.shape, dtype=np.bool_)
    for j in range(wb):
        member |= after == before[:, j : j + 1]
    new = (after >= 0) & ~member
    counts: IntArray = new.sum(axis=1).astype(np.int64)
    if rows is not None:
        counts = np.where(rows, counts, 0).astype(np.int64)
    return counts


def broker_bytes(replicas: IntArray, sizes: IntArray, n_brokers: int) -> IntArray:
    """``(N,)`` bytes per broker: the sizes of the rows it holds a replica of, summed exactly.

    One ``np.add.at`` per replica slot: exact in int64 (float weights of ``bincount`` are not above
    2**53); 3.3-5.8 ms for a 1M x 3 matrix on the (shared) benchmark machine.
    :data:`EMPTY` (-1) and ``UNPLACED`` (``n_brokers``) both index the extra last bin, dropped.
    """
    total = np.zeros(n_brokers + 1, dtype=np.int64)
    for j in range(replicas.shape[1]):
        np.add.at(total, replicas[:, j], sizes)
    out: IntArray = total[:n_brokers]
    return out


def build_report(
    *,
    mode: str,
    cluster: ClusterArrays,
    after: IntArray,
    selected: BoolArray,
    eligible: BoolArray,
    added: BoolArray,
    replica_target: IntArray,
    leader_target: IntArray,
    m_lb: int,
    exact_moves: int | None,
    leader_changes: int,
    leader_lb: int,
    replicas_added: int,
    replicas_removed: int,
    unresolved_units: int,
    two_hop_moves: int,
    replica_band: tuple[IntArray, IntArray],
    skewed: tuple[SkewedRack, ...],
    notes: tuple[str, ...],
    balance: str = "replicas",
    bytes_lower_bound: int | None = None,
) -> PlanReport:
    """Recompute every figure from ``cluster.replicas`` (before) and ``after``."""
    n = cluster.n_brokers
    before = cluster.replicas
    per_row = count_moves(before, after)
    moves = int(per_row.sum())
    changed_rows = _changed(before, after)
    load_b, load_a = loads(before, n)[:n], loads(after, n)[:n]
    lead_b = (
        np.bincount(before[:, 0][before[:, 0] >= 0], minlength=n)[:n]
        if before.shape[1]
        else np.zeros(n, np.int64)
    )
    lead_a = (
        np.bincount(after[:, 0][after[:, 0] >= 0], minlength=n)[:n]
        if after.shape[1]
        else np.zeros(n, np.int64)
    )
    lo, hi = replica_band
    el = eligible
    balanced = bool(np.all((load_a[el] >= lo[el]) & (load_a[el] <= hi[el]))) and not bool(load_a[~el].any())
    leaders_balanced = bool(np.all(np.abs(lead_a[el] - leader_target[el]) <= 1)) if el.any() else True
    k_before = cluster.n_racks
    rack_ext = np.r_[cluster.broker_rack, k_before]
    viol_before = int(violations(before, rack_ext, k_before).sum())
    elig_racks = np.unique(cluster.broker_rack[el]) if el.any() else np.zeros(0, np.int64)
    remap = np.full(k_before + 1, len(elig_racks), dtype=np.int64)
    remap[elig_racks] = np.arange(len(elig_racks))
    viol_after = int(violations(after, remap[rack_ext], max(1, len(elig_racks))).sum())
    if optimal_by_bound := (moves == m_lb):
        optimality = "moves = M_LB"
    elif exact_moves is not None and moves == exact_moves:
        optimality = "exact min-cost flow"
    else:
        optimality = "not proven"
    optimal = optimal_by_bound or optimality == "exact min-cost flow"
    bytes_b, bytes_a = broker_bytes(before, cluster.sizes, n), broker_bytes(after, cluster.sizes, n)
    lines = []
    for i in range(n):
        role = "removed" if not el[i] and load_b[i] > 0 else ("added" if added[i] else "kept")
        if not el[i] and load_b[i] == 0 and not added[i]:
            role = "idle"
        lines.append(
            BrokerLine(
                broker_id=int(cluster.broker_ids[i]),
                rack=cluster.racks[int(cluster.broker_rack[i])],
                role=role,
                replicas_before=int(load_b[i]),
                replicas_after=int(load_a[i]),
                replica_target=int(replica_target[i]),
                leaders_before=int(lead_b[i]),
                leaders_after=int(lead_a[i]),
                leader_target=int(leader_target[i]),
                bytes_before=int(bytes_b[i]),
                bytes_after=int(bytes_a[i]),
            )
        )
    moved_bytes = int((cluster.sizes * per_row).sum())
    return PlanReport(
        mode=mode,
        partitions=cluster.n_partitions,
        partitions_selected=int(selected.sum()),
        partitions_changed=int(changed_rows.sum()),
        moves=moves,
        m_lb=m_lb,
        optimal=optimal,
        optimality=optimality,
        exact_moves=exact_moves,
        bytes_moved=moved_bytes,
        sizes_known=bool(cluster.sizes.any()),
        replicas_added=replicas_added,
        replicas_removed=replicas_removed,
        leader_changes=leader_changes,
        leader_lb=leader_lb,
        rack_violations_before=viol_before,
        rack_violations_after=viol_after,
        duplicates_after=int(duplicates(after).sum()),
        balanced=balanced,
        leaders_balanced=leaders_balanced,
        unresolved_units=unresolved_units,
        two_hop_moves=two_hop_moves,
        skewed_racks=skewed,
        brokers=tuple(lines),
        notes=notes,
        balance=balance,
        bytes_lower_bound=bytes_lower_bound,
    )


def _changed(before: IntArray, after: IntArray) -> BoolArray:
    w = max(before.shape[1], after.shape[1])
    b = np.full((before.shape[0], w), -1, dtype=np.int64)
    a = np.full((after.shape[0], w), -1, dtype=np.int64)
    b[:, : before.shape[1]] = before
    a[:, : after.shape[1]] = after
    return np.asarray((a != b).any(axis=1), dtype=np.bool_)
