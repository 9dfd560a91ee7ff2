"""The dense, array-based view of a cluster that the placement engine reads and writes.

A cluster is ``N`` brokers (sorted by id, each in one rack) and ``P`` partitions (rows sorted by
topic name, then partition id). ``replicas[p, j]`` is the *index* (not the id) of the broker
holding replica ``j`` of row ``p``; slot 0 is the preferred leader; rows shorter than the widest
replication factor are padded with :data:`EMPTY`. Inside the engine, a replica that still has to be
placed (replication-factor increase, rack repair) sits in a slot as :data:`UNPLACED`, an index one
past the last broker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.model import Broker, BrokerId

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
AnyArray = npt.NDArray[Any]

#: Padding of a replica slot beyond the partition's replication factor.
EMPTY = -1


@dataclass(frozen=True, eq=False)
class ClusterArrays:
    """Brokers, racks and the replica placement of every partition, as numpy arrays.

    :ivar broker_ids: ``(N,)`` broker ids, strictly increasing.
    :ivar broker_rack: ``(N,)`` index into ``racks`` of each broker's rack.
    :ivar racks: rack names; ``(None,)`` when no broker has a rack.
    :ivar topics: topic names, sorted.
    :ivar topic_of: ``(P,)`` index into ``topics`` of each row.
    :ivar partition_of: ``(P,)`` partition id of each row.
    :ivar replicas: ``(P, W)`` broker indexes, :data:`EMPTY` padded.
    :ivar sizes: ``(P,)`` partition size in bytes (0 when unknown).
    """

    broker_ids: IntArray
    broker_rack: IntArray
    racks: tuple[str | None, ...]
    topics: tuple[str, ...]
    topic_of: IntArray
    partition_of: IntArray
    replicas: IntArray
    sizes: IntArray

    def __post_init__(self) -> None:
        n, p = len(self.broker_ids), len(self.topic_of)
        if self.broker_rack.shape != (n,) or self.partition_of.shape != (p,) or self.sizes.shape != (p,):
            raise ValueError("ClusterArrays: inconsistent array shapes")
        if self.replicas.ndim != 2 or self.replicas.shape[0] != p:
            raise ValueError("ClusterArrays: replicas must be a (P, W) matrix")
        if n > 1 and not bool(np.all(np.diff(self.broker_ids) > 0)):
            raise ValueError("ClusterArrays: broker ids must be strictly increasing")

    @property
    def n_brokers(self) -> int:
        return len(self.broker_ids)

    @property
    def n_partitions(self) -> int:
        return len(self.topic_of)

    @property
    def n_racks(self) -> int:
        return len(self.racks)

    @property
    def has_racks(self) -> bool:
        return self.racks != (None,)

    def replication_factors(self) -> IntArray:
        """``(P,)`` replica count of each row."""
        rf: IntArray = (self.replicas >= 0).sum(axis=1).astype(np.int64)
        return rf

    def broker_index(self, broker_id: BrokerId) -> int:
        """Index of ``broker_id``; :class:`InvalidSpec` when the cluster has no such broker."""
        position = int(np.searchsorted(self.broker_ids, broker_id))
        if position >= self.n_brokers or int(self.broker_ids[position]) != broker_id:
            raise errors.InvalidSpec(f"broker {broker_id} is not in the cluster")
        return position

    def brokers(self) -> list[Broker]:
        """The brokers as domain values."""
        return [
            Broker(int(bid), self.racks[int(rack)])
            for bid, rack in zip(self.broker_ids, self.broker_rack, strict=True)
        ]

    def with_brokers(self, added: Sequence[Broker]) -> ClusterArrays:
        """A copy with extra (empty) brokers; racks must follow the cluster's (all or none)."""
        if not added:
            return self
        existing = set(int(b) for b in self.broker_ids)
        brokers = self.brokers()
        for broker in added:
            if broker.id in existing:
                raise errors.InvalidSpec(f"broker {broker.id} is already in the cluster")
            existing.add(broker.id)
            brokers.append(broker)
        # ``replicas`` index the old (sorted) brokers, which lead ``brokers``: build_arrays renumbers.
        return build_arrays(brokers, self.topics, self.topic_of, self.partition_of, self.replicas, self.sizes)

    def leaders(self) -> IntArray:
        """``(P,)`` broker index of each row's preferred leader (:data:`EMPTY` for empty rows)."""
        if self.replicas.shape[1] == 0:
            return np.full(self.n_partitions, EMPTY, dtype=np.int64)
        return self.replicas[:, 0].copy()


