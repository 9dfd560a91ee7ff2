"""Unit tests for ``domain.topic.k8s_names``: Kafka topic names -> valid, unique, stable KafkaTopic names."""

from __future__ import annotations

import re

import pytest

from kafka_zk_operator.domain.topic import k8s_names
from kafka_zk_operator.domain.topic.k8s_names import MAX_NAME_LENGTH, derive_names, is_valid_name, sanitise

#: The API server's own rule for metadata.name of a custom resource (DNS-1123 subdomain).
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
HASHED = re.compile(r"(?P<base>.+)-(?P<hash>[0-9a-f]{8})")


def assert_valid(name: str) -> None:
    assert len(name) <= MAX_NAME_LENGTH, name
    assert DNS1123_SUBDOMAIN.fullmatch(name), name


@pytest.mark.parametrize("topic", ["orders", "orders.v1", "a-b-c", "0", "payments.eu-west.1", "x" * 249])
def test_a_valid_kubernetes_name_is_kept_exactly(topic: str) -> None:
    assert derive_names([topic]) == {topic: topic}


@pytest.mark.parametrize(
    ("topic", "base"),
    [
        ("Orders", "orders"),
        ("MY_TOPIC", "my-topic"),
        ("my_topic", "my-topic"),
        ("_private", "private"),
        ("__confluent.support", "confluent.support"),
        ("a..b", "a.b"),
        (".hidden", "hidden"),
        ("trailing-", "trailing"),
        ("a.-b.c-", "a.b.c"),
        ("Foo_.Bar", "foo.bar"),
        ("___", "topic"),
        ("-", "topic"),
    ],
)
def test_a_changed_name_is_sanitised_and_gets_a_hash_of_the_original(topic: str, base: str) -> None:
    name = derive_names([topic])[topic]
    assert_valid(name)
    match = HASHED.fullmatch(name)
    assert match is not None, name
    assert match["base"] == base
    assert match["hash"] == k8s_names.topic_hash(topic)


def test_upper_case_and_underscores_never_collide_with_the_plain_name() -> None:
    topics = ["my-topic", "my_topic", "My_Topic", "MY-TOPIC", "my.topic", "My.Topic"]
    names = derive_names(topics)
    assert len(set(names.values())) == len(topics)
    assert names["my-topic"] == "my-topic" and names["my.topic"] == "my.topic"
    for name in names.values():
        assert_valid(name)


def test_a_topic_named_like_another_topics_hashed_name_is_resolved() -> None:
    hashed = derive_names(["Orders"])["Orders"]  # orders-<8 hex>
    names = derive_names(["Orders", hashed])
    assert names[hashed] == hashed, "the topic whose name is already valid keeps it"
    assert names["Orders"] != hashed
    assert names["Orders"].startswith("orders-") and len(names["Orders"]) > len(hashed)
    assert_valid(names["Orders"])


def test_249_character_names_stay_within_253_and_unique() -> None:
    upper = "A" * 249
    mixed = "a" * 248 + "_"
    dotted = ("ab." * 83)[:249]
    plain = "a" * 249
    names = derive_names([upper, mixed, dotted, plain])
    assert len(set(names.values())) == 4
    assert names[plain] == plain
    for name in names.values():
        assert_valid(name)
    assert len(names[upper]) == MAX_NAME_LENGTH
    assert names[upper].endswith("-" + k8s_names.topic_hash(upper))


def test_cutting_a_long_name_never_leaves_a_dash_or_dot_before_the_hash() -> None:
    topic = "X" * 243 + ".-_Y"  # the cut lands inside '.-'
    name = derive_names([topic])[topic]
    assert_valid(name)
    assert not name[: -(k8s_names.HASH_LENGTH + 1)].endswith(("-", "."))


def test_names_depend_only_on_the_topics_not_on_their_order() -> None:
    topics = ["b_1", "A", "a", "c.d", "C.D", "x" * 200 + "Z"]
    assert derive_names(topics) == derive_names(list(reversed(topics))) == derive_names(set(topics))


def test_dots_are_allowed_and_kept() -> None:
    assert derive_names(["com.example.orders"]) == {"com.example.orders": "com.example.orders"}
    assert sanitise("Com.Example.Orders") == "com.example.orders"


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("orders", True),
        ("a.b", True),
        ("a..b", False),
        ("-a", False),
        ("a-", False),
        ("A", False),
        ("a_b", False),
    ],
)
def test_is_valid_name_follows_dns1123_subdomain(name: str, valid: bool) -> None:
    assert is_valid_name(name) is valid
    assert is_valid_name("a" * 254) is False
