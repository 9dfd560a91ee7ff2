"""Seeded synthetic clusters for tests and benchmarks (reference §8 workloads).

* Topic partition counts are heavy-tailed (a Pareto tail clipped to ``[1, 1000]``) until the
  requested total is reached; partition sizes are lognormal bytes.
* ``layout="balanced"``: a cluster-wide stripe over the rack-alternated broker list (leader
  ``g mod N``, follower ``j`` at offset ``j + K * shift``), so every replica position is spread
  evenly and every partition spans ``min(RF, K)`` racks (equal racks, RF <= K; otherwise Kafka's
  algorithm run once over all partitions with start index 0, which is also cluster-balanced).
* ``layout="kafka"``: every topic placed on its own by Kafka's ``assignReplicasToBrokers``
  (``domain.kafka.assignment``) with a random start, as ``kafka-topics`` / ``--generate`` would: per-topic
  balance only, so cluster-wide imbalance accumulates (the skew-repair starting point).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from kafka_zk_operator.domain.kafka import assignment
from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.placement.arrays import ClusterArrays, IntArray, build_arrays


def topic_partition_counts(
    n_partitions: int, rng: np.random.Generator, max_per_topic: int = 1000
) -> list[int]:
    """Heavy-tailed partition counts summing to ``n_partitions``."""
    counts: list[int] = []
    left = n_partitions
    while left > 0:
        draw = int(min(max_per_topic, max(1, round(rng.pareto(1.1) * 6 + 1))))
        take = min(draw, left)
        counts.append(take)
        left -= take
    return counts


def rack_names(n_racks: int) -> list[str]:
    return [f"rack-{chr(ord('a') + i)}" if i < 26 else f"rack-{i}" for i in range(n_racks)]


def make_brokers(n_brokers: int, n_racks: int, first_id: int = 0) -> list[Broker]:
    """Brokers ``first_id..`` spread round-robin over ``n_racks`` racks (no racks when 0)."""
    names = rack_names(n_racks)
    return [Broker(first_id + i, names[i % n_racks] if n_racks else None) for i in range(n_brokers)]


def synthetic_cluster(
    n_brokers: int,
    n_racks: int,
    n_partitions: int,
    *,
    rf: int = 3,
    seed: int = 0,
    layout: str = "balanced",
    brokers: Sequence[Broker] | None = None,
) -> ClusterArrays:
    """A cluster as described in the module docstring."""
    rng = np.random.default_rng(seed)
    counts = topic_partition_counts(n_partitions, rng)
    width = len(str(len(counts)))
    topics = [f"topic-{i:0{width}d}" for i in range(len(counts))]
    topic_of = np.repeat(np.arange(len(counts)), counts).astype(np.int64)
    starts = np.cumsum(counts) - np.array(counts)
    partition_of = (np.arange(n_partitions) - np.repeat(starts, counts)).astype(np.int64)
    sizes = np.round(rng.lognormal(mean=20.0, sigma=1.5, size=n_partitions)).astype(np.int64)
    broker_list = list(brokers) if brokers is not None else make_brokers(n_brokers, n_racks)
    n_racks_real = len({b.rack for b in broker_list} - {None})
    if (
        layout == "balanced"
        and n_racks_real > 1
        and len(broker_list) % n_racks_real == 0
        and rf <= n_racks_real
    ):
        replicas = _striped(broker_list, n_partitions, rf)
    elif layout == "balanced":
        replicas = _kafka(broker_list, [n_partitions], rf, seed, start=0)
    elif layout == "kafka":
        replicas = _kafka(broker_list, counts, rf, seed)
    else:
        raise ValueError(f"unknown layout {layout!r}")
    return build_arrays(broker_list, topics, topic_of, partition_of, replicas, sizes)


def _alternated(brokers: Sequence[Broker]) -> list[int]:
    """Indexes into ``brokers`` in Kafka's rack-alternated order (plain order without racks)."""
    if all(b.rack is None for b in brokers):
        return list(range(len(brokers)))
    by_rack: dict[str, list[int]] = {}
    for i, b in enumerate(brokers):
        by_rack.setdefault(str(b.rack), []).append(i)
    columns = [sorted(by_rack[r], key=lambda i: brokers[i].id) for r in sorted(by_rack)]
    depth = max(len(c) for c in columns)
    return [c[d] for d in range(depth) for c in columns if d < len(c)]


def _striped(brokers: Sequence[Broker], n_partitions: int, rf: int) -> IntArray:
    """Equal racks, ``N`` a multiple of ``K``, ``RF <= K``: rack of ``alt[i]`` is ``i mod K``."""
    alt = np.array(_alternated(brokers), dtype=np.int64)
    n = len(alt)
    k = len({b.rack for b in brokers})
    g = np.arange(n_partitions, dtype=np.int64)
    rounds = g // n
    m = n // k
    out = np.empty((n_partitions, rf), dtype=np.int64)
    out[:, 0] = alt[g % n]
    for j in range(1, rf):
        out[:, j] = alt[(g + j + k * ((rounds + j) % m)) % n]
    return out


def _kafka(brokers: Sequence[Broker], counts: Sequence[int], rf: int, seed: int, start: int = -1) -> IntArray:
    rng = random.Random(seed)
    ordered = sorted(brokers, key=lambda b: b.id)
    index = {b.id: i for i, b in enumerate(brokers)}
    rows: list[list[int]] = []
    for count in counts:
        topic = assignment.assign_replicas_to_brokers(ordered, count, rf, fixed_start_index=start, rng=rng)
        rows.extend([index[b] for b in topic[p]] for p in range(count))
    return np.array(rows, dtype=np.int64).reshape(len(rows), rf)
