"""Before the start: the proposal (made, stored, refused), approval, the stop request, the queue
and the stale check, then the first batch."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import APPROVE_ANNOTATION, REFRESH_ANNOTATION
from kafka_zk_operator.domain.reassignment.batches import make_batches
from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.reassignment.progress import ZnodeOwner
from kafka_zk_operator.domain.reassignment.request import (
    Approval,
    ReassignmentRequest,
    parse_request,
    rule_of,
)
from kafka_zk_operator.domain.reassignment.resource import (
    QueueRank,
    approved,
    refresh_requested,
    stop_requested,
)
from kafka_zk_operator.domain.reassignment.status import Phase, Why, timestamp
from kafka_zk_operator.domain.wording import counted
from kafka_zk_operator.service import plan_offload
from kafka_zk_operator.service.reassignment import execution, offload, proposals, queueing, running
from kafka_zk_operator.service.reassignment.running import spec_digest
from kafka_zk_operator.service.reassignment.state import ClusterOf, Run


def refuse(run: Run, error: errors.KzoError) -> None:
    previous = run.status.message
    if refresh_requested(run.resource):  # answered: planned again, and refused again
        run.api.patch_annotations(run.resource.ref, {REFRESH_ANNOTATION: None})
        kept = {k: v for k, v in run.resource.annotations.items() if k != REFRESH_ANNOTATION}
        run.resource = dataclasses.replace(run.resource, annotations=kept)
    run.decide(Phase.FAILED, error.reason.value, error.message)
    if previous != error.message or run.status.observed_generation != run.resource.generation:
        run.event("Warning", "Refused", error.message)


def planning_failed(run: Run, failed: plan_offload.OffloadFailed) -> None:
    """The Spark job ended without a plan (failed, its driver killed, the Job deleted): say so in the
    status and with a Warning event. Its objects are already deleted (``offload.plan``), so the next
    reconcile submits it again."""
    message = f"{failed.message}. Its objects were deleted; the job is submitted again."
    run.decide(Phase.PENDING, failed.reason.value, message)
    run.event("Warning", failed.reason.value, message)


def before_start(run: Run, queue: Sequence[QueueRank], cluster: str, cluster_of: ClusterOf) -> None:
    try:
        request = parse_request(run.resource.spec)
        moves = current_proposal(run, request, force=False)
    except (errors.InvalidSpec, errors.NotSupported) as error:
        refuse(run, error)
        return
    except offload.StillPlanning as planning:
        run.decide(Phase.PENDING, Why.PLANNING, planning.message)
        return
    except plan_offload.OffloadFailed as failed:
        planning_failed(run, failed)
        return
    proposal_id = str(run.status.proposal_id)
    if stop_requested(run.resource):
        run.decide(Phase.STOPPED, Why.STOPPED, "Stopped before it started: nothing was moved.")
        run.event("Normal", "Stopped", "Stopped on request before any partition moved")
        return
    if not approved(run.resource, proposal_id):
        given = run.resource.annotation(APPROVE_ANNOTATION)
        replica_moves = counted(run.status.proposal_moves, "replica move")
        mismatch = f" ({APPROVE_ANNOTATION}={given} names another proposal)" if given else ""
        run.decide(
            Phase.PROPOSAL_READY,
            Why.AWAITING_APPROVAL,
            f"Proposal {proposal_id} ({replica_moves}) waits for approval{mismatch}: annotate the resource "
            f"with {APPROVE_ANNOTATION}={proposal_id} (or =true)",
        )
        return
    if not moves:
        run.set_progress(
            started_at=timestamp(run.now), completed_at=timestamp(run.now), partitions_done=0,
            partitions_total=0, current_batch=0, batches_done=0, batches_total=0,
        )  # fmt: skip
        run.decide(
            Phase.COMPLETED,
            Why.COMPLETED,
            "Nothing to move: every partition already has its target replicas.",
        )
        run.event("Normal", "Completed", "Nothing to move")
        return
    ahead = queueing.queue_ahead(run, queue) or queueing.queue_ahead(
        run, queueing.fresh_queue(run, cluster, cluster_of)
    )
    if ahead:
        run.decide(
            Phase.QUEUED,
            Why.QUEUED,
            f"Queued behind {', '.join(ahead[:5])}: one reassignment runs at a time per Kafka cluster "
            f"({cluster}).",
        )
        if run.status.phase is not Phase.QUEUED:
            run.event("Normal", "Queued", f"Waiting for {ahead[0]} to finish")
        return
    observation = execution.observe_batch(
        run.zk(),
        [],
        {},
        now=run.now,
        started_at=None,
        stuck_after_seconds=run.settings.stuck_after_seconds,
    )
    if observation.owner in (ZnodeOwner.FOREIGN, ZnodeOwner.INVALID):
        queueing.wait_external(run, Phase.QUEUED, observation.owner)
        return
    if rule_of(request).checks_staleness:
        view = proposals.read_cluster(run.zk(), sorted({m.topic for m in moves}))
        stale = proposals.stale_sources(moves, view)
        if stale:
            if request.approval is Approval.AUTO:
                try:
                    moves = current_proposal(run, request, force=True)
                except offload.StillPlanning as planning:  # recomputed by a Spark job
                    run.decide(Phase.PENDING, Why.PLANNING, planning.message)
                    return
                except plan_offload.OffloadFailed as failed:
                    planning_failed(run, failed)
                    return
            else:
                run.decide(
                    Phase.PROPOSAL_READY,
                    Why.PROPOSAL_STALE,
                    f"The cluster changed since proposal {proposal_id} was computed ({', '.join(stale[:5])} "
                    f"moved); annotate with {REFRESH_ANNOTATION}=true to recompute it, then approve again.",
                )
                return
    limits = run.status.proposal_limits(request.batch)
    batches = make_batches(moves, limits)
    run.set_progress(
        started_at=timestamp(run.now), completed_at=None, current_batch=1, batches_done=0,
        batches_total=len(batches), partitions_done=0, partitions_total=len(moves), leaders_elected=0,
        batch_started_at=None, started_spec=spec_digest(run.resource.spec),
    )  # fmt: skip
    run.event(
        "Normal",
        "Started",
        f"Started proposal {run.status.proposal_id}: {len(moves)} partitions in {len(batches)} batches",
    )
    # Saved before the first ZooKeeper write: an operator killed right after submitting batch 1
    # must find itself started with this proposal, and recognise the znode as its own.
    run.save()
    running.run_batches(run, (moves, limits))  # not parsed and read back from what was just stored


def current_proposal(run: Run, request: ReassignmentRequest, *, force: bool) -> tuple[PartitionMove, ...]:
    """The plan to run: the stored one, or a new proposal when asked for or when the spec changed."""
    old_id = run.status.proposal_id
    needed = (
        force
        or not old_id
        or run.status.observed_generation != run.resource.generation
        or refresh_requested(run.resource)
        or run.status.phase is Phase.FAILED
    )
    if not needed:
        return proposals.load_plan(run.api, run.resource, run.status)
    view = proposals.read_cluster(run.zk())
    proposals.refuse_if_empty_cluster(view)
    if request.needs_sizes:
        view = dataclasses.replace(view, sizes=proposals.partition_sizes(run.sizes_for))
    elif run.resource.spec.get("throttle"):  # sizes let the batches keep every broker busy
        view = dataclasses.replace(view, sizes=proposals.sizes_if_readable(run.sizes_for))
    job_key = (run.resource.uid, str(run.resource.generation))
    finished: list[offload.FinishedJob] = []
    made = proposals.make_proposal(
        request, view, run.now,
        planner=lambda r, c: offload.plan(run.api.spark_jobs(), r, c, job_key, finished),
    )  # fmt: skip
    run.update(proposal=made.fields, **proposals.store_plan(run.api, run.resource, run.status, made))
    run.warnings = list(made.plan.warnings)
    annotations: dict[str, str | None] = {}
    if refresh_requested(run.resource):
        annotations[REFRESH_ANNOTATION] = None
    approval = run.resource.annotation(APPROVE_ANNOTATION)
    if old_id and old_id != made.id and approval is not None and approval != made.id:
        annotations[APPROVE_ANNOTATION] = None  # a different plan needs a new approval
    if annotations:
        run.api.patch_annotations(run.resource.ref, annotations)
        # The rest of this pass must see them gone too: a removed approval must not start the
        # new proposal (all values here are removals).
        kept = {k: v for k, v in run.resource.annotations.items() if k not in annotations}
        run.resource = dataclasses.replace(run.resource, annotations=kept)
    if old_id != made.id:
        fields = made.fields
        run.event(
            "Normal",
            "ProposalReady",
            f"Proposal {made.id}: {fields['moves']} replica moves in {fields['partitions']} partitions, "
            f"{fields['batches']} batches (lower bound {fields['lowerBound']})",
        )
    run.decide(Phase.PROPOSAL_READY, Why.PENDING, f"Proposal {made.id} is ready.")
    if finished:
        run.flush()  # the proposal is saved before its Spark job and result go
        discard(run, finished)
    return made.plan.moves


def discard(run: Run, finished: Sequence[offload.FinishedJob]) -> None:
    for job in finished:
        try:
            job.discard()
        except errors.KzoError as error:  # the proposal is saved: report, do not fail the step
            run.event(
                "Warning",
                "SparkJobNotDeleted",
                f"Spark job {job.namespace}/{job.name}, whose result is in the proposal, could not be "
                f"deleted ({error.message}). Delete its objects ({job.delete_command()}); until then "
                "a refreshed proposal of this generation reuses its result.",
            )
