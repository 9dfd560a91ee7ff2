"""The plan result document: a :class:`~kafka_zk_operator.domain.placement.Plan` as JSON and back.

What the Spark job writes (``--result``) and the operator collects after an offloaded run. Given
the cluster it was planned on, the document restores a ``Plan`` equal field by field to the one
the job computed, so the operator uses it exactly like an in-process plan::

    {"format": "kzo-plan-result/v1",
     "input_sha256": "<hex digest of the snapshot bytes the job read>",
     "request": {"mode": "add-brokers", "brokers": [7, 8], ...},
     "partitions": P, "brokers": N,
     "width": W,                                  # replica slots per row after the plan
     "changed_rows": [...], "changed_replicas": [[...], ...],   # broker indexes, -1 = empty
     "movable": [[start, end), ...], "eligible": [bool] * N,
     "targets": {"target": [...], "lo": [...], "hi": [...], "klass": [...], "class_extra": [...],
                 "level": L, "skewed": [...]},
     "report": {...PlanReport fields...}}

A job that refuses its input writes ``{"format", "input_sha256", "error": "<message>"}`` instead
(:func:`error_document`). Kafka's reassignment JSON is not stored: :meth:`Plan.reassignment` derives it from the restored
plan. Nothing time-dependent is written, so equal plans give byte-equal documents.
:func:`read_plan_document` validates structure, sizes, index ranges and the report's counts
(moves, duplicates, bytes per broker) against the restored matrix; every problem is an
:class:`~kafka_zk_operator.domain.errors.InvalidSpec`. Documents written before the report had
bytes per broker (no ``sizes_known``) are still read: those figures are recomputed from the cluster.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement import Balance, ClusterArrays, DataMovement, Plan, PlanRequest
from kafka_zk_operator.domain.placement.arrays import EMPTY, BoolArray, IntArray
from kafka_zk_operator.domain.placement.racks import duplicates
from kafka_zk_operator.domain.placement.report import (
    BrokerLine,
    PlanReport,
    SkewedRack,
    broker_bytes,
    count_moves,
)
from kafka_zk_operator.domain.placement.targets import RackSkew, Targets

FORMAT = "kzo-plan-result/v1"


def digest(data: bytes) -> str:
    """SHA-256 hex digest (of the snapshot bytes a job read)."""
    return hashlib.sha256(data).hexdigest()


# -- request ---------------------------------------------------------------------------------------
def request_to_dict(request: PlanRequest) -> dict[str, Any]:
    data = dataclasses.asdict(request)
    data["mode"] = request.mode.cli_name
    data["brokers"] = list(request.brokers)
    data["data_movement"] = str(request.data_movement)
    data["balance"] = str(request.balance)
    data["broker_capacity"] = [list(pair) for pair in request.broker_capacity]
    return data


def request_from_dict(data: Mapping[str, Any]) -> PlanRequest:
    """:raises InvalidSpec: unknown keys or values of the wrong type."""
    names = {f.name for f in dataclasses.fields(PlanRequest)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise errors.InvalidSpec(f"plan request: unknown field(s) {', '.join(unknown)}")
    try:
        fields = dict(data)
        fields["mode"] = Mode.parse(str(data["mode"]))
        fields["brokers"] = tuple(_int(b, "brokers") for b in data.get("brokers", ()))
        if "data_movement" in fields:
            fields["data_movement"] = DataMovement(str(fields["data_movement"]))
        if "balance" in fields:
            fields["balance"] = Balance(str(fields["balance"]))
        if "broker_capacity" in fields:
            fields["broker_capacity"] = tuple(
                (_int(pair[0], "broker_capacity"), _int(pair[1], "broker_capacity"))
                for pair in fields["broker_capacity"]
            )
        if "byte_tolerance" in fields:
            fields["byte_tolerance"] = _number(fields["byte_tolerance"], "byte_tolerance")
        for key in ("tolerance", "seed", "exact_limit"):
            if key in fields:
                fields[key] = _int(fields[key], key)
        for key in ("n_groups", "replication_factor"):
            if fields.get(key) is not None:
                fields[key] = _int(fields[key], key)
        return PlanRequest(**fields)
    except (KeyError, ValueError, TypeError) as exc:
        raise errors.InvalidSpec(f"plan request: {exc}") from None


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number, not {value!r}")
    return float(value)


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, not {value!r}")
    return value


# -- report ----------------------------------------------------------------------------------------
def report_to_dict(report: PlanReport) -> dict[str, Any]:
    data: dict[str, Any] = dataclasses.asdict(report)
    return data


def report_from_dict(data: Mapping[str, Any]) -> PlanReport:
    """The report of :func:`report_to_dict`; byte fields missing from older documents read as 0."""
    fields = dict(data)
    fields["skewed_racks"] = tuple(SkewedRack(**s) for s in data["skewed_racks"])
    fields["brokers"] = tuple(
        BrokerLine(**{"bytes_before": 0, "bytes_after": 0, **b}) for b in data["brokers"]
    )
    fields["notes"] = tuple(data["notes"])
    fields["warnings"] = tuple(data.get("warnings", ()))
    fields.setdefault("sizes_known", False)
    return PlanReport(**fields)


# -- the document ----------------------------------------------------------------------------------
def plan_document(plan: Plan, *, request: PlanRequest, input_sha256: str) -> dict[str, Any]:
    """The document of ``plan`` (module docstring)."""
    rows = plan.changed_rows()
    t = plan.targets
    return {
        "format": FORMAT,
        "input_sha256": input_sha256,
        "request": request_to_dict(request),
        "partitions": plan.cluster.n_partitions,
        "brokers": plan.cluster.n_brokers,
        "width": int(plan.replicas.shape[1]),
        "changed_rows": rows.tolist(),
        "changed_replicas": plan.replicas[rows].tolist(),
        "movable": _runs(plan.movable),
        "eligible": plan.eligible.tolist(),
        "targets": {
            "target": t.target.tolist(),
            "lo": t.lo.tolist(),
            "hi": t.hi.tolist(),
            "klass": t.klass.tolist(),
            "class_extra": t.class_extra.tolist(),
            "level": int(t.level),
            "skewed": [dataclasses.asdict(s) for s in t.skewed],
        },
        "report": report_to_dict(plan.report),
    }


def error_document(message: str, *, input_sha256: str) -> dict[str, Any]:
    """What a job writes instead when it refuses the request (invalid snapshot or parameters)."""
    return {"format": FORMAT, "input_sha256": input_sha256, "error": message}


def dump(document: Mapping[str, Any]) -> bytes:
    """Canonical bytes of a document (sorted keys, no spaces): equal plans, equal bytes."""
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8")


def read_plan_document(
    document: Mapping[str, Any], cluster: ClusterArrays, *, input_sha256: str | None = None
) -> Plan:
    """Restore the plan computed on ``cluster``.

    :param input_sha256: when given, the digest the document must name (the snapshot submitted).
    :raises InvalidSpec: not a plan document, another input, or inconsistent content.
    """
    if not isinstance(document, Mapping) or document.get("format") != FORMAT:
        raise errors.InvalidSpec(f"not a {FORMAT} document")
    if input_sha256 is not None and document.get("input_sha256") != input_sha256:
        raise errors.InvalidSpec("the plan result was computed from another snapshot (input digest differs)")
    if "error" in document:
        raise errors.InvalidSpec(f"the planning job refused the request: {document['error']}")
    try:
        return _restore(document, cluster)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise errors.InvalidSpec(f"damaged plan result: {type(exc).__name__}: {exc}") from None


def _restore(doc: Mapping[str, Any], cluster: ClusterArrays) -> Plan:
    n, p = cluster.n_brokers, cluster.n_partitions
    if (doc["partitions"], doc["brokers"]) != (p, n):
        raise ValueError(
            f"it has {doc['partitions']} partitions / {doc['brokers']} brokers, the cluster {p} / {n}"
        )
    width = int(doc["width"])
    rows = np.asarray(doc["changed_rows"], dtype=np.int64).reshape(-1)
    if len(rows) and (rows[0] < 0 or rows[-1] >= p or bool(np.any(np.diff(rows) <= 0))):
        raise ValueError("changed_rows must be increasing row indexes")
    changed = np.asarray(doc["changed_replicas"], dtype=np.int64).reshape(len(rows), width)
    if bool(np.any((changed < EMPTY) | (changed >= n))):
        raise ValueError("a replica names a broker index outside the cluster")
    unchanged = np.ones(p, dtype=np.bool_)
    unchanged[rows] = False
    if bool(np.any(cluster.replicas[unchanged, width:] >= 0)):
        raise ValueError("the width drops replicas of unchanged rows")
    after = np.full((p, max(width, cluster.replicas.shape[1])), EMPTY, dtype=np.int64)
    after[:, : cluster.replicas.shape[1]] = cluster.replicas
    after = np.ascontiguousarray(after[:, :width])
    after[rows] = changed
    report = report_from_dict(doc["report"])
    if "sizes_known" not in doc["report"]:  # written before reports had bytes per broker
        report = _with_bytes(report, cluster, after)
    _check_report(report, cluster, after, rows)
    t = doc["targets"]
    targets = Targets(
        target=_ints(t["target"], n),
        lo=_ints(t["lo"], n),
        hi=_ints(t["hi"], n),
        klass=_ints(t["klass"], n),
        class_extra=np.asarray(t["class_extra"], dtype=np.int64),
        level=int(t["level"]),
        skewed=tuple(RackSkew(**s) for s in t["skewed"]),
    )
    eligible: BoolArray = np.asarray(doc["eligible"], dtype=np.bool_).reshape(n)
    plan = Plan(cluster, after, report, targets, eligible, _unruns(doc["movable"], p))
    if not np.array_equal(plan.changed_rows(), rows):
        raise ValueError("changed_rows lists a row that does not change")
    return plan


def _check_report(report: PlanReport, cluster: ClusterArrays, after: IntArray, rows: IntArray) -> None:
    if report.partitions != cluster.n_partitions or report.partitions_changed != len(rows):
        raise ValueError("the report's partition counts do not match the replicas")
    if report.moves != int(count_moves(cluster.replicas, after).sum()):
        raise ValueError("the report's move count does not match the replicas")
    if report.duplicates_after != int(duplicates(after).sum()):
        raise ValueError("the report's duplicate count does not match the replicas")
    n = cluster.n_brokers
    if len(report.brokers) != n:
        raise ValueError(f"the report has {len(report.brokers)} broker lines, the cluster {n} brokers")
    held = np.array([(b.bytes_before, b.bytes_after) for b in report.brokers], dtype=np.int64).reshape(n, 2)
    if not (
        np.array_equal(held[:, 0], broker_bytes(cluster.replicas, cluster.sizes, n))
        and np.array_equal(held[:, 1], broker_bytes(after, cluster.sizes, n))
    ):
        raise ValueError("the report's bytes per broker do not match the replicas and sizes")
    if report.sizes_known != bool(cluster.sizes.any()):
        raise ValueError("the report's sizes_known does not match the cluster's sizes")


def _with_bytes(report: PlanReport, cluster: ClusterArrays, after: IntArray) -> PlanReport:
    """``report`` with its bytes per broker and ``sizes_known`` computed from the cluster."""
    n = cluster.n_brokers
    if len(report.brokers) != n:
        return report  # refused by _check_report
    before_b, after_b = (
        broker_bytes(cluster.replicas, cluster.sizes, n),
        broker_bytes(after, cluster.sizes, n),
    )
    lines = tuple(
        dataclasses.replace(b, bytes_before=int(before_b[i]), bytes_after=int(after_b[i]))
        for i, b in enumerate(report.brokers)
    )
    return dataclasses.replace(report, brokers=lines, sizes_known=bool(cluster.sizes.any()))


def _ints(values: object, size: int) -> IntArray:
    out: IntArray = np.asarray(values, dtype=np.int64).reshape(size)
    return out


def _runs(mask: BoolArray) -> list[list[int]]:
    """``[start, end)`` runs of True."""
    padded = np.r_[False, mask, False].astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return edges.reshape(-1, 2).tolist()


def _unruns(runs: object, size: int) -> BoolArray:
    mask = np.zeros(size, dtype=np.bool_)
    for start, end in np.asarray(runs, dtype=np.int64).reshape(-1, 2).tolist():
        if not 0 <= start < end <= size:
            raise ValueError("movable runs out of range")
        mask[start:end] = True
    return mask


def plan_differences(a: Plan, b: Plan) -> list[str]:
    """Fields in which two plans differ (empty: the same plan)."""
    out = []
    if a.replicas.shape != b.replicas.shape or not np.array_equal(a.replicas, b.replicas):
        out.append("replicas")
    if a.reassignment() != b.reassignment():
        out.append("reassignment")
    if a.report != b.report:
        out.append("report")
    for name in ("eligible", "movable"):
        if not np.array_equal(getattr(a, name), getattr(b, name)):
            out.append(name)
    ta, tb = a.targets, b.targets
    for name in ("target", "lo", "hi", "klass", "class_extra"):
        if not np.array_equal(getattr(ta, name), getattr(tb, name)):
            out.append(f"targets.{name}")
    if ta.level != tb.level or ta.skewed != tb.skewed:
        out.append("targets.skewed/level")
    return out
