"""service.topics.reconcile_topic and service.deletion.delete_topic with the Admin API backend
(``adapters.kafka.admin_backend``) against real Kafka 3.9.2: the passes
``tests/integration/test_topic_reconcile.py`` follows with the ZooKeeper store, with Kafka's view
checked by a plain kafka-python client (``tests.e2e.kafka_client.KafkaView``)."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_zk_operator.adapters.kafka.admin_backend import AdminBackend
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.topic.resource import parse_resource
from kafka_zk_operator.service.deletion import DeletionProgress, delete_topic
from kafka_zk_operator.service.topics import TopicPolicies, TopicResult, reconcile_topic
from tests.conftest import KafkaCluster
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for


def _kafka_topic_id(kafka: KafkaView, topic: str) -> str:
    """The topic id a plain client reads (asked until a broker that knows the topic answers), in
    Kafka's own text (``Uuid.toString``: URL-safe base64 without padding, as Kafka's tools print it)."""
    found = wait_for(
        lambda: kafka.admin.describe_topics([topic])[0].get("topic_id"), what=f"the id of {topic}"
    )
    return base64.urlsafe_b64encode(uuid.UUID(str(found)).bytes).rstrip(b"=").decode()


POLICIES = TopicPolicies(create_wait_seconds=10)


@pytest.fixture
def backend(kafka_cluster: KafkaCluster) -> Iterator[AdminBackend]:
    made = AdminBackend(kafka_cluster.bootstrap_servers, client_id="kzo-test-topic-reconcile-admin")
    try:
        yield made
    finally:
        made.close()


def _resource(topic: str, **spec: Any) -> Any:
    return parse_resource(
        {
            "metadata": {"name": topic, "namespace": "ns", "uid": "u-" + topic, "generation": 1},
            "spec": {"partitions": 1, "replicationFactor": 1, **spec},
        }
    )


def _merged(previous: dict[str, Any], result: TopicResult) -> dict[str, Any]:
    """The status after the handler's merge patch (None removes a field)."""
    merged = {**previous, **result.status}
    return {key: value for key, value in merged.items() if value is not None}


def _shape(kafka: KafkaView, topic: str) -> tuple[int, set[int]] | None:
    """(partitions, replication factors) as Kafka reports them; None if it does not know the topic."""
    described = kafka.describe(topic)
    if described is None:
        return None
    return len(described), {len(entry["replicas"]) for entry in described.values()}


