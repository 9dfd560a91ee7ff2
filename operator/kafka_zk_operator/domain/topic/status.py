"""The KafkaTopic ``status``: built in one pure function from what a reconcile learned and did.

:func:`build_topic_status` is called once at the end of every KafkaTopic reconcile (and by the
resync timer); the handler writes the result into ``patch.status``. It sets ``Ready`` from the
outcome (a success reason or a :class:`~kafka_zk_operator.domain.errors.KzoError`), or the
``ReconciliationPaused`` / ``Unmanaged`` variants; the kstatus conditions next to it (``Stalled``
for an error that a retry cannot fix, ``Reconciling`` for one the operator retries by itself, both
written only while ``True``: see :func:`kstatus_conditions`); a ``Warning`` condition from planning
warnings;
live partition health (leader, ISR, under-replicated, offline, under min ISR) from the observed
topic (:class:`~kafka_zk_operator.domain.topic.plan.ObservedTopic`: its state znodes and its own
``min.insync.replicas``) and the live broker ids; and ``drift``. ``lastTransitionTime`` of a
condition changes only when its status flips. Watch-driven refreshes build only the partition
fields, with :func:`partition_fields`.

The result is meant for a JSON merge patch (kopf's ``patch.status``): ``None`` removes a field
(e.g. the partition fields once the topic is gone from Kafka); fields not observed in this
reconcile are carried over from the previous status. The ``kopf`` field is never touched.

Pure: the clock is the injected ``now``; no I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import MANAGED_ANNOTATION, PAUSED_ANNOTATION
from kafka_zk_operator.domain.model import BrokerId
from kafka_zk_operator.domain.timestamps import format_timestamp, parse_timestamp
from kafka_zk_operator.domain.topic.plan import ObservedTopic

#: Per-partition entries kept in ``status.partitionStates`` (the CRD's maxItems).
MAX_PARTITION_STATES = 1000
#: Entries kept in ``status.drift`` (the CRD's maxItems).
MAX_DRIFT = 100
#: Longest condition message written (the CRD allows 32768).
MAX_MESSAGE_LENGTH = 4096

READY = "Ready"
#: kstatus' abnormal-true conditions: present only while ``True`` (absent reads as ``False``).
STALLED = "Stalled"
RECONCILING = "Reconciling"
RECONCILIATION_PAUSED = "ReconciliationPaused"
UNMANAGED = "Unmanaged"
WARNING = "Warning"

SUCCESS_REASONS = frozenset(
    {errors.Reason.CREATED, errors.Reason.UPDATED, errors.Reason.ADOPTED, errors.Reason.IN_SYNC}
)
_OWN_CONDITIONS = (READY, STALLED, RECONCILING, RECONCILIATION_PAUSED, UNMANAGED, WARNING)
#: The live partition-health fields: written by reconciles and by watch-driven refreshes.
PARTITION_FIELDS = (
    "topicId", "partitions", "replicationFactor", "partitionStates", "partitionStatesTruncated",
    "underReplicatedPartitions", "underMinIsrPartitions", "offlinePartitions", "leaderlessPartitions",
)  # fmt: skip

Outcome = errors.Reason | errors.KzoError


class ReconcileMode(enum.StrEnum):
    """How the operator treats the resource, from its annotations."""

    MANAGED = "Managed"
    #: ``PAUSED_ANNOTATION: "true"``: nothing is written to Kafka.
    PAUSED = "Paused"
    #: ``MANAGED_ANNOTATION: "false"``: the operator has let go of the topic.
    UNMANAGED = "Unmanaged"


def min_insync_replicas(topic_config: Mapping[str, str] | None) -> int | None:
    """The topic's own ``min.insync.replicas`` (None when it has none, or an unreadable one): when
    known, it enables ``underMinIsrPartitions``."""
    raw = (topic_config or {}).get("min.insync.replicas")
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return None


def build_topic_status(
    *,
    topic_name: str,
    generation: int,
    now: datetime,
    outcome: Outcome | None = None,
    mode: ReconcileMode = ReconcileMode.MANAGED,
    observation: ObservedTopic | None = None,
    live_brokers: Collection[BrokerId] = (),
    previous: Mapping[str, Any] | None = None,
    message: str | None = None,
    warnings: Sequence[str] = (),
    drift: Sequence[str] = (),
) -> dict[str, Any]:
    """The new ``status`` of a KafkaTopic. Pure.

    :param topic_name: the effective Kafka topic name.
    :param generation: ``metadata.generation`` of the spec that was reconciled.
    :param now: timezone-aware current time (for ``lastTransitionTime`` and ``lastSyncTime``).
    :param outcome: required in ``MANAGED`` mode: ``Created``/``Updated``/``Adopted``/``InSync``, or
        the error that stopped the reconcile.
    :param observation: the topic as read from ZooKeeper (``assignment`` None: not in Kafka, the
        partition fields are removed); ``None`` when nothing was read (e.g. ZooKeeper
        unreachable), in which case the previous partition fields are kept.
    :param live_brokers: the children of ``/brokers/ids`` read with ``observation``.
    :param previous: the resource's current ``status`` (may be empty).
    :param message: replaces the default message of a successful ``Ready`` condition.
    :param warnings: planning warnings, joined into one ``Warning`` condition (managed mode).
    :param drift: differences the operator reports but does not change.
    :raises ValueError: ``now`` is naive; a success reason that is not one; no outcome when managed.
    """
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    previous = previous or {}
    stamp = format_timestamp(now)
    old_conditions = {c.get("type"): c for c in previous.get("conditions") or [] if isinstance(c, Mapping)}
    new_conditions = _own_conditions(topic_name, generation, mode, outcome, old_conditions, message, warnings)
    status: dict[str, Any] = {
        "observedGeneration": previous.get("observedGeneration")
        if mode is ReconcileMode.PAUSED
        else generation,
        "conditions": _merge_conditions(new_conditions, old_conditions, stamp),
        "topicName": topic_name,
    }
    if observation is None:
        status.update({key: previous.get(key) for key in (*PARTITION_FIELDS, "lastSyncTime")})
    else:
        status.update(partition_fields(observation, live_brokers))
        status["lastSyncTime"] = stamp
    status["drift"] = list(drift[:MAX_DRIFT]) if drift else None
    return status


# --- conditions --------------------------------------------------------------------------------------


def _own_conditions(
    topic_name: str,
    generation: int,
    mode: ReconcileMode,
    outcome: Outcome | None,
    old: Mapping[Any, Mapping[str, Any]],
    message: str | None,
    warnings: Sequence[str],
) -> list[dict[str, Any]]:
    """Conditions this operator owns, in a stable order; a carried-over condition is copied as is."""
    if mode is ReconcileMode.UNMANAGED:
        text = (
            f'{MANAGED_ANNOTATION} is "false": the operator no longer writes topic '
            f"'{topic_name}', and deleting this resource leaves the topic in Kafka."
        )
        return [_condition(UNMANAGED, True, "ManagedAnnotationFalse", generation, text)]
    if mode is ReconcileMode.PAUSED:
        text = (
            f'{PAUSED_ANNOTATION} is "true": nothing is written to Kafka for topic '
            f"'{topic_name}' until the annotation is removed."
        )
        paused = _condition(RECONCILIATION_PAUSED, True, "PausedByAnnotation", generation, text)
        # Ready, Stalled and Warning say what the last managed reconcile found: kept as they are.
        # Reconciling goes: nothing is in progress while paused.
        kept = {kind: [dict(old[kind])] if kind in old else [] for kind in (READY, STALLED, WARNING)}
        return [*kept[READY], *kept[STALLED], paused, *kept[WARNING]]
    if outcome is None:
        raise ValueError("a managed reconcile needs an outcome")
    conditions = [_ready_condition(topic_name, generation, outcome, message)]
    conditions += kstatus_conditions(outcome, generation)
    if warnings:
        conditions.append(_condition(WARNING, True, "PlanningWarnings", generation, " ".join(warnings)))
    return conditions


def _ready_condition(
    topic_name: str, generation: int, outcome: Outcome, message: str | None
) -> dict[str, Any]:
    if isinstance(outcome, errors.KzoError):
        return _condition(READY, False, outcome.reason.value, generation, str(outcome))
    if outcome not in SUCCESS_REASONS:
        raise ValueError(f"{outcome} is not a success reason; pass the error instead")
    default = {
        errors.Reason.CREATED: f"Topic '{topic_name}' was created in Kafka.",
        errors.Reason.UPDATED: f"Topic '{topic_name}' was updated in Kafka.",
        errors.Reason.ADOPTED: f"Existing topic '{topic_name}' is now managed by this resource.",
        errors.Reason.IN_SYNC: f"Topic '{topic_name}' matches the spec.",
    }[outcome]
    return _condition(READY, True, outcome.value, generation, message or default)


def kstatus_conditions(outcome: Outcome, generation: int) -> list[dict[str, Any]]:
    """``Stalled`` or ``Reconciling`` (kstatus' abnormal-true conditions) for a managed outcome.

    An error the operator retries by itself (``retryable``: ``ClusterUnavailable``,
    ``ZooKeeperError``, ``ReassignmentInProgress``, ``TopicBeingDeleted``,
    ``ReplicationFactorChanging``, ``PlanJobFailed``) is work in progress: ``Reconciling=True``. Any
    other error needs a person (``InvalidSpec``, ``NotSupported``, ``ResourceConflict``,
    ``TopicDeletedInKafka``, a malformed znode, ``InternalError``): ``Stalled=True``, so that Flux and
    ``kubectl wait --for=condition=Stalled`` stop waiting. A success writes neither: a condition that
    is not ``True`` is left out rather than kept ``False``, so that a topic that is Ready carries
    only ``Ready`` (and an upgrade rewrites no Ready topic's status).
    """
    if not isinstance(outcome, errors.KzoError):
        return []
    kind = RECONCILING if outcome.retryable else STALLED
    return [_condition(kind, True, outcome.reason.value, generation, str(outcome))]


def _condition(kind: str, status: bool, reason: str, generation: int, message: str) -> dict[str, Any]:
    if len(message) > MAX_MESSAGE_LENGTH:
        message = message[: MAX_MESSAGE_LENGTH - 1] + "…"
    return {
        "type": kind,
        "status": "True" if status else "False",
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
    }


def _merge_conditions(
    new: list[dict[str, Any]], old: Mapping[Any, Mapping[str, Any]], stamp: str
) -> list[dict[str, Any]]:
    """Stamp ``lastTransitionTime`` (kept unless the status flipped) and keep foreign conditions."""
    merged = []
    for condition in new:
        previous = old.get(condition["type"])
        if "lastTransitionTime" not in condition:
            unchanged = previous is not None and previous.get("status") == condition["status"]
            condition["lastTransitionTime"] = (
                previous.get("lastTransitionTime", stamp) if unchanged and previous else stamp
            )
        merged.append(condition)
    foreign = [dict(c) for kind, c in old.items() if kind not in _OWN_CONDITIONS]
    return merged + foreign


# --- partition health ------------------------------------------------------------------------------------


def partition_fields(observation: ObservedTopic, live_brokers: Collection[BrokerId]) -> dict[str, Any]:
    """The live partition-health fields of the status (all ``None`` when the topic is not in Kafka).

    Part of every reconcile's status, and all that a watch-driven refresh writes.
    """
    topic = observation.assignment
    if topic is None:
        return dict.fromkeys(PARTITION_FIELDS)
    live = set(live_brokers)
    min_isr = min_insync_replicas(observation.config)
    entries: list[dict[str, Any]] = []
    under_replicated = offline = leaderless = under_min_isr = 0
    for partition in sorted(topic.partitions):
        replicas = topic.partitions[partition]
        state = observation.partition_states.get(partition)
        leader = state.leader if state is not None else -1
        isr = list(state.isr) if state is not None else []
        # Kafka's definition (TopicCommand): the replication factor excludes replicas being added.
        expected = len(replicas) - len(topic.adding_replicas.get(partition, ()))
        under_replicated += len(isr) < expected
        leaderless += leader < 0
        offline += leader < 0 or leader not in live
        under_min_isr += min_isr is not None and len(isr) < min_isr
        if len(entries) < MAX_PARTITION_STATES:
            entries.append({"partition": partition, "leader": leader, "isr": isr, "replicas": list(replicas)})
    return {
        "topicId": topic.topic_id,
        "partitions": topic.partition_count,
        "replicationFactor": topic.replication_factor,
        "partitionStates": entries,
        "partitionStatesTruncated": topic.partition_count > MAX_PARTITION_STATES,
        "underReplicatedPartitions": under_replicated,
        "underMinIsrPartitions": under_min_isr if min_isr is not None else None,
        "offlinePartitions": offline,
        "leaderlessPartitions": leaderless,
    }


def status_changes(
    previous: Mapping[str, Any], new: Mapping[str, Any], *, now: datetime, heartbeat_seconds: float
) -> dict[str, Any]:
    """The part of ``new`` that differs from ``previous``: what a merge patch must carry.

    ``lastSyncTime`` alone is not a change: it is refreshed only with another change or when
    the previous one is older than ``heartbeat_seconds``. An in-sync resync therefore writes
    nothing to the Kubernetes API either. ``None`` values (field removals) count as changes only
    when the field is present.
    """
    changes: dict[str, Any] = {}
    for key, value in new.items():
        if key == "lastSyncTime":
            continue
        if value is None and key not in previous:
            continue
        if previous.get(key) != value:
            changes[key] = value
    if "lastSyncTime" in new:
        last = parse_timestamp(previous.get("lastSyncTime"))
        stale = last is None or (now - last).total_seconds() >= heartbeat_seconds
        if changes or stale:
            changes["lastSyncTime"] = new["lastSyncTime"]
    return changes
