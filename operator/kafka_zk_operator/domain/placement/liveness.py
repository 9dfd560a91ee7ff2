"""Brokers that are down: a plan must not depend on them.

Kafka finishes a partition's reassignment only once every broker of its new replica list is in the
ISR (``KafkaController.isReassignmentComplete``: target replicas a subset of the ISR; before 2.4
``onPartitionReassignment`` waits for the same even when only the order changes). A broker that is
down is not in the ISR, so a changed partition whose new list names it never completes: a replica
placed on it, or any other move of a partition that keeps a replica on it. Moving replicas *off* a
down broker is fine (it is not in the new list).

The engine does not know which brokers are up (``ClusterArrays`` has no such fact); a snapshot
marks down brokers ``"live": false`` (``domain.documents.snapshot``, ``ClusterSnapshot.down``), and the
callers check the finished plan with :func:`check_down_brokers` before writing anything. Plans of
snapshots without down brokers are not affected.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement.arrays import loads
from kafka_zk_operator.domain.placement.planner import Plan, PlanRequest, count_moves_mask


@dataclass(frozen=True)
class DownBrokerUse:
    """What a plan would ask of brokers that are down.

    :ivar brokers: ids of the down brokers named in the new replica list of a changed partition.
    :ivar partitions: changed partitions whose new replica list names a down broker.
    :ivar new_replicas: replicas the plan places on down brokers (not there before).
    :ivar holders: those of ``brokers`` that hold replicas before the plan.
    """

    brokers: tuple[int, ...]
    partitions: int
    new_replicas: int
    holders: tuple[int, ...]


def down_broker_use(result: Plan, down: Collection[int]) -> DownBrokerUse | None:
    """What ``result`` asks of the brokers in ``down`` (ids), or ``None`` when nothing."""
    cluster = result.cluster
    ids = cluster.broker_ids
    is_down = np.isin(ids, np.fromiter(down, dtype=np.int64, count=len(down)))
    if not is_down.any():
        return None
    rows = result.changed_rows()
    after = result.replicas[rows]
    named = (after >= 0) & is_down[np.where(after >= 0, after, 0)]
    if not named.any():
        return None
    placed = named & count_moves_mask(cluster.replicas[rows], after)
    used = np.unique(after[named])
    held = loads(cluster.replicas, cluster.n_brokers)[: cluster.n_brokers] > 0
    return DownBrokerUse(
        brokers=tuple(int(ids[b]) for b in used),
        partitions=int(named.any(axis=1).sum()),
        new_replicas=int(placed.sum()),
        holders=tuple(int(ids[b]) for b in used if held[b]),
    )


def check_down_brokers(result: Plan, down: Collection[int], request: PlanRequest) -> None:
    """Refuse a plan that would place or keep replicas on down brokers in partitions it changes.

    :raises InvalidSpec: one line naming the brokers and how to proceed (the flags of ``kzo plan``
        and of the Spark job, which share them).
    """
    use = down_broker_use(result, down)
    if use is None:
        return
    many = len(use.brokers) > 1
    names = f"broker{'s' if many else ''} {', '.join(map(str, use.brokers))}"
    it, its = ("them", "their") if many else ("it", "its")
    if use.new_replicas:
        asks = (
            f"the plan would place {use.new_replicas} new replica(s) on {it} "
            f"({use.partitions} changed partition(s) would list {it})"
        )
    else:
        asks = f"the plan would change {use.partitions} partition(s) that keep a replica on {it}"
    ways = []
    if use.holders:
        removed = list(request.brokers) if request.mode is Mode.REMOVE_BROKERS else []
        removed += [b for b in use.holders if b not in removed]
        ways.append(
            f"move {its} replicas away first (--mode remove-brokers --brokers {','.join(map(str, removed))})"
        )
    ways.append(f"wait until {it} {'are' if many else 'is'} back and take a fresh snapshot")
    raise errors.InvalidSpec(
        f'{names} {"are" if many else "is"} down ("live": false in the snapshot), but {asks}; Kafka '
        "completes a reassignment only when every broker of the new replica list is in sync, so "
        f"those moves would never finish: {', or '.join(ways)}"
    )


__all__ = ["DownBrokerUse", "check_down_brokers", "down_broker_use"]
