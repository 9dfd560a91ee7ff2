"""Property tests of the placement engine with fixed seeds: constraints, balance, bound, determinism.

Every plan is checked by ``placement_support.check_invariants`` (no duplicate replicas, rack
diversity of every selected partition, removed brokers empty, unselected partitions untouched,
balance within the band, moves >= M_LB).
"""

from __future__ import annotations

import numpy as np
import pytest

from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement import PlanRequest, broker_stage, finish_plan, plan
from kafka_zk_operator.domain.placement.arrays import ClusterArrays
from kafka_zk_operator.domain.placement.select import Selection, select_moves
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster
from kafka_zk_operator.domain.placement.transport import GroupQuotas
from tests.unit.placement_support import check_invariants

SEEDS = [1, 2, 3, 4, 5]


def balanced(n: int = 12, racks: int = 3, partitions: int = 900, seed: int = 0, rf: int = 3) -> ClusterArrays:
    return synthetic_cluster(n, racks, partitions, rf=rf, seed=seed, layout="balanced")


@pytest.mark.parametrize("seed", SEEDS)
def test_balanced_add_brokers_meets_the_bound_exactly(seed: int) -> None:
    cluster = balanced(seed=seed).with_brokers(make_brokers(3, 3, first_id=100))
    # exact_limit=0: the heuristic alone must reach M_LB.
    result = plan(cluster, PlanRequest(Mode.ADD_BROKERS, brokers=(100, 101, 102), seed=seed, exact_limit=0))
    check_invariants(result)
    report = result.report
    assert report.moves == report.m_lb == 900 * 3 * 3 // 15
    assert report.optimal and report.optimality == "moves = M_LB"
    assert report.balanced and report.leaders_balanced
    # Only old -> new moves: the new brokers end at target, old brokers only lose replicas.
    for line in report.brokers:
        if line.role == "added":
            assert line.replicas_after == line.replica_target
        else:
            assert line.replicas_after <= line.replicas_before


@pytest.mark.parametrize("seed", SEEDS)
def test_balanced_remove_broker_meets_the_bound_exactly(seed: int) -> None:
    cluster = balanced(seed=seed)
    result = plan(cluster, PlanRequest(Mode.REMOVE_BROKERS, brokers=(5,), seed=seed, exact_limit=0))
    check_invariants(result)
    report = result.report
    assert report.moves == report.m_lb
    assert [b.replicas_after for b in report.brokers if b.broker_id == 5] == [0]
    # RF = racks: the removed broker's rack keeps every partition, so its brokers hold more.
    assert [s.rack for s in report.skewed_racks] != []
    assert report.leaders_balanced
    assert report.leader_lb <= report.leader_changes <= 1.1 * report.leader_lb + 1


@pytest.mark.parametrize("seed", SEEDS)
def test_adding_all_brokers_to_one_rack_stays_rack_diverse(seed: int) -> None:
    cluster = balanced(seed=seed).with_brokers([Broker(100 + i, "rack-a") for i in range(3)])
    result = plan(cluster, PlanRequest(Mode.ADD_BROKERS, brokers=(100, 101, 102), seed=seed, exact_limit=0))
    check_invariants(result)
    report = result.report
    assert report.moves == report.m_lb  # RF = racks: in-rack moves only
    assert {s.rack for s in report.skewed_racks} >= {"rack-a"}


@pytest.mark.parametrize("seed", SEEDS)
def test_adding_to_one_rack_with_rf_below_racks_needs_cross_rack_moves(seed: int) -> None:
    cluster = balanced(seed=seed, rf=2).with_brokers([Broker(100 + i, "rack-a") for i in range(2)])
    result = plan(cluster, PlanRequest(Mode.ADD_BROKERS, brokers=(100, 101), seed=seed))
    check_invariants(result)
    report = result.report
    assert report.optimal
    assert report.moves <= 1.02 * report.m_lb


