"""Byte-balanced PartitionReassignments: partition sizes reach the engine, or the plan is refused
with what to configure (``spec.balance``, the clusters file's ``bootstrapServers``)."""

from __future__ import annotations

import pytest

from kafka_zk_operator.config import ClusterSettings
from kafka_zk_operator.config.zookeeper import ZkConnectionSettings
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.reassignment.computed import cluster_arrays
from kafka_zk_operator.domain.reassignment.plan import ClusterView
from kafka_zk_operator.runtime.clusters import ClusterRuntime
from kafka_zk_operator.service.reassignment.proposals import partition_sizes

VIEW = ClusterView(brokers={1: "a", 2: "b"}, assignments={"t": {0: (1, 2), 1: (2, 1)}, "u": {0: (1, 2)}})


def test_sizes_reach_the_engine_arrays_and_missing_ones_count_as_zero() -> None:
    with_sizes = ClusterView(**{**VIEW.__dict__, "sizes": {("t", 1): 700, ("u", 0): 5}})
    arrays = cluster_arrays(with_sizes)
    rows = {
        (arrays.topics[int(t)], int(p)): int(s)
        for t, p, s in zip(arrays.topic_of, arrays.partition_of, arrays.sizes, strict=True)
    }
    assert rows == {("t", 0): 0, ("t", 1): 700, ("u", 0): 5}
    assert not cluster_arrays(VIEW).sizes.any()


def test_no_way_to_read_sizes_or_only_empty_partitions_is_refused() -> None:
    with pytest.raises(errors.NotSupported, match="cannot read them"):
        partition_sizes(None)
    with pytest.raises(errors.NotSupported, match="none above 0 bytes"):
        partition_sizes(lambda: {("t", 0): 0})
    assert partition_sizes(lambda: {("t", 0): 3}) == {("t", 0): 3}


def test_a_cluster_without_bootstrap_servers_says_what_to_configure() -> None:
    runtime = ClusterRuntime(
        ClusterSettings(name="main", zookeeper=ZkConnectionSettings(connect="zk:2181")), None
    )
    with pytest.raises(
        errors.NotSupported, match=r"cluster 'main' has no bootstrapServers.*clusters\[\]\.bootstrapServers"
    ):
        runtime.partition_sizes()
