"""Reading a PartitionReassignment spec and Kafka's reassignment JSON (``domain.reassignment.request``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.reassignment.request import (
    Approval,
    BatchLimits,
    RackPolicy,
    RequestedPartition,
    parse_reassignment_json,
    parse_request,
)


def doc(*entries: dict[str, Any], **top: Any) -> str:
    return json.dumps({"version": 1, "partitions": list(entries), **top})


def test_explicit_spec_with_defaults() -> None:
    request = parse_request(
        {"mode": "Explicit", "partitions": [{"topic": "orders", "partition": 3, "replicas": [4, 1, 2]}]}
    )
    assert request.mode is Mode.EXPLICIT
    assert request.partitions == (RequestedPartition("orders", 3, (4, 1, 2)),)
    assert request.approval is Approval.AUTO
    assert request.batch == BatchLimits(50, 5)
    assert request.preferred_leader_election is True
    assert request.rack_policy is RackPolicy.ENFORCE
    assert request.throttle is None


def test_every_field_is_read() -> None:
    request = parse_request(
        {
            "mode": "AddBrokers",
            "cluster": "main",
            "brokers": [7, 8],
            "approval": "Manual",
            "throttle": 52428800,
            "batch": {"maxPartitions": 20, "maxMovesPerBroker": 4},
            "preferredLeaderElection": False,
            "rackPolicy": "Warn",
            "tolerance": 1,
        }
    )
    assert (request.cluster, request.brokers, request.approval) == ("main", (7, 8), Approval.MANUAL)
    assert request.throttle == 52428800
    assert request.batch == BatchLimits(20, 4)
    assert (request.preferred_leader_election, request.rack_policy, request.tolerance) == (
        False,
        RackPolicy.WARN,
        1,
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "spec.mode is required"),
        ({"mode": "Shuffle"}, "spec.mode is 'Shuffle'"),
        ({"mode": "Explicit"}, "exactly one of spec.partitions and spec.reassignmentJson"),
        ({"mode": "AddBrokers"}, "needs spec.brokers"),
        ({"mode": "RemoveBrokers", "brokers": [3, 3]}, "lists a broker twice"),
        ({"mode": "ReplicationFactor"}, "needs spec.replicationFactors"),
        ({"mode": "Rebalance", "topicsRegex": "("}, "not a valid regular expression"),
        ({"mode": "Rebalance", "throttle": 0}, "spec.throttle must be between 1"),
        ({"mode": "Rebalance", "batch": {"maxPartitions": 0}}, "spec.batch.maxPartitions"),
        ({"mode": "Rebalance", "approval": "Maybe"}, "spec.approval"),
    ],
)
def test_bad_specs_name_the_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(errors.InvalidSpec, match=message.replace("(", r"\(")):
        parse_request(spec)


def test_partition_list_refuses_duplicate_partitions_and_brokers_at_once() -> None:
    with pytest.raises(errors.InvalidSpec) as caught:
        parse_request(
            {
                "mode": "Explicit",
                "partitions": [
                    {"topic": "t", "partition": 0, "replicas": [1, 1]},
                    {"topic": "t", "partition": 0, "replicas": [1, 2]},
                ],
            }
        )
    assert "t-0 lists broker 1 more than once" in caught.value.message
    assert "t-0 is listed twice" in caught.value.message


def test_kafka_json_reads_like_the_tool() -> None:
    parsed = parse_reassignment_json(doc({"topic": "foo", "partition": 1, "replicas": [4, 5, 6]}))
    assert parsed == (RequestedPartition("foo", 1, (4, 5, 6)),)


def test_kafka_json_without_version_defaults_to_version_1_and_numeric_strings_are_numbers() -> None:
    text = json.dumps({"partitions": [{"topic": "foo", "partition": "2", "replicas": ["1", 2]}]})
    assert parse_reassignment_json(text) == (RequestedPartition("foo", 2, (1, 2)),)


def test_log_dirs_any_as_generate_prints_it_is_accepted_and_dropped() -> None:
    text = doc({"topic": "foo", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]})
    assert parse_reassignment_json(text) == (RequestedPartition("foo", 0, (1, 2)),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"version":1,"partitions":[', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        (doc(version=2), "version 2 is not supported"),
        (json.dumps({"version": 1}), "cannot be empty"),
        (doc(), "cannot be empty"),
        (json.dumps({"version": 1, "partitions": {"a": 1}}), "'partitions' must be a list"),
        (doc({"partition": 0, "replicas": [1]}), "'topic' must be a non-empty string"),
        (doc({"topic": "t", "partition": -1, "replicas": [1]}), "non-negative"),
        (doc({"topic": "t", "partition": 0, "replicas": "1,2"}), "'replicas' must be a list"),
        (doc({"topic": "t", "partition": 0, "replicas": [1.5]}), "must be an integer"),
        (doc({"topic": "t", "partition": 0, "replicas": []}), "empty replica list"),
        (doc({"topic": "t", "partition": 0, "replicas": [2, 2]}), "broker 2 more than once"),
        (
            doc(
                {"topic": "t", "partition": 0, "replicas": [1]},
                {"topic": "t", "partition": 0, "replicas": [2]},
            ),
            "t-0 is listed twice",
        ),
        (
            doc({"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["any"]}),
            "one directory per replica",
        ),
        (doc({"topic": "t", "partition": 0, "replicas": [1], "log_dirs": ["/data/a"]}), "intra-broker move"),
    ],
)
def test_bad_kafka_json_is_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(errors.InvalidSpec, match=message):
        parse_reassignment_json(text)


def test_explicit_json_through_the_spec() -> None:
    request = parse_request(
        {"mode": "Explicit", "reassignmentJson": doc({"topic": "a", "partition": 0, "replicas": [3]})}
    )
    assert request.partitions == (RequestedPartition("a", 0, (3,)),)


@pytest.mark.parametrize("balance", ["bytes", "both"])
def test_balance_reaches_the_engine_requests(balance: str) -> None:
    from kafka_zk_operator.domain import placement
    from kafka_zk_operator.domain.reassignment.plan import ClusterView
    from kafka_zk_operator.domain.reassignment.request import rule_of

    request = parse_request({"mode": "Rebalance", "balance": balance})
    assert request.balance == balance and request.needs_sizes
    view = ClusterView(brokers={1: None, 2: None}, assignments={"t": {0: (1, 2)}})
    rule = rule_of(request)
    assert rule.engine_requests is not None
    (engine,) = rule.engine_requests(request, view)
    assert engine.balance is placement.Balance(balance)
    assert not parse_request({"mode": "Rebalance"}).needs_sizes


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"mode": "Rebalance", "balance": "disk"},
            "spec.balance is 'disk'; expected one of: replicas, bytes, both",
        ),
        (
            {
                "mode": "Explicit",
                "partitions": [{"topic": "t", "partition": 0, "replicas": [1]}],
                "balance": "bytes",
            },
            "spec.balance is only used by the computed modes",
        ),
    ],
)
def test_bad_balance_is_refused_with_the_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(errors.InvalidSpec, match=message):
        parse_request(spec)
