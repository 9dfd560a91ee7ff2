"""``PlanRequest.data_movement``: which replicas a plan prefers to move, with the same move count.

``minimal`` (the default) moves small partitions first; ``proportional`` ranks movers without
their size, so brokers that receive replicas get typical partitions and data follows counts.
"""

from __future__ import annotations

import numpy as np
import pytest

from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement import ClusterArrays, DataMovement, Plan, PlanRequest, plan
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster

ADDED = (90, 91, 92)


def _cluster() -> ClusterArrays:
    """12 brokers in 3 racks, 3,000 RF-3 partitions with lognormal sizes, 3 empty brokers added."""
    return synthetic_cluster(12, 3, 3000, seed=4).with_brokers(make_brokers(3, 3, first_id=90))


def _bytes_per_broker(result: Plan) -> np.ndarray:
    cluster, after = result.cluster, result.replicas
    per_broker = np.zeros(cluster.n_brokers)
    for j in range(after.shape[1]):
        column = after[:, j]
        held = column >= 0
        np.add.at(per_broker, column[held], cluster.sizes[held])
    return per_broker


def _added_share(result: Plan) -> list[float]:
    """Bytes on each added broker over the average bytes per broker."""
    per_broker = _bytes_per_broker(result)
    ids = [int(b) for b in result.cluster.broker_ids]
    return [float(per_broker[ids.index(b)] / per_broker.mean()) for b in ADDED]


def _plan(movement: DataMovement) -> Plan:
    return plan(_cluster(), PlanRequest(Mode.ADD_BROKERS, brokers=ADDED, data_movement=movement))


def test_minimal_is_the_default() -> None:
    assert PlanRequest(Mode.REBALANCE).data_movement is DataMovement.MINIMAL


@pytest.mark.parametrize("movement", list(DataMovement))
def test_both_meet_the_bound_with_rack_diversity_and_are_deterministic(movement: DataMovement) -> None:
    first, second = _plan(movement), _plan(movement)
    assert first.report.moves == first.report.m_lb and first.report.optimal
    assert first.report.rack_violations_after == 0 and first.report.balanced
    assert np.array_equal(first.replicas, second.replicas)


def test_minimal_copies_little_data_and_leaves_added_brokers_light() -> None:
    minimal, proportional = _plan(DataMovement.MINIMAL), _plan(DataMovement.PROPORTIONAL)
    assert minimal.report.moves == proportional.report.moves
    assert minimal.report.bytes_moved * 5 < proportional.report.bytes_moved
    assert max(_added_share(minimal)) < 0.3, _added_share(minimal)


def test_proportional_gives_added_brokers_about_the_average_data() -> None:
    shares = _added_share(_plan(DataMovement.PROPORTIONAL))
    assert all(0.75 <= share <= 1.25 for share in shares), shares


def test_the_plans_differ_only_in_which_replicas_move() -> None:
    minimal, proportional = _plan(DataMovement.MINIMAL), _plan(DataMovement.PROPORTIONAL)
    assert not np.array_equal(minimal.replicas, proportional.replicas)
    counts = [{b.broker_id: b.replicas_after for b in r.report.brokers} for r in (minimal, proportional)]
    assert counts[0] == counts[1], "same replica count on every broker"
