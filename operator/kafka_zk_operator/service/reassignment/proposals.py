"""Proposals: read the cluster, plan the request, keep the plan where the reviewer can see it.

``read_cluster`` takes one consistent-enough snapshot of ZooKeeper (live brokers and racks, every
topic's replicas, topics queued for deletion, partitions being moved). ``make_proposal`` plans
the request on it (Explicit: validated as given; other modes: the placement engine) and
summarizes it. ``store_plan`` puts the plan in ``status.plan`` when it has at most 500 entries,
else the first 500 there and all of it in ConfigMaps owned by the resource; ``load_plan`` reads
it back on every later reconcile, so what runs is exactly what was shown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.reassignment.batches import (
    busiest_broker_bytes,
    check_batches_fit,
    make_batches,
)
from kafka_zk_operator.domain.reassignment.plan import (
    ClusterView,
    PartitionMove,
    ReassignmentPlan,
    plan_entries,
    plan_from_entries,
    plan_id,
    summarize,
    summary_fields,
    with_sizes,
)
from kafka_zk_operator.domain.reassignment.request import (
    BatchLimits,
    ReassignmentRequest,
    plan_request,
    rule_of,
)
from kafka_zk_operator.domain.reassignment.resource import ReassignmentResource
from kafka_zk_operator.domain.reassignment.status import STATUS_PLAN_LIMIT, timestamp
from kafka_zk_operator.domain.reassignment.status_record import ReassignmentStatus
from kafka_zk_operator.service.backend import TopicBackend


class PlanStorage(Protocol):
    def write_plan(
        self, owner: ReassignmentResource, proposal_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> list[str]: ...

    def read_plan(self, namespace: str, names: Sequence[str], proposal_id: str) -> list[dict[str, Any]]: ...

    def delete_configmaps(self, namespace: str, names: Sequence[str]) -> None: ...


def read_cluster(store: TopicBackend, topics: Sequence[str] | None = None) -> ClusterView:
    """Live brokers and the assignments of ``topics`` (all topics when ``None``)."""
    brokers = {b.id: b.rack for b in store.live_brokers()}
    names = store.topic_names() if topics is None else sorted(set(topics))
    assignments: dict[str, dict[int, tuple[int, ...]]] = {}
    moving: set[tuple[str, int]] = set()
    for name in names:
        got = store.read_assignment(name)
        if got is None:
            continue
        topic = got.value
        partitions = {}
        for p, replicas in topic.partitions.items():
            adding = set(topic.adding_replicas.get(p, ()))
            partitions[p] = tuple(b for b in replicas if b not in adding)
            if p in topic.adding_replicas or p in topic.removing_replicas:
                moving.add((name, p))
        assignments[name] = partitions
    deleting = frozenset(store.topics_marked_for_deletion())
    return ClusterView(brokers=brokers, assignments=assignments, moving=frozenset(moving), deleting=deleting)


def partition_sizes(
    sizes_for: Callable[[], Mapping[tuple[str, int], int]] | None,
) -> Mapping[tuple[str, int], int]:
    """Bytes per partition for a byte-balanced plan (``spec.balance`` bytes or both).

    :raises NotSupported: no way to read them; :raises ClusterUnavailable: the brokers did not answer.
    """
    if sizes_for is None:
        raise errors.NotSupported("balancing bytes needs partition sizes, and this operator cannot read them")
    sizes = sizes_for()
    if not any(sizes.values()):
        raise errors.NotSupported(
            "balancing bytes needs partition sizes, and the brokers report none above 0 bytes (empty "
            "topics): use balance replicas"
        )
    return sizes


def sizes_if_readable(
    sizes_for: Callable[[], Mapping[tuple[str, int], int]] | None,
) -> Mapping[tuple[str, int], int]:
    """Partition sizes for the byte-balanced batches of a throttled plan when the brokers can
    tell; else none, and the batches are formed by counts (as without a throttle)."""
    if sizes_for is None:
        return {}
    try:
        return sizes_for()
    except errors.KzoError:  # no bootstrapServers, or the brokers did not answer
        return {}


@dataclass(frozen=True)
class Proposal:
    id: str
    plan: ReassignmentPlan
    limits: BatchLimits
    fields: dict[str, Any]


Planner = Callable[[ReassignmentRequest, ClusterView], ReassignmentPlan]


def make_proposal(
    request: ReassignmentRequest, cluster: ClusterView, now: datetime, *, planner: Planner | None = None
) -> Proposal:
    """Plan ``request``: ``planner`` (e.g. a Spark job) for the engine modes, else in-process.

    :raises InvalidSpec / NotSupported: the request cannot be planned on this cluster.
    """
    if planner is not None and rule_of(request).engine_requests is not None:
        plan = planner(request, cluster)
    else:
        plan = plan_request(request, cluster)
    plan = with_sizes(plan, cluster.sizes)  # the batches balance bytes when sizes are known
    ident = plan_id(plan, request.batch)
    summary = summarize(plan, cluster)
    batched = make_batches(plan.moves, request.batch)
    check_batches_fit(batched, request.batch)  # refused now, not when the batch is submitted
    batches = len(batched)
    fields = {
        "id": ident,
        "computedAt": timestamp(now),
        **summary_fields(summary),
        "batches": batches,
        **byte_fields(plan.moves, bool(cluster.sizes)),
        "batch": {
            "maxPartitions": request.batch.max_partitions,
            "maxMovesPerBroker": request.batch.max_moves_per_broker,
        },
        "notes": list(plan.notes) or None,
        "warnings": list(plan.warnings) or None,
    }
    return Proposal(id=ident, plan=plan, limits=request.batch, fields=fields)


def byte_fields(moves: Sequence[PartitionMove], sized: bool) -> dict[str, int]:
    """``bytesMoved`` and ``busiestBrokerBytes`` of ``status.proposal`` (none without sizes)."""
    if not sized:
        return {}
    return {
        "bytesMoved": sum((m.replica_bytes or 0) * m.moves for m in moves),
        "busiestBrokerBytes": busiest_broker_bytes(moves),
    }


def store_plan(
    storage: PlanStorage, resource: ReassignmentResource, status: ReassignmentStatus, proposal: Proposal
) -> dict[str, Any]:
    """The :class:`ReassignmentStatus` values of ``plan``, ``plan_truncated`` and
    ``plan_config_maps`` for ``proposal`` (its ConfigMaps written, those of ``status`` deleted)."""
    entries = tuple(plan_entries(proposal.plan.moves))
    old = list(status.plan_config_maps or ())
    if len(entries) <= STATUS_PLAN_LIMIT:
        if old:
            storage.delete_configmaps(resource.namespace, old)
        return {"plan": entries, "plan_truncated": False, "plan_config_maps": None}
    names = storage.write_plan(resource, proposal.id, entries)
    stale = [name for name in old if name not in names]
    if stale:
        storage.delete_configmaps(resource.namespace, stale)
    return {"plan": entries[:STATUS_PLAN_LIMIT], "plan_truncated": True, "plan_config_maps": tuple(names)}


def load_plan(
    storage: PlanStorage, resource: ReassignmentResource, status: ReassignmentStatus
) -> tuple[PartitionMove, ...]:
    """The plan ``status`` keeps. :raises InvalidSpec: it is missing or damaged (a refresh recomputes it)."""
    proposal_id = status.proposal_id or ""
    if status.plan_truncated:
        names = list(status.plan_config_maps or ())
        return plan_from_entries(storage.read_plan(resource.namespace, names, proposal_id))
    return plan_from_entries([dict(entry) for entry in status.plan or ()])


def stale_sources(moves: Sequence[PartitionMove], cluster: ClusterView) -> list[str]:
    """Partitions whose replicas changed since the proposal (and are not yet at their target)."""
    stale = []
    for move in moves:
        current = cluster.replicas(move.topic, move.partition)
        if current is None:
            stale.append(f"{move.name} (gone)")
        elif current != move.source and current != move.target:
            stale.append(move.name)
    return stale


def refuse_if_empty_cluster(cluster: ClusterView) -> None:
    if not cluster.brokers:
        raise errors.ClusterUnavailable("no broker is registered in ZooKeeper")
