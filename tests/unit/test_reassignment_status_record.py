"""The typed PartitionReassignment status: read leniently, written back as the smallest merge patch."""

from __future__ import annotations

from datetime import UTC, datetime

from kafka_zk_operator.domain.reassignment.spec import BatchLimits
from kafka_zk_operator.domain.reassignment.status import Phase
from kafka_zk_operator.domain.reassignment.status_record import Progress, ReassignmentStatus

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
STORED = {
    "phase": "Running",
    "observedGeneration": 3,
    "message": "Batch 1 of 2 in flight",
    "conditions": [{"type": "Ready", "status": "False", "reason": "Running"}],
    "proposal": {"id": "abc", "moves": 4, "batch": {"maxPartitions": 5, "maxMovesPerBroker": 2}},
    "plan": [{"topic": "t", "partition": 0, "replicas": [1, 2]}],
    "planTruncated": False,
    "progress": {
        "startedAt": "2026-01-01T11:00:00Z",
        "currentBatch": 1,
        "batchesDone": 0,
        "partitionsDone": 0,
        "partitionsTotal": 4,
        "batchStartedAt": "2026-01-01T11:00:00Z",
    },
    "progressText": "0/4",
    "throttle": {"applied": False, "rate": 1000},
    "kopf": {"progress": {}},
}


def test_what_the_operator_wrote_reads_back_and_writes_back_unchanged() -> None:
    status = ReassignmentStatus.parse(STORED)
    assert status.phase is Phase.RUNNING and status.started and status.proposal_id == "abc"
    assert status.progress.batch == 1 and status.progress.partitions_total == 4
    assert status.proposal_limits(BatchLimits()) == BatchLimits(5, 2)
    assert status.throttle_pending and status.throttle_record is None
    assert status.fields() == {k: v for k, v in STORED.items() if k != "kopf"}
    every = ("phase", "message", "conditions", "proposal", "plan", "progress", "progress_text", "throttle")
    assert status.patch_fields(every, STORED) == {}


def test_a_malformed_status_reads_as_absent_values_not_as_an_error() -> None:
    status = ReassignmentStatus.parse(
        {"phase": "Dancing", "observedGeneration": "x", "progress": ["no"], "conditions": "none", "plan": 7}
    )
    assert status.current_phase is Phase.PENDING and status.observed_generation is None
    assert status.progress == Progress() and status.conditions == () and status.plan is None
    assert not status.started


def test_a_removed_progress_key_is_sent_as_null_and_only_changed_fields_are_sent() -> None:
    status = ReassignmentStatus.parse(STORED)
    progress = status.progress.advanced(NOW, batch_started_at=None, current_batch=2, batches_done=1)
    changed = ReassignmentStatus(progress=progress, phase=Phase.RUNNING)
    patch = changed.patch_fields(("phase", "progress"), STORED)
    assert set(patch) == {"progress"}
    assert patch["progress"]["batchStartedAt"] is None and patch["progress"]["currentBatch"] == 2


def test_the_estimate_follows_completed_partitions_and_goes_when_done() -> None:
    progress = Progress(started_at="2026-01-01T11:00:00Z", partitions_done=0, partitions_total=4)
    half = progress.advanced(NOW, partitions_done=2)
    assert half.estimated_completion_at == "2026-01-01T13:00:00Z"
    assert half.advanced(NOW, leaders_elected=1).estimated_completion_at == "2026-01-01T13:00:00Z"
    done = half.advanced(NOW, partitions_done=4, completed_at="2026-01-01T12:00:00Z")
    assert done.estimated_completion_at is None
