"""Unit tests for ``/admin/reassign_partitions``, ``/admin/preferred_replica_election``, delete markers."""

from __future__ import annotations

import pytest

from kafka_zk_operator.adapters.zk import znodes
from kafka_zk_operator.domain import errors

REASSIGN = b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[4,5,6]}]}'
ELECTION = b'{"version":1,"partitions":[{"topic":"foo","partition":0},{"topic":"foo","partition":1}]}'
RPATH = znodes.REASSIGN_PARTITIONS_PATH
EPATH = znodes.PREFERRED_REPLICA_ELECTION_PATH


# --------------------------------------------------------------------------- reassignment


def test_reassignment_reference_example_round_trips_byte_exact() -> None:
    entries = znodes.ReassignPartitionsZNode.decode(REASSIGN)
    assert entries == (znodes.PartitionReassignment("foo", 0, (4, 5, 6)),)
    assert znodes.ReassignPartitionsZNode.encode(entries) == REASSIGN


def test_reassignment_version_is_optional_and_numeric_strings_are_coerced_like_jackson() -> None:
    data = b'{"partitions":[{"topic":"foo","partition":"1","replicas":["2",3]}]}'
    assert znodes.ReassignPartitionsZNode.decode(data) == (znodes.PartitionReassignment("foo", 1, (2, 3)),)


def test_reassignment_encoder_writes_version_1_in_given_order_and_never_log_dirs() -> None:
    entries = [
        znodes.PartitionReassignment("b", 1, (1, 2)),
        znodes.PartitionReassignment("a", 0, (3, 1)),
    ]
    encoded = znodes.ReassignPartitionsZNode.encode(entries)
    assert encoded == (
        b'{"version":1,"partitions":[{"topic":"b","partition":1,"replicas":[1,2]},'
        b'{"topic":"a","partition":0,"replicas":[3,1]}]}'
    )
    assert b"log_dirs" not in encoded


