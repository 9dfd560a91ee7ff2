"""spec.placement: Balanced - load-aware placement of a KafkaTopic's new partitions."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import assignment as kafka_assignment
from kafka_zk_operator.domain.model import Broker, TopicAssignment
from kafka_zk_operator.domain.reassignment.plan import ClusterView
from kafka_zk_operator.domain.topic.new_partitions import Placement, balanced_assignment
from kafka_zk_operator.domain.topic.planning import DesiredTopic, ObservedTopic, plan_topic
from kafka_zk_operator.domain.topic.resource import KafkaTopicResource, parse_resource
from kafka_zk_operator.service.cluster_views import ClusterViewCache

RACKS = {1: "a", 2: "b", 3: "c", 4: "a", 5: "b", 6: "c"}
Parts = Mapping[int, Sequence[int]]


def view(assignments: Mapping[str, Parts], brokers: Mapping[int, str | None] = RACKS) -> ClusterView:
    return ClusterView(
        brokers=dict(brokers),
        assignments={t: {p: tuple(r) for p, r in parts.items()} for t, parts in assignments.items()},
    )


def replica_counts(*assignments: Parts) -> Counter[int]:
    return Counter(b for parts in assignments for replicas in parts.values() for b in replicas)


def test_a_new_topic_goes_to_the_brokers_the_rest_of_the_cluster_left_empty() -> None:
    skewed = view({"hot": {p: (1,) for p in range(30)}})
    placed = balanced_assignment(skewed, "new", existing={}, partitions=6, replication_factor=1)
    assert placed is not None and sorted(placed) == list(range(6))
    assert 1 not in replica_counts(placed)
    # Kafka's own algorithm ignores the load: one partition per broker, broker 1 included.
    kafka = kafka_assignment.assign_replicas_to_brokers(
        kafka_assignment.brokers_for_assignment(
            [Broker(b, r) for b, r in RACKS.items()], kafka_assignment.RackAwareMode.ENFORCED
        ),
        6,
        1,
        rng=random.Random(0),
    )
    assert replica_counts(kafka)[1] == 1


def test_replicas_are_distinct_and_span_every_rack() -> None:
    placed = balanced_assignment(view({}), "new", existing={}, partitions=8, replication_factor=3)
    assert placed is not None
    for replicas in placed.values():
        assert len(set(replicas)) == 3
        assert {RACKS[b] for b in replicas} == {"a", "b", "c"}
    assert max(replica_counts(placed).values()) - min(replica_counts(placed).values()) <= 1
    leaders = Counter(replicas[0] for replicas in placed.values())
    assert max(leaders.values()) - min(leaders.get(b, 0) for b in RACKS) <= 1


def test_added_partitions_continue_the_ids_keep_the_rf_and_leave_existing_ones_alone() -> None:
    existing = {0: (1, 2, 3), 1: (4, 5, 6)}
    cluster = view({"t": existing, "other": {0: (1, 2, 3)}})
    placed = balanced_assignment(cluster, "t", existing=existing, partitions=5, replication_factor=3)
    assert placed is not None and sorted(placed) == [2, 3, 4]
    assert all(len(set(r)) == 3 and {RACKS[b] for b in r} == {"a", "b", "c"} for r in placed.values())
    assert balanced_assignment(cluster, "t", existing=existing, partitions=2, replication_factor=3) == {}


def test_a_burst_of_small_topics_stays_even_where_kafka_piles_up() -> None:
    """50 one-partition topics, RF 2: each placement sees the previous ones (as the cache records)."""
    cache = ClusterViewCache(lambda: view({}))
    live = [Broker(b, r) for b, r in RACKS.items()]
    for i in range(50):
        placed = cache.placer(f"t{i}", live)({}, 1, 2)
        assert placed is not None
        cache.record(f"t{i}", placed)
    counts = replica_counts(*cache.view().assignments.values())
    assert sum(counts.values()) == 100
    assert max(counts.values()) - min(counts.values()) <= 1
    rng = random.Random(0)
    candidates = kafka_assignment.brokers_for_assignment(live, kafka_assignment.RackAwareMode.ENFORCED)
    kafka = replica_counts(
        *(kafka_assignment.assign_replicas_to_brokers(candidates, 1, 2, rng=rng) for _ in range(50))
    )
    assert max(kafka.values()) - min(kafka.values()) > 1  # 21 vs 12 with this seed


def test_replicas_on_unregistered_brokers_are_no_load_and_block_only_their_own_topic() -> None:
    cluster = view({"ghost": {p: (9,) for p in range(10)}, "hot": {p: (1,) for p in range(5)}})
    placed = balanced_assignment(cluster, "new", existing={}, partitions=5, replication_factor=1)
    assert placed is not None and 1 not in replica_counts(placed) and 9 not in replica_counts(placed)
    assert (
        balanced_assignment(cluster, "ghost", existing={0: (9,)}, partitions=2, replication_factor=1) is None
    )


def test_more_replicas_than_registered_brokers_is_refused() -> None:
    with pytest.raises(errors.InvalidReplicationFactor, match="7 is larger than the 6 registered brokers"):
        balanced_assignment(view({}), "new", existing={}, partitions=1, replication_factor=7)


def test_topics_being_deleted_are_no_load() -> None:
    cluster = ClusterView(
        brokers=RACKS, assignments={"gone": {p: (2,) for p in range(20)}}, deleting=frozenset({"gone"})
    )
    placed = balanced_assignment(cluster, "new", existing={}, partitions=6, replication_factor=1)
    assert placed is not None and replica_counts(placed) == Counter(dict.fromkeys(RACKS, 1))


def _desired(partitions: int, rf: int, placement: Placement = Placement.BALANCED) -> DesiredTopic:
    return DesiredTopic("t", partitions, rf, {}, placement=placement)


def test_the_planner_uses_the_placer_for_creates_and_added_partitions() -> None:
    calls: list[tuple[dict[int, tuple[int, ...]], int, int]] = []

    def placer(existing: Parts, partitions: int, rf: int) -> dict[int, tuple[int, ...]]:
        calls.append(({p: tuple(r) for p, r in existing.items()}, partitions, rf))
        return {p: (6,) for p in range(len(existing), partitions)}

    live = [Broker(b, r) for b, r in RACKS.items()]
    create = plan_topic(_desired(2, 1), None, live, placer=placer).create
    assert create is not None and dict(create.assignment) == {0: (6,), 1: (6,)}
    current = ObservedTopic(assignment=TopicAssignment(partitions={0: (1,)}), config={})
    grow = plan_topic(_desired(3, 1), current, live, placer=placer).grow
    assert grow is not None and dict(grow.new_assignment) == {1: (6,), 2: (6,)}
    assert calls == [({}, 2, 1), ({0: (1,)}, 3, 1)]


def test_a_placer_that_declines_falls_back_to_kafkas_algorithm_and_a_wrong_answer_is_refused() -> None:
    live = [Broker(b, r) for b, r in RACKS.items()]
    create = plan_topic(_desired(6, 1), None, live, placer=lambda *_: None).create
    assert create is not None and replica_counts(create.assignment) == Counter(dict.fromkeys(RACKS, 1))
    with pytest.raises(errors.NotSupported, match="a bug"):
        plan_topic(_desired(2, 1), None, live, placer=lambda *_: {0: (1,)})


def test_the_view_is_read_again_only_when_older_than_max_age() -> None:
    now = [0.0]
    reads: list[int] = []

    def read() -> ClusterView:
        reads.append(1)
        return view({"hot": {0: (1,)}})

    cache = ClusterViewCache(read, max_age=30, clock=lambda: now[0])
    cache.view()
    cache.record("mine", {0: (2,)})
    now[0] = 29.0
    assert "mine" in cache.view().assignments and len(reads) == 1
    now[0] = 30.0
    assert "mine" not in cache.view().assignments and len(reads) == 2


def test_spec_placement_is_parsed_and_an_unknown_value_is_a_clear_error() -> None:
    def resource(**spec: object) -> KafkaTopicResource:
        return parse_resource(
            {
                "metadata": {"name": "t", "namespace": "ns", "uid": "u", "generation": 1},
                "spec": {"partitions": 1, "replicationFactor": 1, **spec},
            }
        )

    def placement(parsed: KafkaTopicResource) -> Placement:
        assert parsed.desired is not None and parsed.spec_error is None
        return parsed.desired.placement

    assert placement(resource()) is Placement.KAFKA
    assert placement(resource(placement="Balanced")) is Placement.BALANCED
    invalid = resource(placement="Even")
    assert invalid.desired is None and invalid.spec_error is not None
    with pytest.raises(errors.InvalidSpec, match=r"spec\.placement must be Kafka or Balanced, not 'Even'"):
        raise invalid.spec_error
