"""One reassignment at a time per Kafka cluster: who goes first, and waiting for a reassignment
the operator did not start."""

from __future__ import annotations

from collections.abc import Sequence

from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.reassignment.progress import ZnodeOwner
from kafka_zk_operator.domain.reassignment.resource import QueueRank, parse_resource, queue_rank
from kafka_zk_operator.domain.reassignment.status import Phase, Why
from kafka_zk_operator.service.reassignment.state import ClusterOf, Run


def queue_ahead(run: Run, entries: Sequence[QueueRank]) -> list[str]:
    mine = queue_rank(run.view_resource())
    if mine is None:
        return []
    return [entry[3] for entry in sorted(entries) if entry < mine and entry[2] != run.resource.uid]


def fresh_queue(run: Run, cluster: str, cluster_of: ClusterOf) -> list[QueueRank]:
    ranks = []
    for body in run.api.list_all():
        if cluster_of(body) != cluster:
            continue
        rank = queue_rank(parse_resource(body))
        if rank is not None:
            ranks.append(rank)
    return ranks


def wait_external(run: Run, phase: Phase, owner: ZnodeOwner) -> None:
    if owner is ZnodeOwner.INVALID:
        effect = kafka_lines.unparseable_reassignment_effect(run.zk().cluster_line())
        text = (
            f"/admin/reassign_partitions holds data the operator cannot parse: {effect}, and no "
            "reassignment can start while it exists. Check who wrote it and delete it by hand; Kafka's "
            "controller then ignores new reassignments until it changes (delete /controller to elect a "
            "new one)."
        )
    else:
        text = (
            "Another reassignment (not started by this resource) is running in /admin/reassign_partitions; "
            "waiting for Kafka to finish it."
        )
    run.decide(phase, Why.WAITING_FOR_EXTERNAL, text)
    if run.status.conditions and run.status.message != text:
        run.event("Normal", "WaitingForExternalReassignment", text)