def test_reassignment_empty_lists_decode_but_never_encode() -> None:
    data = b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[]}]}'
    entries = znodes.ReassignPartitionsZNode.decode(data)
    assert entries[0].replicas == ()
    with pytest.raises(ValueError, match="empty replica list"):
        znodes.ReassignPartitionsZNode.encode(entries)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([], "at least one partition"),
        ([znodes.PartitionReassignment("foo", 0, (1, 1))], "distinct non-negative"),
        ([znodes.PartitionReassignment("foo", 0, (1, -2))], "distinct non-negative"),
        ([znodes.PartitionReassignment("foo", -1, (1,))], "negative id"),
        ([znodes.PartitionReassignment("a/b", 0, (1,))], "contains '/'"),
        (
            [znodes.PartitionReassignment("foo", 0, (1,)), znodes.PartitionReassignment("foo", 0, (2,))],
            "twice",
        ),
    ],
)
def test_reassignment_encoder_refusals(entries: list[znodes.PartitionReassignment], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        znodes.ReassignPartitionsZNode.encode(entries)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"{", "not valid JSON"),
        (
            b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1],"log_dirs":["any"]}]}',
            "partitions[0] has unknown field 'log_dirs'; Kafka 2.0+ parses this znode strictly",
        ),
        (b'{"version":1,"partitions":[],"comment":"x"}', "has unknown field 'comment'"),
        (b'{"version":1}', "has no 'partitions'"),
        (b'{"version":1,"partitions":{}}', "'partitions' is {} (an object), expected a JSON list"),
        (b'{"version":"one","partitions":[]}', "'version' is 'one' (a string), expected an integer"),
        (b'{"version":1,"partitions":[{"partition":0,"replicas":[1]}]}', "partitions[0] has no 'topic'"),
        (b'{"version":1,"partitions":[{"topic":"foo","replicas":[1]}]}', "partitions[0] has no 'partition'"),
        (b'{"version":1,"partitions":[{"topic":"foo","partition":0}]}', "partitions[0] has no 'replicas'"),
        (
            b'{"version":1,"partitions":[{"topic":1,"partition":0,"replicas":[1]}]}',
            "partitions[0] 'topic' is 1",
        ),
        (b'{"version":1,"partitions":[{"topic":"a/b","partition":0,"replicas":[1]}]}', "contains '/'"),
        (
            b'{"version":1,"partitions":[{"topic":"foo","partition":-1,"replicas":[1]}]}',
            "expected at least 0",
        ),
        (
            b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":["x"]}]}',
            "'replicas' entry is 'x'",
        ),
        (
            b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,1]}]}',
            "lists a broker twice",
        ),
        (b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":null}]}', "'replicas' is null"),
        (
            b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1]},'
            b'{"topic":"foo","partition":0,"replicas":[2]}]}',
            "partition foo-0 is listed twice",
        ),
        (
            b'{"version":1,"partitions":["foo-0"]}',
            "partitions[0] is 'foo-0' (a string), expected a JSON object",
        ),
    ],
)
def test_malformed_reassignments_raise_naming_the_path(data: bytes, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.ReassignPartitionsZNode.decode(data, RPATH)
    assert caught.value.path == RPATH
    assert problem in caught.value.problem


# --------------------------------------------------------------------------- preferred election


def test_election_reference_example_round_trips_byte_exact() -> None:
    partitions = znodes.PreferredReplicaElectionZNode.decode(ELECTION)
    assert partitions == (znodes.TopicPartition("foo", 0), znodes.TopicPartition("foo", 1))
    assert znodes.PreferredReplicaElectionZNode.encode(partitions) == ELECTION


def test_election_is_lenient_like_kafka() -> None:
    data = (
        b'{"version":1,"partitions":[{"topic":"foo","partition":1,"x":1},'
        b'{"topic":"foo","partition":1}],"note":"hi"}'
    )
    assert znodes.PreferredReplicaElectionZNode.decode(data) == (znodes.TopicPartition("foo", 1),)


def test_election_encoder_dedupes_and_refuses_nonsense() -> None:
    tp = znodes.TopicPartition("foo", 0)
    assert znodes.PreferredReplicaElectionZNode.encode([tp, tp]) == (
        b'{"version":1,"partitions":[{"topic":"foo","partition":0}]}'
    )
    with pytest.raises(ValueError, match="at least one"):
        znodes.PreferredReplicaElectionZNode.encode([])
    with pytest.raises(ValueError, match="negative"):
        znodes.PreferredReplicaElectionZNode.encode([znodes.TopicPartition("foo", -1)])
    with pytest.raises(ValueError, match="contains '/'"):
        znodes.PreferredReplicaElectionZNode.encode([znodes.TopicPartition("a/b", 0)])


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b'{"version":1}', "has no 'partitions'"),
        (b'{"partitions":[]}', "has no 'version'"),
        (b'{"version":2,"partitions":[]}', "version 2 is not one Kafka writes here (1)"),
        (b'{"version":1,"partitions":[{"topic":"foo"}]}', "partitions[0] has no 'partition'"),
        (b'{"version":1,"partitions":[{"topic":"foo","partition":"0"}]}', "partitions[0] 'partition' is '0'"),
    ],
)
def test_malformed_elections_raise_naming_the_path(data: bytes, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.PreferredReplicaElectionZNode.decode(data, EPATH)
    assert caught.value.path == EPATH
    assert problem in caught.value.problem


# --------------------------------------------------------------------------- delete markers


def test_delete_topic_marker() -> None:
    assert znodes.DeleteTopicZNode.path("foo") == "/admin/delete_topics/foo"
    assert znodes.delete_topic_path("foo") == "/admin/delete_topics/foo"
    assert znodes.DeleteTopicZNode.DATA == b""
    with pytest.raises(errors.InvalidTopicName):
        znodes.DeleteTopicZNode.path("../brokers")


def test_topic_partition_renders_like_kafka() -> None:
    assert str(znodes.TopicPartition("foo", 3)) == "foo-3"
    assert znodes.PartitionReassignment("foo", 3, (1,)).topic_partition == znodes.TopicPartition("foo", 3)
