"""service.topics.reconcile_topic against the real ZooKeeper and Kafka: ownership and history.

Each reconcile starts from the status the previous one left (merged as the handler patches it),
so these tests follow a resource through several passes without the operator process.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk import znodes_brokers
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.topic.plan import ObservedTopic
from kafka_zk_operator.domain.topic.resource import parse_resource
from kafka_zk_operator.service.topics import TopicPolicies, TopicResult, reconcile_topic
from tests.integration.helpers import wait_for


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


def _delete_in_kafka(store: ZkStore, topic: str) -> None:
    store.mark_topic_for_deletion(topic)
    wait_for(lambda: store.topic_fully_deleted(topic), what=f"Kafka to delete {topic}")


def test_the_report_policy_keeps_reporting_a_topic_deleted_behind_its_back(
    zk: KazooClient, unique_topic: str
) -> None:
    store, report = ZkStore(zk), TopicPolicies(recreate_deleted=False, create_wait_seconds=10)
    resource = _resource(unique_topic)
    created = reconcile_topic(resource, store, previous_status={}, policies=report)
    assert created.outcome is errors.Reason.CREATED
    status = _merged({}, created)
    _delete_in_kafka(store, unique_topic)
    for _ in range(3):  # each later pass (resync) must keep reporting, never recreate
        result = reconcile_topic(resource, store, previous_status=status, policies=report)
        assert isinstance(result.outcome, errors.TopicDeletedInKafka), result.outcome
        assert store.read_assignment(unique_topic) is None
        status = _merged(status, result)


def test_after_an_error_status_a_spec_change_is_an_update_not_an_adoption(
    zk: KazooClient, unique_topic: str
) -> None:
    store, policies = ZkStore(zk), TopicPolicies(create_wait_seconds=10)
    status = _merged(
        {}, reconcile_topic(_resource(unique_topic), store, previous_status={}, policies=policies)
    )
    # A transient failure in between (e.g. ZooKeeper unreachable) left Ready=False.
    status["conditions"] = [{"type": "Ready", "status": "False", "reason": "ClusterUnavailable"}]
    changed = _resource(unique_topic, config={"retention.ms": "3600000"})
    result = reconcile_topic(changed, store, previous_status=status, policies=policies)
    assert result.outcome is errors.Reason.UPDATED
    assert "TopicAdopted" not in [event.reason for event in result.events]


class _ReadFailsAfterCreate(ZkStore):
    """The real store, except that reading the topic back after creating it fails once."""

    created = False

    def create_topic(self, *args: Any, **kwargs: Any) -> None:
        super().create_topic(*args, **kwargs)
        self.created = True

    def read_topic(
        self, topic: str, *, with_states: bool = True, expected_partitions: int = 0
    ) -> ObservedTopic:
        if self.created:
            self.created = False
            raise errors.ClusterUnavailable("lost the ZooKeeper connection (injected)")
        return super().read_topic(topic, with_states=with_states, expected_partitions=expected_partitions)


def test_a_topic_created_before_a_later_step_failed_is_owned_by_the_resource(
    zk: KazooClient, unique_topic: str
) -> None:
    """Deleting the resource must delete that topic: the status records ownership (appliedConfig)."""
    store = _ReadFailsAfterCreate(zk)
    result = reconcile_topic(
        _resource(unique_topic), store, previous_status={}, policies=TopicPolicies(create_wait_seconds=10)
    )
    assert isinstance(result.outcome, errors.ClusterUnavailable) and result.retry_after
    assert store.read_assignment(unique_topic) is not None
    assert result.status.get("appliedConfig") == []


class _CountingStore(ZkStore):
    """The real store, counting reads of the topic and of the list of live brokers."""

    def __init__(self, client: KazooClient) -> None:
        super().__init__(client)
        self.reads: Counter[str] = Counter()

    def read_topic(
        self, topic: str, *, with_states: bool = True, expected_partitions: int = 0
    ) -> ObservedTopic:
        self.reads["topic"] += 1
        return super().read_topic(topic, with_states=with_states, expected_partitions=expected_partitions)

    def _children(self, path: str) -> list[str]:
        self.reads[path] += 1
        return super()._children(path)


def test_a_pass_reads_the_topic_once_and_the_live_brokers_only_when_one_came_or_went(
    zk: KazooClient, unique_topic: str
) -> None:
    """Planning and the status share one observation, on the replication-factor path too; the
    registrations are kept while ``/brokers/ids`` is unchanged (issue #16), and creating a name
    without '.' or '_' lists no topics (only such names can collide with another)."""
    store, policies = _CountingStore(zk), TopicPolicies(create_wait_seconds=10)
    assert "." not in unique_topic and "_" not in unique_topic
    store.topic_znode_version()  # its caches (registrations, znode version) are warm, as in a running operator
    store.reads.clear()
    status = _merged(
        {}, reconcile_topic(_resource(unique_topic), store, previous_status={}, policies=policies)
    )
    assert store.reads["/brokers/topics"] == 0, store.reads
    for spec, outcome in (({}, errors.Reason.IN_SYNC), ({"replicationFactor": 2}, None)):
        store.reads.clear()
        result = reconcile_topic(
            _resource(unique_topic, **spec), store, previous_status=status, policies=policies
        )
        if outcome is None:
            assert isinstance(result.outcome, errors.ReplicationFactorChanging), result.outcome
            assert result.rf_change == (1, 2)
        else:
            assert result.outcome is outcome
        assert result.writes == 0 and result.status["partitions"] == 1
        assert store.reads["topic"] == 1 and store.reads[znodes_brokers.BROKER_IDS_PATH] == 0, store.reads


def test_a_name_with_a_dot_is_refused_when_it_collides_with_an_existing_underscore_name(
    zk: KazooClient, unique_topic: str
) -> None:
    """The collision check still lists the topics for names that can collide (Kafka's
    ``Topic.hasCollisionChars``), right before the create it guards."""
    store, policies = _CountingStore(zk), TopicPolicies(create_wait_seconds=10)
    underscored = f"{unique_topic}_x"
    assert reconcile_topic(_resource(underscored), store, previous_status={}, policies=policies).outcome is (
        errors.Reason.CREATED
    )
    store.reads.clear()
    dotted = f"{unique_topic}.x"
    result = reconcile_topic(_resource(dotted), store, previous_status={}, policies=policies)
    assert isinstance(result.outcome, errors.InvalidTopicName), result.outcome
    assert f"collides with existing topic '{underscored}'" in result.outcome.message
    assert store.reads["/brokers/topics"] == 1 and store.read_assignment(dotted) is None
