"""Unit tests for config entity znodes and ``/config/changes`` notifications."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from kafka_zk_operator.adapters.zk import znodes
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import lines as kafka_lines

PATH = "/config/topics/foo"
ENTITY = b'{"version":1,"config":{"retention.ms":"86400000","cleanup.policy":"compact"}}'


# --------------------------------------------------------------------------- entities


def test_reference_example_round_trips_byte_exact_in_key_order() -> None:
    entity = znodes.ConfigEntityZNode.decode(ENTITY, PATH)
    assert list(entity.config.items()) == [("retention.ms", "86400000"), ("cleanup.policy", "compact")]
    assert znodes.ConfigEntityZNode.encode(entity) == ENTITY


def test_empty_config_round_trips() -> None:
    data = b'{"version":1,"config":{}}'
    assert znodes.ConfigEntityZNode.encode(znodes.ConfigEntityZNode.decode(data, PATH)) == data


def test_encode_accepts_a_plain_mapping() -> None:
    assert (
        znodes.ConfigEntityZNode.encode({"retention.ms": "86400000", "cleanup.policy": "compact"}) == ENTITY
    )


def test_unknown_top_level_keys_are_kept_for_the_rewrite() -> None:
    data = b'{"version":1,"config":{"a":"1"},"future":[1]}'
    entity = znodes.ConfigEntityZNode.decode(data, PATH)
    assert dict(entity.extra) == {"future": [1]}
    assert znodes.ConfigEntityZNode.encode(entity) == data


def test_non_ascii_values_are_written_as_utf8_like_jackson() -> None:
    encoded = znodes.ConfigEntityZNode.encode({"k": 'é"\\'})
    assert encoded == '{"version":1,"config":{"k":"é\\"\\\\"}}'.encode()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"retention.ms": 86400000}, "Config 'retention.ms' has value 86400000 \\(int\\)"),
        ({"a": None}, "has value None"),
        ({"a": True}, "has value True"),
        ({"": "x"}, "not a non-empty string"),
    ],
)
def test_encode_rejects_non_string_values(config: dict[str, object], message: str) -> None:
    with pytest.raises(errors.InvalidConfig, match=message):
        znodes.ConfigEntityZNode.encode(config)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "has no data"),
        (
            b'{"version":1,"config":{"retention.ms":86400000}}',
            "config 'retention.ms' has value 86400000 (an integer)",
        ),
        (b'{"version":1,"config":{"a":null}}', "config 'a' has value null, expected a string"),
        (b'{"version":1,"config":{"a":["x"]}}', "config 'a' has value [\"x\"] (a list)"),
        (b'{"version":2,"config":{}}', "version 2 is not one Kafka writes here (1)"),
        (b'{"version":1}', "has no 'config'"),
        (b'{"version":1,"config":"a=1"}', "'config' is 'a=1' (a string), expected a JSON object"),
    ],
)
def test_malformed_config_entities_raise_naming_the_path(data: bytes, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.ConfigEntityZNode.decode(data, PATH)
    assert caught.value.path == PATH
    assert problem in caught.value.problem


def test_config_paths() -> None:
    assert znodes.topic_config_path("foo") == "/config/topics/foo"
    assert znodes.ConfigEntityZNode.path("topics", "foo") == "/config/topics/foo"
    assert znodes.broker_config_path(3) == "/config/brokers/3"
    assert znodes.broker_config_path(None) == "/config/brokers/<default>"
    assert znodes.config_entity_path(znodes.ConfigEntityType.USERS, "alice") == "/config/users/alice"
    assert znodes.config_entity_path("ips", "10.0.0.1") == "/config/ips/10.0.0.1"
    assert znodes.config_entity_path("clients", "<default>") == "/config/clients/<default>"
    assert znodes.user_client_config_path("alice", "app%2F1") == "/config/users/alice/clients/app%2F1"


def test_config_paths_refuse_path_injection() -> None:
    with pytest.raises(errors.InvalidTopicName):
        znodes.ConfigEntityZNode.path("topics", "a/b")
    with pytest.raises(errors.InvalidSpec, match="contains '/'"):
        znodes.config_entity_path("users", "alice/clients/x")
    with pytest.raises(ValueError):
        znodes.config_entity_path("groups", "g")


# --------------------------------------------------------------------------- notifications


CHANGE_PATH = "/config/changes/config_change_0000000042"


@pytest.mark.parametrize(
    ("data", "entity_path", "version"),
    [
        (b'{"version":2,"entity_path":"topics/foo"}', "topics/foo", 2),
        (b'{"version":2,"entity_path":"brokers/3"}', "brokers/3", 2),
        (b'{"version":2,"entity_path":"brokers/<default>"}', "brokers/<default>", 2),
        (b'{"version":2,"entity_path":"users/alice/clients/app"}', "users/alice/clients/app", 2),
        (b'{"version":1,"entity_type":"topics","entity_name":"foo"}', "topics/foo", 1),
        (b'{"version":1,"entity_type":"clients","entity_name":"app"}', "clients/app", 1),
        (b'"foo"', "topics/foo", 0),
    ],
    ids=["v2-topic", "v2-broker", "v2-default", "v2-user-client", "v1-topic", "v1-client", "0.8"],
)
def test_notifications_round_trip_byte_exact(data: bytes, entity_path: str, version: int) -> None:
    notification = znodes.ConfigChangeZNode.decode(data, CHANGE_PATH)
    assert notification == znodes.ConfigChangeNotification(entity_path, version)
    assert znodes.ConfigChangeZNode.encode(notification) == data


def test_notification_entity_parts() -> None:
    notification = znodes.ConfigChangeNotification("users/alice/clients/app")
    assert notification.entity_type is znodes.ConfigEntityType.USERS
    assert notification.entity_name == "alice/clients/app"


def test_notification_constructors() -> None:
    assert znodes.ConfigChangeNotification.for_topic("foo").entity_path == "topics/foo"
    assert znodes.ConfigChangeNotification.for_broker(None).entity_path == "brokers/<default>"
    assert znodes.ConfigChangeNotification.for_broker(2, version=1).version == 1
    assert znodes.ConfigChangeNotification.for_entity("users", "alice/clients/app").entity_path == (
        "users/alice/clients/app"
    )
    with pytest.raises(errors.InvalidSpec):
        znodes.ConfigChangeNotification.for_entity("users", "alice//x")
    with pytest.raises(errors.InvalidTopicName):
        znodes.ConfigChangeNotification.for_topic("../x")


@pytest.mark.parametrize(
    ("kafka_version", "expected"),
    [((0, 8, 2, 2), 0), ((0, 9, 0, 1), 1), ((0, 10, 0, 1), 1), ((0, 10, 1, 0), 2), ((3, 9, 2), 2)],
)
def test_config_change_version_for(kafka_version: tuple[int, ...], expected: int) -> None:
    assert znodes.config_change_version_for(kafka_version) == expected


@pytest.mark.parametrize(
    ("registrations", "entity_type", "expected"),
    [
        ([5, 5, 5], "topics", 2),  # 2.7+
        ([4, 4], "topics", 2),  # 0.10.2 - 2.6
        ([3, 3, 3], "topics", 1),  # 0.10.0 / 0.10.1: 0.10.0 refuses v2
        ([3, 3, 3], "clients", 1),
        ([4, 3, 5], "topics", 1),  # a rolling upgrade: the oldest broker decides
        ([4, 5], "brokers", 2),
        ([], "topics", 1),  # no live broker: the line is unknown, and v1 is what every line reads
        ([], "clients", 1),
    ],
)
def test_config_change_version_is_one_every_live_broker_reads(
    registrations: list[int], entity_type: str, expected: int
) -> None:
    line = kafka_lines.cluster_line(dict(enumerate(registrations)), None)
    version = znodes.config_change_version_for_line(line, entity_type)
    assert version == expected
    name = "3" if entity_type == "brokers" else "x"
    encoded = znodes.ConfigChangeZNode.encode(
        znodes.ConfigChangeNotification(f"{entity_type}/{name}", version)
    )
    assert (
        znodes.ConfigChangeZNode.decode(encoded, "/config/changes/config_change_0000000001").version
        == version
    )


def test_config_change_version_follows_the_declared_line() -> None:
    assert znodes.config_change_version_for_line(kafka_lines.cluster_line({1: 3}, (0, 10, 1)), "topics") == 2
    assert znodes.config_change_version_for_line(kafka_lines.cluster_line({1: 5}, (0, 10, 0)), "topics") == 1


@pytest.mark.parametrize("registrations", [[3, 3], [], [4, 3]])
@pytest.mark.parametrize("entity_type", ["brokers", "users", "ips"])
def test_dynamic_broker_configs_are_refused_before_0_10_1(registrations: list[int], entity_type: str) -> None:
    """v1 cannot name brokers, and 0.10.0 has no dynamic broker configs: nothing a broker could choke on."""
    line = kafka_lines.cluster_line(dict(enumerate(registrations)), None)
    with pytest.raises(
        errors.NotSupported, match=r"need Kafka 0\.10\.1 or later; this cluster runs Kafka 0\.10\.0"
    ):
        znodes.config_change_version_for_line(line, entity_type)


@pytest.mark.parametrize(
    ("notification", "message"),
    [
        (znodes.ConfigChangeNotification("brokers/1", 1), "v1 notification cannot express"),
        (znodes.ConfigChangeNotification("users/a/clients/b", 1), "v1 notification cannot express"),
        (znodes.ConfigChangeNotification("clients/app", 0), "names only topics"),
        (znodes.ConfigChangeNotification("topics/foo", 3), "not one of"),
        (znodes.ConfigChangeNotification("groups/g"), "does not start with one of"),
        (znodes.ConfigChangeNotification("topics/"), "does not start with one of"),
        (znodes.ConfigChangeNotification("topics"), "does not start with one of"),
        (znodes.ConfigChangeNotification("topics/a/../b"), "relative path element"),
    ],
)
def test_notification_encoder_refusals(notification: znodes.ConfigChangeNotification, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        znodes.ConfigChangeZNode.encode(notification)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "has no data"),
        (b"foo", "not valid JSON"),
        (b'{"version":3,"entity_path":"topics/foo"}', "version 3 is not one Kafka writes here (1, 2)"),
        (b'{"entity_path":"topics/foo"}', "has no 'version'"),
        (b'{"version":2}', "has no 'entity_path'"),
        (b'{"version":2,"entity_path":"foo"}', "entity_path 'foo' does not start with one of 'topics/'"),
        (b'{"version":2,"entity_path":"groups/g"}', "does not start with one of"),
        (b'{"version":2,"entity_path":7}', "'entity_path' is 7 (an integer)"),
        (b'{"version":1,"entity_type":"brokers","entity_name":"1"}', "expected 'topics' or 'clients'"),
        (b'{"version":1,"entity_name":"foo"}', "has no 'entity_type'"),
        (b'{"version":1,"entity_type":"topics"}', "has no 'entity_name'"),
        (b'{"version":1,"entity_type":"topics","entity_name":"a/b"}', "contains '/'"),
        (b'"a/b"', "contains '/'"),
        (b"[]", "expected a JSON object"),
    ],
)
def test_malformed_notifications_raise_naming_the_path(data: bytes, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.ConfigChangeZNode.decode(data, CHANGE_PATH)
    assert caught.value.path == CHANGE_PATH
    assert problem in caught.value.problem


def test_unknown_notification_keys_are_ignored() -> None:
    data = b'{"version":2,"entity_path":"topics/foo","origin":"kzo"}'
    assert znodes.ConfigChangeZNode.decode(data, CHANGE_PATH).entity_path == "topics/foo"


def test_sequential_create_path_and_sequence_numbers() -> None:
    assert znodes.ConfigChangeZNode.create_path() == "/config/changes/config_change_"
    assert znodes.CONFIG_CHANGE_CREATE_PATH == znodes.CONFIG_CHANGES_PATH + "/" + znodes.CONFIG_CHANGE_PREFIX
    assert znodes.config_change_sequence("config_change_0000000042") == 42
    assert znodes.config_change_sequence("config_change_2147483647") == 2**31 - 1
    assert znodes.config_change_sequence("config_change_-000000001") == -1  # ZooKeeper counter overflow
    names = ["config_change_0000000010", "config_change_0000000009"]
    assert sorted(names, key=znodes.config_change_sequence) == sorted(names)


@pytest.mark.parametrize(
    "name", ["config_change_", "config_change_42", "config_change_00000000x1", "isr_change_0000000001", "x"]
)
def test_misnamed_change_children_raise_naming_their_path(name: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.config_change_sequence(name)
    assert caught.value.path == f"/config/changes/{name}"


def test_config_entity_is_immutable() -> None:
    entity = znodes.ConfigEntityZNode.decode(ENTITY, PATH)
    assert isinstance(entity.config, MappingProxyType)
