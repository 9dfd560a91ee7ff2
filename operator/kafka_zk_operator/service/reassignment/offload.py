"""Computed proposals for large clusters: planned by the PySpark job instead of in-process.

When the chart enables Spark (its settings ConfigMap exists in the operator's namespace) and the
cluster has more partitions than ``spark.offloadAbovePartitions``, a computed mode's proposal is
planned by a Spark job (``service.plan_offload``): the first reconcile submits it, later ones find
it running (the resource stays ``Pending``, reason ``Planning``), the one that finds the result
turns it into the proposal and, once the proposal is saved in the status, deletes the job (a
failed save must not cost a re-run of a long job). A job that ends without a result (it failed,
its driver was killed, its Job was deleted) raises ``OffloadFailed`` once, is deleted, and is
submitted again by a later reconcile once every pod of that run is gone. Same plan as in-process
(the engine's contract), so everything after the proposal is identical. Without Spark settings, for small clusters, and
for ReplicationFactor requests with several target factors (planned as a chain), the engine runs
in-process.

The job's name derives from the resource's uid and generation: re-submitting is idempotent, and a
job still running for an older snapshot of the same generation is simply waited for (the start
checks the proposal against the cluster anyway).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from dataclasses import dataclass

from kafka_zk_operator.adapters.k8s import spark_submit
from kafka_zk_operator.adapters.k8s.spark_jobs import SparkJobs
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.reassignment.computed import plan_from_engine
from kafka_zk_operator.domain.reassignment.plan import ClusterView, ReassignmentPlan
from kafka_zk_operator.domain.reassignment.request import ReassignmentRequest, engine_inputs, plan_request
from kafka_zk_operator.domain.wording import counted
from kafka_zk_operator.service import plan_offload

log = logging.getLogger(__name__)


class StillPlanning(Exception):
    """The Spark job has no result yet: not an error, the proposal is simply not there yet."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class FinishedJob:
    """A job whose result was used: to delete once the proposal made from it is saved."""

    jobs: SparkJobs
    namespace: str
    name: str

    def discard(self) -> None:
        """Delete the Job, its ConfigMaps and its pods."""
        plan_offload.cleanup(self.jobs, self.namespace, self.name)

    def delete_command(self) -> str:
        """How a person deletes what ``discard`` could not."""
        return f"kubectl delete job,configmap,pod -n {self.namespace} -l {spark_submit.selector(self.name)}"


def _settings(jobs: SparkJobs) -> plan_offload.OffloadSettings | None:
    try:
        return plan_offload.load_settings(jobs)
    except errors.KzoError as error:  # e.g. not allowed to list ConfigMaps there: plan in-process
        log.warning("Spark offload settings unavailable, planning in-process: %s", error)
        return None


def plan(
    jobs: SparkJobs | None,
    request: ReassignmentRequest,
    cluster: ClusterView,
    key: tuple[str, ...],
    finished: list[FinishedJob],
) -> ReassignmentPlan:
    """The computed plan, from Spark when configured and the cluster is large enough.

    A job whose result is returned is appended to ``finished``, not deleted: the caller discards
    it once the proposal is saved (until then, calling again takes the same result).

    :raises StillPlanning: submitted (or still running); call again later.
    :raises OffloadFailed: the job ended without a result (it is cleaned up: the next call retries).
    :raises InvalidSpec, NotSupported: the request cannot be planned.
    """
    settings = _settings(jobs) if jobs is not None else None
    if jobs is None or settings is None:
        return plan_request(request, cluster)
    inputs = engine_inputs(request, cluster)
    if (
        inputs is None  # a mode the placement engine does not plan
        or len(inputs.requests) != 1
        or not plan_offload.should_offload(inputs.arrays.n_partitions, settings.offload_above_partitions)
    ):
        return plan_request(request, cluster)
    name = plan_offload.job_name(*key)
    namespace = settings.spark.namespace
    if not plan_offload.submitted(jobs, namespace, name):
        # Pods of an earlier run (its Job failed or was deleted) go first: the new run's driver
        # takes the same name, and the old spark-submit deletes "its" driver by that name.
        left = plan_offload.leftover_pods(jobs, namespace, name)
        if left:
            plan_offload.cleanup(jobs, namespace, name)
            raise StillPlanning(
                f"Spark job {namespace}/{name} is submitted again once its earlier run has stopped "
                f"({counted(len(left), 'pod')} left: {', '.join(sorted(left)[:4])})."
            )
        # A conflict means the job still runs for an earlier snapshot of this generation: take
        # its result.
        with contextlib.suppress(errors.ResourceConflict):
            plan_offload.submit(
                jobs, plan_offload.prepare(name, settings.spark, inputs.arrays, inputs.requests[0])
            )
    try:
        result = plan_offload.collect(jobs, namespace, name)
    except plan_offload.OffloadFailed:
        plan_offload.cleanup(jobs, namespace, name)
        raise
    if result is None:
        raise StillPlanning(
            f"The plan is being computed by Spark job {namespace}/{name} "
            f"({inputs.arrays.n_partitions} partitions, above the offload threshold "
            f"{settings.offload_above_partitions})."
        )
    finished.append(FinishedJob(jobs, namespace, name))
    after = dataclasses.replace(result.cluster, replicas=result.replicas)
    return plan_from_engine(
        result.cluster,
        after,
        lower_bound=int(result.report.m_lb),
        optimal=bool(result.report.optimal),
        notes=[*result.report.notes, *inputs.notes, f"computed by Spark job {namespace}/{name}"],
    )