@pytest.mark.parametrize("seed", SEEDS)
def test_skew_repair_from_per_topic_kafka_placement(seed: int) -> None:
    cluster = synthetic_cluster(12, 3, 1200, seed=seed, layout="kafka")
    result = plan(cluster, PlanRequest(Mode.REBALANCE, seed=seed, exact_limit=0))
    check_invariants(result)
    report = result.report
    assert report.moves <= 1.02 * report.m_lb
    lo, hi, _ = report.spread()
    assert hi - lo <= 1
    lo_l, hi_l, _ = report.spread(leaders=True)
    assert hi_l - lo_l <= 1


@pytest.mark.parametrize("seed", SEEDS)
def test_rack_unaware_cluster(seed: int) -> None:
    cluster = synthetic_cluster(9, 0, 700, seed=seed, layout="kafka")
    result = plan(cluster, PlanRequest(Mode.REMOVE_BROKERS, brokers=(0, 1), seed=seed))
    check_invariants(result)
    assert result.report.optimal


@pytest.mark.parametrize(("old_rf", "new_rf"), [(2, 3), (3, 2), (3, 1), (1, 3), (2, 4)])
def test_replication_factor_change(old_rf: int, new_rf: int) -> None:
    cluster = synthetic_cluster(12, 3, 600, rf=old_rf, seed=7, layout="kafka")
    result = plan(
        cluster, PlanRequest(Mode.REPLICATION_FACTOR, replication_factor=new_rf, topics="topic-0.*")
    )
    check_invariants(result)
    report = result.report
    selected = result.movable
    rf_after = (result.replicas[selected] >= 0).sum(axis=1)
    assert set(rf_after.tolist()) == {new_rf}
    assert (result.replicas[~selected] >= 0).sum(axis=1).tolist() == [old_rf] * int((~selected).sum())
    if new_rf > old_rf:
        assert report.replicas_added == int(selected.sum()) * (new_rf - old_rf)
        assert report.moves >= report.replicas_added
    else:
        assert report.replicas_removed == int(selected.sum()) * (old_rf - new_rf)
    assert report.optimal


def test_excluded_topics_never_change_and_still_count_as_load() -> None:
    cluster = balanced(seed=3).with_brokers(make_brokers(3, 3, first_id=100))
    request = PlanRequest(Mode.ADD_BROKERS, brokers=(100, 101, 102), exclude_topics="topic-0[0-4].*")
    result = plan(cluster, request)
    check_invariants(result)
    assert result.movable.sum() < cluster.n_partitions
    assert result.report.balanced


def test_removed_broker_holding_an_excluded_topic_is_a_user_error() -> None:
    from kafka_zk_operator.domain import errors

    with pytest.raises(errors.InvalidSpec, match="is being removed"):
        plan(balanced(), PlanRequest(Mode.REMOVE_BROKERS, brokers=(0,), exclude_topics="topic-.*"))


def test_tolerance_trades_balance_for_fewer_moves() -> None:
    cluster = synthetic_cluster(12, 3, 1200, seed=11, layout="kafka")
    strict = plan(cluster, PlanRequest(Mode.REBALANCE))
    loose = plan(cluster, PlanRequest(Mode.REBALANCE, tolerance=3))
    check_invariants(loose)
    assert loose.report.moves < strict.report.moves
    lo, hi, _ = loose.report.spread()
    assert hi - lo <= 1 + 2 * 3


@pytest.mark.parametrize("seed", [0, 1])
def test_identical_input_gives_identical_plans(seed: int) -> None:
    cluster = synthetic_cluster(15, 3, 2000, seed=seed, layout="kafka").with_brokers(
        make_brokers(3, 3, first_id=50)
    )
    request = PlanRequest(Mode.ADD_BROKERS, brokers=(50, 51, 52), seed=seed)
    first, second = plan(cluster, request), plan(cluster, request)
    assert np.array_equal(first.replicas, second.replicas)
    assert first.reassignment() == second.reassignment()
    assert first.report == second.report


