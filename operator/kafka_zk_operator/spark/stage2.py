"""Stage 2 of the placement contract on Spark: one grouped Arrow UDF call per partition group.

Input DataFrame (built from numpy arrays through one Arrow table, no Python row loop): one row per
partition of a group that has quota units (groups without any change nothing, so they are not
shipped), columns ``row`` (index in the cluster's (topic, partition) order), ``group``,
``movable``, ``size``, ``hash`` (the seeded ``uint64`` tie-break hash stored as ``int64``) and the
replica slots ``r0 .. r{W-1}`` after stage 1's pre-steps (broker indexes; ``-1`` empty, ``N``
unplaced). The small per-group inputs (broker context, group quotas) go to the workers once as a
broadcast variable.

``groupBy("group").applyInArrow(...)`` hands each group's rows to :func:`select_group`, which
sorts them back into row order and runs ``select.select_moves`` with ``quotas.of_group(g)``,
exactly as the contract prescribes. A group answers with two kinds of output rows (one schema):

* ``kind = 0``: a row whose replicas or moved-mask changed (``row``, ``r*``, ``m*``);
* ``kind = 1``: a quota unit the group left open (``group``, ``row`` = its position in the
  group's quota list, ``src``, ``dst``, ``count``), in the order the group produced them.

:func:`run_stage2` collects that (the changes only, not the replica table) and rebuilds the
:class:`~kafka_zk_operator.domain.placement.select.Selection` the single-process engine would
produce: rows put back in place, leftovers concatenated in (group, position) order.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from kafka_zk_operator.domain.placement import BrokerStage
from kafka_zk_operator.domain.placement.arrays import EMPTY, IntArray
from kafka_zk_operator.domain.placement.select import Selection, select_moves
from kafka_zk_operator.domain.placement.state import BrokerContext
from kafka_zk_operator.domain.placement.transport import GroupQuotas

ROW = 0
LEFTOVER = 1


@dataclass(frozen=True, eq=False)
class GroupInputs:
    """What every group task needs besides its rows (broadcast once)."""

    ctx: BrokerContext
    quotas: GroupQuotas
    width: int


def output_schema(width: int) -> pa.Schema:
    """Schema of what :func:`select_group` returns for replica matrices ``width`` wide."""
    fields = [
        pa.field("kind", pa.int32(), nullable=False),
        pa.field("group", pa.int64(), nullable=False),
        pa.field("row", pa.int64(), nullable=False),
        pa.field("src", pa.int64(), nullable=False),
        pa.field("dst", pa.int64(), nullable=False),
        pa.field("count", pa.int64(), nullable=False),
    ]
    fields += [pa.field(f"r{j}", pa.int64(), nullable=False) for j in range(width)]
    fields += [pa.field(f"m{j}", pa.bool_(), nullable=False) for j in range(width)]
    return pa.schema(fields)


def active_groups(stage: BrokerStage) -> IntArray:
    """Groups with at least one quota unit (the others keep their rows unchanged)."""
    quotas = stage.quotas
    per_group = np.bincount(quotas.group, weights=quotas.count, minlength=quotas.n_groups)
    return np.flatnonzero(per_group > 0).astype(np.int64)


def partition_rows(stage: BrokerStage) -> pa.Table:
    """The input table (module docstring): rows of the active groups, in row order."""
    rows = np.flatnonzero(np.isin(stage.group, active_groups(stage)))
    columns: dict[str, Any] = {
        "row": rows.astype(np.int64),
        "group": stage.group[rows].astype(np.int64),
        "movable": stage.movable[rows],
        "size": stage.rank_sizes[rows].astype(np.int64),
        "hash": np.asarray(stage.row_hash, dtype=np.uint64)[rows].view(np.int64),
    }
    for j in range(stage.replicas.shape[1]):
        columns[f"r{j}"] = np.ascontiguousarray(stage.replicas[rows, j], dtype=np.int64)
    return pa.table(columns)


def select_group(table: pa.Table, inputs: GroupInputs) -> pa.Table:
    """Stage 2 for the rows of one group (any row order); the changes as :func:`output_schema`."""
    width = inputs.width
    schema = output_schema(width)
    if table.num_rows == 0:
        return schema.empty_table()
    rows = table.column("row").to_numpy()
    order = np.argsort(rows, kind="stable")
    rows = rows[order]
    group = table.column("group").to_numpy()[order]
    g = int(group[0])
    if width:
        before = np.stack([table.column(f"r{j}").to_numpy()[order] for j in range(width)], axis=1)
    else:
        before = np.zeros((len(rows), 0), dtype=np.int64)
    before = before.astype(np.int64, copy=False)
    sel = select_moves(
        before,
        group=group.astype(np.int64),
        movable=table.column("movable").to_numpy(zero_copy_only=False)[order].astype(np.bool_),
        sizes=table.column("size").to_numpy()[order].astype(np.int64),
        row_hash=table.column("hash").to_numpy()[order].astype(np.int64).view(np.uint64),
        quotas=inputs.quotas.of_group(g),
        ctx=inputs.ctx,
    )
    changed = np.flatnonzero((sel.replicas != before).any(axis=1) | sel.moved.any(axis=1))
    left = sel.leftover
    n_changed, n_left = len(changed), len(left.count)
    zeros_c = np.zeros(n_changed, dtype=np.int64)
    columns: dict[str, Any] = {
        "kind": np.r_[np.full(n_changed, ROW), np.full(n_left, LEFTOVER)].astype(np.int32),
        "group": np.r_[np.full(n_changed, g), left.group].astype(np.int64),
        "row": np.r_[rows[changed], np.arange(n_left)].astype(np.int64),
        "src": np.r_[zeros_c, left.src].astype(np.int64),
        "dst": np.r_[zeros_c, left.dst].astype(np.int64),
        "count": np.r_[zeros_c, left.count].astype(np.int64),
    }
    for j in range(width):
        columns[f"r{j}"] = np.r_[sel.replicas[changed, j], np.full(n_left, EMPTY)].astype(np.int64)
    for j in range(width):
        columns[f"m{j}"] = np.r_[sel.moved[changed, j], np.zeros(n_left, dtype=np.bool_)]
    return pa.table(columns, schema=schema)


def assemble(stage: BrokerStage, result: pa.Table) -> Selection:
    """Put the groups' answers back together as the single-process :class:`Selection`."""
    width = stage.replicas.shape[1]
    replicas = stage.replicas.copy()
    moved = np.zeros(replicas.shape, dtype=np.bool_)
    kind = result.column("kind").to_numpy()
    row = result.column("row").to_numpy()
    is_row = kind == ROW
    target = row[is_row]
    if len(np.unique(target)) != len(target):
        raise AssertionError("spark stage 2: a row was answered twice")
    for j in range(width):
        replicas[target, j] = result.column(f"r{j}").to_numpy()[is_row]
        moved[target, j] = result.column(f"m{j}").to_numpy(zero_copy_only=False)[is_row]
    is_left = kind == LEFTOVER
    group = result.column("group").to_numpy()[is_left]
    order = np.lexsort((row[is_left], group))

    def pick(name: str) -> IntArray:
        values: IntArray = result.column(name).to_numpy()[is_left][order].astype(np.int64)
        return values

    leftover = GroupQuotas(
        group[order].astype(np.int64), pick("src"), pick("dst"), pick("count"), stage.quotas.n_groups
    )
    return Selection(replicas, moved, leftover)


