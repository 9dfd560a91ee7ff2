"""Exactness on small instances: plan moves vs an independent networkx min-cost flow (reference §5.4).

The networkx network (``placement_support.exact_moves_networkx``) has real lower bounds and lets
any broker of a balance class take the ``+1`` units, so it is the true minimum number of moves for
the balance the plan reaches.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement import PlanRequest, broker_stage, plan
from kafka_zk_operator.domain.placement.arrays import ClusterArrays
from kafka_zk_operator.domain.placement.exact import exact_placement
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster
from tests.unit.placement_support import check_invariants, exact_moves_networkx


def _instance(seed: int) -> tuple[ClusterArrays, PlanRequest]:
    """A small random cluster and request (mixed racks, RF, layouts and modes)."""
    rnd = random.Random(seed)
    racks = rnd.choice([0, 2, 3, 3, 4])
    n = rnd.randint(max(3, racks), 10)
    rf = rnd.randint(1, min(3, n))
    cluster = synthetic_cluster(
        n, racks, rnd.randint(20, 90), rf=rf, seed=seed, layout=rnd.choice(["balanced", "kafka"])
    )
    mode = rnd.choice(["add", "add-one-rack", "remove", "rebalance", "rf"])
    if mode.startswith("add"):
        count = rnd.randint(1, 3)
        new = (
            [Broker(100 + i, "rack-a") for i in range(count)]
            if mode == "add-one-rack" and racks
            else make_brokers(count, racks, first_id=100)
        )
        return cluster.with_brokers(new), PlanRequest(
            Mode.ADD_BROKERS, brokers=tuple(b.id for b in new), seed=seed
        )
    if mode == "remove":
        gone = tuple(rnd.sample(range(n), rnd.randint(1, max(1, n - rf - 1))))
        return cluster, PlanRequest(Mode.REMOVE_BROKERS, brokers=gone, seed=seed)
    if mode == "rf":
        return cluster, PlanRequest(
            Mode.REPLICATION_FACTOR, replication_factor=rnd.randint(1, min(n - 1, 4)), topics="topic-0.*"
        )
    return cluster, PlanRequest(Mode.REBALANCE, seed=seed)


@pytest.mark.parametrize("seed", range(40))
def test_plan_is_optimal_against_networkx(seed: int) -> None:
    cluster, request = _instance(seed)
    result = plan(cluster, request)
    check_invariants(result)
    exact = exact_moves_networkx(result)
    assert exact is not None
    assert result.report.moves == exact
    assert result.report.optimal
    assert exact >= result.report.m_lb


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("rf", [2, 3])
def test_heuristic_alone_is_exact_on_rack_balanced_expansions(seed: int, rf: int) -> None:
    """No exact polish: equal racks, brokers added evenly or one removed (the common cases)."""
    cluster = synthetic_cluster(9, 3, 150, rf=rf, seed=seed, layout="kafka")
    grown = cluster.with_brokers(make_brokers(3, 3, first_id=100))
    for c, request in (
        (grown, PlanRequest(Mode.ADD_BROKERS, brokers=(100, 101, 102), exact_limit=0)),
        (cluster, PlanRequest(Mode.REMOVE_BROKERS, brokers=(seed % 9,), exact_limit=0)),
    ):
        result = plan(c, request)
        check_invariants(result)
        assert result.report.moves == exact_moves_networkx(result) == result.report.m_lb


@pytest.mark.parametrize("seed", range(8))
def test_all_brokers_into_one_rack_rf_below_racks(seed: int) -> None:
    """Reference §5.1: P=150, RF=2, 3 racks, brokers all added to one rack; M_LB is not always
    reachable (the grown rack must take partitions it lacks); the plan matches the exact optimum."""
    cluster = synthetic_cluster(9, 3, 150, rf=2, seed=seed, layout="kafka")
    grown = cluster.with_brokers([Broker(100 + i, "rack-a") for i in range(3)])
    result = plan(grown, PlanRequest(Mode.ADD_BROKERS, brokers=(100, 101, 102)))
    check_invariants(result)
    exact = exact_moves_networkx(result)
    assert result.report.moves == exact
    assert exact is not None and exact <= 1.1 * result.report.m_lb


@pytest.mark.parametrize("seed", range(10))
def test_internal_exact_solver_agrees_with_networkx(seed: int) -> None:
    cluster, request = _instance(100 + seed)
    result = plan(cluster, request)
    stage = broker_stage(cluster, request)
    rows = np.flatnonzero(stage.movable)
    eligible = np.r_[stage.eligible, False, False]
    solved = exact_placement(
        np.where(eligible[cluster.replicas[rows]], cluster.replicas[rows], -1),
        stage.rf_new[rows],
        ctx=stage.ctx,
        targets=stage.targets,
        fixed_load=stage.fixed_load,
    )
    assert solved is not None
    assert solved.moves == exact_moves_networkx(result)
