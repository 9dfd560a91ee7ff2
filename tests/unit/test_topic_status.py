"""build_topic_status: conditions, transition times, partition health and the paused/unmanaged variants."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.model import PartitionState, TopicAssignment
from kafka_zk_operator.domain.topic.plan import ObservedTopic
from kafka_zk_operator.domain.topic.status import (
    MAX_PARTITION_STATES,
    ReconcileMode,
    build_topic_status,
    min_insync_replicas,
)

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
EARLIER = "2025-02-01T08:00:00Z"
LIVE = frozenset({1, 2, 3})


def state(leader: int, *isr: int) -> PartitionState:
    return PartitionState(leader=leader, isr=tuple(isr), leader_epoch=1, controller_epoch=1)


def topic(**partitions: tuple[int, ...]) -> TopicAssignment:
    return TopicAssignment({int(p[1:]): r for p, r in partitions.items()}, topic_id="fuxffnL_TWKJE99B8vHPmQ")


HEALTHY = ObservedTopic(
    assignment=topic(p0=(1, 2, 3), p1=(2, 3, 1)),
    config={},
    partition_states={0: state(1, 1, 2, 3), 1: state(2, 2, 3, 1)},
)


def build(**overrides: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "topic_name": "orders",
        "generation": 4,
        "now": NOW,
        "outcome": errors.Reason.IN_SYNC,
        "observation": HEALTHY,
        "live_brokers": LIVE,
    }
    arguments.update(overrides)
    return build_topic_status(**arguments)


def conditions(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in status["conditions"]}


# --- Ready ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        (errors.Reason.CREATED, "Topic 'orders' was created in Kafka."),
        (errors.Reason.UPDATED, "Topic 'orders' was updated in Kafka."),
        (errors.Reason.ADOPTED, "Existing topic 'orders' is now managed by this resource."),
        (errors.Reason.IN_SYNC, "Topic 'orders' matches the spec."),
    ],
)
def test_success_sets_ready_true_with_the_reason(reason: errors.Reason, message: str) -> None:
    status = build(outcome=reason)
    assert status["conditions"] == [
        {
            "type": "Ready",
            "status": "True",
            "reason": reason.value,
            "message": message,
            "observedGeneration": 4,
            "lastTransitionTime": "2025-03-01T12:00:00Z",
        }
    ]
    assert status["observedGeneration"] == 4
    assert status["topicName"] == "orders"


def test_success_message_can_be_given() -> None:
    status = build(outcome=errors.Reason.UPDATED, message="retention.ms: '1' -> '2'")
    assert conditions(status)["Ready"]["message"] == "retention.ms: '1' -> '2'"


def test_error_sets_ready_false_with_its_reason_and_message() -> None:
    failure = errors.NotSupported("Decreasing partitions not supported.")
    ready = conditions(build(outcome=failure))["Ready"]
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False",
        "NotSupported",
        "Decreasing partitions not supported.",
    )


def test_subclass_errors_use_their_parents_reason() -> None:
    ready = conditions(build(outcome=errors.InvalidConfig("Invalid topic config.")))["Ready"]
    assert ready["reason"] == "InvalidSpec"


def test_very_long_messages_are_cut() -> None:
    ready = conditions(build(outcome=errors.InvalidSpec("x" * 10_000)))["Ready"]
    assert len(ready["message"]) == 4096
    assert ready["message"].endswith("…")


def test_a_failure_reason_is_not_accepted_as_a_success() -> None:
    with pytest.raises(ValueError, match="not a success reason"):
        build(outcome=errors.Reason.NOT_SUPPORTED)


def test_managed_status_needs_an_outcome() -> None:
    with pytest.raises(ValueError, match="needs an outcome"):
        build(outcome=None)


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        build(now=datetime(2025, 1, 1))


def test_times_are_written_in_utc() -> None:
    local = datetime(2025, 3, 1, 14, 0, 0, tzinfo=timezone(timedelta(hours=2)))
    assert build(now=local)["lastSyncTime"] == "2025-03-01T12:00:00Z"


# --- lastTransitionTime ---------------------------------------------------------------------------------


def previous_ready(status: str, reason: str = "InSync") -> dict[str, Any]:
    return {
        "observedGeneration": 3,
        "conditions": [
            {
                "type": "Ready",
                "status": status,
                "reason": reason,
                "message": "m",
                "lastTransitionTime": EARLIER,
            }
        ],
    }


def test_transition_time_is_kept_while_ready_stays_true() -> None:
    status = build(outcome=errors.Reason.UPDATED, previous=previous_ready("True"))
    ready = conditions(status)["Ready"]
    assert ready["lastTransitionTime"] == EARLIER
    assert ready["reason"] == "Updated"  # reason and message still follow the latest outcome


def test_transition_time_is_kept_while_ready_stays_false() -> None:
    status = build(outcome=errors.ClusterUnavailable("down"), previous=previous_ready("False", "KafkaError"))
    assert conditions(status)["Ready"]["lastTransitionTime"] == EARLIER


def test_transition_time_changes_when_ready_flips() -> None:
    status = build(outcome=errors.InvalidSpec("bad"), previous=previous_ready("True"))
    assert conditions(status)["Ready"]["lastTransitionTime"] == "2025-03-01T12:00:00Z"


# --- Warning and drift ------------------------------------------------------------------------------------


def test_warnings_become_one_warning_condition() -> None:
    status = build(warnings=["Config a is deprecated.", "Config b is deprecated."])
    warning = conditions(status)["Warning"]
    assert (warning["status"], warning["reason"]) == ("True", "PlanningWarnings")
    assert warning["message"] == "Config a is deprecated. Config b is deprecated."
    assert [c["type"] for c in status["conditions"]] == ["Ready", "Warning"]


def test_warning_condition_disappears_when_there_are_no_warnings() -> None:
    previous = previous_ready("True")
    previous["conditions"].append(
        {"type": "Warning", "status": "True", "reason": "PlanningWarnings", "message": "old"}
    )
    assert list(conditions(build(previous=previous))) == ["Ready"]


def test_drift_is_listed_and_capped() -> None:
    assert build(drift=["a", "b"])["drift"] == ["a", "b"]
    assert len(build(drift=[str(i) for i in range(150)])["drift"]) == 100


def test_no_drift_removes_the_field() -> None:
    assert build()["drift"] is None


def test_foreign_conditions_are_kept() -> None:
    previous = previous_ready("True")
    previous["conditions"].append({"type": "ArgoSynced", "status": "True"})
    assert [c["type"] for c in build(previous=previous)["conditions"]] == ["Ready", "ArgoSynced"]


# --- partition health -------------------------------------------------------------------------------------


def test_healthy_topic_reports_every_partition() -> None:
    status = build()
    assert status["topicId"] == "fuxffnL_TWKJE99B8vHPmQ"
    assert (status["partitions"], status["replicationFactor"]) == (2, 3)
    assert status["partitionStates"] == [
        {"partition": 0, "leader": 1, "isr": [1, 2, 3], "replicas": [1, 2, 3]},
        {"partition": 1, "leader": 2, "isr": [2, 3, 1], "replicas": [2, 3, 1]},
    ]
    assert status["partitionStatesTruncated"] is False
    assert (
        status["underReplicatedPartitions"],
        status["offlinePartitions"],
        status["leaderlessPartitions"],
    ) == (
        0,
        0,
        0,
    )
    assert status["underMinIsrPartitions"] is None  # min.insync.replicas unknown
    assert status["lastSyncTime"] == "2025-03-01T12:00:00Z"


def test_unhealthy_partitions_are_counted() -> None:
    observation = ObservedTopic(
        assignment=topic(p0=(1, 2, 3), p1=(2, 3, 1), p2=(3, 1, 2), p3=(4, 1, 2)),
        partition_states={
            0: state(1, 1),  # under-replicated, under min ISR
            1: state(-1, 2),  # leaderless
            3: state(4, 4, 1, 2),  # leader 4 is not a live broker
        },  # partition 2 has no state znode yet
        config={"min.insync.replicas": "2"},
    )
    status = build(observation=observation)
    assert status["underReplicatedPartitions"] == 3  # 0, 1 and 2 (no ISR at all)
    assert status["leaderlessPartitions"] == 2  # 1 and 2
    assert status["offlinePartitions"] == 3  # 1, 2 and 3
    assert status["underMinIsrPartitions"] == 3  # 0, 1 and 2
    assert status["partitionStates"][2] == {"partition": 2, "leader": -1, "isr": [], "replicas": [3, 1, 2]}


def test_replicas_being_added_do_not_count_as_missing_from_the_isr() -> None:
    moving = TopicAssignment({0: (4, 1, 2)}, adding_replicas={0: (4,)}, removing_replicas={0: (2,)})
    observation = ObservedTopic(moving, {}, partition_states={0: state(1, 1, 2)})
    status = build(observation=observation, live_brokers={1, 2, 4})
    assert status["underReplicatedPartitions"] == 0
    assert status["replicationFactor"] == 2


def test_partition_states_are_capped_at_1000() -> None:
    many = TopicAssignment({p: (1,) for p in range(1200)})
    observation = ObservedTopic(many, {}, partition_states={p: state(1, 1) for p in range(1200)})
    status = build(observation=observation)
    assert len(status["partitionStates"]) == MAX_PARTITION_STATES
    assert status["partitionStates"][-1]["partition"] == 999
    assert status["partitionStatesTruncated"] is True
    assert status["partitions"] == 1200


def test_topic_absent_from_kafka_clears_partition_fields() -> None:
    status = build(outcome=errors.InvalidSpec("bad"), observation=ObservedTopic(assignment=None, config={}))
    for key in ("topicId", "partitions", "replicationFactor", "partitionStates", "underReplicatedPartitions"):
        assert key in status and status[key] is None
    assert status["lastSyncTime"] == "2025-03-01T12:00:00Z"


def test_nothing_observed_keeps_the_previous_partition_fields() -> None:
    previous = {**previous_ready("True"), "partitions": 6, "topicId": "abc", "lastSyncTime": EARLIER}
    status = build(
        outcome=errors.ClusterUnavailable("ZooKeeper unreachable"), observation=None, previous=previous
    )
    assert (status["partitions"], status["topicId"], status["lastSyncTime"]) == (6, "abc", EARLIER)


def test_kopf_storage_is_never_written() -> None:
    status = build(previous={"kopf": {"progress": {}}})
    assert "kopf" not in status


# --- paused and unmanaged ----------------------------------------------------------------------------


def test_paused_adds_a_condition_and_keeps_ready_and_observed_generation() -> None:
    previous = previous_ready("True")
    previous["conditions"].append({"type": "Warning", "status": "True", "reason": "PlanningWarnings"})
    status = build(mode=ReconcileMode.PAUSED, outcome=None, previous=previous)
    assert [c["type"] for c in status["conditions"]] == ["Ready", "ReconciliationPaused", "Warning"]
    paused = conditions(status)["ReconciliationPaused"]
    assert (paused["status"], paused["reason"]) == ("True", "PausedByAnnotation")
    assert 'kafka.zk-operator.io/paused is "true"' in paused["message"]
    assert conditions(status)["Ready"] == previous["conditions"][0]
    assert status["observedGeneration"] == 3  # the new spec has not been reconciled


def test_paused_resource_still_reports_partition_health() -> None:
    status = build(mode=ReconcileMode.PAUSED, outcome=None)
    assert status["partitions"] == 2
    assert [c["type"] for c in status["conditions"]] == ["ReconciliationPaused"]


def test_unpausing_removes_the_paused_condition() -> None:
    paused = build(mode=ReconcileMode.PAUSED, outcome=None, previous=previous_ready("True"))
    assert list(conditions(build(previous=paused))) == ["Ready"]


def test_paused_condition_keeps_its_transition_time_while_paused() -> None:
    first = build(mode=ReconcileMode.PAUSED, outcome=None)
    later = build(mode=ReconcileMode.PAUSED, outcome=None, previous=first, now=NOW + timedelta(hours=1))
    assert conditions(later)["ReconciliationPaused"]["lastTransitionTime"] == "2025-03-01T12:00:00Z"


def test_unmanaged_replaces_ready_with_an_unmanaged_condition() -> None:
    status = build(mode=ReconcileMode.UNMANAGED, outcome=None, previous=previous_ready("True"))
    assert [c["type"] for c in status["conditions"]] == ["Unmanaged"]
    unmanaged = conditions(status)["Unmanaged"]
    assert (unmanaged["status"], unmanaged["reason"]) == ("True", "ManagedAnnotationFalse")
    assert "deleting this resource leaves the topic in Kafka" in unmanaged["message"]
    assert status["observedGeneration"] == 4


# --- status_changes: what a resync patches -------------------------------------------------------


def test_an_in_sync_resync_patches_nothing_until_the_heartbeat() -> None:
    from datetime import UTC, datetime, timedelta

    from kafka_zk_operator.domain.topic.status import status_changes

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    previous = {"partitions": 3, "lastSyncTime": "2026-01-01T00:00:00Z", "drift": ["x"]}
    same = {"partitions": 3, "lastSyncTime": "2026-01-01T00:01:00Z", "drift": ["x"], "leaderless": None}
    assert status_changes(previous, same, now=t0 + timedelta(seconds=60), heartbeat_seconds=300) == {}
    assert status_changes(previous, same, now=t0 + timedelta(seconds=301), heartbeat_seconds=300) == {
        "lastSyncTime": "2026-01-01T00:01:00Z"
    }


def test_without_a_heartbeat_an_in_sync_resync_never_patches() -> None:
    """The default (``math.inf``): a no-op resync of any number of topics writes nothing."""
    import math
    from datetime import UTC, datetime, timedelta

    from kafka_zk_operator.domain.topic.status import status_changes

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    previous = {"partitions": 3, "lastSyncTime": "2026-01-01T00:00:00Z"}
    same = {"partitions": 3, "lastSyncTime": "2027-01-01T00:00:00Z"}
    assert status_changes(previous, same, now=t0 + timedelta(days=365), heartbeat_seconds=math.inf) == {}
    # a status without a sync time yet still gets one
    assert status_changes({"partitions": 3}, same, now=t0, heartbeat_seconds=math.inf) == {
        "lastSyncTime": "2027-01-01T00:00:00Z"
    }


def test_a_real_change_carries_the_new_sync_time_and_removals() -> None:
    from datetime import UTC, datetime

    from kafka_zk_operator.domain.topic.status import status_changes

    previous = {"partitions": 3, "lastSyncTime": "2026-01-01T00:00:00Z", "drift": ["x"]}
    new = {"partitions": 4, "lastSyncTime": "2026-01-01T00:00:30Z", "drift": None}
    changes = status_changes(
        previous, new, now=datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC), heartbeat_seconds=300
    )
    assert changes == {"partitions": 4, "drift": None, "lastSyncTime": "2026-01-01T00:00:30Z"}


def test_min_insync_replicas_comes_from_the_topic_config_only_when_readable() -> None:
    assert min_insync_replicas({"min.insync.replicas": "2", "retention.ms": "1"}) == 2
    assert min_insync_replicas({"retention.ms": "1"}) is None
    assert min_insync_replicas(None) is None
    assert min_insync_replicas({"min.insync.replicas": "two"}) is None