def test_the_seed_changes_tie_breaks_not_the_quality() -> None:
    cluster = balanced(seed=1).with_brokers(make_brokers(3, 3, first_id=100))
    a = plan(cluster, PlanRequest(Mode.ADD_BROKERS, brokers=(100, 101, 102), seed=1))
    b = plan(cluster, PlanRequest(Mode.ADD_BROKERS, brokers=(100, 101, 102), seed=2))
    assert not np.array_equal(a.replicas, b.replicas)
    assert a.report.moves == b.report.moves == a.report.m_lb


@pytest.mark.parametrize("layout", ["balanced", "kafka"])
def test_groups_run_separately_give_the_same_plan(layout: str) -> None:
    """The contract with a distributed engine: stage 2 per group == stage 2 on everything."""
    cluster = synthetic_cluster(12, 3, 3000, seed=5, layout=layout).with_brokers(
        make_brokers(3, 3, first_id=90)
    )
    request = PlanRequest(Mode.ADD_BROKERS, brokers=(90, 91, 92), n_groups=7)
    stage = broker_stage(cluster, request)
    together = stage.select()
    replicas = stage.replicas.copy()
    moved = np.zeros(replicas.shape, dtype=bool)
    leftovers: list[GroupQuotas] = []
    for g in range(stage.quotas.n_groups):
        rows = np.flatnonzero(stage.group == g)  # (topic, partition) order
        part = select_moves(
            stage.replicas[rows],
            group=stage.group[rows],
            movable=stage.movable[rows],
            sizes=cluster.sizes[rows],
            row_hash=stage.row_hash[rows],
            quotas=stage.quotas.of_group(g),
            ctx=stage.ctx,
        )
        replicas[rows] = part.replicas
        moved[rows] = part.moved
        leftovers.append(part.leftover)
    assert np.array_equal(replicas, together.replicas)
    assert np.array_equal(moved, together.moved)
    group, src, dst, count = (
        np.concatenate([getattr(q, f) for q in leftovers]) for f in ("group", "src", "dst", "count")
    )
    left = GroupQuotas(group, src, dst, count, n_groups=stage.quotas.n_groups)
    separate = finish_plan(stage, Selection(replicas, moved, left))
    assert np.array_equal(separate.replicas, plan(cluster, request).replicas)


def test_reassignment_lists_only_changed_partitions_with_broker_ids() -> None:
    cluster = balanced(n=6, partitions=60, seed=2).with_brokers(make_brokers(3, 3, first_id=100))
    result = plan(cluster, PlanRequest(Mode.ADD_BROKERS, brokers=(100, 101, 102)))
    doc = result.reassignment()
    assert doc["version"] == 1
    entries = doc["partitions"]
    assert isinstance(entries, list)
    assert len(entries) == len(result.changed_rows()) > 0
    before = {
        (cluster.topics[t], int(p)): r
        for t, p, r in zip(cluster.topic_of, cluster.partition_of, cluster.replicas, strict=True)
    }
    for entry in entries:
        old = [int(cluster.broker_ids[b]) for b in before[(entry["topic"], entry["partition"])] if b >= 0]
        assert entry["replicas"] != old
        assert set(entry["replicas"]) <= set(cluster.broker_ids.tolist())


@pytest.mark.parametrize("seed", [74, 118, 255, 936376])
@pytest.mark.parametrize(("n", "old_rf", "new_rf"), [(6, 1, 4), (11, 1, 4), (7, 1, 3), (9, 2, 5)])
def test_unplaced_replicas_cover_every_missing_rack_without_the_exact_check(
    seed: int, n: int, old_rf: int, new_rf: int
) -> None:
    """Regression: a new replica must not take a rack the partition already has while another
    rack is still missing and no unplaced replica would be left to cover it."""
    cluster = synthetic_cluster(n, 3, 60, rf=old_rf, seed=seed, layout="kafka")
    request = PlanRequest(Mode.REPLICATION_FACTOR, replication_factor=new_rf, exact_limit=0)
    check_invariants(plan(cluster, request))
