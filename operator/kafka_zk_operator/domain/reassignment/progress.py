"""Where a batch stands, judged only from what ZooKeeper shows (reference §9).

Per partition of the batch:

* **done**: the topic znode lists exactly the target replicas (order included: Kafka writes
  ``RS = TRS`` at the end) and the partition is in neither ``adding_replicas`` nor
  ``removing_replicas``;
* **moving**: the partition is in ``adding``/``removing_replicas`` or still has an entry in
  ``/admin/reassign_partitions``; progress is how many target replicas are in the ISR;
* **pending**: neither (never submitted, or the controller dropped it);
* **missing**: its topic or partition is gone.

A moving partition is **stuck** when a target broker is not registered (the controller waits for
it forever: ZooKeeper mode cannot cancel), when the controller has not acted on the znode at all
for :data:`UNNOTICED_AFTER_S` (the partition still has its old replicas, nothing being added or
removed: Kafka's controller stops watching ``/admin/reassign_partitions`` after it found data there
it could not parse, until the controller changes - seen on 3.9.2), or when the batch has run longer
than the stuck threshold while target replicas are still outside the ISR. Each stuck entry
carries guidance.

:func:`classify_znode` tells whether an existing ``/admin/reassign_partitions`` is this
reassignment's own batch (every entry is one of our plan's targets) or someone else's, which is
waited for and never touched.

Pure: observations in, verdicts out; the clock is passed in.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from kafka_zk_operator.domain.model import BrokerId, PartitionId, PartitionState, TopicAssignment, TopicName
from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.wording import brokers_are

Key = tuple[TopicName, PartitionId]

#: A submitted partition the controller has not touched for this long is reported stuck: the
#: controller starts a move within milliseconds (2.4+: ``adding_replicas``; before: the union of
#: old and new replicas in the topic znode).
UNNOTICED_AFTER_S = 60.0


class ZnodeOwner(enum.StrEnum):
    NONE = "None"
    OURS = "Ours"
    FOREIGN = "Foreign"
    INVALID = "Invalid"


def classify_znode(
    entries: Sequence[tuple[TopicName, PartitionId, tuple[BrokerId, ...]]] | None,
    plan_targets: Mapping[Key, tuple[BrokerId, ...]],
    *,
    invalid: bool = False,
) -> ZnodeOwner:
    """Whose ``/admin/reassign_partitions`` is it? ``entries is None``: there is none."""
    if invalid:
        return ZnodeOwner.INVALID
    if entries is None:
        return ZnodeOwner.NONE
    if entries and all(plan_targets.get((t, p)) == tuple(r) for t, p, r in entries):
        return ZnodeOwner.OURS
    return ZnodeOwner.FOREIGN


@dataclass(frozen=True, slots=True)
class Stuck:
    topic: TopicName
    partition: PartitionId
    reason: str


@dataclass(frozen=True)
class BatchProgress:
    done: tuple[Key, ...] = ()
    moving: tuple[Key, ...] = ()
    pending: tuple[Key, ...] = ()
    missing: tuple[Key, ...] = ()
    stuck: tuple[Stuck, ...] = ()
    #: Target replicas in the ISR, over all target replicas, for the moving partitions.
    in_sync: int = 0
    wanted: int = 0
    dead_targets: tuple[BrokerId, ...] = field(default=())

    @property
    def complete(self) -> bool:
        return not (self.moving or self.pending or self.missing)

    @property
    def in_flight(self) -> bool:
        return bool(self.moving)


def evaluate_batch(
    batch: Sequence[PartitionMove],
    topics: Mapping[TopicName, TopicAssignment | None],
    states: Mapping[Key, PartitionState],
    live_brokers: Collection[BrokerId],
    znode_partitions: Collection[Key] = (),
    *,
    now: datetime | None = None,
    started_at: datetime | None = None,
    stuck_after_seconds: float | None = None,
) -> BatchProgress:
    """The state of each partition of ``batch`` from the topic and state znodes."""
    done: list[Key] = []
    moving: list[Key] = []
    pending: list[Key] = []
    missing: list[Key] = []
    stuck: list[Stuck] = []
    dead: set[BrokerId] = set()
    in_sync = wanted = 0
    slow = (
        now is not None
        and started_at is not None
        and stuck_after_seconds is not None
        and (now - started_at).total_seconds() > stuck_after_seconds
    )
    unnoticed_window = (
        now is not None and started_at is not None and (now - started_at).total_seconds() > UNNOTICED_AFTER_S
    )
    live = set(live_brokers)
    in_znode = set(znode_partitions)
    for move in batch:
        key = (move.topic, move.partition)
        assignment = topics.get(move.topic)
        if assignment is None or move.partition not in assignment.partitions:
            missing.append(key)
            continue
        reassigning = (
            move.partition in assignment.adding_replicas or move.partition in assignment.removing_replicas
        )
        if not reassigning and key not in in_znode:
            (done if tuple(assignment.partitions[move.partition]) == move.target else pending).append(key)
            continue
        moving.append(key)
        state = states.get(key)
        isr = set(state.isr) if state is not None else set()
        wanted += len(move.target)
        in_sync += len(isr & set(move.target))
        absent = sorted(b for b in move.target if b not in live)
        if absent:
            dead.update(absent)
            stuck.append(
                Stuck(
                    move.topic,
                    move.partition,
                    f"target {brokers_are(absent)} not registered in ZooKeeper; the "
                    "controller waits for it. Start the broker: ZooKeeper mode cannot cancel a running "
                    "reassignment (only the Admin API's cancel can)",
                )
            )
        elif (
            unnoticed_window
            and not reassigning
            and tuple(assignment.partitions[move.partition]) == tuple(move.source)
            and move.source != move.target
        ):
            stuck.append(
                Stuck(
                    move.topic,
                    move.partition,
                    f"the controller has not acted on /admin/reassign_partitions for {int(UNNOTICED_AFTER_S)} s "
                    "(Kafka's controller stops watching it after it found data there it could not parse, "
                    "until the controller changes): move the controller - restart the controller broker "
                    "(see /controller), or delete the /controller znode to trigger a new election",
                )
            )
        elif state is not None and state.leader < 0:
            stuck.append(Stuck(move.topic, move.partition, "the partition has no leader; check the brokers"))
        elif slow and not set(move.target) <= isr:
            lagging = sorted(set(move.target) - isr)
            stuck.append(
                Stuck(
                    move.topic,
                    move.partition,
                    f"replicas on broker {', '.join(map(str, lagging))} are not in the ISR after "
                    f"{int(stuck_after_seconds or 0)} s; raise spec.throttle if it is too low, else check "
                    "those brokers' logs",
                )
            )
    return BatchProgress(
        done=tuple(done),
        moving=tuple(moving),
        pending=tuple(pending),
        missing=tuple(missing),
        stuck=tuple(stuck),
        in_sync=in_sync,
        wanted=wanted,
        dead_targets=tuple(sorted(dead)),
    )


def partitions_done_before(batches: Sequence[Sequence[PartitionMove]], batches_done: int) -> int:
    """Partitions in the batches already finished."""
    return sum(len(batch) for batch in batches[:batches_done])
