"""The plan result document (``domain.documents.plan_result``): exact round trips and refused damage."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.documents import plan_result as plan_document
from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement import Balance, ClusterArrays, DataMovement, Plan, PlanRequest, plan
from kafka_zk_operator.domain.placement.capacity import BrokerCapacity, check_capacity
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster


def _plans() -> dict[str, tuple[ClusterArrays, PlanRequest]]:
    base = synthetic_cluster(9, 3, 300, seed=3, layout="kafka")
    return {
        "add": (
            base.with_brokers(make_brokers(3, 3, first_id=50)),
            PlanRequest(Mode.ADD_BROKERS, brokers=(50, 51, 52)),
        ),
        "remove": (base, PlanRequest(Mode.REMOVE_BROKERS, brokers=(2,), seed=4)),
        "rf-up": (base, PlanRequest(Mode.REPLICATION_FACTOR, replication_factor=4, topics="topic-0[0-3]")),
        "rf-down": (base, PlanRequest(Mode.REPLICATION_FACTOR, replication_factor=1, tolerance=1)),
        "skewed-racks": (
            synthetic_cluster(7, 3, 200, seed=1, brokers=[*make_brokers(6, 3), Broker(6, "rack-a")]),
            PlanRequest(Mode.REBALANCE, exclude_topics="topic-00"),
        ),
    }


PLANS = _plans()


def _document(name: str) -> tuple[ClusterArrays, Plan, dict[str, Any]]:
    cluster, request = PLANS[name]
    result = plan(cluster, request)
    doc = plan_document.plan_document(result, request=request, input_sha256="abc")
    return cluster, result, json.loads(plan_document.dump(doc))


@pytest.mark.parametrize("name", sorted(PLANS))
def test_round_trip_restores_the_same_plan(name: str) -> None:
    cluster, result, doc = _document(name)
    restored = plan_document.read_plan_document(doc, cluster, input_sha256="abc")
    assert plan_document.plan_differences(result, restored) == []
    assert restored.reassignment() == result.reassignment()
    assert plan_document.request_from_dict(doc["request"]) == PLANS[name][1]


def test_the_widths_of_rf_changes_survive() -> None:
    for name, width in (("rf-up", 4), ("rf-down", 3)):
        cluster, result, doc = _document(name)
        assert doc["width"] == result.replicas.shape[1] == width
        assert plan_document.read_plan_document(doc, cluster).replicas.shape == result.replicas.shape


def test_equal_plans_give_equal_bytes_and_other_plans_other_bytes() -> None:
    cluster, request = PLANS["remove"]
    one = plan_document.dump(
        plan_document.plan_document(plan(cluster, request), request=request, input_sha256="x")
    )
    two = plan_document.dump(
        plan_document.plan_document(plan(cluster, request), request=request, input_sha256="x")
    )
    other_request = PlanRequest(Mode.REMOVE_BROKERS, brokers=(2,), seed=5)
    other = plan_document.dump(
        plan_document.plan_document(plan(cluster, other_request), request=other_request, input_sha256="x")
    )
    assert one == two != other


def _damaged(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    node = out
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last = keys[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


DAMAGE = {
    "format": ("format", "kzo-plan-result/v0", "not a kzo-plan-result/v1"),
    "partitions": ("partitions", 1, "partitions"),
    "broker index": ("changed_replicas.0.0", 99, "outside the cluster"),
    "rows order": ("changed_rows", [3, 2], "increasing"),
    "report moves": ("report.moves", 1, "move count"),
    "report changed": ("report.partitions_changed", 0, "partition counts"),
    "movable runs": ("movable", [[0, 10_000]], "out of range"),
    "targets size": ("targets.lo", [1, 2], "damaged plan result"),
    "missing field": ("report", {}, "damaged plan result"),
    "report bytes after": ("report.brokers.0.bytes_after", 1, "bytes per broker"),
    "report bytes before": ("report.brokers.3.bytes_before", 0, "bytes per broker"),
    "report bytes too large": ("report.brokers.3.bytes_before", 2**70, "damaged plan result"),
    "report sizes known": ("report.sizes_known", False, "sizes_known"),
    "report broker lines": ("report.brokers", [], "broker lines"),
}


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_damaged_documents_are_refused(name: str) -> None:
    cluster, _, doc = _document("remove")
    path, value, message = DAMAGE[name]
    with pytest.raises(errors.InvalidSpec, match=message):
        plan_document.read_plan_document(_damaged(doc, path, value), cluster)


def test_a_row_listed_as_changed_must_change() -> None:
    cluster, _, doc = _document("remove")
    unchanged = next(r for r in range(cluster.n_partitions) if r not in set(doc["changed_rows"]))
    rows = sorted([*doc["changed_rows"], unchanged])
    replicas = [
        doc["changed_replicas"][doc["changed_rows"].index(r)]
        if r != unchanged
        else cluster.replicas[r].tolist()
        for r in rows
    ]
    bad = {**doc, "changed_rows": rows, "changed_replicas": replicas}
    bad["report"] = {**doc["report"], "partitions_changed": len(rows)}
    with pytest.raises(errors.InvalidSpec, match="does not change"):
        plan_document.read_plan_document(bad, cluster)


def test_another_input_digest_is_refused() -> None:
    cluster, _, doc = _document("add")
    with pytest.raises(errors.InvalidSpec, match="another snapshot"):
        plan_document.read_plan_document(doc, cluster, input_sha256="def")


def test_another_cluster_is_refused() -> None:
    _, _, doc = _document("add")
    with pytest.raises(errors.InvalidSpec, match="partitions"):
        plan_document.read_plan_document(doc, synthetic_cluster(9, 3, 301, seed=3))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"mode": "rebalance", "colour": 1}, "unknown field"),
        ({"mode": "shuffle"}, "shuffle"),
        ({"mode": "remove-brokers", "brokers": ["1"]}, "integer"),
        ({"mode": "rebalance", "tolerance": True}, "integer"),
        ({"brokers": [1]}, "mode"),
        ({"mode": "rebalance", "data_movement": "largest"}, "largest"),
        ({"mode": "rebalance", "balance": "disks"}, "disks"),
        ({"mode": "rebalance", "byte_tolerance": "5%"}, "number"),
    ],
)
def test_bad_requests_are_refused(data: dict[str, Any], message: str) -> None:
    with pytest.raises(errors.InvalidSpec, match=message):
        plan_document.request_from_dict(data)


def test_bytes_per_broker_survive_the_round_trip() -> None:
    cluster, result, doc = _document("add")
    assert doc["report"]["sizes_known"] is True
    held = [(b["bytes_before"], b["bytes_after"]) for b in doc["report"]["brokers"]]
    assert held == [(b.bytes_before, b.bytes_after) for b in result.report.brokers]
    assert sum(before for before, _ in held) > 0 and held[-1][0] == 0  # an added broker starts empty
    assert plan_document.read_plan_document(doc, cluster).report == result.report


def test_a_capacity_checked_report_round_trips() -> None:
    _, result, _ = _document("remove")
    top = max(b.bytes_after for b in result.report.brokers)
    checked = check_capacity(result.report, BrokerCapacity(default=top - 1))
    assert checked.warnings and checked.brokers[0].capacity == top - 1
    data = json.loads(json.dumps(plan_document.report_to_dict(checked)))
    assert plan_document.report_from_dict(data) == checked


def test_a_document_from_before_bytes_per_broker_is_still_read() -> None:
    cluster, result, doc = _document("rf-up")
    old = copy.deepcopy(doc)
    for key in ("sizes_known", "warnings"):
        del old["report"][key]
    for line in old["report"]["brokers"]:
        for key in ("bytes_before", "bytes_after", "capacity"):
            del line[key]
    restored = plan_document.read_plan_document(old, cluster)
    assert plan_document.plan_differences(result, restored) == []  # the figures are recomputed


def test_the_data_movement_preference_survives_the_round_trip() -> None:
    request = PlanRequest(Mode.REBALANCE, seed=3, data_movement=DataMovement.PROPORTIONAL)
    data = json.loads(json.dumps(plan_document.request_to_dict(request)))
    assert data["data_movement"] == "proportional"
    back = plan_document.request_from_dict(data)
    assert back == request and back.data_movement is DataMovement.PROPORTIONAL
    assert plan_document.request_from_dict({"mode": "rebalance"}).data_movement is DataMovement.MINIMAL


def test_the_balance_choice_and_a_byte_report_survive_the_round_trip() -> None:
    request = PlanRequest(Mode.REBALANCE, balance=Balance.BYTES, byte_tolerance=0.05)
    data = json.loads(json.dumps(plan_document.request_to_dict(request)))
    assert data["balance"] == "bytes" and data["byte_tolerance"] == 0.05
    assert plan_document.request_from_dict(data) == request
    assert plan_document.request_from_dict({"mode": "rebalance"}).balance is Balance.REPLICAS
    cluster = synthetic_cluster(9, 3, 300, seed=5, layout="kafka")
    result = plan(cluster, request)
    assert result.report.bytes_lower_bound is not None
    doc = json.loads(
        plan_document.dump(plan_document.plan_document(result, request=request, input_sha256="0" * 64))
    )
    restored = plan_document.read_plan_document(doc, cluster)
    assert restored.report == result.report
    assert plan_document.plan_differences(result, restored) == []
