"""Offload a large plan to the PySpark job on Kubernetes: decide, submit, follow, collect, clean up.

The operator process never imports PySpark (its image has none). Above a size threshold it runs
the same plan as a Spark job instead (``adapters.k8s.spark_submit``: a Job running spark-submit
in cluster mode) and later reads the result back as a ``Plan`` equal to what
``domain.placement.plan`` returns in-process::

    settings = load_settings(jobs)                                   # chart values spark.*
    if settings and should_offload(cluster.n_partitions, settings.offload_above_partitions):
        name, ns = job_name(resource_uid, proposal_id), settings.spark.namespace
        if not submitted(jobs, ns, name) and not leftover_pods(jobs, ns, name):
            submit(jobs, prepare(name, settings.spark, cluster, request))  # idempotent
        ...                                                              # later reconciles:
        plan = collect(jobs, ns, name, cluster)                          # None while running
        cleanup(jobs, ns, name)                                          # once consumed

``collect`` raises :class:`OffloadFailed` when the Job failed without a result (deadline, crash,
image pull) or was deleted before it wrote one, and ``InvalidSpec`` when the job refused the
request or its result does not belong to the submitted input.

A job is submitted again only once every pod of its earlier run is gone: the driver and the
executor pods are named after the job, and the earlier run's spark-submit, when stopped, kills
its driver *by name*, so two runs must never overlap.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from kafka_zk_operator.adapters.k8s import spark_submit
from kafka_zk_operator.adapters.k8s.spark_jobs import SparkJobs, own_namespace
from kafka_zk_operator.adapters.k8s.spark_submit import SparkJobObjects, SparkSettings
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import SPARK_SETTINGS_LABEL
from kafka_zk_operator.domain.documents.plan_result import digest, read_plan_document, request_to_dict
from kafka_zk_operator.domain.documents.snapshot import (
    arrays_to_snapshot,
    parse_snapshot_json,
    snapshot_to_arrays,
)
from kafka_zk_operator.domain.placement import ClusterArrays, Plan, PlanRequest

#: The chart's settings ConfigMap (templates/spark-settings.yaml) carries this label.
SETTINGS_LABEL = SPARK_SETTINGS_LABEL
SETTINGS_KEY = "settings.json"


class OffloadFailed(errors.KzoError):
    """The Spark job ended without a result; the message says how (re-submit to retry)."""

    reason = errors.Reason.PLAN_JOB_FAILED
    retryable = True


@dataclass(frozen=True)
class OffloadSettings:
    """``offload_above_partitions``: plans of larger clusters go to Spark (0 = never)."""

    offload_above_partitions: int
    spark: SparkSettings


class JobState(enum.StrEnum):
    MISSING = "Missing"
    PENDING = "Pending"  # accepted, no pod running yet (or no controller at all)
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


def should_offload(cluster_arrays_size: int, threshold: int | None) -> bool:
    """Offload when the cluster has more partitions than a positive threshold."""
    return threshold is not None and threshold > 0 and cluster_arrays_size > threshold


def job_name(*parts: str) -> str:
    """A stable job name for what is being planned (e.g. resource uid and proposal id)."""
    return "kzo-plan-" + hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


def settings_from_json(text: str | bytes) -> OffloadSettings:
    """:raises InvalidSpec: not the settings document the chart renders."""
    try:
        raw = json.loads(text)
        spark_fields = {f.name for f in fields(SparkSettings)}
        spark = SparkSettings(**{k: v for k, v in raw["spark"].items() if k in spark_fields})
        return OffloadSettings(int(raw["offloadAbovePartitions"]), spark)
    except (ValueError, KeyError, TypeError) as exc:
        raise errors.InvalidSpec(f"invalid Spark offload settings: {exc}") from None


def load_settings(jobs: SparkJobs, namespace: str | None = None) -> OffloadSettings | None:
    """The chart's settings (``spark.enabled``) from the operator's namespace; ``None`` if absent."""
    ns = namespace or own_namespace()
    items = jobs.select_configmaps(ns, f"{SETTINGS_LABEL}=true")
    if not items:
        return None
    return settings_from_json((items[0].get("data") or {}).get(SETTINGS_KEY, ""))


def snapshot_bytes(cluster: ClusterArrays) -> bytes:
    """The snapshot document the job reads (``domain.documents.snapshot``; sizes included)."""
    return json.dumps(arrays_to_snapshot(cluster), separators=(",", ":")).encode("utf-8")


def prepare(
    name: str,
    settings: SparkSettings,
    cluster: ClusterArrays,
    request: PlanRequest,
    *,
    chunk_bytes: int = spark_submit.CHUNK_BYTES,
) -> SparkJobObjects:
    """The job's objects for planning ``request`` on ``cluster``."""
    return spark_submit.build_spark_job(
        name,
        settings,
        snapshot=snapshot_bytes(cluster),
        request=request_to_dict(request),
        chunk_bytes=chunk_bytes,
    )


