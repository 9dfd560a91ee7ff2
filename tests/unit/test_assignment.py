"""Unit tests for ``domain.kafka.assignment``, Kafka 3.9's replica assignment.

Expected values come from the reference (§7) and Kafka's own tests (``AdminRackAwareTest``,
``AdminTest``/``AdminZkClientTest``, ``AddPartitionsTest``); ``tests/integration`` compares
against Kafka's Java code itself.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import assignment
from kafka_zk_operator.domain.kafka.assignment import RackAwareMode
from kafka_zk_operator.domain.model import Broker

RACKS_6 = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
RACKS_EVEN = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


def unracked(*ids: int) -> list[Broker]:
    return [Broker(i) for i in ids]


def racked(racks: Mapping[int, str]) -> list[Broker]:
    return [Broker(i, racks[i]) for i in sorted(racks)]


class _ScriptedRandom(random.Random):
    """A ``random.Random`` whose ``randrange`` answers from a script, recording the bounds asked."""

    def __init__(self, answers: list[int]) -> None:
        super().__init__(0)
        self.answers = list(answers)
        self.bounds: list[int] = []

    def randrange(self, *args: int) -> int:  # type: ignore[override]
        self.bounds.append(args[0])
        return self.answers.pop(0)


# --- rack-unaware -------------------------------------------------------------------------------


def test_rack_unaware_matches_kafkas_admin_test() -> None:
    result = assignment.assign_replicas_to_brokers(unracked(0, 1, 2, 3, 4), 10, 3, fixed_start_index=0)
    assert result == {
        0: [0, 1, 2],
        1: [1, 2, 3],
        2: [2, 3, 4],
        3: [3, 4, 0],
        4: [4, 0, 1],
        5: [0, 2, 3],
        6: [1, 3, 4],
        7: [2, 4, 0],
        8: [3, 0, 1],
        9: [4, 1, 2],
    }


def test_rack_unaware_reference_examples() -> None:
    result = assignment.assign_replicas_to_brokers(unracked(0, 1, 2, 3, 4), 6, 3, fixed_start_index=0)
    assert result[0] == [0, 1, 2]
    assert result[4] == [4, 0, 1]
    assert result[5] == [0, 2, 3]  # second round: follower shift 1


def test_result_is_ordered_by_partition_id() -> None:
    result = assignment.assign_replicas_to_brokers(unracked(0, 1, 2), 8, 2, fixed_start_index=1)
    assert list(result) == list(range(8))


def test_broker_order_is_used_as_given() -> None:
    result = assignment.assign_replicas_to_brokers(unracked(30, 10, 20), 3, 2, fixed_start_index=0)
    assert result == {0: [30, 10], 1: [10, 20], 2: [20, 30]}


def test_fixed_start_index_wraps_modulo_brokers_for_leaders_and_brokers_minus_one_for_shift() -> None:
    brokers = unracked(0, 1, 2, 3)
    at_1 = assignment.assign_replicas_to_brokers(brokers, 5, 2, fixed_start_index=1)
    # 13 = 1 (mod 4) and 1 (mod 3): same leaders and same follower shift.
    assert assignment.assign_replicas_to_brokers(brokers, 5, 2, fixed_start_index=13) == at_1
    # 5 = 1 (mod 4) but 2 (mod 3): same leaders, different followers.
    at_5 = assignment.assign_replicas_to_brokers(brokers, 5, 2, fixed_start_index=5)
    assert [r[0] for r in at_5.values()] == [r[0] for r in at_1.values()]
    assert at_5 != at_1


def test_single_broker_rf_1() -> None:
    assert assignment.assign_replicas_to_brokers(unracked(7), 3, 1, fixed_start_index=0) == {
        0: [7],
        1: [7],
        2: [7],
    }


def test_start_partition_id_uses_absolute_ids_for_the_round_rule() -> None:
    # Partition 7 of 5 brokers is in the second round, but the shift only grows when the loop
    # passes a multiple of the broker count, so starting at 7 keeps shift 0 (Kafka's behaviour).
    brokers = unracked(0, 1, 2, 3, 4)
    assert assignment.assign_replicas_to_brokers(
        brokers, 1, 3, fixed_start_index=0, start_partition_id=7
    ) == {7: [2, 3, 4]}
    full = assignment.assign_replicas_to_brokers(brokers, 8, 3, fixed_start_index=0)
    assert full[7] == [2, 4, 0]


def test_negative_start_partition_id_means_zero() -> None:
    brokers = unracked(0, 1, 2)
    assert assignment.assign_replicas_to_brokers(
        brokers, 4, 2, fixed_start_index=0, start_partition_id=-5
    ) == assignment.assign_replicas_to_brokers(brokers, 4, 2, fixed_start_index=0, start_partition_id=0)


def test_random_start_draws_start_index_then_shift_from_the_injected_rng() -> None:
    rng = _ScriptedRandom([2, 1])
    result = assignment.assign_replicas_to_brokers(unracked(0, 1, 2, 3, 4), 1, 3, rng=rng)
    assert result == {0: [2, 4, 0]}  # start 2, shift 1 (swapped draws would give [1, 4, 0])
    assert rng.bounds == [5, 5]


def test_fixed_start_index_does_not_touch_the_rng() -> None:
    rng = _ScriptedRandom([])
    assignment.assign_replicas_to_brokers(unracked(0, 1, 2), 3, 2, fixed_start_index=0, rng=rng)
    assert rng.bounds == []


def test_same_seed_gives_same_assignment() -> None:
    brokers = unracked(*range(9))
    first = assignment.assign_replicas_to_brokers(brokers, 30, 3, rng=random.Random(42))
    second = assignment.assign_replicas_to_brokers(brokers, 30, 3, rng=random.Random(42))
    assert first == second


def test_random_start_without_rng_still_yields_a_valid_assignment() -> None:
    result = assignment.assign_replicas_to_brokers(unracked(1, 2, 3, 4), 12, 3)
    assert sorted(result) == list(range(12))
    assert all(len(set(replicas)) == 3 for replicas in result.values())
    assert Counter(replicas[0] for replicas in result.values()) == {1: 3, 2: 3, 3: 3, 4: 3}


# --- rack-aware ---------------------------------------------------------------------------------


def test_rack_alternated_broker_list_matches_kafka() -> None:
    assert assignment.rack_alternated_broker_list(RACKS_6) == [0, 3, 1, 5, 4, 2]
    without_5 = {k: v for k, v in RACKS_6.items() if k != 5}
    assert assignment.rack_alternated_broker_list(without_5) == [0, 3, 1, 4, 2]


def test_rack_alternated_broker_list_javadoc_example() -> None:
    racks = {
        0: "rack1",
        1: "rack1",
        2: "rack1",
        3: "rack2",
        4: "rack2",
        5: "rack2",
        6: "rack3",
        7: "rack3",
        8: "rack3",
    }
    assert assignment.rack_alternated_broker_list(racks) == [0, 3, 6, 1, 4, 7, 2, 5, 8]


def test_racks_sort_in_java_string_order() -> None:
    # Java compares UTF-16 code units: a surrogate pair (U+1F600) sorts before U+FF01,
    # although its code point is larger.
    assert assignment.rack_alternated_broker_list({0: "\uff01", 1: "\U0001f600"}) == [1, 0]
    assert assignment.rack_alternated_broker_list({0: "b", 1: "B", 2: "a"}) == [1, 2, 0]


def test_rack_aware_matches_kafkas_admin_rack_aware_test() -> None:
    result = assignment.assign_replicas_to_brokers(
        racked(RACKS_6), 7, 3, fixed_start_index=0, start_partition_id=0
    )
    assert result == {
        0: [0, 3, 1],
        1: [3, 1, 5],
        2: [1, 5, 4],
        3: [5, 4, 2],
        4: [4, 2, 0],
        5: [2, 0, 3],
        6: [0, 4, 2],
    }


def test_rack_aware_ignores_input_order() -> None:
    shuffled = racked(RACKS_6)[::-1]
    assert assignment.assign_replicas_to_brokers(
        shuffled, 7, 3, fixed_start_index=0
    ) == assignment.assign_replicas_to_brokers(racked(RACKS_6), 7, 3, fixed_start_index=0)


def _check_distribution(
    result: Mapping[int, list[int]],
    racks: Mapping[int, str],
    n_partitions: int,
    rf: int,
    *,
    rack_aware: bool = True,
    leaders_even: bool = True,
    replicas_even: bool = True,
) -> None:
    """Port of Kafka's ``RackAwareTest.checkReplicaDistribution``."""
    assert len(result) == n_partitions
    for replicas in result.values():
        assert len(replicas) == rf
        assert len(set(replicas)) == rf
        if rack_aware:
            assert len({racks[b] for b in replicas}) == rf
    n_brokers = len(racks)
    if leaders_even:
        leaders = Counter(replicas[0] for replicas in result.values())
        assert set(leaders.values()) == {n_partitions // n_brokers}
        assert len(leaders) == n_brokers
    if replicas_even:
        counts = Counter(b for replicas in result.values() for b in replicas)
        assert set(counts.values()) == {n_partitions * rf // n_brokers}
        assert len(counts) == n_brokers


@pytest.mark.parametrize("seed", [None, 1, 2, 3])
def test_rack_aware_even_distribution(seed: int | None) -> None:
    start = 2 if seed is None else -1
    rng = None if seed is None else random.Random(seed)
    result = assignment.assign_replicas_to_brokers(racked(RACKS_EVEN), 6, 3, fixed_start_index=start, rng=rng)
    _check_distribution(result, RACKS_EVEN, 6, 3)


def test_rack_aware_uneven_replicas() -> None:
    result = assignment.assign_replicas_to_brokers(racked(RACKS_EVEN), 13, 3, fixed_start_index=0)
    _check_distribution(result, RACKS_EVEN, 13, 3, leaders_even=False, replicas_even=False)


@pytest.mark.parametrize("seed", range(5))
def test_rack_aware_uneven_racks(seed: int) -> None:
    racks = {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    result = assignment.assign_replicas_to_brokers(racked(racks), 12, 3, rng=random.Random(seed))
    _check_distribution(result, racks, 12, 3, replicas_even=False)


@pytest.mark.parametrize(("partitions", "seed"), [(12, 0), (12, 1), (6, 0), (6, 7)])
def test_rack_aware_two_replicas(partitions: int, seed: int) -> None:
    result = assignment.assign_replicas_to_brokers(racked(RACKS_EVEN), partitions, 2, rng=random.Random(seed))
    _check_distribution(result, RACKS_EVEN, partitions, 2)


def test_rack_aware_three_brokers_three_racks() -> None:
    racks = {0: "rack1", 1: "rack2", 4: "rack3"}
    result = assignment.assign_replicas_to_brokers(racked(racks), 3, 2, rng=random.Random(5))
    _check_distribution(result, racks, 3, 2)


def test_rack_aware_expansion_from_partition_12() -> None:
    racks = {6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1"}
    result = assignment.assign_replicas_to_brokers(
        racked(racks), 12, 2, start_partition_id=12, rng=random.Random(3)
    )
    assert sorted(result) == list(range(12, 24))
    _check_distribution(result, racks, 12, 2)


def test_large_number_of_partitions_rack_aware() -> None:
    racks = {
        0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1",
        6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3",
    }  # fmt: skip
    result = assignment.assign_replicas_to_brokers(racked(racks), 96, 3, rng=random.Random(11))
    _check_distribution(result, racks, 96, 3)


def test_more_replicas_than_racks_puts_a_replica_in_every_rack() -> None:
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    result = assignment.assign_replicas_to_brokers(racked(racks), 6, 5, rng=random.Random(0))
    for replicas in result.values():
        assert len(replicas) == 5
        assert len(set(replicas)) == 5
        assert {racks[b] for b in replicas} == {"rack1", "rack2", "rack3"}


def test_fewer_replicas_than_racks_uses_distinct_racks() -> None:
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    result = assignment.assign_replicas_to_brokers(racked(racks), 6, 2, rng=random.Random(0))
    for replicas in result.values():
        assert len({racks[b] for b in replicas}) == 2


def test_single_rack_behaves_round_robin() -> None:
    racks = dict.fromkeys(range(6), "rack1")
    result = assignment.assign_replicas_to_brokers(racked(racks), 6, 3, rng=random.Random(0))
    assert Counter(replicas[0] for replicas in result.values()) == dict.fromkeys(range(6), 1)
    assert all(len(set(replicas)) == 3 for replicas in result.values())


def test_skip_broker_with_replica_already_assigned() -> None:
    racks = {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}
    result = assignment.assign_replicas_to_brokers(racked(racks), 6, 4, fixed_start_index=2)
    assert len(result) == 6
    assert all(len(set(replicas)) == 4 for replicas in result.values())
    # every partition covers all three racks before doubling up
    assert all({racks[b] for b in replicas} == {"a", "b", "c"} for replicas in result.values())


def test_empty_string_rack_is_a_rack() -> None:
    result = assignment.assign_replicas_to_brokers(
        [Broker(0, ""), Broker(1, "x"), Broker(2, "")], 1, 2, fixed_start_index=0
    )
    assert result == {0: [0, 1]}  # alternated list is [0, 1, 2] (racks "" < "x")


# --- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize("partitions", [0, -1])
def test_non_positive_partitions_are_refused(partitions: int) -> None:
    with pytest.raises(errors.InvalidPartitions, match="Number of partitions must be larger than 0"):
        assignment.assign_replicas_to_brokers(unracked(0, 1), partitions, 1)


@pytest.mark.parametrize("rf", [0, -2])
def test_non_positive_replication_factor_is_refused(rf: int) -> None:
    with pytest.raises(errors.InvalidReplicationFactor, match="must be larger than 0"):
        assignment.assign_replicas_to_brokers(unracked(0, 1), 3, rf)


def test_replication_factor_above_broker_count_is_refused() -> None:
    with pytest.raises(
        errors.InvalidReplicationFactor, match="Replication factor: 3 larger than available brokers: 2"
    ):
        assignment.assign_replicas_to_brokers(unracked(0, 1), 3, 3)


def test_no_brokers_is_refused_as_replication_factor_problem() -> None:
    with pytest.raises(errors.InvalidReplicationFactor):
        assignment.assign_replicas_to_brokers([], 3, 1)


def test_partitions_are_checked_before_replication_factor() -> None:
    with pytest.raises(errors.InvalidPartitions):
        assignment.assign_replicas_to_brokers([], 0, 0)


def test_mixed_racks_are_refused_with_a_hint() -> None:
    with pytest.raises(errors.InvalidSpec, match="Not all brokers have rack information") as info:
        assignment.assign_replicas_to_brokers([Broker(0, "a"), Broker(1), Broker(2, "b")], 3, 2)
    assert "--disable-rack-aware" in str(info.value)
    assert "brokers without a rack: 1" in str(info.value)


def test_duplicate_broker_ids_are_refused() -> None:
    with pytest.raises(errors.InvalidSpec, match=r"Duplicate broker ids \[1\]"):
        assignment.assign_replicas_to_brokers(unracked(0, 1, 1), 3, 2)


def test_parameters_overflowing_java_ints_are_refused() -> None:
    with pytest.raises(errors.InvalidSpec, match="32-bit"):
        assignment.assign_replicas_to_brokers(unracked(0, 1), 2, 2, fixed_start_index=2**31 - 1)
    with pytest.raises(errors.InvalidSpec, match="32-bit"):
        assignment.assign_replicas_to_brokers(unracked(0, 1), 2, 1, start_partition_id=2**31 - 1)


def test_largest_partition_id_kafka_can_compute_is_accepted() -> None:
    result = assignment.assign_replicas_to_brokers(
        unracked(0, 1), 1, 1, fixed_start_index=0, start_partition_id=2**31 - 1
    )
    assert result == {2**31 - 1: [1]}


# --- getBrokerMetadatas -------------------------------------------------------------------------

MIXED = [
    Broker(5, "rack3"),
    Broker(0, "rack1"),
    Broker(1, "rack2"),
    Broker(2, "rack2"),
    Broker(3, "rack1"),
    Broker(4),
]


def test_disabled_mode_drops_racks_and_sorts_by_id() -> None:
    assert assignment.brokers_for_assignment(MIXED, RackAwareMode.DISABLED) == unracked(0, 1, 2, 3, 4, 5)


def test_safe_mode_drops_all_racks_when_some_are_missing() -> None:
    assert assignment.brokers_for_assignment(MIXED, RackAwareMode.SAFE) == unracked(0, 1, 2, 3, 4, 5)


def test_safe_mode_keeps_racks_when_all_brokers_have_one() -> None:
    brokers = [Broker(1, "b"), Broker(0, "a")]
    assert assignment.brokers_for_assignment(brokers, RackAwareMode.SAFE) == [Broker(0, "a"), Broker(1, "b")]


def test_enforced_mode_refuses_mixed_racks_suggesting_disable_rack_aware() -> None:
    with pytest.raises(errors.InvalidSpec, match="Add --disable-rack-aware in command line"):
        assignment.brokers_for_assignment(MIXED)


def test_enforced_mode_with_only_ids_filters_first() -> None:
    result = assignment.brokers_for_assignment(MIXED, RackAwareMode.ENFORCED, only_ids=[0, 1, 2, 3, 5, 99])
    assert [b.id for b in result] == [0, 1, 2, 3, 5]
    assert [b.rack for b in result] == ["rack1", "rack2", "rack2", "rack1", "rack3"]


def test_enforced_mode_accepts_no_racks_at_all() -> None:
    assert assignment.brokers_for_assignment(unracked(2, 0, 1)) == unracked(0, 1, 2)


def test_safe_mode_then_assign_works_on_a_mixed_cluster() -> None:
    brokers = assignment.brokers_for_assignment(MIXED, RackAwareMode.SAFE)
    assert len(assignment.assign_replicas_to_brokers(brokers, 3, 2, rng=random.Random(0))) == 3


# --- createNewPartitionsAssignment --------------------------------------------------------------


def test_add_partitions_like_kafkas_add_partitions_test_partial_servers() -> None:
    result = assignment.assign_new_partitions({0: [1, 2]}, unracked(0, 1, 2, 3), 3)
    assert result == {1: [2, 0], 2: [3, 1]}


def test_add_partitions_like_kafkas_add_partitions_test_all_servers() -> None:
    result = assignment.assign_new_partitions({0: [2, 3, 0, 1]}, unracked(0, 1, 2, 3), 7)
    assert [replicas[0] for replicas in result.values()] == [3, 0, 1, 2, 3, 0]
    assert all(sorted(replicas) == [0, 1, 2, 3] for replicas in result.values())
    assert list(result) == [1, 2, 3, 4, 5, 6]


def test_add_partitions_start_index_is_position_of_first_broker_at_or_above_leader() -> None:
    # Leader 15 is not a live broker: the first id >= 15 is 20, at index 2.
    existing = {0: [15, 10], 1: [20, 30]}
    brokers = unracked(5, 10, 20, 30)
    expected = assignment.assign_replicas_to_brokers(brokers, 2, 2, fixed_start_index=2, start_partition_id=2)
    assert assignment.assign_new_partitions(existing, brokers, 4) == expected


def test_add_partitions_leader_above_every_broker_starts_at_index_0() -> None:
    brokers = unracked(0, 1, 2)
    expected = assignment.assign_replicas_to_brokers(brokers, 1, 1, fixed_start_index=0, start_partition_id=1)
    assert assignment.assign_new_partitions({0: [9]}, brokers, 2) == expected


def test_add_partitions_uses_the_full_replica_list_of_partition_0() -> None:
    result = assignment.assign_new_partitions({0: [0, 1, 2]}, unracked(0, 1, 2, 3), 2)
    assert len(result[1]) == 3


def test_add_partitions_rack_aware_applies_the_sorted_list_index_to_the_alternated_list() -> None:
    brokers = racked(RACKS_6)
    # p0's leader 1 is at index 1 of the id-sorted list; Kafka uses that as the index into the
    # rack-alternated list [0, 3, 1, 5, 4, 2] (the quirk of §7.4).
    result = assignment.assign_new_partitions({0: [1, 5, 4]}, brokers, 2)
    assert result == assignment.assign_replicas_to_brokers(
        brokers, 1, 3, fixed_start_index=1, start_partition_id=1
    )
    assert result[1][0] == 1  # alternated[(1 + 1) % 6]


def test_add_partitions_requires_partition_0() -> None:
    with pytest.raises(errors.InvalidSpec, match="partition id 0 is missing"):
        assignment.assign_new_partitions({1: [0, 1]}, unracked(0, 1), 3)


@pytest.mark.parametrize("count", [1, 2])
def test_add_partitions_can_only_increase(count: int) -> None:
    with pytest.raises(errors.InvalidPartitions, match="can only be increased"):
        assignment.assign_new_partitions({0: [0], 1: [1]}, unracked(0, 1), count)


def test_add_partitions_with_more_replicas_than_brokers_is_refused() -> None:
    with pytest.raises(errors.InvalidReplicationFactor):
        assignment.assign_new_partitions({0: [0, 1, 2]}, unracked(0, 1), 2)


def test_add_partitions_with_empty_partition_0_is_refused() -> None:
    with pytest.raises(errors.InvalidReplicationFactor, match="no replicas"):
        assignment.assign_new_partitions({0: []}, unracked(0, 1), 2)


def test_many_partitions_are_fast_enough_for_the_placement_engine() -> None:
    brokers = racked({i: f"rack{i % 3}" for i in range(12)})
    result = assignment.assign_replicas_to_brokers(brokers, 20_000, 3, fixed_start_index=0)
    assert len(result) == 20_000
    assert Counter(replicas[0] for replicas in result.values())[0] in (1666, 1667)
