"""Placement of new topics and of partitions added to a topic, aware of the whole cluster's load.

GOALS
    Put new replicas where the cluster has room (least-loaded brokers first, so a new broker fills
    up), keep each topic spread (a broker holds at most ``max(ceil(avg) + 1, ceil(avg *
    max_topic_skew))`` of a topic's replicas, ``avg = P_topic * RF / N``; ``max_topic_skew = 1``
    means Kafka's strict ``ceil(avg)``), and balance preferred leaders cluster-wide. Unlike Kafka's
    per-topic round robin, the other topics' load counts.

CONSTRAINTS
    Distinct brokers per partition; ``min(RF, racks)`` racks per partition; only eligible brokers;
    RF at most the eligible broker count; partitions added to a topic keep its replication factor
    and continue its partition ids.

ALGORITHM (per request, in topic-name order; each sees the load the previous ones added)
    1. Per-broker counts ``c_b`` of the topic's new replicas: :func:`targets.balance_targets` with
       floors = current loads, ceilings = current loads + the topic-spread cap, and rack totals
       within ``[n * lo, n * hi_r]`` (``n`` new partitions), extra units to the least loaded.
    2. Column-major layout: brokers grouped by rack (rack and broker order rotated per topic), each
       repeated ``c_b`` times; replica ``j`` of new partition ``i`` is slot ``j * n + i``. Because
       ``c_b <= n`` and each rack's block has between ``n * lo`` and ``n * hi_r`` slots, a
       partition never gets a broker twice and spans the required racks.
    3. Leaders: every new partition's leader is chosen by :func:`leaders.balance_leaders`, with
       the existing partitions' leaders fixed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.placement.arrays import EMPTY, ClusterArrays, IntArray, build_arrays, loads
from kafka_zk_operator.domain.placement.keys import partition_hash, topic_hashes
from kafka_zk_operator.domain.placement.leaders import balance_leaders
from kafka_zk_operator.domain.placement.racks import rack_limits
from kafka_zk_operator.domain.placement.targets import balance_targets


@dataclass(frozen=True)
class NewPartitions:
    """``count`` new partitions for ``topic`` (a new topic needs ``replication_factor``)."""

    topic: str
    count: int
    replication_factor: int | None = None


@dataclass(frozen=True, eq=False)
class NewPlacement:
    """Replica lists (broker ids, leader first) per topic and partition id, and the cluster after."""

    assignments: dict[str, dict[int, list[int]]]
    cluster: ClusterArrays


def place_new_partitions(
    cluster: ClusterArrays,
    requests: Sequence[NewPartitions],
    *,
    exclude_brokers: Sequence[int] = (),
    seed: int = 0,
    max_topic_skew: float = 1.5,
) -> NewPlacement:
    """Place the requested partitions (module docstring).

    :raises InvalidSpec: unknown or duplicate topics in ``requests``, bad counts, RF mismatch.
    :raises InvalidReplicationFactor: RF above the eligible broker count.
    """
    n = cluster.n_brokers
    eligible = np.ones(n, dtype=np.bool_)
    for b in exclude_brokers:
        eligible[cluster.broker_index(b)] = False
    if not eligible.any():
        raise errors.InvalidSpec("no eligible broker")
    elig_racks = np.unique(cluster.broker_rack[eligible])
    k = len(elig_racks)
    remap = np.zeros(cluster.n_racks, dtype=np.int64)
    remap[elig_racks] = np.arange(k)
    rack = remap[cluster.broker_rack]
    rack_sizes = np.bincount(rack[eligible], minlength=k)
    topic_index = {name: i for i, name in enumerate(cluster.topics)}
    load = loads(cluster.replicas, n)[:n]
    seen: set[str] = set()
    new_topics: list[str] = []
    new_topic_of: list[IntArray] = []
    new_pid: list[IntArray] = []
    new_rows: list[IntArray] = []
    for req in sorted(requests, key=lambda r: r.topic):
        if req.topic in seen:
            raise errors.InvalidSpec(f"topic {req.topic!r} is requested twice")
        seen.add(req.topic)
        if req.count <= 0:
            raise errors.InvalidPartitions(f"the number of new partitions must be positive (got {req.count})")
        existing = topic_index.get(req.topic)
        topic_rows = (
            np.flatnonzero(cluster.topic_of == existing) if existing is not None else np.zeros(0, np.int64)
        )
        rf = _replication_factor(cluster, req, topic_rows)
        if rf > int(eligible.sum()):
            raise errors.InvalidReplicationFactor(
                f"replication factor {rf} of topic {req.topic!r} is larger than the {int(eligible.sum())} eligible brokers"
            )
        first_pid = int(cluster.partition_of[topic_rows].max()) + 1 if len(topic_rows) else 0
        rows = _place_topic(
            cluster, req.topic, req.count, rf, topic_rows, load, eligible, rack, rack_sizes, k, max_topic_skew
        )
        load += np.bincount(rows[rows >= 0], minlength=n)[:n]
        new_topics.append(req.topic)
        new_topic_of.append(np.full(req.count, len(new_topics) - 1))
        new_pid.append(np.arange(first_pid, first_pid + req.count))
        new_rows.append(rows)
    return _assemble(cluster, new_topics, new_topic_of, new_pid, new_rows, eligible, seed)


def _replication_factor(cluster: ClusterArrays, req: NewPartitions, topic_rows: IntArray) -> int:
    if len(topic_rows) == 0:
        if req.replication_factor is None or req.replication_factor < 1:
            raise errors.InvalidReplicationFactor(
                f"new topic {req.topic!r} needs a replication factor of at least 1"
            )
        return req.replication_factor
    rfs = np.unique((cluster.replicas[topic_rows] >= 0).sum(axis=1))
    if len(rfs) != 1:
        raise errors.InvalidSpec(f"topic {req.topic!r} has partitions with different replication factors")
    rf = int(rfs[0])
    if req.replication_factor not in (None, rf):
        raise errors.InvalidReplicationFactor(
            f"topic {req.topic!r} has replication factor {rf}; new partitions must use it (got {req.replication_factor})"
        )
    return rf


def _place_topic(
    cluster: ClusterArrays,
    topic: str,
    count: int,
    rf: int,
    topic_rows: IntArray,
    load: IntArray,
    eligible: np.ndarray,
    rack: IntArray,
    rack_sizes: IntArray,
    k: int,
    max_topic_skew: float,
) -> IntArray:
    n = cluster.n_brokers
    existing = loads(cluster.replicas[topic_rows], n)[:n]
    n_el = int(eligible.sum())
    avg = (len(topic_rows) + count) * rf / n_el
    strict = -(-(len(topic_rows) + count) * rf // n_el)
    spread = strict if max_topic_skew <= 1 else max(strict + 1, math.ceil(avg * max_topic_skew))
    lo, hi = rack_limits(np.array([rf]), k)
    hi_r = np.minimum(int(hi[0]), rack_sizes)
    load_r = np.bincount(rack[eligible], weights=load[eligible], minlength=k).round().astype(np.int64)
    rack_lo = load_r + count * int(lo[0])
    rack_hi = load_r + count * hi_r
    total = int(load.sum()) + count * rf
    counts: IntArray | None = None
    for cap in (np.clip(spread - existing, 0, count), np.full(n, count)):
        try:
            counts = (
                balance_targets(
                    eligible=eligible,
                    floor=load,
                    ceil=load + cap,
                    rack=rack,
                    rack_lo=rack_lo,
                    rack_hi=rack_hi,
                    total=total,
                    prefer=-load,
                ).target
                - load
            )
            break
        except errors.InvalidSpec:
            continue
    if counts is None:
        raise errors.InvalidSpec(f"topic {topic!r}: the new replicas cannot be placed under the rack rules")
    shift = int(topic_hashes([topic])[0])
    rack_order = np.roll(np.arange(k), -(shift % max(k, 1)))
    order: list[int] = []
    for r in rack_order:
        members = np.flatnonzero(eligible & (rack == r))
        if len(members):
            order.extend(np.roll(members, -(shift // 7 % len(members))).tolist())
    slots = np.repeat(np.array(order, dtype=np.int64), counts[np.array(order, dtype=np.int64)])
    grid = slots.reshape(rf, count).T  # grid[i, j] = slots[j * count + i]
    rotate = (np.arange(rf)[None, :] + np.arange(count)[:, None]) % rf
    rows = np.full((count, max(rf, cluster.replicas.shape[1])), EMPTY, dtype=np.int64)
    rows[:, :rf] = np.take_along_axis(grid, rotate, axis=1)
    return rows


def _assemble(
    cluster: ClusterArrays,
    topics: list[str],
    topic_of: list[IntArray],
    pids: list[IntArray],
    rows: list[IntArray],
    eligible: np.ndarray,
    seed: int,
) -> NewPlacement:
    if not rows:
        return NewPlacement({}, cluster)
    width = max(cluster.replicas.shape[1], *(r.shape[1] for r in rows))
    old = np.full((cluster.n_partitions, width), EMPTY, dtype=np.int64)
    old[:, : cluster.replicas.shape[1]] = cluster.replicas
    new = np.concatenate([np.pad(r, ((0, 0), (0, width - r.shape[1])), constant_values=EMPTY) for r in rows])
    all_topics = sorted(set(cluster.topics) | set(topics))
    t_index = {name: i for i, name in enumerate(all_topics)}
    old_t = np.array([t_index[name] for name in cluster.topics], dtype=np.int64)[cluster.topic_of]
    new_t = np.concatenate([np.full(len(t), t_index[topics[i]]) for i, t in enumerate(topic_of)])
    reps = np.concatenate((old, new))
    is_new = np.r_[np.zeros(len(old), np.bool_), np.ones(len(new), np.bool_)]
    topic_all = np.concatenate((old_t, new_t)).astype(np.int64)
    pid_all = np.concatenate((cluster.partition_of, np.concatenate(pids))).astype(np.int64)
    row_hash = partition_hash(topic_hashes(all_topics)[topic_all], pid_all, seed)
    led = balance_leaders(
        reps,
        np.where(is_new, EMPTY, reps[:, 0]),
        movable=is_new,
        eligible=eligible,
        moved=np.zeros(reps.shape, dtype=np.bool_),
        row_hash=row_hash,
    ).replicas
    after = build_arrays(
        cluster.brokers(),
        all_topics,
        topic_all,
        pid_all,
        led,
        np.concatenate((cluster.sizes, np.zeros(len(new), np.int64))),
    )
    ids = cluster.broker_ids
    assignments: dict[str, dict[int, list[int]]] = {}
    for i in np.flatnonzero(is_new).tolist():
        name = all_topics[int(topic_all[i])]
        assignments.setdefault(name, {})[int(pid_all[i])] = [int(ids[b]) for b in led[i] if b >= 0]
    return NewPlacement(assignments, after)
