"""The peer path of ``benchmarks/peers_bench.py`` works: topicmappr (built once from Go modules,
``devstack.topicmappr``) plans a tiny snapshot written into a real ZooKeeper, Kafka's own
``calculateAssignment`` plans it from the cached jars, the bench's validity checker accepts both
plans and rejects a broken one, and the scoring runs on them.

A few seconds once topicmappr is cached (``kzo dev prepare`` builds it; else the first run builds
it, ~20 s). Not a measurement: the figures are the bench's job.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kafka_zk_operator.devstack.topicmappr import topicmappr_binary
from kafka_zk_operator.domain.placement.synthetic import synthetic_cluster

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _bench_module(name: str) -> Any:
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> tuple[Any, Any]:
    return _bench_module("peer_tools"), _bench_module("peer_score")


def test_topicmappr_plan_from_a_real_zookeeper_is_valid_and_scored(
    bench: tuple[Any, Any], tmp_path: Path
) -> None:
    tools, scoring = bench
    cluster = synthetic_cluster(6, 3, 60, rf=3, seed=3, layout="balanced")
    on_broker_0 = int((cluster.replicas == cluster.broker_index(0)).sum())
    assert on_broker_0 > 0
    with tools.scratch_zookeeper(tmp_path / "zookeeper") as zk:
        tools.load_snapshot(zk, "tiny", cluster, capacity_factor=3.0)
        run = tools.run_topicmappr(
            topicmappr_binary(), zk, "tiny", ["rebuild", "--topics", ".*", "--brokers", "1,2,3,4,5"], tmp_path
        )
    assert len(run.proposed) == cluster.n_partitions  # the combined map lists every partition
    after, problems = scoring.plan_from_assignment(cluster, run.proposed)
    assert problems == []
    assert scoring.validate(cluster, after, removed=[0]) == []
    figures = scoring.score(cluster, scoring.request_for({"mode": "remove-brokers", "brokers": [0]}), after)
    # topicmappr's rebuild replaces only the missing broker: one move per replica broker 0 held.
    assert figures["moves"] == on_broker_0 == figures["m_lb"]
    assert figures["rack_violations"] == 0
    broken = after.copy()
    broken[0, 1] = broken[0, 0]
    assert scoring.validate(cluster, broken) == ["1 partition(s) with a broker twice"]
    assert scoring.validate(cluster, cluster.replicas, removed=[0]) == [
        f"removed broker 0 still holds {on_broker_0} replica(s)"
    ]


def test_kafka_calculate_assignment_plan_is_valid_and_scored(bench: tuple[Any, Any], tmp_path: Path) -> None:
    tools, scoring = bench
    cluster = synthetic_cluster(6, 3, 60, rf=3, seed=3, layout="balanced")
    generate = tools.KafkaGenerate(tmp_path, heap="256m")
    run = generate.run(generate.write_input(cluster, [int(b) for b in cluster.broker_ids]))
    assert len(run.proposed) == cluster.n_partitions
    after, problems = scoring.plan_from_assignment(cluster, run.proposed)
    assert problems == [] and scoring.validate(cluster, after) == []
    figures = scoring.score(cluster, scoring.request_for({"mode": "rebalance"}), after)
    assert figures["rack_violations"] == 0  # Kafka's rack-aware assignment, 3 racks, RF 3
    assert int(np.asarray(after >= 0).sum()) == 3 * cluster.n_partitions
