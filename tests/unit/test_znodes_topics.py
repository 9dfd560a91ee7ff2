"""Unit tests for the topic znode codecs: ``/brokers/topics/<t>`` v1-v3, topic ids, partition ``state``."""

from __future__ import annotations

import json
import random
from types import MappingProxyType

import pytest

from kafka_zk_operator.adapters.zk import znodes, znodes_topics
from kafka_zk_operator.domain import errors, model

PATH = "/brokers/topics/foo"
TOPIC_ID = "fuxffnL_TWKJE99B8vHPmQ"

# Examples of the reference (§3.1), byte for byte in Kafka's compact style.
V1 = b'{"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]}}'
V2 = b'{"version":2,"partitions":{"0":[1,2,3],"1":[2,3,1]},"adding_replicas":{},"removing_replicas":{}}'
V3 = (
    b'{"version":3,"topic_id":"fuxffnL_TWKJE99B8vHPmQ","partitions":{"0":[4,5,6,1,2,3],"1":[2,3,1]},'
    b'"adding_replicas":{"0":[4,5,6]},"removing_replicas":{"0":[1,2,3]}}'
)


def assignment(**overrides: object) -> model.TopicAssignment:
    fields: dict[str, object] = {"partitions": MappingProxyType({0: (1, 2, 3), 1: (2, 3, 1)}), "version": 3}
    fields.update(overrides)
    return model.TopicAssignment(**fields)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("data", [V1, V2, V3], ids=["v1", "v2", "v3"])
def test_reference_examples_round_trip_byte_exact(data: bytes) -> None:
    decoded = znodes.TopicZNode.decode(data, PATH)
    assert znodes.TopicZNode.encode(decoded) == data


def test_v3_example_decodes_every_field() -> None:
    decoded = znodes.TopicZNode.decode(V3, PATH)
    assert decoded.version == 3
    assert decoded.topic_id == TOPIC_ID
    assert dict(decoded.partitions) == {0: (4, 5, 6, 1, 2, 3), 1: (2, 3, 1)}
    assert dict(decoded.adding_replicas) == {0: (4, 5, 6)}
    assert dict(decoded.removing_replicas) == {0: (1, 2, 3)}
    assert decoded.is_reassigning
    assert decoded.replication_factor == 3


def test_v1_decodes_without_reassignment_fields() -> None:
    decoded = znodes.TopicZNode.decode(V1, PATH)
    assert (decoded.version, decoded.topic_id, dict(decoded.adding_replicas)) == (1, None, {})


def test_v3_without_topic_id_round_trips() -> None:
    data = b'{"version":3,"partitions":{"0":[1]},"adding_replicas":{},"removing_replicas":{}}'
    decoded = znodes.TopicZNode.decode(data, PATH)
    assert decoded.topic_id is None
    assert znodes.TopicZNode.encode(decoded) == data


def test_unknown_fields_are_preserved_across_decode_and_encode() -> None:
    data = (
        b'{"version":3,"topic_id":"fuxffnL_TWKJE99B8vHPmQ","partitions":{"0":[1]},'
        b'"adding_replicas":{},"removing_replicas":{},"future_field":{"a":[1,2]},"other":"x"}'
    )
    decoded = znodes.TopicZNode.decode(data, PATH)
    assert dict(decoded.extra) == {"future_field": {"a": [1, 2]}, "other": "x"}
    assert znodes.TopicZNode.encode(decoded) == data


def test_unknown_fields_survive_adding_a_partition() -> None:
    """The add-partitions rewrite: read, append, write back - topic_id and unknown keys kept."""
    data = (
        b'{"removing_replicas":{},"partitions":{"0":[1,2]},"x-ext":7,"topic_id":"fuxffnL_TWKJE99B8vHPmQ",'
        b'"adding_replicas":{},"version":3}'
    )
    current = znodes.TopicZNode.decode(data, PATH)
    grown = model.TopicAssignment(
        partitions=MappingProxyType({**current.partitions, 1: (2, 1)}),
        topic_id=current.topic_id,
        adding_replicas=current.adding_replicas,
        removing_replicas=current.removing_replicas,
        version=current.version,
        extra=current.extra,
    )
    written = json.loads(znodes.TopicZNode.encode(grown))
    assert written == {
        "version": 3,
        "topic_id": TOPIC_ID,
        "partitions": {"0": [1, 2], "1": [2, 1]},
        "adding_replicas": {},
        "removing_replicas": {},
        "x-ext": 7,
    }


