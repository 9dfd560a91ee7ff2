"""The cluster side of running a batch: observe it, throttle it, submit it, elect its leaders,
through the backend of the pass (``service.backend.ReassignmentBackend``: ZooKeeper or the Admin API).

Every function reads ZooKeeper afresh and is idempotent, so the caller (the level-based
reconcile in ``service.reassignment``) can repeat any step after a crash:

* :func:`observe_batch` - topic znodes, partition state znodes and ``/admin/reassign_partitions``
  of one batch, judged by ``domain.reassignment.progress``;
* :func:`plan_batch_throttle` / :func:`apply_throttle` / :func:`remove_throttle` - Kafka's throttle
  computation for the batch, written as versioned config changes with notifications; removal
  undoes only the operator's part (``domain.reassignment.throttles``);
* :func:`submit_batch` - create the reassignment znode (create only, never set);
* :func:`cancel_moves` - cancel running moves, where the backend can (the Admin API);
* :func:`elect_preferred_leaders` - ``/admin/preferred_replica_election`` for the batch's
  partitions whose first target replica is in sync but not leading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.model import (
    BrokerId,
    PartitionId,
    PartitionReassignment,
    PartitionState,
    TopicAssignment,
    TopicName,
    TopicPartition,
)
from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.reassignment.progress import (
    BatchProgress,
    ZnodeOwner,
    classify_znode,
    evaluate_batch,
)
from kafka_zk_operator.domain.reassignment.throttles import (
    ThrottleRecord,
    apply_broker_config,
    apply_topic_config,
    plan_throttle,
    proposed_move_map,
    restore_broker_config,
    restore_topic_config,
)
from kafka_zk_operator.service.backend import ReassignmentBackend

Key = tuple[TopicName, PartitionId]


@dataclass(frozen=True)
class BatchObservation:
    progress: BatchProgress
    owner: ZnodeOwner
    #: Every partition Kafka lists as reassigning, with its target (empty: none, or unreadable).
    listed: Mapping[Key, tuple[BrokerId, ...]]
    topics: Mapping[TopicName, TopicAssignment | None]
    states: Mapping[Key, PartitionState]
    live: frozenset[BrokerId]


def _topics(
    store: ReassignmentBackend, batch: Sequence[PartitionMove]
) -> dict[TopicName, TopicAssignment | None]:
    topics: dict[TopicName, TopicAssignment | None] = {}
    for topic in sorted({m.topic for m in batch}):
        got = store.read_assignment(topic)
        topics[topic] = None if got is None else got.value
    return topics


def _states(store: ReassignmentBackend, batch: Sequence[PartitionMove]) -> dict[Key, PartitionState]:
    by_topic: dict[TopicName, list[PartitionId]] = {}
    for move in batch:
        by_topic.setdefault(move.topic, []).append(move.partition)
    states: dict[Key, PartitionState] = {}
    for topic, partitions in by_topic.items():
        for partition, state in store.partition_states(topic, sorted(partitions)).items():
            states[(topic, partition)] = state
    return states


def observe_batch(
    store: ReassignmentBackend,
    batch: Sequence[PartitionMove],
    plan_targets: Mapping[Key, tuple[BrokerId, ...]],
    *,
    now: datetime,
    started_at: datetime | None,
    stuck_after_seconds: float,
) -> BatchObservation:
    invalid = False
    entries: list[tuple[str, int, tuple[int, ...]]] | None = None
    try:
        pending = store.pending_reassignment()
        if pending is not None:
            entries = [(e.topic, e.partition, tuple(e.replicas)) for e in pending.value]
    except errors.MalformedZnode:
        invalid = True
    owner = classify_znode(entries, plan_targets, invalid=invalid)
    in_znode = {(t, p) for t, p, _ in entries or []} if owner is ZnodeOwner.OURS else set()
    topics = _topics(store, batch)
    states = _states(store, batch)
    live = frozenset(store.broker_ids())
    progress = evaluate_batch(
        batch,
        topics,
        states,
        live,
        in_znode,
        now=now,
        started_at=started_at,
        stuck_after_seconds=stuck_after_seconds,
    )
    listed = {(t, p): replicas for t, p, replicas in entries or []}
    return BatchObservation(
        progress=progress, owner=owner, listed=listed, topics=topics, states=states, live=live
    )


# ------------------------------------------------------------------ throttles
def plan_batch_throttle(
    store: ReassignmentBackend, batch_number: int, rate: int, batch: Sequence[PartitionMove]
) -> ThrottleRecord:
    """What throttling this batch adds, from the topic and config znodes as they are now."""
    topics = _topics(store, batch)
    targets = {(m.topic, m.partition): m.target for m in batch}
    current: dict[Key, tuple[BrokerId, ...]] = {}
    in_flight: dict[Key, tuple[tuple[BrokerId, ...], tuple[BrokerId, ...]]] = {}
    for topic, assignment in topics.items():
        if assignment is None:
            continue
        for partition, replicas in assignment.partitions.items():
            if partition in assignment.adding_replicas or partition in assignment.removing_replicas:
                in_flight[(topic, partition)] = (replicas, assignment.adding_replicas.get(partition, ()))
            if (topic, partition) in targets:
                current[(topic, partition)] = replicas
    known = {key: target for key, target in targets.items() if key in current or key in in_flight}
    move_map = proposed_move_map(known, current, in_flight)
    broker_ids = {
        b for moves in move_map.values() for move in moves.values() for b in move.sources | move.destinations
    }
    broker_configs = {}
    for broker in sorted(broker_ids):
        got = store.read_entity_config("brokers", str(broker))
        broker_configs[broker] = got.value if got is not None else {}
    topic_configs = {}
    for topic in move_map:
        got = store.read_topic_config(topic)
        topic_configs[topic] = got.value if got is not None else {}
    return plan_throttle(batch_number, rate, move_map, broker_configs, topic_configs)


def apply_throttle(store: ReassignmentBackend, record: ThrottleRecord) -> None:
    """Set the rates on the record's brokers and add its replica entries (idempotent)."""
    for previous in record.brokers:
        store.update_entity_config(
            "brokers", str(previous.broker), partial(apply_broker_config, rate=record.rate)
        )
    for added in record.topics:
        if store.is_marked_for_deletion(added.topic):
            continue  # Kafka is deleting it: nothing to move, and its config goes with it
        try:
            store.update_entity_config("topics", added.topic, partial(apply_topic_config, added=added))
        except errors.TopicBeingDeleted:
            continue  # deleted meanwhile: its config is never re-created (the store checks)


