"""``PlanRequest.balance = bytes``: bytes per broker within the band, few bytes copied, the count
planner's constraints kept, the lower bound a real bound; ``balance = replicas`` unchanged.

Every figure is recomputed here from the replica matrices (``_bytes``), not read from the plan's
own report, except where the report itself is what is checked.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement import Balance, ClusterArrays, Plan, PlanRequest, build_arrays, plan
from kafka_zk_operator.domain.placement.byte_balance import bytes_lower_bound
from kafka_zk_operator.domain.placement.racks import duplicates, violations
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster

TOLERANCE = 0.02


def _bytes(cluster: ClusterArrays, replicas: np.ndarray) -> np.ndarray:
    out = np.zeros(cluster.n_brokers, dtype=np.int64)
    for j in range(replicas.shape[1]):
        held = replicas[:, j] >= 0
        np.add.at(out, replicas[held, j], cluster.sizes[held])
    return out


def _cases() -> dict[str, tuple[ClusterArrays, PlanRequest]]:
    added = make_brokers(3, 3, first_id=90)
    return {
        "add": (
            synthetic_cluster(12, 3, 3000, seed=4).with_brokers(added),
            PlanRequest(Mode.ADD_BROKERS, brokers=(90, 91, 92), balance=Balance.BYTES),
        ),
        "remove": (  # one broker of each rack: the racks stay equal
            synthetic_cluster(12, 3, 3000, seed=5, layout="kafka"),
            PlanRequest(Mode.REMOVE_BROKERS, brokers=(0, 1, 2), balance=Balance.BYTES),
        ),
        "rebalance": (
            synthetic_cluster(12, 3, 3000, seed=6, layout="kafka"),
            PlanRequest(Mode.REBALANCE, balance=Balance.BYTES),
        ),
        "rebalance-two-racks-rf3": (  # RF > racks: two replicas may share a rack, so replicas cross racks
            synthetic_cluster(8, 2, 2000, seed=7, layout="kafka"),
            PlanRequest(Mode.REBALANCE, balance=Balance.BYTES),
        ),
        "no-racks": (
            synthetic_cluster(8, 0, 2000, seed=8, layout="kafka"),
            PlanRequest(Mode.REBALANCE, balance=Balance.BYTES),
        ),
        "rf-up": (
            synthetic_cluster(12, 3, 2000, seed=9),
            PlanRequest(Mode.REPLICATION_FACTOR, replication_factor=4, balance=Balance.BYTES),
        ),
        "rf-down": (
            synthetic_cluster(12, 3, 2000, seed=10, layout="kafka"),
            PlanRequest(Mode.REPLICATION_FACTOR, replication_factor=2, balance=Balance.BYTES),
        ),
        "excluded-topics": (
            synthetic_cluster(12, 3, 3000, seed=11, layout="kafka"),
            PlanRequest(Mode.REBALANCE, exclude_topics="topic-0[0-4].*", balance=Balance.BYTES),
        ),
    }


CASES = _cases()


@pytest.fixture(scope="module", params=sorted(CASES))
def planned(request: pytest.FixtureRequest) -> tuple[str, ClusterArrays, PlanRequest, Plan]:
    cluster, req = CASES[request.param]
    return request.param, cluster, req, plan(cluster, req)


def test_constraints_hold(planned: tuple[str, ClusterArrays, PlanRequest, Plan]) -> None:
    _, cluster, req, result = planned
    after = result.replicas
    assert not duplicates(after).any()
    eligible = result.eligible
    racks = np.unique(cluster.broker_rack[eligible])
    remap = np.full(cluster.n_racks + 1, len(racks))
    remap[racks] = np.arange(len(racks))
    rack_ext = np.r_[remap[cluster.broker_rack], len(racks)]
    assert not violations(after, rack_ext, max(1, len(racks))).any()
    assert not np.isin(after, np.flatnonzero(~eligible)).any(), (
        "a broker that may not hold replicas holds one"
    )
    assert not (after == cluster.n_brokers).any(), "a replica was left unplaced"
    rf = (after >= 0).sum(axis=1)
    if req.replication_factor is not None:
        assert (rf == req.replication_factor).all()
    else:
        assert np.array_equal(rf, cluster.replication_factors())
    fixed = ~result.movable
    assert np.array_equal(after[fixed, : cluster.replicas.shape[1]], cluster.replicas[fixed])


def test_every_broker_ends_in_its_byte_band(planned: tuple[str, ClusterArrays, PlanRequest, Plan]) -> None:
    name, cluster, _, result = planned
    held = _bytes(cluster, result.replicas)[result.eligible]
    mean = held.sum() / len(held)
    if name == "excluded-topics":  # pinned replicas may keep a broker up; the mean is still the aim
        assert held.max() <= 1.10 * mean
    else:
        assert held.max() <= (1 + TOLERANCE) * mean * 1.0001, (held.max() / mean, result.report.notes)
        assert held.min() >= (1 - TOLERANCE) * mean * 0.9999, (held.min() / mean, result.report.notes)


def test_bytes_moved_are_close_to_the_lower_bound(
    planned: tuple[str, ClusterArrays, PlanRequest, Plan],
) -> None:
    name, cluster, _, result = planned
    report = result.report
    before, after = cluster.replicas, result.replicas
    copied = 0
    for row in range(cluster.n_partitions):
        old = set(before[row][before[row] >= 0].tolist())
        copied += int(cluster.sizes[row]) * len(set(after[row][after[row] >= 0].tolist()) - old)
    assert report.bytes_moved == copied
    assert report.bytes_lower_bound is not None
    assert report.balance == "bytes"
    if name == "rf-down":  # the bound lets the drops fall anywhere (0 here); the plan copies a little
        assert report.bytes_lower_bound <= copied <= 0.05 * _bytes(cluster, result.replicas).sum()
        return
    assert report.bytes_lower_bound <= copied <= 1.10 * report.bytes_lower_bound


def test_plans_are_deterministic() -> None:
    cluster, req = CASES["rebalance"]
    assert np.array_equal(plan(cluster, req).replicas, plan(cluster, req).replicas)


def test_replica_balance_is_the_default_and_unchanged() -> None:
    cluster, req = CASES["add"]
    default = plan(cluster, PlanRequest(Mode.ADD_BROKERS, brokers=req.brokers))
    explicit = plan(cluster, PlanRequest(Mode.ADD_BROKERS, brokers=req.brokers, balance=Balance.REPLICAS))
    assert PlanRequest(Mode.REBALANCE).balance is Balance.REPLICAS
    assert np.array_equal(default.replicas, explicit.replicas)
    assert default.report.moves == default.report.m_lb and default.report.balanced
    assert default.report.bytes_lower_bound is None and default.report.balance == "replicas"


def test_byte_balance_evens_data_that_count_balance_leaves_uneven() -> None:
    cluster, req = CASES["add"]
    by_count = plan(cluster, PlanRequest(Mode.ADD_BROKERS, brokers=req.brokers))
    by_bytes = plan(cluster, req)
    spread = [
        _bytes(cluster, p.replicas).max() / _bytes(cluster, p.replicas).mean() for p in (by_count, by_bytes)
    ]
    assert spread[0] > 1.15 and spread[1] <= 1 + TOLERANCE + 1e-4, spread


def test_rack_limits_that_pin_a_rack_are_reported() -> None:
    """RF 3 on 3 racks: each rack holds one replica of every partition, so a rack with more brokers
    has fewer bytes per broker whatever the plan does."""
    base = synthetic_cluster(9, 3, 2000, seed=12)
    cluster = base.with_brokers([Broker(90, "rack-a"), Broker(91, "rack-a")])
    result = plan(cluster, PlanRequest(Mode.ADD_BROKERS, brokers=(90, 91), balance=Balance.BYTES))
    assert any("cannot come down to the mean" in note for note in result.report.notes), result.report.notes
    held = _bytes(cluster, result.replicas)
    rack_of = cluster.broker_rack
    for rack in range(cluster.n_racks):  # inside each rack, the band holds
        in_rack = held[rack_of == rack]
        assert in_rack.max() <= (1 + 2 * TOLERANCE) * in_rack.mean()


def test_a_partition_larger_than_the_band_is_reported_not_forced() -> None:
    cluster = synthetic_cluster(6, 0, 200, seed=13, layout="kafka")
    sizes = cluster.sizes.copy()
    sizes[0] = int(sizes.sum())  # one partition as big as all the others together
    cluster = build_arrays(
        [Broker(int(b)) for b in cluster.broker_ids], list(cluster.topics), cluster.topic_of,
        cluster.partition_of, cluster.replicas, sizes,
    )  # fmt: skip
    result = plan(cluster, PlanRequest(Mode.REBALANCE, balance=Balance.BYTES))
    assert any("stay above their byte band" in n or "below their byte band" in n for n in result.report.notes)
    assert not duplicates(result.replicas).any()


def test_bytes_without_sizes_is_refused_with_the_fix() -> None:
    cluster = synthetic_cluster(6, 3, 100, seed=1)
    cluster = build_arrays(
        make_brokers(6, 3), list(cluster.topics), cluster.topic_of, cluster.partition_of, cluster.replicas,
        np.zeros(cluster.n_partitions, dtype=np.int64),
    )  # fmt: skip
    with pytest.raises(errors.InvalidSpec, match=r"needs partition sizes.*--sizes-from-bootstrap"):
        plan(cluster, PlanRequest(Mode.REBALANCE, balance=Balance.BYTES))


@pytest.mark.parametrize("tolerance", [0.0, -0.1, 0.6])
def test_a_byte_tolerance_out_of_range_is_refused(tolerance: float) -> None:
    cluster = synthetic_cluster(6, 3, 100, seed=1)
    with pytest.raises(errors.InvalidSpec, match=r"byte tolerance must be above 0 and at most 0\.5"):
        plan(cluster, PlanRequest(Mode.REBALANCE, balance=Balance.BYTES, byte_tolerance=tolerance))


# -- the lower bound -------------------------------------------------------------------------------
def _all_layouts(n_brokers: int, n_partitions: int, rf: int) -> list[tuple[tuple[int, ...], ...]]:
    rows = list(itertools.combinations(range(n_brokers), rf))
    return list(itertools.product(rows, repeat=n_partitions))


def test_the_lower_bound_holds_for_every_possible_plan() -> None:
    """4 brokers, 4 partitions of RF 2: for every start and every end layout, the bytes copied are
    at least the bound computed for the end's balance (checked over all 1,296 x 1,296 pairs of a
    sample of starts)."""
    rng = np.random.default_rng(3)
    sizes = np.array([7, 3, 11, 5], dtype=np.int64)
    layouts = _all_layouts(4, 4, 2)
    eligible = np.ones(4, dtype=np.bool_)
    target = np.full(4, float(sizes.sum() * 2) / 4)
    per_layout = []
    for layout in layouts:
        held = np.zeros(4, dtype=np.int64)
        for p, row in enumerate(layout):
            for b in row:
                held[b] += sizes[p]
        per_layout.append(held)
    checked = 0
    for start in rng.choice(len(layouts), size=12, replace=False):
        before = per_layout[start]
        for end, after in enumerate(per_layout):
            copied = sum(int(sizes[p]) * len(set(layouts[end][p]) - set(layouts[start][p])) for p in range(4))
            bound = bytes_lower_bound(before, after, target=target, eligible=eligible, placed=0, dropped=0)
            assert bound <= copied, (layouts[start], layouts[end], bound, copied)
            checked += 1
    assert checked == 12 * len(layouts)


def test_the_lower_bound_counts_brokers_that_must_empty_and_new_replicas() -> None:
    before = np.array([10, 10, 10, 0], dtype=np.int64)
    after = np.array([10, 10, 0, 10], dtype=np.int64)
    eligible = np.array([True, True, False, True])
    target = np.array([10.0, 10.0, 0.0, 10.0])
    assert bytes_lower_bound(before, after, target=target, eligible=eligible, placed=0, dropped=0) == 10
    assert bytes_lower_bound(before, after, target=target, eligible=eligible, placed=4, dropped=0) == 14


# -- disk capacity as a hard limit -----------------------------------------------------------------
def test_a_capacity_caps_a_broker_and_the_others_take_the_rest() -> None:
    cluster, req = CASES["add"]
    free = plan(cluster, req)
    mean = _bytes(cluster, free.replicas).mean()
    limit = int(0.6 * mean)  # the three added brokers get 60 % of a fair share at most
    capped = plan(cluster, dataclasses.replace(req, broker_capacity=tuple((b, limit) for b in (90, 91, 92))))
    held = _bytes(cluster, capped.replicas)
    ids = cluster.broker_ids.tolist()
    added = [ids.index(b) for b in (90, 91, 92)]
    assert all(held[i] <= limit for i in added), [held[i] / limit for i in added]
    assert all(held[i] >= 0.55 * mean for i in added), "they are still filled up to their capacity"
    others = np.delete(held, added)
    level = (held.sum() - 3 * limit) / len(others)
    assert others.max() <= (1 + TOLERANCE) * level * 1.0001 + 1, others.max() / level
    assert any("cannot come down to the mean" in n for n in capped.report.notes)
    assert not duplicates(capped.replicas).any()


def test_capacities_too_small_for_the_data_are_reported_and_never_exceeded_by_the_plan() -> None:
    cluster, req = CASES["rebalance"]
    before = _bytes(cluster, cluster.replicas)
    limit = int(0.9 * before.mean())  # every broker: the data cannot fit
    result = plan(
        cluster, dataclasses.replace(req, broker_capacity=tuple((int(b), limit) for b in cluster.broker_ids))
    )
    held = _bytes(cluster, result.replicas)
    assert any("without room" in n for n in result.report.notes), result.report.notes
    grew = held > before
    assert (held[grew] <= limit).all(), "a broker that received data ends above its capacity"


@pytest.mark.parametrize(
    ("capacity", "message"),
    [(((99, 10),), "broker 99, which is not in the cluster"), (((0, 0),), "above 0 bytes"),
     (((0, 5), (0, 6)), "more than once")],
)  # fmt: skip
def test_bad_capacities_are_refused(capacity: tuple[tuple[int, int], ...], message: str) -> None:
    cluster, req = CASES["rebalance"]
    with pytest.raises(errors.InvalidSpec, match=message):
        plan(cluster, dataclasses.replace(req, broker_capacity=capacity))


# -- balance=both: the count plan, then swaps ------------------------------------------------------
@pytest.mark.parametrize("name", ["add", "rebalance", "remove"])
def test_both_keeps_the_count_plan_counts_and_evens_the_bytes(name: str) -> None:
    cluster, req = CASES[name]
    by_count = plan(cluster, dataclasses.replace(req, balance=Balance.REPLICAS))
    both = plan(cluster, dataclasses.replace(req, balance=Balance.BOTH))
    counts = [[b.replicas_after for b in p.report.brokers] for p in (by_count, both)]
    assert counts[0] == counts[1], "swaps change no broker's replica count"
    assert both.report.balanced and both.report.rack_violations_after == 0
    assert not duplicates(both.replicas).any()
    held, before = (
        _bytes(cluster, both.replicas)[both.eligible],
        _bytes(cluster, by_count.replicas)[both.eligible],
    )
    assert held.max() / held.mean() < before.max() / before.mean()
    assert both.report.bytes_lower_bound is not None
    assert both.report.bytes_lower_bound <= both.report.bytes_moved
    assert both.report.balance == "both"


def test_both_reaches_the_band_when_added_brokers_can_swap() -> None:
    cluster, req = CASES["add"]
    both = plan(cluster, dataclasses.replace(req, balance=Balance.BOTH))
    held = _bytes(cluster, both.replicas)
    assert held.max() <= (1 + TOLERANCE) * held.mean() * 1.0001
    assert held.min() >= (1 - TOLERANCE) * held.mean() * 0.9999


def test_replica_counts_come_close_to_their_targets_as_the_secondary_aim(
    planned: tuple[str, ClusterArrays, PlanRequest, Plan],
) -> None:
    name, _, _, result = planned
    kept = [b for b in result.report.brokers if b.role != "removed"]
    worst = max(abs(b.replicas_after - b.replica_target) for b in kept)
    if name in ("rf-up", "excluded-topics"):  # new replicas, or pinned replicas: a few percent
        assert worst <= 0.07 * max(b.replica_target for b in kept), worst
    else:
        assert worst <= 1, worst