def test_partition_keys_are_sorted_numerically() -> None:
    parts = MappingProxyType({p: (p % 3,) for p in (10, 2, 1, 0, 11, 9)})
    encoded = znodes.TopicZNode.encode(assignment(partitions=parts, version=1))
    assert encoded == b'{"version":1,"partitions":{"0":[0],"1":[1],"2":[2],"9":[0],"10":[1],"11":[2]}}'


def test_decoded_partitions_are_sorted_and_read_only() -> None:
    decoded = znodes.TopicZNode.decode(b'{"version":1,"partitions":{"10":[1],"2":[2],"0":[3]}}', PATH)
    assert list(decoded.partitions) == [0, 2, 10]
    with pytest.raises(TypeError):
        decoded.partitions[5] = (1,)  # type: ignore[index]


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (1, b'{"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]}}'),
        (2, V2),
        (
            3,
            b'{"version":3,"partitions":{"0":[1,2,3],"1":[2,3,1]},"adding_replicas":{},"removing_replicas":{}}',
        ),
    ],
)
def test_encoder_writes_the_requested_version(version: int, expected: bytes) -> None:
    assert znodes.TopicZNode.encode(assignment(), version=version) == expected


def test_encoder_writes_topic_id_only_when_known() -> None:
    assert b"topic_id" not in znodes.TopicZNode.encode(assignment())
    assert b'"topic_id":"fuxffnL_TWKJE99B8vHPmQ"' in znodes.TopicZNode.encode(assignment(topic_id=TOPIC_ID))


def test_encoder_omits_empty_reassignment_entries() -> None:
    moving = assignment(adding_replicas=MappingProxyType({0: (), 1: (1,)}))
    assert b'"adding_replicas":{"1":[1]}' in znodes.TopicZNode.encode(moving)


@pytest.mark.parametrize(
    ("kafka_version", "expected"),
    [((0, 8, 2), 1), ((2, 3, 1), 1), ((2, 4), 2), ((2, 7, 0), 2), ((2, 8, 0), 3), ((3, 9, 2), 3)],
)
def test_topic_znode_version_for_mirrors_the_clusters_writer(
    kafka_version: tuple[int, ...], expected: int
) -> None:
    assert znodes.topic_znode_version_for(kafka_version) == expected


