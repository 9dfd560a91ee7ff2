"""KafkaTopic bodies → domain values, and who wins a conflict for one Kafka topic."""

from __future__ import annotations

from typing import Any

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.topic.plan import DesiredTopic
from kafka_zk_operator.domain.topic.resource import parse_resource


def _body(name: str, uid: str, created: str, *, reconciled: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": uid,
            "creationTimestamp": created,
            "generation": 1,
        },
        "spec": {"topicName": "orders", "partitions": 1, "replicationFactor": 1},
    }
    if reconciled:
        body["status"] = {"appliedConfig": []}
    return body


def test_the_resource_that_already_manages_the_topic_wins_a_same_second_tie() -> None:
    owner = parse_resource(_body("first", "ffff", "2026-01-01T00:00:00Z", reconciled=True))
    newcomer = parse_resource(_body("second", "0000", "2026-01-01T00:00:00Z"))
    assert min([newcomer, owner], key=lambda r: r.seniority) is owner


def test_between_unreconciled_resources_the_older_then_the_uid_wins() -> None:
    older = parse_resource(_body("a", "ffff", "2026-01-01T00:00:00Z"))
    younger = parse_resource(_body("b", "0000", "2026-01-01T00:00:01Z"))
    assert min([younger, older], key=lambda r: r.seniority) is older
    tie_a = parse_resource(_body("a", "0001", "2026-01-01T00:00:00Z"))
    tie_b = parse_resource(_body("b", "0002", "2026-01-01T00:00:00Z"))
    assert min([tie_b, tie_a], key=lambda r: r.seniority) is tie_a


def test_paused_and_unmanaged_annotations_are_read() -> None:
    body = _body("x", "1", "2026-01-01T00:00:00Z")
    body["metadata"]["annotations"] = {"kafka.zk-operator.io/managed": "false"}
    assert parse_resource(body).mode.value == "Unmanaged"
    body["metadata"]["annotations"] = {"kafka.zk-operator.io/paused": "true"}
    assert parse_resource(body).mode.value == "Paused"


def test_the_spec_is_parsed_once_into_the_desired_topic() -> None:
    body = _body("x", "1", "2026-01-01T00:00:00Z")
    body["spec"].update({"config": {"retention.ms": 1000}, "assignment": {"0": [2]}})
    parsed = parse_resource(body)
    assert parsed.spec_error is None
    assert parsed.desired == DesiredTopic(
        name="orders",
        partitions=1,
        replication_factor=1,
        config={"retention.ms": "1000"},
        assignment={0: (2,)},
    )


def test_a_malformed_spec_keeps_the_error_to_report_instead_of_a_desired_topic() -> None:
    body = _body("x", "1", "2026-01-01T00:00:00Z")
    body["spec"]["partitions"] = "many"
    parsed = parse_resource(body)
    assert parsed.desired is None
    assert isinstance(parsed.spec_error, errors.InvalidSpec)
    assert parsed.spec_error.message == "spec.partitions and spec.replicationFactor must be positive integers"
    assert parsed.topic_name == "orders"  # the rest of the resource is still read
