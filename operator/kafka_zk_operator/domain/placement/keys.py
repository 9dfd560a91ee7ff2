"""Deterministic keys shared by every engine: tie-break hashes, mover ranks and partition groups.

Everything here is a pure function of per-row data (topic name, partition id, leader flag, size,
seed), so the single-process engine and a distributed one (the PySpark job) compute the same keys
for the same row without any global state: identical keys are what make their plans identical.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from kafka_zk_operator.domain.placement.arrays import IntArray

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)

#: Bits of the tie-break hash kept in a mover's rank key.
HASH_BITS = 28
#: Bits of the size class in a mover's rank key (log2-spaced, 16 classes per doubling).
SIZE_BITS = 11
#: A rank key fits in this many bits (leader flag, size class, hash).
RANK_BITS = 1 + SIZE_BITS + HASH_BITS

#: Partitions per group aimed for by :func:`default_group_count`.
PARTITIONS_PER_GROUP = 16_384
#: Upper bound of :func:`default_group_count`.
MAX_GROUPS = 256


def mix64(values: IntArray | np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser on ``uint64`` (wrap-around arithmetic), vectorised."""
    x = np.asarray(values).astype(np.uint64)
    with np.errstate(over="ignore"):
        x = x + _GOLDEN
        x = (x ^ (x >> np.uint64(30))) * _MIX1
        x = (x ^ (x >> np.uint64(27))) * _MIX2
        x = x ^ (x >> np.uint64(31))
    return x


def topic_hashes(topics: Sequence[str]) -> IntArray:
    """CRC-32 of each topic name (UTF-8): a stable per-topic integer, independent of topic order."""
    return np.fromiter(
        (zlib.crc32(name.encode("utf-8")) for name in topics), dtype=np.int64, count=len(topics)
    )


def partition_hash(topic_crc: IntArray, partition: IntArray, seed: int) -> np.ndarray:
    """64-bit hash of (topic, partition, seed) per row."""
    with np.errstate(over="ignore"):
        base = (topic_crc.astype(np.uint64) << np.uint64(32)) ^ partition.astype(np.uint64)
        salted = mix64(base) ^ mix64(np.full(1, seed & 0xFFFFFFFFFFFFFFFF, dtype=np.uint64))
    return mix64(salted)


def default_group_count(n_partitions: int) -> int:
    """Groups used by the partition-level stage: one per ~16K partitions, at most 256.

    Both engines must use the same count for identical plans; this function is the default.
    """
    return int(max(1, min(MAX_GROUPS, n_partitions // PARTITIONS_PER_GROUP)))


def group_of(topic_crc: IntArray, partition: IntArray, n_groups: int) -> IntArray:
    """Group of each partition: a hash of (topic, partition) modulo ``n_groups`` (seed-independent)."""
    if n_groups <= 1:
        return np.zeros(len(partition), dtype=np.int64)
    hashed = partition_hash(topic_crc, partition, 0x5EED)
    return (hashed % np.uint64(n_groups)).astype(np.int64)


def size_class(sizes: IntArray) -> IntArray:
    """Log-spaced size class in ``[0, 2**SIZE_BITS)``: 16 classes per doubling of the byte size."""
    clipped = np.maximum(sizes.astype(np.float64), 0.0)
    classes = np.floor(np.log2(clipped + 1.0) * 16.0).astype(np.int64)
    return np.minimum(classes, (1 << SIZE_BITS) - 1)


def rank_key(is_leader: np.ndarray, sizes: IntArray, row_hash: np.ndarray) -> IntArray:
    """Rank of a replica as a mover, smaller first: followers, then small partitions, then hash.

    ``row_hash`` is :func:`partition_hash` of the replica's partition (any uint64 per row).
    """
    hashed = (row_hash >> np.uint64(64 - HASH_BITS)).astype(np.int64)
    return (is_leader.astype(np.int64) << (SIZE_BITS + HASH_BITS)) | (size_class(sizes) << HASH_BITS) | hashed
