"""runtime.pending_status, and the KafkaTopic handler's use of it: a reconcile that runs before the
watch brought back the previous reconcile's status patch works from the status as patched.

Found by ``benchmarks/topics_bench.py --topics 10000``: 11,504 ``Adopted`` reconciles for 10,000
topics the operator had created itself, each one a status write (and another to ``InSync``).
"""

from __future__ import annotations

from typing import Any

import kopf
import pytest

from kafka_zk_operator.handlers import kafkatopic
from kafka_zk_operator.runtime.pending_status import PendingStatus
from kafka_zk_operator.service import topics
from tests.unit.clock_support import ManualClock

CREATED = {
    "appliedConfig": [],
    "observedGeneration": 1,
    "conditions": [{"type": "Ready", "reason": "Created"}],
}


def test_a_status_without_the_pending_patch_is_seen_with_it() -> None:
    pending = PendingStatus()
    pending.record("u1", CREATED)
    current = pending.current("u1", {"partitions": 1})
    assert current == {"partitions": 1, **CREATED}
    assert topics.ever_reconciled(current), "the create's appliedConfig is on its way"
    assert pending.current("u2", {"partitions": 1}) == {"partitions": 1}, "per uid"
    assert len(pending) == 1


def test_the_record_is_dropped_once_the_status_holds_the_patch() -> None:
    pending = PendingStatus()
    pending.record("u1", {**CREATED, "deletionRequestedAt": None})
    landed = {**CREATED, "partitions": 1}
    assert pending.current("u1", landed) == landed
    assert len(pending) == 0
    later = {"observedGeneration": 2}  # a later status (say, after the user's update) is the truth now
    assert pending.current("u1", later) == later


def test_a_field_removal_is_pending_until_the_field_is_gone() -> None:
    pending = PendingStatus()
    pending.record("u1", {"drift": None})
    assert pending.current("u1", {"drift": {"x": "1"}, "a": 1}) == {"a": 1}
    assert len(pending) == 1
    assert pending.current("u1", {"a": 1}) == {"a": 1} and len(pending) == 0


def test_fields_another_writer_sets_are_neither_kept_nor_judged() -> None:
    """The health reporter writes live partition fields and lastSyncTime too: a newer value from it
    must not make the patch look unlanded, and an older copy must not be written back."""
    pending = PendingStatus(shared=frozenset({"partitionStates", "lastSyncTime"}))
    pending.record("u1", {**CREATED, "partitionStates": [{"leader": 1}], "lastSyncTime": "t1"})
    refreshed = {**CREATED, "partitionStates": [{"leader": 2}], "lastSyncTime": "t2"}
    assert pending.current("u1", refreshed) == refreshed and len(pending) == 0, "landed"
    pending.record("u1", {"partitionStates": [{"leader": 3}], "lastSyncTime": "t3"})
    assert len(pending) == 0, "nothing of its own to wait for"


def test_a_second_patch_before_the_first_landed_keeps_both() -> None:
    pending = PendingStatus()
    pending.record("u1", {"appliedConfig": [], "drift": {"a": "1"}})
    pending.record("u1", {"conditions": [{"reason": "InSync"}], "drift": {"b": "2", "a": None}})
    assert pending.current("u1", {}) == {
        "appliedConfig": [],
        "conditions": [{"reason": "InSync"}],
        "drift": {"b": "2"},
    }


def test_a_patch_never_seen_stops_standing_in_after_the_ttl() -> None:
    clock = ManualClock()
    pending = PendingStatus(ttl_s=600, clock=clock)
    pending.record("u1", CREATED)
    clock.now += 599
    assert topics.ever_reconciled(pending.current("u1", {}))
    clock.now += 1
    assert pending.current("u1", {}) == {} and len(pending) == 0


def test_an_empty_patch_is_not_recorded_and_forget_drops_a_record() -> None:
    pending = PendingStatus()
    pending.record("u1", {})
    assert len(pending) == 0
    pending.record("u1", CREATED)
    pending.forget("u1")
    pending.forget("u1")
    assert pending.current("u1", {}) == {}


# -- the handler ---------------------------------------------------------------------------------


NO_INDEX: Any = {}


def _body(uid: str) -> kopf.Body:
    return kopf.Body({"metadata": {"uid": uid, "name": "t", "namespace": "ns"}, "spec": {}, "status": {}})


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The statuses ``_reconcile_now`` is given; the first call patches ``CREATED``."""
    calls: list[dict[str, Any]] = []

    def fake_reconcile_now(
        body: Any, patch: kopf.Patch, memo: Any, index: Any, status: Any, uid: str
    ) -> kafkatopic._Reconciled:
        calls.append(dict(status))
        if len(calls) == 1:
            kafkatopic._patch_status(patch, uid, CREATED)
        return None

    monkeypatch.setattr(kafkatopic, "_reconcile_now", fake_reconcile_now)
    return calls


def test_a_reconcile_on_a_stale_status_sees_the_previous_reconciles_patch(seen: list[dict[str, Any]]) -> None:
    uid = "pending-1"
    body = _body(uid)
    try:
        kafkatopic._reconcile(body, kopf.Patch(), None, NO_INDEX, {})  # the create
        kafkatopic._reconcile(body, kopf.Patch(), None, NO_INDEX, {})  # the watch has not brought it back
    finally:
        kafkatopic._pending.forget(uid)
        kafkatopic._resyncs.forget(uid)
    assert seen[0] == {}
    assert seen[1] == CREATED, "not taken for a topic someone else created (Adopted)"


def test_a_resync_that_waited_for_another_reconcile_does_nothing(seen: list[dict[str, Any]]) -> None:
    """The timer passed its gate, then waited for the lock while the create reconciled: its status
    predates the create's patch, and the create has just read everything it would read."""
    uid = "pending-2"
    body = _body(uid)
    try:
        kafkatopic._reconcile(body, kopf.Patch(), None, NO_INDEX, {})
        assert kafkatopic._reconcile(body, kopf.Patch(), None, NO_INDEX, {}, resync=True) is None
    finally:
        kafkatopic._pending.forget(uid)
        kafkatopic._resyncs.forget(uid)
    assert len(seen) == 1


def test_each_patched_status_field_is_counted() -> None:
    from prometheus_client import REGISTRY

    def count(field: str) -> float:
        labels = {"kind": "kafkatopic", "field": field}
        return REGISTRY.get_sample_value("kzo_status_fields_patched_total", labels) or 0.0

    before = count("partitionStates"), count("lastSyncTime")
    kafkatopic._patch_status(kopf.Patch(), "counted-1", {"partitionStates": [], "lastSyncTime": "t"})
    kafkatopic._pending.forget("counted-1")
    assert (count("partitionStates"), count("lastSyncTime")) == (before[0] + 1, before[1] + 1)
