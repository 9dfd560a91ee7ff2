"""What a stop (the ``stop`` annotation) or a deletion does with the batch in flight. Pure.

ZooKeeper mode cannot cancel ``/admin/reassign_partitions``: the controller runs it to its end, so
a stop waits for the batch (:attr:`StopAction.WAIT`) and ends after it. Where the backend can
cancel (the Admin API, KIP-455: ``ReassignmentBackend.can_cancel``), the stop does not wait: the
partitions of this batch that Kafka still lists as moving *to this plan's targets* are cancelled
(:attr:`StopAction.CANCEL`; Kafka puts back their replicas from before the move), and the run ends
at once, throttles removed. A partition Kafka lists with another target is someone else's move
and is left alone; one that finished meanwhile keeps its new replicas (a cancel of it would be
no error either).

Level-based: the decision depends only on what Kafka shows now. After a crash between the
cancel and the end of the run the batch shows nothing moving, so the next pass ends it
(:attr:`StopAction.END`) with the same counts: the batch's partitions not on their targets are
the ones whose move was cancelled.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafka_zk_operator.domain.model import BrokerId, PartitionId, TopicName
from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.reassignment.progress import BatchProgress
from kafka_zk_operator.domain.wording import counted

Key = tuple[TopicName, PartitionId]


class StopAction(enum.StrEnum):
    #: The batch runs to its end (the backend cannot cancel it); the run stops after it.
    WAIT = "Wait"
    #: Cancel :attr:`StopDecision.cancel`, then end the run.
    CANCEL = "Cancel"
    #: Nothing of this batch moves (any more): end the run now.
    END = "End"


@dataclass(frozen=True)
class StopDecision:
    action: StopAction
    #: The partitions to cancel, in the batch's order (only with :attr:`StopAction.CANCEL`).
    cancel: tuple[Key, ...] = ()
    #: Partitions of the batch on their targets (they keep their new replicas).
    moved: int = 0
    #: Partitions of the batch not on their targets: cancelled now, or before a restart.
    reverted: int = 0


def decide_stop(
    batch: Sequence[PartitionMove],
    progress: BatchProgress,
    listed: Mapping[Key, Sequence[BrokerId]],
    *,
    in_flight: bool,
    can_cancel: bool,
) -> StopDecision:
    """The stop of a started batch.

    :param progress: the batch as Kafka shows it now (``domain.reassignment.progress``).
    :param listed: every partition Kafka lists as reassigning, with its target.
    :param in_flight: the batch is this resource's and still moves (the caller's ownership check).
    :param can_cancel: the backend can cancel a running move.
    """
    moved = len(progress.done)
    reverted = len(batch) - moved
    if in_flight and not can_cancel:
        return StopDecision(StopAction.WAIT, moved=moved, reverted=reverted)
    ours = tuple(
        (m.topic, m.partition)
        for m in batch
        if (key := (m.topic, m.partition)) in listed and tuple(listed[key]) == tuple(m.target)
    )
    if in_flight and ours:
        return StopDecision(StopAction.CANCEL, ours, moved=moved, reverted=reverted)
    return StopDecision(StopAction.END, moved=moved, reverted=reverted)


def stopped_message(
    decision: StopDecision, current: int, total: int, done_before: int, partitions: int
) -> str:
    """The ``Stopped`` verdict of a run whose batch ``current`` was cancelled."""
    return (
        f"Stopped on request during batch {current} of {total}: the move of "
        f"{counted(decision.reverted, 'partition')} of the batch was cancelled (Kafka put back their "
        f"replicas), {decision.moved} had already moved; {done_before + decision.moved} of "
        f"{counted(partitions, 'partition')} moved, the rest keep their replicas."
    )
