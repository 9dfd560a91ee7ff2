"""Placement of new topics and added partitions: cluster-load aware, per-topic spread, racks."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.placement import NewPartitions, place_new_partitions
from kafka_zk_operator.domain.placement.arrays import ClusterArrays, loads
from kafka_zk_operator.domain.placement.racks import duplicates, violations
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster


def _check(cluster: ClusterArrays, topic: str, rf: int) -> np.ndarray:
    rows = np.flatnonzero(np.array(cluster.topics)[cluster.topic_of] == topic)
    reps = cluster.replicas[rows]
    assert ((reps >= 0).sum(axis=1) == rf).all()
    assert not duplicates(reps).any()
    assert not violations(reps, np.r_[cluster.broker_rack, cluster.n_racks], cluster.n_racks).any()
    return reps


def test_new_topic_fills_the_emptiest_brokers_first_within_the_topic_spread() -> None:
    cluster = synthetic_cluster(9, 3, 900, seed=1).with_brokers(make_brokers(3, 3, first_id=50))
    result = place_new_partitions(cluster, [NewPartitions("fresh", 120, 3)])
    reps = _check(result.cluster, "fresh", 3)
    per_broker = np.bincount(reps.ravel(), minlength=12)
    cap = max(30 + 1, 45)  # avg 30 per broker, 1.5 x avg allowed
    assert per_broker.max() <= cap
    new_brokers = [result.cluster.broker_index(b) for b in (50, 51, 52)]
    assert all(per_broker[b] == cap for b in new_brokers)  # the empty brokers take the most
    assert sorted(result.assignments["fresh"]) == list(range(120))


def test_kafka_round_robin_would_ignore_load_we_do_not() -> None:
    cluster = synthetic_cluster(6, 3, 300, seed=2).with_brokers(make_brokers(3, 3, first_id=10))
    before = loads(cluster.replicas, cluster.n_brokers)
    result = place_new_partitions(cluster, [NewPartitions(f"t{i}", 30, 3) for i in range(10)])
    after = loads(result.cluster.replicas, cluster.n_brokers)
    gained = after - before
    new_idx = [cluster.broker_index(b) for b in (10, 11, 12)]
    old_idx = [i for i in range(cluster.n_brokers) if i not in new_idx]
    assert gained[new_idx].min() > gained[old_idx].max()


def test_leaders_of_new_partitions_balance_cluster_wide() -> None:
    cluster = synthetic_cluster(6, 3, 600, seed=3)
    result = place_new_partitions(cluster, [NewPartitions("x", 60, 3), NewPartitions("y", 7, 2)])
    leaders = np.bincount(result.cluster.replicas[:, 0], minlength=6)
    assert leaders.max() - leaders.min() <= 1


def test_adding_partitions_continues_ids_and_keeps_rf() -> None:
    cluster = synthetic_cluster(6, 3, 200, seed=4)
    topic = cluster.topics[0]
    existing = int((cluster.topic_of == 0).sum())
    result = place_new_partitions(cluster, [NewPartitions(topic, 5)])
    assert sorted(result.assignments[topic]) == list(range(existing, existing + 5))
    _check(result.cluster, topic, 3)


def test_strict_topic_spread_is_kafkas_ceil() -> None:
    cluster = synthetic_cluster(9, 3, 900, seed=1).with_brokers(make_brokers(3, 3, first_id=50))
    result = place_new_partitions(cluster, [NewPartitions("even", 40, 3)], max_topic_skew=1.0)
    per_broker = np.bincount(_check(result.cluster, "even", 3).ravel(), minlength=12)
    assert per_broker.max() - per_broker.min() <= 1


def test_rack_unaware_cluster_and_rf_one() -> None:
    cluster = synthetic_cluster(5, 0, 50, rf=2, seed=5, layout="kafka")
    result = place_new_partitions(cluster, [NewPartitions("solo", 9, 1)])
    _check(result.cluster, "solo", 1)


def test_deterministic() -> None:
    cluster = synthetic_cluster(9, 3, 300, seed=6)
    a = place_new_partitions(cluster, [NewPartitions("a", 17, 3)], seed=3)
    b = place_new_partitions(cluster, [NewPartitions("a", 17, 3)], seed=3)
    assert a.assignments == b.assignments


@pytest.mark.parametrize(
    ("request_", "error"),
    [
        (NewPartitions("n", 4, 7), errors.InvalidReplicationFactor),
        (NewPartitions("n", 4), errors.InvalidReplicationFactor),
        (NewPartitions("n", 0, 2), errors.InvalidPartitions),
        (NewPartitions("topic-0", 2, 2), errors.InvalidReplicationFactor),
    ],
)
def test_bad_requests_are_user_errors(request_: NewPartitions, error: type[Exception]) -> None:
    cluster = synthetic_cluster(6, 3, 60, seed=7)
    with pytest.raises(error):
        place_new_partitions(cluster, [request_])
