"""The two entry points of the reassignment service: :func:`reconcile` (create, update, resume and
the poll timer) and :func:`delete` (before the finalizer goes)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.reassignment.batches import make_batches
from kafka_zk_operator.domain.reassignment.defaults import defaults_for, with_defaults
from kafka_zk_operator.domain.reassignment.progress import ZnodeOwner
from kafka_zk_operator.domain.reassignment.resource import QueueRank, parse_resource, refresh_requested
from kafka_zk_operator.domain.reassignment.status import TERMINAL, Phase, Why, has_phase_conditions
from kafka_zk_operator.domain.reassignment.stopping import StopAction, decide_stop
from kafka_zk_operator.domain.wording import counted
from kafka_zk_operator.service.backend import ReassignmentBackend
from kafka_zk_operator.service.reassignment import execution, finish, proposals, propose, running, throttles
from kafka_zk_operator.service.reassignment.running import parse_request_limits, submitted
from kafka_zk_operator.service.reassignment.state import (
    ClusterOf,
    ReassignmentApi,
    Ref,
    Result,
    Run,
    Settings,
)


def reconcile_run(run: Run, queue: Sequence[QueueRank], cluster: str, cluster_of: ClusterOf) -> None:
    run.warnings = run.status.proposal_warnings
    phase = run.status.current_phase
    started = run.status.started
    if phase in TERMINAL:
        finish.remove_leftover_throttle(run)
        regenerate = run.status.observed_generation != run.resource.generation
        if phase is Phase.FAILED and not started and (regenerate or refresh_requested(run.resource)):
            propose.before_start(run, queue, cluster, cluster_of)
        elif regenerate or not has_phase_conditions(run.status.conditions):
            restate(run, phase)
        return
    if started:
        try:
            running.run_batches(run)
        except errors.InvalidSpec as error:  # the stored plan is damaged: end it, throttles removed
            finish.finish_run(
                run, Phase.FAILED, Why.INVALID_SPEC, error.message, run.progress.moved_partitions
            )
    else:
        propose.before_start(run, queue, cluster, cluster_of)


def restate(run: Run, phase: Phase) -> None:
    """The verdict of a reassignment that has ended, stated again: its status then describes the
    current generation (a spec changed after the end changes nothing, and says so to kstatus
    through ``observedGeneration``) and carries every condition of its phase (one that ended
    under an operator before ``Stalled``/``ProposalReady``/``Running`` gets them once)."""
    ready = next((c for c in run.status.conditions if c.get("type") == "Ready"), {})
    why = str(ready.get("reason") or phase.value)
    run.decide(phase, why, run.status.message or str(ready.get("message") or phase.value))


def reconcile(
    ref: Ref,
    api: ReassignmentApi,
    store_for: Callable[[], ReassignmentBackend],
    *,
    cluster: str,
    queue: Sequence[QueueRank],
    cluster_of: ClusterOf,
    settings: Settings,
    now: datetime,
    sizes_for: Callable[[], Mapping[tuple[str, int], int]] | None = None,
) -> Result:
    """Take the next step of one reassignment. Never raises ``KzoError`` for cluster problems.

    ``sizes_for`` reads the partition sizes a byte-balanced plan needs (``spec.balance``); without
    it such a plan is refused."""
    body = api.get(ref)
    if body is None:
        return Result()
    resource = parse_resource(body)
    if resource.deleting:
        return Result()
    defaults = defaults_for(resource.status, settings.default_throttle)
    run = Run(dataclasses.replace(resource, spec=with_defaults(resource.spec, defaults)), api, now, settings)
    if run.stored.defaults != defaults:
        run.update(defaults=defaults)  # recorded once: an upgrade leaves existing resources as they were
    run.sizes_for = sizes_for
    try:
        run.store = store_for()
        reconcile_run(run, queue, cluster, cluster_of)
    except errors.KzoError as error:
        # What was observed and done so far stays in the patch; only the verdict changes.
        if isinstance(error, errors.InvalidSpec | errors.NotSupported) and not run.status.started:
            propose.refuse(run, error)
        else:
            phase = Phase.RUNNING if run.status.started else run.stored.current_phase
            if run.stored.current_phase in TERMINAL:
                phase = run.stored.current_phase
            run.decide(phase, error.reason.value, error.message)
            if run.stored.message != error.message:
                run.event("Warning", error.reason.value, error.message)
    run.flush()
    return run.result


def delete(
    ref: Ref,
    api: ReassignmentApi,
    store_for: Callable[[], ReassignmentBackend],
    *,
    settings: Settings,
    now: datetime,
) -> Result:
    """Cleanup before the finalizer goes: the batch in flight is cancelled where the backend can
    (the Admin API), else waited for (ZooKeeper); then the throttles are removed."""
    body = api.get(ref)
    if body is None:
        return Result()
    resource = parse_resource(body)
    run = Run(resource, api, now, settings)
    store = store_for()
    run.store = store
    stored = run.stored
    if stored.started and stored.current_phase not in TERMINAL:
        moves = proposals.load_plan(api, resource, stored)
        batches = make_batches(moves, stored.proposal_limits(parse_request_limits(resource)))
        current = run.progress.batch
        if run.progress.finished_batches < current <= len(batches):
            observation = execution.observe_batch(
                store, batches[current - 1], {(m.topic, m.partition): m.target for m in moves},
                now=now, started_at=None, stuck_after_seconds=settings.stuck_after_seconds,
            )  # fmt: skip
            state = observation.progress
            ours = observation.owner is ZnodeOwner.OURS or (
                state.in_flight and submitted(run.progress, current)
            )
            decision = decide_stop(
                batches[current - 1], state, observation.listed, in_flight=ours, can_cancel=store.can_cancel
            )
            if decision.cancel:
                execution.cancel_moves(store, decision.cancel)
                run.event(
                    "Normal",
                    "BatchCancelled",
                    f"Batch {current} cancelled (resource deleted): {counted(len(decision.cancel), 'partition')} "
                    "go back to their replicas",
                )
            elif decision.action is StopAction.WAIT and not state.dead_targets:
                message = (
                    f"Deleting: waiting for batch {current} to finish (ZooKeeper mode cannot cancel it); "
                    "throttles are removed afterwards."
                )
                run.decide(Phase.RUNNING, Why.STOPPING, message)
                run.flush()
                return Result(events=run.result.events, done=False, message=message)
    record = stored.throttle_record
    if record is not None:
        throttles.release(
            run, record, f"Removed the replication throttle of batch {record.batch} (resource deleted)"
        )
        run.flush()
    return Result(events=run.result.events, done=True, message="throttles removed")