def remove_throttle(store: ReassignmentBackend, record: ThrottleRecord) -> None:
    """Undo exactly what ``record`` added; values others changed meanwhile are left alone."""
    for previous in record.brokers:
        store.update_entity_config(
            "brokers",
            str(previous.broker),
            partial(restore_broker_config, previous=previous, rate=record.rate),
        )
    for added in record.topics:
        if store.read_topic_config(added.topic) is None:
            continue
        try:
            store.update_entity_config("topics", added.topic, partial(restore_topic_config, added=added))
        except errors.TopicBeingDeleted:
            continue  # deleted meanwhile: its config went with it


# ------------------------------------------------------------------ submission, cancel and leaders
def cancel_moves(store: ReassignmentBackend, partitions: Sequence[Key]) -> None:
    """Cancel the moves of ``partitions`` (only where ``store.can_cancel``): Kafka puts back their
    replicas from before. Idempotent: a partition no longer moving is no error."""
    store.cancel_reassignment([TopicPartition(t, p) for t, p in partitions])


def submit_batch(store: ReassignmentBackend, moves: Sequence[PartitionMove]) -> None:
    """Create ``/admin/reassign_partitions`` with the moves' targets.

    :raises ReassignmentInProgress: a reassignment znode appeared meanwhile.
    """
    store.create_reassignment([PartitionReassignment(m.topic, m.partition, tuple(m.target)) for m in moves])


def elect_preferred_leaders(store: ReassignmentBackend, batch: Sequence[PartitionMove]) -> tuple[int, bool]:
    """Ask for a preferred election where the first target replica is in sync but not leader.

    Returns (partitions asked for, whether an election covering them is requested). ``False``
    with a non-zero count means another election is pending that leaves some of them out
    (Kafka's ``auto.leader.rebalance`` will catch up). A pending election that covers them all
    counts as requested: it is this operator's own when the reply to its create was lost (a
    connection loss after ZooKeeper applied it), and either way the controller will elect them.
    """
    states = _states(store, batch)
    wanted = []
    for move in batch:
        state = states.get((move.topic, move.partition))
        if state is None or not move.target:
            continue
        preferred = move.target[0]
        if state.leader != preferred and preferred in state.isr:
            wanted.append(TopicPartition(move.topic, move.partition))
    if not wanted:
        return 0, True
    if store.create_preferred_election(wanted):
        return len(wanted), True
    try:
        pending = store.pending_preferred_election()
    except errors.MalformedZnode:
        return len(wanted), False
    if pending is None:  # run and deleted by the controller meanwhile: ask again
        return len(wanted), store.create_preferred_election(wanted)
    return len(wanted), set(wanted) <= set(pending)
