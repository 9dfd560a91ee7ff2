"""Throttles as Kafka 3.x's tool computes them, and undoing only the operator's part
(``domain.reassignment.throttles``)."""

from __future__ import annotations

from kafka_zk_operator.domain.reassignment.throttles import (
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
    AddedReplicas,
    PreviousRates,
    ThrottledMove,
    apply_broker_config,
    apply_topic_config,
    follower_throttles,
    leader_throttles,
    parse_replica_list,
    plan_throttle,
    proposed_move_map,
    reassigning_brokers,
    record_fields,
    record_from_fields,
    restore_broker_config,
    restore_topic_config,
)


def test_move_map_uses_current_replicas_as_sources_and_the_rest_of_the_target_as_destinations() -> None:
    move_map = proposed_move_map({("foo", 0): [4, 5, 6]}, {("foo", 0): [1, 2, 3]})
    assert move_map == {"foo": {0: ThrottledMove(frozenset({1, 2, 3}), frozenset({4, 5, 6}))}}


def test_partitions_already_moving_join_the_map_and_keep_their_sources() -> None:
    # foo-1 is being reassigned 1,2 -> 2,3 (replicas 2,3,1 with 3 adding); the batch moves foo-1 to 4,2.
    move_map = proposed_move_map(
        {("foo", 0): [2, 3]},
        {("foo", 0): [1, 2]},
        in_flight={("foo", 1): ([2, 3, 1], [3]), ("bar", 0): ([5, 6], [6])},
    )
    assert move_map["foo"][1] == ThrottledMove(frozenset({1, 2}), frozenset({3}))
    assert move_map["bar"][0] == ThrottledMove(frozenset({5}), frozenset({6}))
    again = proposed_move_map(
        {("foo", 1): [4, 2]}, {("foo", 1): [2, 3, 1]}, in_flight={("foo", 1): ([2, 3, 1], [3])}
    )
    assert again["foo"][1] == ThrottledMove(frozenset({1, 2}), frozenset({4}))


def test_leader_and_follower_lists_are_sorted_like_a_java_treeset_of_strings() -> None:
    move_map = {
        "foo": {
            10: ThrottledMove(frozenset({1}), frozenset({3})),
            2: ThrottledMove(frozenset({2, 1}), frozenset({4})),
        }
    }
    # String order: "10:1" < "2:1" < "2:2" (Kafka's TreeSet<String>), not numeric order.
    assert leader_throttles(move_map) == {"foo": "10:1,2:1,2:2"}
    assert follower_throttles(move_map) == {"foo": "10:3,2:4"}
    assert reassigning_brokers(move_map) == [1, 2, 3, 4]


def test_a_reorder_throttles_the_leader_side_only() -> None:
    move_map = proposed_move_map({("foo", 0): [2, 1]}, {("foo", 0): [1, 2]})
    assert leader_throttles(move_map) == {"foo": "0:1,0:2"}
    assert follower_throttles(move_map) == {"foo": ""}


def test_record_keeps_previous_rates_and_only_entries_not_already_there() -> None:
    move_map = proposed_move_map({("foo", 0): [3, 1]}, {("foo", 0): [1, 2]})
    record = plan_throttle(
        2,
        10240,
        move_map,
        broker_configs={1: {LEADER_RATE: "5000"}, 2: {}, 3: {"log.cleaner.threads": "2"}},
        topic_configs={"foo": {LEADER_REPLICAS: "0:1,7:9", "retention.ms": "1"}},
    )
    assert record.batch == 2 and record.rate == 10240
    assert record.brokers == (PreviousRates(1, "5000", None), PreviousRates(2), PreviousRates(3))
    assert record.topics == (
        AddedReplicas("foo", ("0:2",), ("0:3",), leader_key_existed=True, follower_key_existed=False),
    )


def test_nothing_is_added_where_someone_throttles_all_replicas() -> None:
    move_map = proposed_move_map({("foo", 0): [3, 1]}, {("foo", 0): [1, 2]})
    record = plan_throttle(1, 1, move_map, {}, {"foo": {LEADER_REPLICAS: "*", FOLLOWER_REPLICAS: "*"}})
    assert record.topics == ()
    config = {LEADER_REPLICAS: "*"}
    assert apply_topic_config(config, AddedReplicas("foo", ("0:1",))) == config


def test_apply_then_restore_brings_back_exactly_the_previous_configs() -> None:
    move_map = proposed_move_map({("foo", 0): [3, 1]}, {("foo", 0): [1, 2]})
    brokers = {1: {LEADER_RATE: "5000", "other": "x"}, 2: {}, 3: {}}
    topics = {"foo": {LEADER_REPLICAS: "7:9", "retention.ms": "1"}}
    record = plan_throttle(1, 10240, move_map, brokers, topics)
    applied_brokers = {b: apply_broker_config(c, record.rate) for b, c in brokers.items()}
    assert applied_brokers[1] == {LEADER_RATE: "10240", FOLLOWER_RATE: "10240", "other": "x"}
    applied_topic = apply_topic_config(topics["foo"], record.topics[0])
    assert applied_topic[LEADER_REPLICAS] == "7:9,0:1,0:2"
    assert applied_topic[FOLLOWER_REPLICAS] == "0:3"
    assert apply_topic_config(applied_topic, record.topics[0]) == applied_topic, "idempotent"

    restored = {
        p.broker: restore_broker_config(applied_brokers[p.broker], p, record.rate) for p in record.brokers
    }
    assert restored == brokers
    assert restore_topic_config(applied_topic, record.topics[0]) == topics["foo"]


def test_restore_leaves_values_someone_changed_meanwhile() -> None:
    previous = PreviousRates(1, None, None)
    config = {LEADER_RATE: "777", FOLLOWER_RATE: "10240"}
    assert restore_broker_config(config, previous, 10240) == {LEADER_RATE: "777"}


def test_restore_keeps_entries_others_added_and_an_emptied_key_that_existed() -> None:
    added = AddedReplicas("foo", ("0:1",), ("0:3",), leader_key_existed=True, follower_key_existed=False)
    config = {LEADER_REPLICAS: "0:1,5:5", FOLLOWER_REPLICAS: "0:3"}
    assert restore_topic_config(config, added) == {LEADER_REPLICAS: "5:5"}
    config = {LEADER_REPLICAS: "0:1", FOLLOWER_REPLICAS: "0:3,1:1"}
    assert restore_topic_config(config, added) == {LEADER_REPLICAS: "", FOLLOWER_REPLICAS: "1:1"}


def test_restore_never_touches_a_wildcard() -> None:
    added = AddedReplicas("foo", ("0:1",))
    assert restore_topic_config({LEADER_REPLICAS: "*"}, added) == {LEADER_REPLICAS: "*"}


def test_record_survives_the_status_round_trip() -> None:
    move_map = proposed_move_map({("foo", 0): [3, 1]}, {("foo", 0): [1, 2]})
    record = plan_throttle(3, 99, move_map, {1: {FOLLOWER_RATE: "12"}}, {"foo": {}})
    fields = record_fields(record)
    assert fields["applied"] is True and fields["brokers"] == [1, 2, 3] and fields["topics"] == ["foo"]
    assert record_from_fields(fields) == record
    assert record_from_fields({"applied": False, "rate": 99}) is None
    assert record_from_fields(None) is None


def test_replica_lists_parse_with_spaces_and_empties() -> None:
    assert parse_replica_list(" 0:1 , 1:2,") == ["0:1", "1:2"]
    assert parse_replica_list("") == [] and parse_replica_list(None) == []
