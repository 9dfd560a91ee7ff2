"""DemoteBrokers: leadership off the given brokers with no data moved (``domain.reassignment.request``)."""

from __future__ import annotations

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.reassignment.plan import ClusterView
from kafka_zk_operator.domain.reassignment.request import (
    ReassignmentRequest,
    parse_request,
    plan_request,
)

VIEW = ClusterView(
    brokers={1: "rack-a", 2: "rack-b", 3: "rack-c"},
    assignments={
        "orders": {0: (2, 1, 3), 1: (1, 2, 3), 2: (2, 3, 1), 3: (3, 2, 1)},
        "solo": {0: (2,), 1: (1,)},
        "leaving": {0: (2, 1)},
    },
    deleting=frozenset({"leaving"}),
)


def test_a_demoted_preferred_leader_goes_last_and_the_replica_set_stays() -> None:
    plan = plan_request(ReassignmentRequest(mode=Mode.DEMOTE_BROKERS, brokers=(2,)), VIEW)
    assert plan.targets() == {("orders", 0): (1, 3, 2), ("orders", 2): (3, 1, 2)}
    assert all(set(m.source) == set(m.target) for m in plan.moves)
    assert plan.replica_moves == 0 and plan.lower_bound == 0 and plan.provably_optimal
    assert plan.notes == ("1 partitions have replicas on demoted brokers only and keep their leader: solo-0",)


def test_several_demoted_brokers_keep_their_relative_order_at_the_end() -> None:
    plan = plan_request(ReassignmentRequest(mode=Mode.DEMOTE_BROKERS, brokers=(2, 3)), VIEW)
    assert plan.targets() == {("orders", 0): (1, 2, 3), ("orders", 2): (1, 2, 3), ("orders", 3): (1, 3, 2)}


def test_partitions_not_led_by_a_demoted_broker_and_topics_being_deleted_are_left_alone() -> None:
    plan = plan_request(ReassignmentRequest(mode=Mode.DEMOTE_BROKERS, brokers=(3,)), VIEW)
    assert plan.targets() == {("orders", 3): (2, 1, 3)}


def test_demote_needs_registered_brokers() -> None:
    with pytest.raises(errors.InvalidSpec, match=r"spec\.brokers: broker 7 is not registered"):
        plan_request(ReassignmentRequest(mode=Mode.DEMOTE_BROKERS, brokers=(7,)), VIEW)
    with pytest.raises(errors.InvalidSpec, match=r"DemoteBrokers mode needs spec\.brokers"):
        parse_request({"mode": "DemoteBrokers"})
    assert parse_request({"mode": "DemoteBrokers", "brokers": [2]}).brokers == (2,)
