"""runtime.resource_index: what each resource contributes replaces what it contributed before,
leaves with it, and entries only the start-up listing vouches for are told apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_zk_operator.runtime.resource_index import ResourceIndex


def _topic(uid: str, topic: str, *, namespace: str = "team-a", claims: bool = True) -> dict[str, Any]:
    return {
        "metadata": {"uid": uid, "namespace": namespace, "name": f"res-{uid}"},
        "spec": {"topic": topic, "claims": claims},
    }


def _by_topic(body: Mapping[str, Any], memo: Any) -> dict[Any, Any]:
    spec = body["spec"]
    return {spec["topic"]: body["metadata"]["uid"]} if spec["claims"] else {}


def test_a_resource_s_new_entries_replace_its_old_ones() -> None:
    index = ResourceIndex("t", _by_topic)
    index.update(_topic("u1", "orders"), None)
    index.update(_topic("u2", "orders"), None)
    assert sorted(index.get("orders")) == ["u1", "u2"]
    index.update(_topic("u1", "payments"), None)  # it now names another topic
    assert index.get("orders") == ["u2"] and index.get("payments") == ["u1"]
    assert sorted(index.keys()) == ["orders", "payments"] and len(index) == 2
    index.update(_topic("u2", "orders", claims=False), None)  # contributes nothing any more
    assert index.get("orders") == [] and index.first("orders") is None
    assert index.keys() == ["payments"]


def test_a_removed_resource_leaves_nothing_and_removing_twice_is_harmless() -> None:
    index = ResourceIndex("t", _by_topic)
    index.update(_topic("u1", "orders"), None)
    index.remove("u1")
    index.remove("u1")
    index.remove("never-there")
    assert index.get("orders") == [] and index.keys() == [] and len(index) == 0


def test_listed_entries_are_unconfirmed_until_an_event_or_a_check_confirms_them() -> None:
    index = ResourceIndex("t", _by_topic)
    index.update(_topic("u1", "orders"), None, listed=True)
    index.update(_topic("u2", "payments", namespace="team-b"), None, listed=True)
    index.update(_topic("u3", "audit", claims=False), None, listed=True)  # nothing indexed: no check
    assert index.unconfirmed() == {"u1": ("team-a", "res-u1"), "u2": ("team-b", "res-u2")}
    index.update(_topic("u1", "orders"), None)  # kopf delivered it
    index.confirm("u2")  # the API server still has it
    assert index.unconfirmed() == {}
    index.update(_topic("u4", "logs"), None, listed=True)
    index.remove("u4")
    assert index.unconfirmed() == {} and index.get("logs") == []


def _versioned(uid: str, topic: str, version: str) -> dict[str, Any]:
    body = _topic(uid, topic)
    body["metadata"]["resourceVersion"] = version
    return body


def test_the_state_already_indexed_is_not_computed_again_but_an_event_still_confirms_it() -> None:
    computed: list[str] = []

    def counting(body: Mapping[str, Any], memo: Any) -> dict[Any, Any]:
        computed.append(body["metadata"].get("resourceVersion", "-"))
        return _by_topic(body, memo)

    index = ResourceIndex("t", counting)
    index.update(_versioned("u1", "orders", "7"), None, listed=True)
    index.update(_versioned("u1", "orders", "7"), None)  # kopf's listing: the same state
    assert computed == ["7"] and index.unconfirmed() == {} and index.get("orders") == ["u1"]
    index.update(_versioned("u1", "payments", "8"), None)  # a new state is indexed
    assert computed == ["7", "8"] and index.get("orders") == [] and index.get("payments") == ["u1"]
    index.remove("u1")
    index.update(_versioned("u1", "orders", "8"), None)  # removed, then seen again: indexed anew
    assert computed == ["7", "8", "8"] and index.get("orders") == ["u1"]
    index.update(_topic("u2", "audit"), None)  # no resourceVersion (a test body): always indexed
    index.update(_topic("u2", "audit"), None)
    assert computed == ["7", "8", "8", "-", "-"] and index.get("audit") == ["u2"]