def select_by_groups(stage: BrokerStage) -> Selection:
    """The contract executed literally in one process, without Spark: ``select_moves`` group by
    group, put back together like :func:`assemble`. What :func:`run_stage2` must equal (tests,
    benchmark)."""
    replicas = stage.replicas.copy()
    moved = np.zeros(replicas.shape, dtype=np.bool_)
    leftovers: list[GroupQuotas] = []
    for g in range(stage.quotas.n_groups):
        rows = np.flatnonzero(stage.group == g)  # (topic, partition) order
        part = select_moves(
            stage.replicas[rows],
            group=stage.group[rows],
            movable=stage.movable[rows],
            sizes=stage.rank_sizes[rows],
            row_hash=stage.row_hash[rows],
            quotas=stage.quotas.of_group(g),
            ctx=stage.ctx,
        )
        replicas[rows], moved[rows] = part.replicas, part.moved
        leftovers.append(part.leftover)

    def joined(name: str) -> IntArray:
        out: IntArray = np.concatenate([getattr(q, name) for q in leftovers]).astype(np.int64)
        return out

    left = GroupQuotas(joined("group"), joined("src"), joined("dst"), joined("count"), stage.quotas.n_groups)
    return Selection(replicas, moved, left)


def run_stage2(spark: Any, stage: BrokerStage) -> Selection:
    """Stage 2 on Spark (module docstring). Stages 1 and 3 stay on the driver."""
    if stage.quotas.total == 0:
        return stage.select()  # nothing moves: the engine's own early return, no Spark job needed
    width = stage.replicas.shape[1]
    inputs = spark.sparkContext.broadcast(GroupInputs(stage.ctx, stage.quotas, width))

    def per_group(table: pa.Table) -> pa.Table:
        return select_group(table, inputs.value)

    with warnings.catch_warnings():
        # PySpark 4.x warns about pandas >= 3 when it checks its optional dependencies; this job
        # is Arrow-only (Arrow table in, grouped Arrow UDF, Arrow out: no pandas conversion).
        warnings.filterwarnings(
            "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
        )
        frame = spark.createDataFrame(partition_rows(stage))
        answers = frame.groupBy("group").applyInArrow(per_group, schema=spark_schema(width))
    try:
        return assemble(stage, answers.toArrow())
    finally:
        inputs.unpersist()


def spark_schema(width: int) -> Any:
    """:func:`output_schema` as a Spark ``StructType``."""
    from pyspark.sql.types import BooleanType, IntegerType, LongType, StructField, StructType

    fields = [StructField("kind", IntegerType(), False)]
    fields += [StructField(name, LongType(), False) for name in ("group", "row", "src", "dst", "count")]
    fields += [StructField(f"r{j}", LongType(), False) for j in range(width)]
    fields += [StructField(f"m{j}", BooleanType(), False) for j in range(width)]
    return StructType(fields)
