"""The defaults of a PartitionReassignment that leaves ``approval``/``throttle`` out: Manual for the
computed modes, Auto for Explicit, the operator's default throttle, recorded in ``status.defaults``
once, and the old behaviour kept for resources an older operator had already handled."""

from __future__ import annotations

from typing import Any, cast

from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain.reassignment.defaults import defaults_for, with_defaults
from kafka_zk_operator.domain.reassignment.resource import approved, parse_resource, queue_rank
from kafka_zk_operator.service import reassignment as reassignments
from tests.unit.test_reassignment_service import MOVES, NOW, FakeApi, FakeZk, body

LEGACY_STATUS = {"phase": "ProposalReady", "observedGeneration": 1}


def test_a_new_resource_gets_manual_approval_for_computed_modes_only() -> None:
    fresh = defaults_for({})
    assert fresh == {"computedApproval": "Manual"}
    for mode in ("AddBrokers", "RemoveBrokers", "Rebalance", "ReplicationFactor", "DemoteBrokers"):
        assert with_defaults({"mode": mode}, fresh)["approval"] == "Manual", mode
    assert with_defaults({"mode": "Explicit"}, fresh)["approval"] == "Auto"


def test_an_explicit_field_always_wins() -> None:
    fresh = defaults_for({}, default_throttle=5_000_000)
    spec = with_defaults({"mode": "Rebalance", "approval": "Auto", "throttle": 7}, fresh)
    assert (spec["approval"], spec["throttle"]) == ("Auto", 7)


def test_the_default_throttle_fills_an_absent_throttle() -> None:
    fresh = defaults_for({}, default_throttle=5_000_000)
    assert fresh == {"computedApproval": "Manual", "throttle": 5_000_000}
    assert with_defaults({"mode": "Explicit"}, fresh)["throttle"] == 5_000_000
    assert "throttle" not in with_defaults({"mode": "Explicit"}, defaults_for({}))


def test_a_resource_an_older_operator_handled_keeps_auto_and_no_throttle() -> None:
    legacy = defaults_for(LEGACY_STATUS, default_throttle=5_000_000)
    assert legacy == {"computedApproval": "Auto"}
    spec = with_defaults({"mode": "Rebalance"}, legacy)
    assert spec["approval"] == "Auto" and "throttle" not in spec


def test_recorded_defaults_are_kept_whatever_the_operator_setting_is_now() -> None:
    status = {**LEGACY_STATUS, "defaults": {"computedApproval": "Manual", "throttle": 9}}
    assert defaults_for(status, default_throttle=1) == {"computedApproval": "Manual", "throttle": 9}


def test_the_queue_and_the_approval_check_see_the_default() -> None:
    resource = parse_resource({**body(mode="Rebalance"), "status": {}})
    assert not approved(resource, "p1") and queue_rank(resource) is None
    legacy = parse_resource({**body(mode="Rebalance"), "status": LEGACY_STATUS})
    assert approved(legacy, "p1")


def _step(api: FakeApi, zk: FakeZk, default_throttle: int | None = None) -> reassignments.Result:
    return reassignments.reconcile(
        ("ns", "r"), cast(Any, api), lambda: cast(ZkStore, zk), cluster="c", queue=(),
        cluster_of=lambda b: "c", settings=reassignments.Settings(default_throttle=default_throttle), now=NOW,
    )  # fmt: skip


def _zk(journal: list[str]) -> FakeZk:
    fake = FakeZk(journal)
    fake.topics["t"] = {0: (1, 2), 1: (1, 2), 2: (2, 1)}
    return fake


def test_a_new_rebalance_waits_for_approval_and_records_the_default() -> None:
    journal: list[str] = []
    zk = _zk(journal)
    api = FakeApi(body(mode="DemoteBrokers", brokers=[1]), journal)
    _step(api, zk)
    status = api.body["status"]
    assert status["phase"] == "ProposalReady" and zk.writes == 0
    assert status["conditions"][0]["reason"] == "AwaitingApproval"
    assert status["defaults"] == {"computedApproval": "Manual"}
    api.body["metadata"]["annotations"] = {"kafka.zk-operator.io/approve": "true"}
    _step(api, zk)
    assert api.body["status"]["phase"] == "Running"


def test_the_default_throttle_is_applied_to_a_new_explicit_move() -> None:
    journal: list[str] = []
    zk = _zk(journal)
    api = FakeApi(body(partitions=MOVES[:1]), journal)
    _step(api, zk, default_throttle=4242)
    assert api.body["status"]["phase"] == "Running"
    assert api.body["status"]["defaults"] == {"computedApproval": "Manual", "throttle": 4242}
    assert zk.configs[("brokers", "3")]["leader.replication.throttled.rate"] == "4242"
    assert "throttle" not in api.body["spec"], "the spec is the user's: only the status records it"
