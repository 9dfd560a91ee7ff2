"""Placement engine: minimum-move, rack-aware replica placement and leader balancing.

Pure (numpy only, no I/O) and deterministic for a given input and seed. Entry points:

* :func:`plan` with a :class:`PlanRequest` (:class:`~kafka_zk_operator.domain.modes.Mode`: add-brokers, remove-brokers,
  rebalance, replication-factor) on a :class:`ClusterArrays` -> :class:`Plan` (the new replica
  matrix, Kafka's reassignment JSON via :meth:`Plan.reassignment`, and a :class:`PlanReport`).
* :func:`place_new_partitions` for new topics / added partitions, load-aware across the cluster.
* :func:`build_arrays` / :func:`snapshot_to_arrays` (in ``domain.documents.snapshot``) to get arrays.

Contract for a distributed engine (the PySpark job) - two stages, identical results
===================================================================================

Stage 1, broker level (driver; input: per-broker and per-(group, broker) aggregates only):

1. ``targets.balance_targets`` on per-broker loads (after the pre-steps of ``replication``):
   per-broker targets and the bound ``M_LB`` (``targets.count_lower_bound``).
2. ``transport.broker_flows`` on per-broker excess/deficit (plus per-rack legal-crossing
   estimates, needed only when a rack has a net surplus or replicas are unplaced):
   broker-to-broker flows ``(src, dst, count)``.
3. ``transport.group_quotas`` on those flows and the ``(G, N + 1)`` matrix of movable replicas
   per (group, broker): the :class:`GroupQuotas` table ``(group, src, dst, count)``.

Stage 2, partition level (one task per group; input: the group's rows and its quota rows):

4. ``select.select_moves(rows_of_group, quotas.of_group(g), ...)``: which replica of which
   partition moves where. Groups are ``keys.group_of(crc32(topic), partition, G)`` with ``G =
   keys.default_group_count(P)``; a group's rows must be passed in (topic, partition) order,
   with per-row ``keys.partition_hash`` (seeded) and sizes. A group's result depends on nothing
   else, so running groups separately or together gives the same moves.

Stage 3, driver: ``repair.repair`` on the few units the groups left open (only rows on the
brokers involved are needed), the optional exact check (small clusters only), with
``balance=bytes`` or ``both`` the byte stage (``byte_stage``: with ``bytes`` stage 1 hands out no
quota and this stage makes every move; with ``both`` it swaps replicas of the count plan), then
``leaders.balance_leaders`` and ``report.build_report``.

In code: ``stage = broker_stage(cluster, request)`` (stage 1, a :class:`BrokerStage` holding the
pre-processed rows, groups, targets, M_LB and quotas); stage 2 per group ``g`` is
``select.select_moves(stage.replicas[rows_g], group=stage.group[rows_g], ...,
quotas=stage.quotas.of_group(g), ctx=stage.ctx)``; the per-group results are put back in row order
as one :class:`select.Selection` (replicas, moved mask, concatenated leftovers) and
``finish_plan(stage, selection)`` is stage 3. ``plan`` is exactly that in one process, so a
distributed engine doing the same produces the same plan.

Not group-local (they read the whole ``(P, W)`` replica matrix on the driver: 48 MB for 2M
partitions x RF 3 as int64): the pre-steps in ``broker_stage`` that change which slots exist
(``replication``: RF decrease drops, rack repair, UNPLACED slots - they only do work in
replication-factor mode or when partitions break the rack rules) and the leader stage of
``finish_plan``. Both are vectorised and take about a second at 1M partitions.
"""

from kafka_zk_operator.domain.placement.arrays import EMPTY, ClusterArrays, build_arrays
from kafka_zk_operator.domain.placement.newparts import NewPartitions, NewPlacement, place_new_partitions
from kafka_zk_operator.domain.placement.planner import (
    EXACT_LIMIT,
    Balance,
    BrokerStage,
    DataMovement,
    Plan,
    PlanRequest,
    broker_stage,
    finish_plan,
    plan,
)
from kafka_zk_operator.domain.placement.report import BrokerLine, PlanReport, SkewedRack

__all__ = [
    "EMPTY",
    "EXACT_LIMIT",
    "Balance",
    "BrokerLine",
    "BrokerStage",
    "ClusterArrays",
    "DataMovement",
    "NewPartitions",
    "NewPlacement",
    "Plan",
    "PlanReport",
    "PlanRequest",
    "SkewedRack",
    "broker_stage",
    "build_arrays",
    "finish_plan",
    "place_new_partitions",
    "plan",
]