def test_a_topic_is_created_reconfigured_grown_and_deleted(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    spec: dict[str, Any] = {"partitions": 2, "replicationFactor": 2, "config": {"retention.ms": "3600000"}}
    created = reconcile_topic(_resource(unique_topic, **spec), backend, previous_status={}, policies=POLICIES)
    assert created.outcome is errors.Reason.CREATED, created.outcome
    assert created.writes == 1 and [e.reason for e in created.events] == ["TopicCreated"]
    assert created.status["partitions"] == 2 and created.status["topicId"]
    assert created.status["appliedConfig"] == ["retention.ms=3600000"]
    # Kafka's view through another client: a broker may learn of the topic a moment later.
    assert wait_for(lambda: _shape(kafka, unique_topic) == (2, {2}), what="Kafka to show the topic")
    assert wait_for(lambda: kafka.configs(unique_topic).get("retention.ms") == "3600000", what="the config")
    assert created.status["topicId"] == _kafka_topic_id(kafka, unique_topic)
    status = _merged({}, created)

    again = reconcile_topic(
        _resource(unique_topic, **spec), backend, previous_status=status, policies=POLICIES
    )
    assert again.outcome is errors.Reason.IN_SYNC and again.writes == 0 and again.read_only
    status = _merged(status, again)

    spec["config"] = {"retention.ms": "7200000", "max.message.bytes": "200000"}
    changed = reconcile_topic(
        _resource(unique_topic, **spec), backend, previous_status=status, policies=POLICIES
    )
    assert changed.outcome is errors.Reason.UPDATED and changed.writes == 1
    assert [e.reason for e in changed.events] == ["ConfigChanged"]
    assert wait_for(
        lambda: (
            (c := kafka.configs(unique_topic)).get("retention.ms") == "7200000"
            and c.get("max.message.bytes") == "200000"
        ),
        what="Kafka to show the new config",
    )
    status = _merged(status, changed)

    spec["partitions"] = 4
    grown = reconcile_topic(
        _resource(unique_topic, **spec), backend, previous_status=status, policies=POLICIES
    )
    assert grown.outcome is errors.Reason.UPDATED and grown.writes == 1
    assert [e.reason for e in grown.events] == ["PartitionsAdded"] and grown.status["partitions"] == 4
    assert wait_for(lambda: _shape(kafka, unique_topic) == (4, {2}), what="Kafka to show 4 partitions")
    status = _merged(status, grown)

    settled = reconcile_topic(
        _resource(unique_topic, **spec), backend, previous_status=status, policies=POLICIES
    )
    assert settled.outcome is errors.Reason.IN_SYNC and settled.writes == 0
    status = _merged(status, settled)

    resource = _resource(unique_topic, **spec)
    requested = delete_topic(resource, backend, marker_written_before=False)
    assert requested.marker_written and not requested.done
    assert requested.event is not None and requested.event.reason == "TopicDeletionRequested"

    def finished() -> DeletionProgress | None:
        progress = delete_topic(resource, backend, marker_written_before=True)
        return progress if progress.done else None

    done = wait_for(finished, what="the deletion to be reported complete")
    assert done.event is not None and done.event.reason == "TopicDeleted"
    wait_for(lambda: unique_topic not in kafka.topic_names(), what="Kafka's view without the topic")
    assert backend.writes == 4  # create, config, partitions, deletion: nothing else


def test_an_existing_topic_is_adopted_without_a_write(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    """Brokers learn of a topic one by one: the broker asked first may not know it yet, and the
    create is then refused (VersionConflict, nothing written); a later pass adopts it."""
    kafka.create_topic(unique_topic, 1, 1, {"retention.ms": "3600000"})
    wait_for(lambda: kafka.describe(unique_topic), what="Kafka to know the topic")
    outcomes: list[object] = []

    def adopted() -> TopicResult | None:
        result = reconcile_topic(
            _resource(unique_topic, config={"retention.ms": "3600000"}),
            backend,
            previous_status={},
            policies=POLICIES,
        )
        outcomes.append(result.outcome)
        assert result.writes == 0 and (result.outcome is errors.Reason.ADOPTED or result.retry_after), (
            result.outcome
        )
        return result if result.outcome is errors.Reason.ADOPTED else None

    result = wait_for(adopted, timeout=20, what="a pass to adopt the topic")
    assert [e.reason for e in result.events] == ["TopicAdopted"], outcomes
    assert backend.writes == 0


def test_the_report_policy_keeps_reporting_a_topic_deleted_behind_its_back(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    report = TopicPolicies(recreate_deleted=False, create_wait_seconds=10)
    resource = _resource(unique_topic)
    created = reconcile_topic(resource, backend, previous_status={}, policies=report)
    assert created.outcome is errors.Reason.CREATED
    status = _merged({}, created)
    kafka.delete_topic(unique_topic)

    def next_pass() -> TopicResult:
        nonlocal status
        result = reconcile_topic(resource, backend, previous_status=status, policies=report)
        assert result.writes == 0  # never recreated
        status = _merged(status, result)
        return result

    # A broker that has not heard of the deletion yet may still answer the first pass.
    wait_for(
        lambda: isinstance(next_pass().outcome, errors.TopicDeletedInKafka), what="the deletion reported"
    )
    for _ in range(2):  # each later pass (resync) must keep reporting
        result = next_pass()
        assert isinstance(result.outcome, errors.TopicDeletedInKafka), result.outcome
    wait_for(lambda: unique_topic not in kafka.topic_names(), what="Kafka's view without the topic")


def test_after_an_error_status_a_spec_change_is_an_update_not_an_adoption(
    backend: AdminBackend, kafka: KafkaView, unique_topic: str
) -> None:
    status = _merged(
        {}, reconcile_topic(_resource(unique_topic), backend, previous_status={}, policies=POLICIES)
    )
    status["conditions"] = [{"type": "Ready", "status": "False", "reason": "ClusterUnavailable"}]
    changed = _resource(unique_topic, config={"retention.ms": "3600000"})
    result = reconcile_topic(changed, backend, previous_status=status, policies=POLICIES)
    assert wait_for(lambda: kafka.configs(unique_topic).get("retention.ms") == "3600000", what="the config")
    assert "TopicAdopted" not in [event.reason for event in result.events]
    assert kafka.configs(unique_topic)["retention.ms"] == "3600000"


class _CreatedMeanwhile(AdminBackend):
    """The real backend, except that someone else creates the topic right before its create."""

    def __init__(self, bootstrap: str, kafka: KafkaView) -> None:
        super().__init__(bootstrap, client_id="kzo-test-created-meanwhile")
        self.kafka = kafka

    def create_topic(self, topic: str, *args: Any, **kwargs: Any) -> None:
        self.kafka.create_topic(topic, 1, 1)
        super().create_topic(topic, *args, **kwargs)


def test_a_topic_created_by_someone_else_meanwhile_is_adopted_by_the_next_pass(
    kafka_cluster: KafkaCluster, kafka: KafkaView, unique_topic: str
) -> None:
    backend = _CreatedMeanwhile(kafka_cluster.bootstrap_servers, kafka)
    try:
        raced = reconcile_topic(_resource(unique_topic), backend, previous_status={}, policies=POLICIES)
        assert isinstance(raced.outcome, errors.VersionConflict), raced.outcome
        assert "TOPIC_ALREADY_EXISTS" in raced.outcome.message and raced.retry_after and raced.writes == 0
        status = _merged({}, raced)

        def adopted_now() -> TopicResult | None:
            result = reconcile_topic(
                _resource(unique_topic), backend, previous_status=status, policies=POLICIES
            )
            return result if result.outcome is errors.Reason.ADOPTED else None

        adopted = wait_for(adopted_now, timeout=20, what="the next pass to adopt the topic")
        assert adopted.writes == 0 and backend.writes == 0
    finally:
        backend.close()


def test_balanced_placement_reads_the_cluster_through_the_admin_backend(
    backend: AdminBackend, kafka: KafkaView, kafka_cluster: KafkaCluster, unique_topic: str
) -> None:
    """``service.cluster_views`` (``read_cluster``: every topic's assignment) works on this backend too."""
    resource = _resource(unique_topic, partitions=6, replicationFactor=2, placement="Balanced")
    result = reconcile_topic(resource, backend, previous_status={}, policies=POLICIES)
    assert result.outcome is errors.Reason.CREATED, result.outcome
    described = wait_for(lambda: kafka.describe(unique_topic), what="Kafka to show the topic")
    assert len(described) == 6
    racks = {b.id: b.rack for b in kafka_cluster.brokers}
    for entry in described.values():  # rack-aware: each partition's two replicas on two racks
        assert len({racks[b] for b in entry["replicas"]}) == 2, described
