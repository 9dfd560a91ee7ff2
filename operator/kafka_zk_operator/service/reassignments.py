"""Reconcile one PartitionReassignment: the single path of create, update, resume and the poll timer.

Level-based. Every call reads the resource afresh from the API server and the cluster from
ZooKeeper, works out the next step from those alone, takes it, and patches the status; nothing is
kept in memory between calls, so a hard-killed operator resumes exactly where it was:

``Pending`` → proposal (validated plan + summary; ``Failed`` with ``InvalidSpec`` and nothing
written when the request is wrong) → ``ProposalReady`` (until approved) → ``Queued`` (another
reassignment of the cluster goes first, or a foreign ``/admin/reassign_partitions`` exists) →
``Running``: per batch, throttles (recorded in the status *before* ZooKeeper is touched), the
znode, progress from the topic/state znodes, a preferred-leader election, the next batch →
``Completed`` | ``Stopped`` | ``Failed``, always with the operator's throttles removed.

Batch bookkeeping lives in ``status.progress``: ``currentBatch`` (submitted or about to be) and
``batchesDone``; a finished batch is never submitted again. Deleting the resource waits for the
batch in flight (ZooKeeper cannot cancel it), then removes the throttles (:func:`delete`).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from kafka_zk_operator.adapters.k8s.partitionreassignment import (
    QueueRank,
    ReassignmentResource,
    approved,
    is_started,
    parse_resource,
    queue_rank,
    refresh_requested,
    stop_requested,
)
from kafka_zk_operator.adapters.k8s.spark_jobs import SparkJobs
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain import errors, kafka_lines
from kafka_zk_operator.domain.crd_identity import APPROVE_ANNOTATION, REFRESH_ANNOTATION
from kafka_zk_operator.domain.reassignment_batches import make_batches
from kafka_zk_operator.domain.reassignment_plan import PartitionMove
from kafka_zk_operator.domain.reassignment_progress import BatchProgress, ZnodeOwner
from kafka_zk_operator.domain.reassignment_request import (
    Approval,
    BatchLimits,
    Mode,
    ReassignmentRequest,
    parse_request,
)
from kafka_zk_operator.domain.reassignment_status import (
    TERMINAL,
    Phase,
    Verdict,
    Why,
    estimated_completion,
    progress_text,
    timestamp,
    verdict_fields,
)
from kafka_zk_operator.domain.reassignment_throttles import (
    CLEARED_FIELDS,
    ThrottleRecord,
    record_fields,
    record_from_fields,
)
from kafka_zk_operator.domain.reassignment_validation import submission_problems, unregistered_targets
from kafka_zk_operator.domain.timestamps import parse_timestamp
from kafka_zk_operator.domain.wording import counted
from kafka_zk_operator.service import reassignment_execution as execution
from kafka_zk_operator.service import reassignment_offload as offload
from kafka_zk_operator.service import reassignment_proposals as proposals
from kafka_zk_operator.service.topics import Event

Ref = tuple[str, str]
Key = tuple[str, int]


class ReassignmentApi(proposals.PlanStorage, Protocol):
    def get(self, ref: Ref) -> dict[str, Any] | None: ...

    def spark_jobs(self) -> SparkJobs | None: ...

    def list_all(self) -> list[dict[str, Any]]: ...

    def patch_status(self, ref: Ref, fields: Mapping[str, Any]) -> None: ...

    def patch_annotations(self, ref: Ref, annotations: Mapping[str, str | None]) -> None: ...


@dataclass(frozen=True)
class Settings:
    #: A batch in flight longer than this with target replicas outside the ISR is reported stuck.
    stuck_after_seconds: float = 1800.0


@dataclass
class Result:
    events: list[Event] = field(default_factory=list)
    status: dict[str, Any] = field(default_factory=dict)
    replicas_moved: int = 0
    #: ``delete``: False while the finalizer must stay.
    done: bool = True
    message: str = ""


ClusterOf = Callable[[Mapping[str, Any]], str | None]


class _Run:
    """One reconcile of one resource: the fresh body, the status being built, the events."""

    def __init__(
        self, resource: ReassignmentResource, api: ReassignmentApi, now: datetime, settings: Settings
    ) -> None:
        self.resource = resource
        self.api = api
        self.now = now
        self.settings = settings
        self.status: dict[str, Any] = copy.deepcopy(dict(resource.status))
        self.patch: dict[str, Any] = {}
        self.result = Result()
        self.store: ZkStore | None = None
        self.verdict: Verdict | None = None
        self.warnings: list[str] = []
        #: status fields already patched by an earlier flush of this run, with their values
        self.saved: dict[str, Any] = {}

    # ------------------------------------------------------------------ plumbing
    def set(self, key: str, value: Any) -> None:
        self.patch[key] = value
        self.status[key] = value

    @property
    def progress(self) -> dict[str, Any]:
        return dict(self.status.get("progress") or {})

    def set_progress(self, **values: Any) -> None:
        previous = self.progress
        merged = {**previous, **values}
        if merged.get("completedAt"):
            if merged.get("estimatedCompletionAt") is not None:
                merged["estimatedCompletionAt"] = None  # merge patch: removed
        elif "partitionsDone" in values and values["partitionsDone"] != previous.get("partitionsDone"):
            # Re-estimated only when partitions complete, so a poll that sees no change writes nothing.
            eta = estimated_completion(
                parse_timestamp(merged.get("startedAt")),
                self.now,
                int(merged.get("partitionsDone") or 0),
                int(merged.get("partitionsTotal") or 0),
            )
            if eta is not None:
                merged["estimatedCompletionAt"] = timestamp(eta)
            elif merged.get("estimatedCompletionAt") is not None:
                merged["estimatedCompletionAt"] = None
        self.set("progress", merged)

    def event(self, type_: str, reason: str, message: str) -> None:
        self.result.events.append(Event(type_, reason, message[:1000]))

    def decide(self, phase: Phase, why: Why | str, message: str, **kwargs: Any) -> None:
        self.verdict = Verdict(phase, why, message, warnings=tuple(self.warnings), **kwargs)

    def flush(self) -> None:
        if self.verdict is not None:
            fields = verdict_fields(
                self.verdict, generation=self.resource.generation, now=self.now, previous=self.status
            )
            for key, value in fields.items():
                self.set(key, value)
        progress = self.status.get("progress") or {}
        if "partitionsTotal" in progress:
            self.set(
                "progressText",
                progress_text(int(progress.get("partitionsDone", 0)), int(progress["partitionsTotal"])),
            )
        stored = {**self.resource.status, **self.saved}
        changed = {key: value for key, value in self.patch.items() if stored.get(key) != value}
        if changed:  # a poll that changes nothing writes nothing
            self.api.patch_status(self.resource.ref, changed)
            self.saved.update(changed)
        self.result.status = self.status

    def zk(self) -> ZkStore:
        assert self.store is not None
        return self.store

    # ------------------------------------------------------------------ entry
    def reconcile(self, queue: Sequence[QueueRank], cluster: str, cluster_of: ClusterOf) -> None:
        self.warnings = list((self.status.get("proposal") or {}).get("warnings") or [])
        phase = self.status.get("phase") or Phase.PENDING.value
        started = is_started(self.status)
        if phase in {p.value for p in TERMINAL}:
            self.remove_leftover_throttle()
            regenerate = self.status.get("observedGeneration") != self.resource.generation
            if (
                phase == Phase.FAILED.value
                and not started
                and (regenerate or refresh_requested(self.resource))
            ):
                self.before_start(queue, cluster, cluster_of)
            return
        if started:
            try:
                self.run_batches()
            except errors.InvalidSpec as error:  # the stored plan is damaged: end it, throttles removed
                self.finish(
                    Phase.FAILED, Why.INVALID_SPEC, error.message, int(self.progress.get("partitionsDone", 0))
                )
        else:
            self.before_start(queue, cluster, cluster_of)

    def remove_leftover_throttle(self) -> None:
        record = record_from_fields(self.status.get("throttle"))
        if record is not None:
            self.settle(record)
            execution.remove_throttle(self.zk(), record)
            self.set("throttle", {**CLEARED_FIELDS, "rate": record.rate})
            self.event(
                "Normal", "ThrottleRemoved", f"Removed the replication throttle of batch {record.batch}"
            )

    # ------------------------------------------------------------------ before the start
    def refuse(self, error: errors.KzoError) -> None:
        previous = self.status.get("message")
        if refresh_requested(self.resource):  # answered: planned again, and refused again
            self.api.patch_annotations(self.resource.ref, {REFRESH_ANNOTATION: None})
            kept = {k: v for k, v in self.resource.annotations.items() if k != REFRESH_ANNOTATION}
            self.resource = dataclasses.replace(self.resource, annotations=kept)
        self.decide(Phase.FAILED, error.reason.value, error.message)
        if previous != error.message or self.status.get("observedGeneration") != self.resource.generation:
            self.event("Warning", "Refused", error.message)

    def before_start(self, queue: Sequence[QueueRank], cluster: str, cluster_of: ClusterOf) -> None:
        try:
            request = parse_request(self.resource.spec)
            moves = self.current_proposal(request, force=False)
        except (errors.InvalidSpec, errors.NotSupported) as error:
            self.refuse(error)
            return
        except offload.StillPlanning as planning:
            self.decide(Phase.PENDING, Why.PLANNING, planning.message)
            return
        proposal_id = str(self.status["proposal"]["id"])
        if stop_requested(self.resource):
            self.decide(Phase.STOPPED, Why.STOPPED, "Stopped before it started: nothing was moved.")
            self.event("Normal", "Stopped", "Stopped on request before any partition moved")
            return
        if not approved(self.resource, proposal_id):
            given = self.resource.annotation(APPROVE_ANNOTATION)
            replica_moves = counted(int(self.status["proposal"].get("moves", 0)), "replica move")
            mismatch = f" ({APPROVE_ANNOTATION}={given} names another proposal)" if given else ""
            self.decide(
                Phase.PROPOSAL_READY,
                Why.AWAITING_APPROVAL,
                f"Proposal {proposal_id} ({replica_moves}) waits for approval{mismatch}: annotate the resource "
                f"with {APPROVE_ANNOTATION}={proposal_id} (or =true)",
            )
            return
        if not moves:
            self.set_progress(
                startedAt=timestamp(self.now), completedAt=timestamp(self.now), partitionsDone=0, partitionsTotal=0,
                currentBatch=0, batchesDone=0, batchesTotal=0,
            )  # fmt: skip
            self.decide(
                Phase.COMPLETED,
                Why.COMPLETED,
                "Nothing to move: every partition already has its target replicas.",
            )
            self.event("Normal", "Completed", "Nothing to move")
            return
        ahead = self.queue_ahead(queue) or self.queue_ahead(self.fresh_queue(cluster, cluster_of))
        if ahead:
            self.decide(
                Phase.QUEUED,
                Why.QUEUED,
                f"Queued behind {', '.join(ahead[:5])}: one reassignment runs at a time per Kafka cluster "
                f"({cluster}).",
            )
            if self.status.get("phase") != Phase.QUEUED.value:
                self.event("Normal", "Queued", f"Waiting for {ahead[0]} to finish")
            return
        observation = execution.observe_batch(
            self.zk(),
            [],
            {},
            now=self.now,
            started_at=None,
            stuck_after_seconds=self.settings.stuck_after_seconds,
        )
        if observation.owner in (ZnodeOwner.FOREIGN, ZnodeOwner.INVALID):
            self.wait_external(Phase.QUEUED, observation.owner)
            return
        if request.mode is not Mode.EXPLICIT:
            view = proposals.read_cluster(self.zk(), sorted({m.topic for m in moves}))
            stale = proposals.stale_sources(moves, view)
            if stale:
                if request.approval is Approval.AUTO:
                    try:
                        moves = self.current_proposal(request, force=True)
                    except offload.StillPlanning as planning:  # recomputed by a Spark job
                        self.decide(Phase.PENDING, Why.PLANNING, planning.message)
                        return
                else:
                    self.decide(
                        Phase.PROPOSAL_READY,
                        Why.PROPOSAL_STALE,
                        f"The cluster changed since proposal {proposal_id} was computed ({', '.join(stale[:5])} "
                        f"moved); annotate with {REFRESH_ANNOTATION}=true to recompute it, then approve again.",
                    )
                    return
        batches = make_batches(moves, proposals.stored_limits(self.status, request.batch))
        self.set_progress(
            startedAt=timestamp(self.now), completedAt=None, currentBatch=1, batchesDone=0,
            batchesTotal=len(batches), partitionsDone=0, partitionsTotal=len(moves), leadersElected=0,
            batchStartedAt=None, startedSpec=spec_digest(self.resource.spec),
        )  # fmt: skip
        self.event(
            "Normal",
            "Started",
            f"Started proposal {self.status['proposal']['id']}: {len(moves)} partitions in {len(batches)} batches",
        )
        # Saved before the first ZooKeeper write: an operator killed right after submitting batch 1
        # must find itself started with this proposal, and recognise the znode as its own.
        self.api.patch_status(self.resource.ref, dict(self.patch))
        self.run_batches()

    def current_proposal(self, request: ReassignmentRequest, *, force: bool) -> tuple[PartitionMove, ...]:
        """The plan to run: the stored one, or a new proposal when asked for or when the spec changed."""
        proposal = self.status.get("proposal") or {}
        needed = (
            force
            or not proposal.get("id")
            or self.status.get("observedGeneration") != self.resource.generation
            or refresh_requested(self.resource)
            or self.status.get("phase") == Phase.FAILED.value
        )
        if not needed:
            return proposals.load_plan(self.api, self.view_resource())
        view = proposals.read_cluster(self.zk())
        proposals.refuse_if_empty_cluster(view)
        job_key = (self.resource.uid, str(self.resource.generation))
        finished: list[offload.FinishedJob] = []
        made = proposals.make_proposal(
            request, view, self.now,
            planner=lambda r, c: offload.plan(self.api.spark_jobs(), r, c, job_key, finished),
        )  # fmt: skip
        self.set("proposal", made.fields)
        for key, value in proposals.store_plan(self.api, self.view_resource(), made).items():
            self.set(key, value)
        self.warnings = list(made.plan.warnings)
        annotations: dict[str, str | None] = {}
        if refresh_requested(self.resource):
            annotations[REFRESH_ANNOTATION] = None
        old_id = proposal.get("id")
        approval = self.resource.annotation(APPROVE_ANNOTATION)
        if old_id and old_id != made.id and approval is not None and approval != made.id:
            annotations[APPROVE_ANNOTATION] = None  # a different plan needs a new approval
        if annotations:
            self.api.patch_annotations(self.resource.ref, annotations)
            # The rest of this pass must see them gone too: a removed approval must not start the
            # new proposal (all values here are removals).
            kept = {k: v for k, v in self.resource.annotations.items() if k not in annotations}
            self.resource = dataclasses.replace(self.resource, annotations=kept)
        if old_id != made.id:
            fields = made.fields
            self.event(
                "Normal",
                "ProposalReady",
                f"Proposal {made.id}: {fields['moves']} replica moves in {fields['partitions']} partitions, "
                f"{fields['batches']} batches (lower bound {fields['lowerBound']})",
            )
        self.decide(Phase.PROPOSAL_READY, Why.PENDING, f"Proposal {made.id} is ready.")
        if finished:
            self.flush()  # the proposal is saved before its Spark job and result go
            self.discard(finished)
        return made.plan.moves

    def discard(self, finished: Sequence[offload.FinishedJob]) -> None:
        for job in finished:
            try:
                job.discard()
            except errors.KzoError as error:  # the proposal is saved: report, do not fail the step
                self.event(
                    "Warning",
                    "SparkJobNotDeleted",
                    f"Spark job {job.namespace}/{job.name}, whose result is in the proposal, could not be "
                    f"deleted ({error.message}). Delete its objects ({job.delete_command()}); until then "
                    "a refreshed proposal of this generation reuses its result.",
                )

    def view_resource(self) -> ReassignmentResource:
        """The resource with the status as built so far (plan fields included)."""
        return dataclasses.replace(self.resource, status=self.status)

    def queue_ahead(self, entries: Sequence[QueueRank]) -> list[str]:
        mine = queue_rank(self.view_resource())
        if mine is None:
            return []
        return [entry[3] for entry in sorted(entries) if entry < mine and entry[2] != self.resource.uid]

    def fresh_queue(self, cluster: str, cluster_of: ClusterOf) -> list[QueueRank]:
        ranks = []
        for body in self.api.list_all():
            if cluster_of(body) != cluster:
                continue
            rank = queue_rank(parse_resource(body))
            if rank is not None:
                ranks.append(rank)
        return ranks

    def wait_external(self, phase: Phase, owner: ZnodeOwner) -> None:
        if owner is ZnodeOwner.INVALID:
            effect = kafka_lines.unparseable_reassignment_effect(self.zk().cluster_line())
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
        self.decide(phase, Why.WAITING_FOR_EXTERNAL, text)
        if self.status.get("conditions") and self.status.get("message") != text:
            self.event("Normal", "WaitingForExternalReassignment", text)

    # ------------------------------------------------------------------ running
    def run_batches(self) -> None:
        request_limits = proposals.stored_limits(self.status, parse_request_limits(self.resource))
        moves = proposals.load_plan(self.api, self.view_resource())
        batches = make_batches(moves, request_limits)
        targets = {(m.topic, m.partition): m.target for m in moves}
        total = len(batches)
        started_spec = self.progress.get("startedSpec")
        if started_spec is not None and started_spec != spec_digest(self.resource.spec):
            self.warnings.append(
                "The spec changed after the reassignment started; only spec.throttle changes apply to a "
                "running reassignment (delete the resource and create a new one to run another plan)."
            )
        stop = stop_requested(self.resource) or self.resource.deleting
        spec_preferred = bool(self.resource.spec.get("preferredLeaderElection", True))
        for _ in range(2 * total + 4):
            progress = self.progress
            current, done = int(progress.get("currentBatch", 1)), int(progress.get("batchesDone", 0))
            done_before = sum(len(b) for b in batches[: min(done, total)])
            if done >= current:
                batch = batches[current - 1]
                if spec_preferred and int(progress.get("leadersElected", 0)) < current:
                    self.elect(batch, current)
                if current >= total:
                    self.finish(
                        Phase.COMPLETED,
                        Why.COMPLETED,
                        f"All {counted(len(moves), 'partition')} moved."
                        if len(moves) != 1
                        else "The partition moved.",
                        len(moves),
                    )
                    return
                if stop:
                    self.finish(
                        Phase.STOPPED, Why.STOPPED,
                        f"Stopped on request after batch {current} of {total}: {done_before} of "
                        f"{counted(len(moves), 'partition')} moved; the rest keep their replicas.",
                        done_before,
                    )  # fmt: skip
                    return
                self.set_progress(currentBatch=current + 1, batchStartedAt=None)
                continue
            batch = batches[current - 1]
            observation = execution.observe_batch(
                self.zk(), batch, targets, now=self.now,
                started_at=parse_timestamp(progress.get("batchStartedAt")),
                stuck_after_seconds=self.settings.stuck_after_seconds,
            )  # fmt: skip
            state = observation.progress
            if state.complete:
                moved = sum(m.moves for m in batch)
                self.result.replicas_moved += moved
                self.set_progress(batchesDone=current, partitionsDone=done_before + len(batch))
                self.event("Normal", "BatchCompleted", f"Batch {current} of {total} done: {_names(batch)}")
                continue
            self.set_progress(partitionsDone=done_before + len(state.done))
            if observation.owner is ZnodeOwner.OURS or (state.in_flight and submitted(progress, current)):
                if not progress.get("batchStartedAt"):  # submitted just before a crash
                    self.set_progress(batchStartedAt=timestamp(self.now))
                self.adjust_throttle(current, batch)
                self.report_in_flight(current, total, state, stop)
                return
            if state.missing:
                names = ", ".join(f"{t}-{p}" for t, p in state.missing[:10])
                self.finish(
                    Phase.FAILED,
                    Why.FAILED,
                    f"Partitions vanished during the reassignment: {names}.",
                    done_before,
                )
                return
            if observation.owner in (ZnodeOwner.FOREIGN, ZnodeOwner.INVALID):
                self.wait_external(Phase.RUNNING, observation.owner)
                return
            if state.in_flight:  # moved by someone else (Kafka's Admin API writes no znode)
                self.wait_external(Phase.RUNNING, ZnodeOwner.FOREIGN)
                return
            if stop:
                self.finish(
                    Phase.STOPPED, Why.STOPPED,
                    f"Stopped on request before batch {current} of {total}: {done_before + len(state.done)} "
                    f"of {counted(len(moves), 'partition')} moved; the rest keep their replicas.",
                    done_before + len(state.done),
                )  # fmt: skip
                return
            self.submit(current, total, batch, state.pending)
            return
        raise errors.KzoError("internal error: the batch loop did not settle")

    def report_in_flight(self, current: int, total: int, state: BatchProgress, stop: bool) -> None:
        text = (
            f"Batch {current} of {total} in flight: {len(state.done)} done, {len(state.moving)} moving "
            f"({state.in_sync}/{state.wanted} target replicas in sync)."
        )
        why: Why = Why.RUNNING
        if stop:
            why = Why.STOPPING
            text += " Stopping after this batch (ZooKeeper mode cannot cancel a running batch)."
        was_stuck = bool(self.status.get("stuck"))
        self.decide(Phase.RUNNING, why, text, stuck=state.stuck)
        if state.stuck and not was_stuck:
            first = state.stuck[0]
            self.event("Warning", "Stuck", f"{first.topic}-{first.partition}: {first.reason}")

    def submit(
        self, current: int, total: int, batch: Sequence[PartitionMove], pending: Sequence[Key]
    ) -> None:
        store = self.zk()
        view = proposals.read_cluster(store, sorted({m.topic for m in batch}))
        waiting = [m for m in batch if (m.topic, m.partition) in set(pending)]
        problems = submission_problems(waiting, view)
        if problems:
            done = int(self.progress.get("partitionsDone", 0))
            self.finish(
                Phase.FAILED, Why.FAILED, f"Batch {current} cannot run: {'; '.join(problems[:10])}.", done
            )
            return
        dead = unregistered_targets(waiting, view)
        if dead:
            self.decide(
                Phase.RUNNING,
                Why.WAITING_FOR_BROKERS,
                f"Batch {current} waits for broker {', '.join(map(str, dead))} to register before it is submitted.",
            )
            return
        rate = self.resource.spec.get("throttle")
        if rate:
            self.ensure_throttle(current, int(rate), batch)
        # Write-ahead: a batch found moving later is ours only if this reached the status first.
        if self.progress.get("batchSubmitted") != current:
            self.set_progress(batchSubmitted=current)
            self.api.patch_status(self.resource.ref, {"progress": self.status["progress"]})
        try:
            execution.submit_batch(store, waiting)
        except errors.ReassignmentInProgress:
            self.decide(
                Phase.RUNNING, Why.WAITING_FOR_EXTERNAL, "A reassignment znode appeared meanwhile; waiting."
            )
            return
        resubmitted = bool(self.progress.get("batchStartedAt"))
        if not resubmitted:
            self.set_progress(batchStartedAt=timestamp(self.now))
        verb = "Resubmitted" if resubmitted else "Started"
        self.event("Normal", f"Batch{verb}", f"Batch {current} of {total} {verb.lower()}: {_names(waiting)}")
        self.decide(
            Phase.RUNNING,
            Why.RUNNING,
            f"Batch {current} of {total} submitted ({counted(len(waiting), 'partition')}).",
        )

    def ensure_throttle(self, current: int, rate: int, batch: Sequence[PartitionMove]) -> None:
        """Throttle exactly this batch; the record reaches the status before ZooKeeper changes.

        :raises NotSupported: the cluster's line has no replication throttles (0.10.0).
        """
        store = self.zk()
        line = store.cluster_line()
        if not line.at_least(kafka_lines.FIRST_THROTTLE_LINE):
            raise errors.NotSupported(
                "spec.throttle needs Kafka 0.10.1 or later (replication throttles, KIP-73); this cluster "
                f"runs {line.describe()}. Remove spec.throttle to move without one."
            )
        record = record_from_fields(self.status.get("throttle"))
        if record is not None and record.batch == current:
            execution.apply_throttle(store, record)  # idempotent: a crash may have cut it short
            self.set("throttle", record_fields(record))
            return
        if record is not None:
            self.settle(record)
            execution.remove_throttle(store, record)
            self.set("throttle", {**CLEARED_FIELDS, "rate": record.rate})
            self.api.patch_status(self.resource.ref, {"throttle": self.status["throttle"]})
        fresh = execution.plan_batch_throttle(store, current, rate, batch)
        ahead = {**record_fields(fresh), "applied": False}
        self.api.patch_status(self.resource.ref, {"throttle": ahead})  # write-ahead
        self.status["throttle"] = ahead
        execution.apply_throttle(store, fresh)
        self.set("throttle", record_fields(fresh))
        self.event(
            "Normal",
            "ThrottleApplied",
            f"Throttled batch {current} to {rate} B/s on brokers {', '.join(str(p.broker) for p in fresh.brokers)}",
        )

    def adjust_throttle(self, current: int, batch: Sequence[PartitionMove]) -> None:
        """Follow a ``spec.throttle`` changed while the batch runs: new rate, throttle added or removed."""
        raw = self.resource.spec.get("throttle")
        wanted = int(raw) if raw else None
        record = record_from_fields(self.status.get("throttle"))
        if record is not None and record.batch != current:
            record = None  # a leftover of an earlier batch: replaced below or at the next submission
        if record is None:
            if wanted is not None and self.progress.get("batchStartedAt"):
                self.ensure_throttle(current, wanted, batch)
            return
        self.settle(record)
        if wanted == record.rate:
            return
        if wanted is None:
            execution.remove_throttle(self.zk(), record)
            self.set("throttle", {**CLEARED_FIELDS, "rate": None})
            self.event(
                "Normal", "ThrottleRemoved", f"spec.throttle was removed: batch {current} runs unthrottled"
            )
            return
        changed = dataclasses.replace(record, rate=wanted)
        self.api.patch_status(self.resource.ref, {"throttle": {**record_fields(changed), "applied": False}})
        execution.apply_throttle(self.zk(), changed)
        self.set("throttle", record_fields(changed))
        self.event(
            "Normal",
            "ThrottleChanged",
            f"Batch {current} throttle changed from {record.rate} to {wanted} B/s",
        )

    def elect(self, batch: Sequence[PartitionMove], current: int) -> None:
        asked, written = execution.elect_preferred_leaders(self.zk(), batch)
        self.set_progress(leadersElected=current)
        if asked and written:
            self.event(
                "Normal", "LeaderElection", f"Preferred-leader election requested for {asked} partitions"
            )
        elif asked:
            self.event(
                "Normal",
                "LeaderElectionSkipped",
                f"Another preferred-leader election is pending; {asked} partitions of batch {current} keep "
                "their leaders until Kafka's auto.leader.rebalance runs",
            )

    def settle(self, record: ThrottleRecord) -> None:
        """Complete a record whose application was cut short (``applied: false`` in the status).

        A write-ahead record, or a rate change, reaches the status before ZooKeeper; a crash or a
        ZooKeeper error part-way leaves some brokers or topics without it. Applying it again is
        idempotent, and afterwards removing it restores every broker (``restore_broker_config``
        only resets values equal to the record's rate).
        """
        if (self.status.get("throttle") or {}).get("applied") is False:
            execution.apply_throttle(self.zk(), record)
            self.set("throttle", record_fields(record))

    def finish(self, phase: Phase, why: Why, message: str, partitions_done: int) -> None:
        record = record_from_fields(self.status.get("throttle"))
        if record is not None:
            self.settle(record)
            execution.remove_throttle(self.zk(), record)
            self.event(
                "Normal", "ThrottleRemoved", f"Removed the replication throttle of batch {record.batch}"
            )
        if record is not None or (self.status.get("throttle") or {}).get("applied"):
            self.set("throttle", {**CLEARED_FIELDS, "rate": (self.status.get("throttle") or {}).get("rate")})
        self.set_progress(completedAt=timestamp(self.now), partitionsDone=partitions_done)
        self.decide(phase, why, message)
        kind = "Warning" if phase is Phase.FAILED else "Normal"
        self.event(kind, phase.value, message)


def submitted(progress: Mapping[str, Any], batch: int) -> bool:
    """This resource submitted ``batch``: recorded before the znode was written (``batchSubmitted``)
    or after (``batchStartedAt``, also what resources started by older versions have)."""
    return progress.get("batchSubmitted") == batch or bool(progress.get("batchStartedAt"))


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


def reconcile(
    ref: Ref,
    api: ReassignmentApi,
    store_for: Callable[[], ZkStore],
    *,
    cluster: str,
    queue: Sequence[QueueRank],
    cluster_of: ClusterOf,
    settings: Settings,
    now: datetime,
) -> Result:
    """Take the next step of one reassignment. Never raises ``KzoError`` for cluster problems."""
    body = api.get(ref)
    if body is None:
        return Result()
    resource = parse_resource(body)
    if resource.deleting:
        return Result()
    run = _Run(resource, api, now, settings)
    try:
        run.store = store_for()
        run.reconcile(queue, cluster, cluster_of)
    except errors.KzoError as error:
        # What was observed and done so far stays in the patch; only the verdict changes.
        if isinstance(error, errors.InvalidSpec | errors.NotSupported) and not is_started(run.status):
            run.refuse(error)
        else:
            phase = (
                Phase.RUNNING if is_started(run.status) else Phase(resource.status.get("phase") or "Pending")
            )
            if Phase(resource.status.get("phase") or "Pending") in TERMINAL:
                phase = Phase(resource.status["phase"])
            run.decide(phase, error.reason.value, error.message)
            if resource.status.get("message") != error.message:
                run.event("Warning", error.reason.value, error.message)
    run.flush()
    return run.result


def delete(
    ref: Ref, api: ReassignmentApi, store_for: Callable[[], ZkStore], *, settings: Settings, now: datetime
) -> Result:
    """Cleanup before the finalizer goes: wait for the batch in flight, then remove throttles."""
    body = api.get(ref)
    if body is None:
        return Result()
    resource = parse_resource(body)
    run = _Run(resource, api, now, settings)
    store = store_for()
    run.store = store
    phase = resource.status.get("phase")
    if is_started(resource.status) and phase not in {p.value for p in TERMINAL}:
        moves = proposals.load_plan(api, resource)
        batches = make_batches(
            moves, proposals.stored_limits(resource.status, parse_request_limits(resource))
        )
        current = int(run.progress.get("currentBatch", 1))
        if int(run.progress.get("batchesDone", 0)) < current <= len(batches):
            observation = execution.observe_batch(
                store, batches[current - 1], {(m.topic, m.partition): m.target for m in moves},
                now=now, started_at=None, stuck_after_seconds=settings.stuck_after_seconds,
            )  # fmt: skip
            state = observation.progress
            ours = observation.owner is ZnodeOwner.OURS or (
                state.in_flight and submitted(run.progress, current)
            )
            if ours and not state.dead_targets:
                message = (
                    f"Deleting: waiting for batch {current} to finish (ZooKeeper mode cannot cancel it); "
                    "throttles are removed afterwards."
                )
                run.decide(Phase.RUNNING, Why.STOPPING, message)
                run.flush()
                return Result(events=run.result.events, done=False, message=message)
    record = record_from_fields(resource.status.get("throttle"))
    if record is not None:
        run.settle(record)
        execution.remove_throttle(store, record)
        run.set("throttle", {**CLEARED_FIELDS, "rate": record.rate})
        run.event(
            "Normal",
            "ThrottleRemoved",
            f"Removed the replication throttle of batch {record.batch} (resource deleted)",
        )
        run.flush()
    return Result(events=run.result.events, done=True, message="throttles removed")