def submit(jobs: SparkJobs, objects: SparkJobObjects, *, dry_run: bool = False) -> bool:
    """Create the job's objects (inputs first); ``False`` when the job already existed.

    :raises ResourceConflict: a job of that name exists with another input.
    """
    created = True
    for body in objects.objects():
        if jobs.create(body, dry_run=dry_run) is None:
            created = False
    if not created and not dry_run:
        existing = jobs.configmaps(objects.namespace, objects.name, spark_submit.INPUT)
        notes = [
            (cm["metadata"].get("annotations") or {}).get(spark_submit.SHA_ANNOTATION) for cm in existing
        ]
        if any(sha != objects.input_sha256 for sha in notes):
            raise errors.ResourceConflict(f"Spark job {objects.name} already exists with another input")
    return created


def submitted(jobs: SparkJobs, namespace: str, name: str) -> bool:
    """Whether the job was submitted: its pod template ConfigMap (created right before the Job, and
    deleted with it by :func:`cleanup`) exists. Submitted with no Job: the Job was deleted."""
    return bool(jobs.configmaps(namespace, name, spark_submit.POD_TEMPLATE))


def leftover_pods(jobs: SparkJobs, namespace: str, name: str) -> list[str]:
    """Pods of an earlier run of the job still there (spark-submit's, the driver, executors)."""
    return jobs.pods(namespace, spark_submit.selector(name))


def state(jobs: SparkJobs, namespace: str, name: str) -> tuple[JobState, str]:
    """The Job's state and, when it failed or is gone, why."""
    job = jobs.job(namespace, name)
    if job is None:
        return JobState.MISSING, "the Job does not exist (deleted, or never created)"
    if (job.get("metadata") or {}).get("deletionTimestamp"):
        return JobState.MISSING, "the Job is being deleted"
    status: Mapping[str, Any] = job.get("status") or {}
    for cond in status.get("conditions") or []:
        if cond.get("status") == "True" and cond.get("type") == "Failed":
            return JobState.FAILED, f"{cond.get('reason')}: {cond.get('message')}"
        if cond.get("status") == "True" and cond.get("type") == "Complete":
            return JobState.SUCCEEDED, ""
    if status.get("active"):
        return JobState.RUNNING, ""
    return JobState.PENDING, ""


def collect(jobs: SparkJobs, namespace: str, name: str, cluster: ClusterArrays | None = None) -> Plan | None:
    """The job's plan, validated against its input; ``None`` while there is no complete result.

    :param cluster: the cluster submitted (decoded from the input ConfigMaps when omitted).
    :raises OffloadFailed: the Job failed or vanished without a result.
    :raises InvalidSpec: the job refused the request, or the result is damaged or foreign.
    """
    payload = spark_submit.unpack(jobs.configmaps(namespace, name, spark_submit.RESULT))
    if payload is None:
        current, why = state(jobs, namespace, name)
        if current in (JobState.FAILED, JobState.MISSING, JobState.SUCCEEDED):
            raise OffloadFailed(f"Spark job {namespace}/{name} has no result: {current}: {why}".rstrip(": "))
        return None
    snapshot = spark_submit.unpack(jobs.configmaps(namespace, name, spark_submit.INPUT))
    if snapshot is None:
        raise OffloadFailed(f"the input ConfigMaps of Spark job {namespace}/{name} are gone")
    if cluster is None:
        cluster = snapshot_to_arrays(parse_snapshot_json(snapshot, allow_mixed_rf=True))
    elif snapshot_bytes(cluster) != snapshot:
        raise errors.InvalidSpec(f"Spark job {namespace}/{name} planned another cluster than the one given")
    try:
        document = json.loads(payload)
    except ValueError as exc:
        raise errors.InvalidSpec(f"the result of Spark job {namespace}/{name} is not JSON: {exc}") from None
    return read_plan_document(document, cluster, input_sha256=digest(snapshot))


def cleanup(jobs: SparkJobs, namespace: str, name: str) -> list[str]:
    """Delete the Job, the job's ConfigMaps and its pods; the names of the pods deleted.

    The Job's own pod goes with the Job; the driver's and the executors' are deleted here too, in
    case no spark-submit is left to delete them (its pod deleted first, or stopped before its trap
    ran).
    """
    jobs.delete(namespace, name)
    return jobs.delete_pods(namespace, spark_submit.selector(name))