# --------------------------------------------------------------------------- encoder refusals


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"topic_id": TOPIC_ID, "version": 2}, "cannot carry topic_id"),
        ({"topic_id": TOPIC_ID, "version": 1}, "KAFKA-14190"),
        ({"adding_replicas": MappingProxyType({0: (4,)}), "version": 1}, "version 1 cannot carry"),
        ({"topic_id": "not-an-id"}, "22-character"),
        ({"adding_replicas": MappingProxyType({7: (4,)})}, "not in partitions"),
        ({"version": 4}, "not one Kafka writes"),
        ({"extra": MappingProxyType({"partitions": {}})}, "collide"),
    ],
)
def test_encoder_refuses_lossy_or_invalid_output(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        znodes.TopicZNode.encode(assignment(**kwargs))


# --------------------------------------------------------------------------- malformed input


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "has no data"),
        (None, "has no data"),
        (b"\xff\xfe", "not valid UTF-8"),
        (b'{"version":1,', "not valid JSON"),
        (b'{"version":1,"partitions":{"0":[NaN]}}', "not valid JSON"),
        (b"[1,2]", "expected a JSON object"),
        (b'{"partitions":{"0":[1]}}', "has no 'version'"),
        (b'{"version":"3","partitions":{"0":[1]}}', "'version' is '3' (a string), expected an integer"),
        (b'{"version":4,"partitions":{"0":[1]}}', "version 4 is not one Kafka writes here (1, 2, 3)"),
        (b'{"version":1}', "has no 'partitions'"),
        (b'{"version":1,"partitions":[]}', "'partitions' is [] (a list), expected a JSON object"),
        (
            b'{"version":1,"partitions":{"3":[1,"x"]}}',
            "partition '3' replica list contains 'x', expected integers",
        ),
        (b'{"version":1,"partitions":{"0":[1.0]}}', "contains 1.0, expected integers"),
        (b'{"version":1,"partitions":{"0":[true]}}', "contains true, expected integers"),
        (b'{"version":1,"partitions":{"0":[4294967296]}}', "contains 4294967296, expected 32-bit integers"),
        (b'{"version":1,"partitions":{"0":[-1]}}', "contains -1, expected at least 0"),
        (b'{"version":1,"partitions":{"0":[1,1]}}', "contains 1 twice"),
        (b'{"version":1,"partitions":{"0":"1,2"}}', "replica list is '1,2' (a string), expected a JSON list"),
        (b'{"version":1,"partitions":{"x":[1]}}', "has key 'x', expected a partition id"),
        (b'{"version":1,"partitions":{"01":[1]}}', "has key '01'"),
        (b'{"version":1,"partitions":{"-1":[1]}}', "has key '-1'"),
        (b'{"version":1,"partitions":{"+1":[1]}}', "has key '+1'"),
        (
            b'{"version":3,"topic_id":"abc","partitions":{}}',
            "topic_id 'abc' is not a 22-character Kafka Uuid",
        ),
        (
            b'{"version":3,"topic_id":"123e4567-e89b-12d3-a456-426614174000","partitions":{}}',
            "is not a 22-character Kafka Uuid",
        ),
        (b'{"version":3,"topic_id":"AAAAAAAAAAAAAAAAAAAAAA","partitions":{}}', "reserved"),
        (b'{"version":3,"topic_id":7,"partitions":{}}', "'topic_id' is 7 (an integer), expected a string"),
        (b'{"version":3,"topic_id":null,"partitions":{}}', "'topic_id' is null, expected a string"),
        (b'{"version":2,"topic_id":"fuxffnL_TWKJE99B8vHPmQ","partitions":{}}', "only in version 3"),
        (b'{"version":1,"partitions":{"0":[1]},"adding_replicas":{}}', "version 1 has 'adding_replicas'"),
        (
            b'{"version":2,"partitions":{"0":[1]},"adding_replicas":{"1":[2]}}',
            "names partition '1', which is not",
        ),
        (b'{"version":2,"partitions":{"0":[1,2]},"removing_replicas":{"0":[3]}}', "replicas [3] outside"),
        (b'{"version":2,"partitions":{"0":[1]},"adding_replicas":[]}', "'adding_replicas' is [] (a list)"),
    ],
)
def test_malformed_topic_znodes_raise_naming_the_path(data: bytes | None, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.TopicZNode.decode(data, PATH)
    assert caught.value.path == PATH
    assert problem in caught.value.problem
    assert PATH in str(caught.value)
    assert not caught.value.retryable


def test_empty_replica_lists_decode_because_kafka_can_write_them() -> None:
    decoded = znodes.TopicZNode.decode(b'{"version":1,"partitions":{"0":[]}}', PATH)
    assert dict(decoded.partitions) == {0: ()}


def test_empty_reassignment_entries_mean_nothing_moves() -> None:
    data = b'{"version":2,"partitions":{"0":[1]},"adding_replicas":{"0":[]},"removing_replicas":{}}'
    assert not znodes.TopicZNode.decode(data, PATH).is_reassigning


# --------------------------------------------------------------------------- paths


def test_topic_paths() -> None:
    assert znodes.TopicZNode.path("foo") == "/brokers/topics/foo"
    assert znodes.topic_partitions_path("foo") == "/brokers/topics/foo/partitions"
    assert znodes.partition_path("foo", 3) == "/brokers/topics/foo/partitions/3"
    assert znodes.PartitionStateZNode.path("foo", 3) == "/brokers/topics/foo/partitions/3/state"


@pytest.mark.parametrize("topic", ["", ".", "..", "a/b", "../../controller", "x\x00", "tab\there"])
def test_topic_paths_refuse_names_that_escape_the_segment(topic: str) -> None:
    with pytest.raises(errors.InvalidTopicName, match="Cannot build a znode path"):
        znodes.topic_path(topic)
    with pytest.raises(errors.InvalidTopicName):
        znodes.delete_topic_path(topic)
    with pytest.raises(errors.InvalidTopicName):
        znodes.topic_config_path(topic)


@pytest.mark.parametrize("partition", [-1, True, 2**31])
def test_partition_paths_refuse_bad_partition_ids(partition: int) -> None:
    with pytest.raises(errors.InvalidPartitions):
        znodes.partition_state_path("foo", partition)


# --------------------------------------------------------------------------- topic ids


def test_generated_topic_ids_are_valid_and_deterministic_for_a_seed() -> None:
    first = [znodes.generate_topic_id(random.Random(42)) for _ in range(3)]
    assert len(set(first)) == 1
    rng = random.Random(7)
    ids = [znodes.generate_topic_id(rng) for _ in range(500)]
    assert len(set(ids)) == 500
    for topic_id in ids:
        assert znodes.is_valid_topic_id(topic_id)
        assert len(topic_id) == znodes.TOPIC_ID_LENGTH
        assert not topic_id.startswith("-")
        raw = znodes.topic_id_to_bytes(topic_id)
        assert raw[6] >> 4 == 4  # RFC 4122 version 4, like java.util.UUID.randomUUID()
        assert raw[8] >> 6 == 0b10  # RFC 4122 variant


def test_generator_accepts_a_bytes_source_and_redraws_ids_starting_with_dash() -> None:
    draws = iter([b"\xf8" + bytes(15), bytes(range(16))])  # '+8...' → url-safe '-' first, then a fine one
    topic_id = znodes.generate_topic_id(lambda n: next(draws))
    assert topic_id == znodes.topic_id_from_bytes(
        bytes([0, 1, 2, 3, 4, 5, 0x46, 7, 0x88, 9, 10, 11, 12, 13, 14, 15])
    )
    assert not topic_id.startswith("-")


def test_generator_gives_up_on_a_source_that_only_yields_unusable_ids() -> None:
    with pytest.raises(ValueError, match="no usable topic id"):
        znodes.generate_topic_id(lambda n: b"\xfb" + bytes(n - 1))
    with pytest.raises(ValueError, match="returned 3 bytes"):
        znodes.generate_topic_id(lambda n: b"abc")


@pytest.mark.parametrize(
    ("topic_id", "problem"),
    [
        ("abc", "22-character"),
        ("fuxffnL_TWKJE99B8vHPmQ==", "22-character"),
        ("fuxffnL+TWKJE99B8vHPmQ", "22-character"),  # standard, not URL-safe, base64
        ("fuxffnL_TWKJE99B8vHPmR", "stray bits"),
        (znodes.ZERO_TOPIC_ID, "reserved"),
        (znodes.METADATA_TOPIC_ID, "reserved"),
    ],
)
def test_topic_id_validator_explains_the_problem(topic_id: str, problem: str) -> None:
    reason = znodes.topic_id_problem(topic_id)
    assert reason is not None and problem in reason
    assert not znodes.is_valid_topic_id(topic_id)


def test_a_topic_id_starting_with_dash_is_valid_and_round_trips() -> None:
    """Kafka 2.8-3.1 generated them (one in 64); this one was written by a real 2.8.2 controller."""
    topic_id = "-QAsp4o6T0ug2lV6PHF9ew"
    assert znodes.is_valid_topic_id(topic_id)
    data = json.dumps({"version": 3, "topic_id": topic_id, "partitions": {"0": [1]}}).encode()
    decoded = znodes.TopicZNode.decode(data, "/brokers/topics/t")
    assert decoded.topic_id == topic_id
    assert json.loads(znodes.TopicZNode.encode(decoded))["topic_id"] == topic_id


def test_topic_id_bytes_round_trip() -> None:
    assert znodes.topic_id_from_bytes(znodes.topic_id_to_bytes(TOPIC_ID)) == TOPIC_ID


# --------------------------------------------------------------------------- partition state


STATE_PATH = "/brokers/topics/foo/partitions/0/state"
STATE = b'{"controller_epoch":12,"leader":2,"version":1,"leader_epoch":7,"isr":[2,3,1]}'


def test_partition_state_reference_example_decodes() -> None:
    state = znodes.PartitionStateZNode.decode(STATE, STATE_PATH, zk_version=5)
    assert state == model.PartitionState(
        leader=2,
        isr=(2, 3, 1),
        leader_epoch=7,
        controller_epoch=12,
        leader_recovery_state=0,
        partition_epoch=5,
    )


def test_partition_state_leaderless_and_recovering() -> None:
    data = (
        b'{"controller_epoch":1,"leader":-1,"version":1,"leader_epoch":3,"isr":[1],"leader_recovery_state":1}'
    )
    state = znodes.PartitionStateZNode.decode(data, STATE_PATH, zk_version=0)
    assert (state.leader, state.leader_recovery_state) == (znodes.NO_LEADER, znodes.LEADER_RECOVERING)


def test_partition_state_ignores_unknown_keys() -> None:
    data = b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1],"future":true}'
    assert znodes.PartitionStateZNode.decode(data, STATE_PATH, zk_version=0).leader == 1