def _broker_order(brokers: Sequence[Broker]) -> IntArray:
    """Position of each broker of ``brokers`` (in that order) once sorted by id."""
    ids = np.array([b.id for b in brokers], dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    position = np.empty(len(ids), dtype=np.int64)
    position[order] = np.arange(len(ids))
    return position


def _remap(replicas: IntArray, mapping: IntArray) -> IntArray:
    out = replicas.copy()
    mask = out >= 0
    out[mask] = mapping[out[mask]]
    return out


def build_arrays(
    brokers: Sequence[Broker],
    topics: Sequence[str],
    topic_of: IntArray,
    partition_of: IntArray,
    replicas: IntArray,
    sizes: IntArray | None = None,
) -> ClusterArrays:
    """Assemble :class:`ClusterArrays`, sorting brokers by id and rows by (topic, partition).

    ``replicas`` holds indexes into ``brokers`` *as given*; they are renumbered to the sorted order.
    Brokers must all have a rack or none (:class:`InvalidSpec` otherwise).
    """
    with_rack = sum(1 for b in brokers if b.rack is not None)
    if 0 < with_rack < len(brokers):
        rackless = ", ".join(str(b.id) for b in sorted(brokers) if b.rack is None)
        raise errors.InvalidSpec(
            f"only some brokers have a rack (brokers without one: {rackless}); give every broker a rack or none"
        )
    position = _broker_order(brokers)
    ordered = sorted(brokers, key=lambda b: b.id)
    ids = np.array([b.id for b in ordered], dtype=np.int64)
    if len(set(ids.tolist())) != len(ids):
        raise errors.InvalidSpec("duplicate broker ids")
    rack_names: tuple[str | None, ...]
    if with_rack:
        rack_names = tuple(sorted({b.rack for b in ordered if b.rack is not None}))
        rack_index = {name: i for i, name in enumerate(rack_names)}
        broker_rack = np.array([rack_index[b.rack] for b in ordered if b.rack is not None], dtype=np.int64)
    else:
        rack_names = (None,)
        broker_rack = np.zeros(len(ordered), dtype=np.int64)
    topic_names = tuple(topics)
    if list(topic_names) != sorted(topic_names):
        order_t = sorted(range(len(topic_names)), key=lambda i: topic_names[i])
        t_map = np.empty(len(topic_names), dtype=np.int64)
        t_map[np.array(order_t, dtype=np.int64)] = np.arange(len(topic_names))
        topic_of = t_map[topic_of]
        topic_names = tuple(topic_names[i] for i in order_t)
    rows = np.lexsort((partition_of, topic_of))
    reps = np.asarray(replicas, dtype=np.int64)[rows]
    reps = _remap(reps, position)
    size_arr = (
        np.zeros(len(rows), dtype=np.int64) if sizes is None else np.asarray(sizes, dtype=np.int64)[rows]
    )
    return ClusterArrays(
        broker_ids=ids,
        broker_rack=broker_rack,
        racks=rack_names,
        topics=topic_names,
        topic_of=np.asarray(topic_of, dtype=np.int64)[rows],
        partition_of=np.asarray(partition_of, dtype=np.int64)[rows],
        replicas=reps,
        sizes=size_arr,
    )


def loads(replicas: IntArray, n_slots: int) -> IntArray:
    """Replicas per broker index (``n_slots`` entries; slots of :data:`EMPTY` are ignored)."""
    flat = replicas[replicas >= 0]
    return np.bincount(flat, minlength=n_slots).astype(np.int64)
