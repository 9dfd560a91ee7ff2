"""Running the approved plan batch by batch: submit, follow progress, elect preferred leaders,
stop on request (after the batch in flight, or at once where the backend can cancel it:
``domain.reassignment.stopping``), and end when every batch is done."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.reassignment.batches import make_batches
from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.reassignment.progress import BatchProgress, ZnodeOwner
from kafka_zk_operator.domain.reassignment.request import BatchLimits, parse_request
from kafka_zk_operator.domain.reassignment.resource import ReassignmentResource, stop_requested
from kafka_zk_operator.domain.reassignment.status import Phase, Why, timestamp
from kafka_zk_operator.domain.reassignment.status_record import Progress
from kafka_zk_operator.domain.reassignment.stopping import (
    StopAction,
    StopDecision,
    decide_stop,
    stopped_message,
)
from kafka_zk_operator.domain.reassignment.validation import submission_problems, unregistered_targets
from kafka_zk_operator.domain.timestamps import parse_timestamp
from kafka_zk_operator.domain.wording import counted, listed
from kafka_zk_operator.service.reassignment import execution, finish, proposals, queueing, throttles
from kafka_zk_operator.service.reassignment.state import Key, Run


def run_batches(run: Run, plan: tuple[Sequence[PartitionMove], BatchLimits] | None = None) -> None:
    """Take the next step of the batches. ``plan``: the moves and batch limits the caller already
    holds (the start, right after storing them); else they are read from the status."""
    if plan is None:
        limits = run.status.proposal_limits(parse_request_limits(run.resource))
        moves: Sequence[PartitionMove] = proposals.load_plan(run.api, run.resource, run.status)
    else:
        moves, limits = plan
    batches = make_batches(moves, limits)
    targets = {(m.topic, m.partition): m.target for m in moves}
    total = len(batches)
    started_spec = run.progress.started_spec
    if started_spec is not None and started_spec != spec_digest(run.resource.spec):
        run.warnings.append(
            "The spec changed after the reassignment started; only spec.throttle changes apply to a "
            "running reassignment (delete the resource and create a new one to run another plan)."
        )
    stop = stop_requested(run.resource) or run.resource.deleting
    spec_preferred = bool(run.resource.spec.get("preferredLeaderElection", True))
    for _ in range(2 * total + 4):
        progress = run.progress
        current, done = progress.batch, progress.finished_batches
        done_before = sum(len(b) for b in batches[: min(done, total)])
        if done >= current:
            batch = batches[current - 1]
            if spec_preferred and (progress.leaders_elected or 0) < current:
                elect(run, batch, current)
            if current >= total:
                finish.finish_run(
                    run,
                    Phase.COMPLETED,
                    Why.COMPLETED,
                    f"All {counted(len(moves), 'partition')} moved."
                    if len(moves) != 1
                    else "The partition moved.",
                    len(moves),
                )
                return
            if stop:
                finish.finish_run(run,
                    Phase.STOPPED, Why.STOPPED,
                    f"Stopped on request after batch {current} of {total}: {done_before} of "
                    f"{counted(len(moves), 'partition')} moved; the rest keep their replicas.",
                    done_before,
                )  # fmt: skip
                return
            run.set_progress(current_batch=current + 1, batch_started_at=None)
            continue
        batch = batches[current - 1]
        observation = execution.observe_batch(
            run.zk(), batch, targets, now=run.now,
            started_at=parse_timestamp(progress.batch_started_at),
            stuck_after_seconds=run.settings.stuck_after_seconds,
        )  # fmt: skip
        state = observation.progress
        if state.complete:
            moved = sum(m.moves for m in batch)
            run.result.replicas_moved += moved
            run.set_progress(batches_done=current, partitions_done=done_before + len(batch))
            run.event("Normal", "BatchCompleted", f"Batch {current} of {total} done: {_names(batch)}")
            continue
        run.set_progress(partitions_done=done_before + len(state.done))
        if observation.owner is ZnodeOwner.OURS or (state.in_flight and submitted(progress, current)):
            if stop:
                can_cancel = run.zk().can_cancel
                decision = decide_stop(
                    batch, state, observation.listed, in_flight=True, can_cancel=can_cancel
                )
                if decision.action is not StopAction.WAIT:
                    stop_during_batch(run, decision, current, total, done_before, len(moves))
                    return
            if not progress.batch_started_at:  # submitted just before a crash: not announced yet
                run.set_progress(batch_started_at=timestamp(run.now))
                run.event(
                    "Normal",
                    "BatchStarted",
                    f"Batch {current} of {total} started: {_names(batch)} (submitted just before "
                    "the operator restarted)",
                )
            throttles.adjust_throttle(run, current, batch)
            report_in_flight(run, current, total, state, stop)
            run.result.batch_in_flight = observation.owner is ZnodeOwner.OURS
            return
        if state.missing:
            names = ", ".join(f"{t}-{p}" for t, p in state.missing[:10])
            finish.finish_run(
                run,
                Phase.FAILED,
                Why.FAILED,
                f"Partitions vanished during the reassignment: {names}.",
                done_before,
            )
            return
        if stop and submitted(progress, current) and run.zk().can_cancel:
            # Cancelled by an earlier pass that ended before its verdict: end it the same way.
            decision = decide_stop(batch, state, observation.listed, in_flight=False, can_cancel=True)
            stop_during_batch(run, decision, current, total, done_before, len(moves))
            return
        if observation.owner in (ZnodeOwner.FOREIGN, ZnodeOwner.INVALID):
            queueing.wait_external(run, Phase.RUNNING, observation.owner)
            return
        if state.in_flight:  # moved by someone else (Kafka's Admin API writes no znode)
            queueing.wait_external(run, Phase.RUNNING, ZnodeOwner.FOREIGN)
            return
        if stop:
            finish.finish_run(run,
                Phase.STOPPED, Why.STOPPED,
                f"Stopped on request before batch {current} of {total}: {done_before + len(state.done)} "
                f"of {counted(len(moves), 'partition')} moved; the rest keep their replicas.",
                done_before + len(state.done),
            )  # fmt: skip
            return
        submit(run, current, total, batch, state.pending)
        return
    raise errors.KzoError("internal error: the batch loop did not settle")


def stop_during_batch(
    run: Run, decision: StopDecision, current: int, total: int, done_before: int, partitions: int
) -> None:
    """A stop that does not wait for the batch (the backend can cancel): cancel what of it still
    moves, then end the run with its throttles removed."""
    if decision.cancel:
        execution.cancel_moves(run.zk(), decision.cancel)
        shown = listed(f"{t}-{p}" for t, p in decision.cancel)
        run.event(
            "Normal", "BatchCancelled", f"Batch {current} of {total} cancelled on request: {shown} go back"
        )
    message = stopped_message(decision, current, total, done_before, partitions)
    finish.finish_run(run, Phase.STOPPED, Why.STOPPED, message, done_before + decision.moved)


def report_in_flight(run: Run, current: int, total: int, state: BatchProgress, stop: bool) -> None:
    text = (
        f"Batch {current} of {total} in flight: {len(state.done)} done, {len(state.moving)} moving "
        f"({state.in_sync}/{state.wanted} target replicas in sync)."
    )
    why: Why = Why.RUNNING
    if stop:
        why = Why.STOPPING
        text += " Stopping after this batch (ZooKeeper mode cannot cancel a running batch)."
    was_stuck = run.status.was_stuck
    run.decide(Phase.RUNNING, why, text, stuck=state.stuck)
    if state.stuck and not was_stuck:
        first = state.stuck[0]
        run.event("Warning", "Stuck", f"{first.topic}-{first.partition}: {first.reason}")


def submit(
    run: Run, current: int, total: int, batch: Sequence[PartitionMove], pending: Sequence[Key]
) -> None:
    store = run.zk()
    view = proposals.read_cluster(store, sorted({m.topic for m in batch}))
    waiting = [m for m in batch if (m.topic, m.partition) in set(pending)]
    problems = submission_problems(waiting, view)
    if problems:
        done = run.progress.moved_partitions
        finish.finish_run(
            run, Phase.FAILED, Why.FAILED, f"Batch {current} cannot run: {'; '.join(problems[:10])}.", done
        )
        return
    dead = unregistered_targets(waiting, view)
    if dead:
        run.decide(
            Phase.RUNNING,
            Why.WAITING_FOR_BROKERS,
            f"Batch {current} waits for broker {', '.join(map(str, dead))} to register before it is submitted.",
        )
        return
    rate = run.resource.spec.get("throttle")
    if rate:
        throttles.ensure_throttle(run, current, int(rate), batch)
    # Write-ahead: a batch found moving later is ours only if this reached the status first.
    if run.progress.batch_submitted != current:
        run.set_progress(batch_submitted=current)
        run.save("progress")
    try:
        execution.submit_batch(store, waiting)
    except errors.ReassignmentInProgress:
        run.decide(
            Phase.RUNNING, Why.WAITING_FOR_EXTERNAL, "A reassignment znode appeared meanwhile; waiting."
        )
        return
    run.result.batch_in_flight = True
    resubmitted = bool(run.progress.batch_started_at)
    if not resubmitted:
        run.set_progress(batch_started_at=timestamp(run.now))
    verb = "Resubmitted" if resubmitted else "Started"
    run.event("Normal", f"Batch{verb}", f"Batch {current} of {total} {verb.lower()}: {_names(waiting)}")
    run.decide(
        Phase.RUNNING,
        Why.RUNNING,
        f"Batch {current} of {total} submitted ({counted(len(waiting), 'partition')}).",
    )


def elect(run: Run, batch: Sequence[PartitionMove], current: int) -> None:
    asked, written = execution.elect_preferred_leaders(run.zk(), batch)
    run.set_progress(leaders_elected=current)
    if asked and written:
        run.event("Normal", "LeaderElection", f"Preferred-leader election requested for {asked} partitions")
    elif asked:
        run.event(
            "Normal",
            "LeaderElectionSkipped",
            f"Another preferred-leader election is pending; {asked} partitions of batch {current} keep "
            "their leaders until Kafka's auto.leader.rebalance runs",
        )


def submitted(progress: Progress, batch: int) -> bool:
    """This resource submitted ``batch``: recorded before the znode was written (``batchSubmitted``)
    or after (``batchStartedAt``, also what resources started by older versions have)."""
    return progress.batch_submitted == batch or bool(progress.batch_started_at)


def spec_digest(spec: Mapping[str, Any]) -> str:
    """Digest of the spec without ``throttle`` (the one field a running reassignment follows)."""
    fixed = {key: value for key, value in spec.items() if key != "throttle"}
    return hashlib.sha256(json.dumps(fixed, sort_keys=True, default=str).encode()).hexdigest()[:12]


def parse_request_limits(resource: ReassignmentResource) -> BatchLimits:
    try:
        return parse_request(resource.spec).batch
    except errors.InvalidSpec:
        return BatchLimits()


def _names(batch: Sequence[PartitionMove]) -> str:
    shown = ", ".join(f"{m.name} {list(m.source)}->{list(m.target)}" for m in batch[:20])
    return shown + (f" and {len(batch) - 20} more" if len(batch) > 20 else "")