def test_partition_state_is_decode_only() -> None:
    assert not hasattr(znodes.PartitionStateZNode, "encode")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b'{"controller_epoch":1,"version":1,"leader_epoch":0,"isr":[1]}', "has no 'leader'"),
        (
            b'{"controller_epoch":1,"leader":-2,"version":1,"leader_epoch":0,"isr":[1]}',
            "expected at least -1",
        ),
        (b'{"controller_epoch":1,"leader":1,"version":2,"leader_epoch":0,"isr":[1]}', "version 2 is not"),
        (b'{"controller_epoch":1,"leader":1,"leader_epoch":0,"isr":[1]}', "has no 'version'"),
        (b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":"1"}', "'isr' is '1'"),
        (b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,1]}', "contains 1 twice"),
        (
            b'{"controller_epoch":"1","leader":1,"version":1,"leader_epoch":0,"isr":[1]}',
            "'controller_epoch' is '1'",
        ),
        (
            b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1],"leader_recovery_state":2}',
            "expected 0 (recovered) or 1 (recovering)",
        ),
    ],
)
def test_malformed_partition_states_raise_naming_the_path(data: bytes, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.PartitionStateZNode.decode(data, STATE_PATH, zk_version=0)
    assert caught.value.path == STATE_PATH
    assert problem in caught.value.problem


def test_partition_state_needs_a_real_zk_version() -> None:
    with pytest.raises(ValueError, match=r"stat\.version"):
        znodes.PartitionStateZNode.decode(STATE, STATE_PATH, zk_version=-1)


@pytest.mark.parametrize("topic", ["orders", "a.b-c_d", "__consumer_offsets"])
def test_topic_of_path_inverts_the_topic_and_partition_state_paths(topic: str) -> None:
    assert znodes_topics.topic_of_path(znodes_topics.topic_path(topic)) == topic
    assert znodes_topics.topic_of_path(znodes_topics.partition_state_path(topic, 7)) == topic


@pytest.mark.parametrize(
    "path",
    [
        "/brokers/topics",
        "/brokers/topics/",
        "/brokers/ids/1",
        "/config/topics/orders",
        "/brokers/topics/orders/partitions",
        "/brokers/topics/orders/partitions/0",
        "/brokers/topics/orders/partitions/0/other",
    ],
)
def test_topic_of_path_is_none_for_other_paths(path: str) -> None:
    assert znodes_topics.topic_of_path(path) is None
