"""Unit tests for ``domain.kafka.topic_names``: Kafka's ``Topic`` rules (validity, collisions, internal names)."""

from __future__ import annotations

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import topic_names


@pytest.mark.parametrize(
    "name",
    ["a", "valid", "TOPIC", "topic-name", "topic_name", "topic.name", "...", "_", "-", "0", "a" * 249],
)
def test_legal_names_are_valid(name: str) -> None:
    assert topic_names.is_valid(name)
    assert topic_names.invalid_reason(name) is None
    topic_names.validate_topic_name(name)


@pytest.mark.parametrize(
    ("name", "reason_fragment"),
    [
        ("", "the empty string is not allowed"),
        (".", "'.' is not allowed"),
        ("..", "'..' is not allowed"),
        ("a" * 250, "longer than the max allowed length 249"),
        ("foo bar", "contains one or more characters other than ASCII alphanumerics"),
        ("foo/bar", "characters other than"),
        ("foo:bar", "characters other than"),
        ("héllo", "characters other than"),
        ("tab\tname", "characters other than"),
        ("emoji\U0001f600", "characters other than"),
    ],
)
def test_illegal_names_are_rejected_with_kafkas_reason(name: str, reason_fragment: str) -> None:
    assert not topic_names.is_valid(name)
    reason = topic_names.invalid_reason(name)
    assert reason is not None and reason_fragment in reason
    with pytest.raises(errors.InvalidTopicName, match="Topic name is invalid"):
        topic_names.validate_topic_name(name)


def test_length_is_counted_in_utf16_code_units_like_java() -> None:
    # 125 astral characters are 250 UTF-16 units: Java reports the length first.
    reason = topic_names.invalid_reason("\U0001f600" * 125)
    assert reason is not None and "longer than the max allowed length" in reason
    # 124 of them (248 units) pass the length rule and fail on characters.
    reason = topic_names.invalid_reason("\U0001f600" * 124)
    assert reason is not None and "characters other than" in reason


def test_invalid_topic_name_is_an_invalid_spec() -> None:
    with pytest.raises(errors.InvalidSpec) as info:
        topic_names.validate_topic_name("bad name")
    assert info.value.reason is errors.Reason.INVALID_SPEC


def test_message_for_bad_characters_names_them_and_the_fix() -> None:
    with pytest.raises(errors.InvalidTopicName) as info:
        topic_names.validate_topic_name("orders/eu west")
    message = str(info.value)
    assert "'/'" in message and "' '" in message
    assert "[a-zA-Z0-9._-]" in message


def test_message_for_too_long_name_says_how_long_it_may_be() -> None:
    with pytest.raises(errors.InvalidTopicName, match="Shorten it to at most 249 characters"):
        topic_names.validate_topic_name("x" * 300)


def test_message_for_dot_names_explains_the_rule() -> None:
    with pytest.raises(errors.InvalidTopicName, match=r"other than '\.'"):
        topic_names.validate_topic_name("..")


@pytest.mark.parametrize("name", ["__consumer_offsets", "__transaction_state", "__share_group_state"])
def test_internal_topics_match_kafka_3_9(name: str) -> None:
    assert topic_names.is_internal(name)
    assert topic_names.is_reserved(name)
    assert topic_names.is_valid(name)


def test_cluster_metadata_is_reserved_but_not_internal() -> None:
    assert not topic_names.is_internal("__cluster_metadata")
    assert topic_names.is_reserved("__cluster_metadata")


@pytest.mark.parametrize("name", ["__consumer_offsets", "__cluster_metadata"])
def test_reserved_names_are_refused_unless_allowed(name: str) -> None:
    with pytest.raises(errors.InvalidTopicName, match="reserved"):
        topic_names.validate_topic_name(name)
    topic_names.validate_topic_name(name, allow_reserved=True)


def test_ordinary_double_underscore_names_are_not_internal() -> None:
    assert not topic_names.is_internal("__my_topic")
    assert not topic_names.is_reserved("__consumer_offsets2")


@pytest.mark.parametrize(
    ("name", "expected"), [("a.b", True), ("a_b", True), ("a-b", False), ("ab", False), (".", True)]
)
def test_has_collision_chars(name: str, expected: bool) -> None:
    assert topic_names.has_collision_chars(name) is expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("topic.1", "topic_1", True),
        ("a.b_c", "a_b.c", True),
        ("a.b", "a.b", True),
        ("a.b", "a-b", False),
        ("a.b", "ab", False),
        ("a__b", "a._b", True),
    ],
)
def test_has_collision_treats_dot_and_underscore_alike(a: str, b: str, expected: bool) -> None:
    assert topic_names.has_collision(a, b) is expected
    assert topic_names.has_collision(b, a) is expected


def test_find_collision_returns_the_colliding_existing_topic() -> None:
    assert topic_names.find_collision("metrics.eu", ["orders", "metrics_eu", "metrics-eu"]) == "metrics_eu"


def test_find_collision_ignores_the_identical_name() -> None:
    assert topic_names.find_collision("metrics.eu", ["metrics.eu", "orders"]) is None


def test_find_collision_is_deterministic_when_several_collide() -> None:
    existing = ["a_b.c", "a.b_c", "a_b_c"]
    assert topic_names.find_collision("a.b.c", existing) == "a.b_c"
    assert topic_names.find_collision("a.b.c", list(reversed(existing))) == "a.b_c"


def test_find_collision_without_collision_chars_finds_nothing() -> None:
    assert topic_names.find_collision("orders", ["orders", "Orders", "orders_"]) is None


def test_find_collision_accepts_any_iterable() -> None:
    assert topic_names.find_collision("x_y", (name for name in ["x.y"])) == "x.y"
