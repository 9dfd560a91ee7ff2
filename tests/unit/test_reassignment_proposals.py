"""Where proposals keep their plan, and how a stored plan is found again (``service.reassignment_proposals``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.reassignment.plan import ClusterView, PartitionMove
from kafka_zk_operator.domain.reassignment.request import (
    BatchLimits,
    ReassignmentRequest,
    RequestedPartition,
)
from kafka_zk_operator.domain.reassignment.resource import ReassignmentResource
from kafka_zk_operator.domain.reassignment.status_record import ReassignmentStatus
from kafka_zk_operator.service.reassignment.proposals import (
    load_plan,
    make_proposal,
    stale_sources,
    store_plan,
)

NOW = datetime(2025, 5, 1, tzinfo=UTC)


class FakeStorage:
    def __init__(self) -> None:
        self.maps: dict[str, tuple[str, list[dict[str, Any]]]] = {}
        self.deleted: list[str] = []

    def write_plan(
        self, owner: ReassignmentResource, proposal_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        names = []
        for index in range(0, len(entries), 300):
            name = f"{owner.name}-plan-{proposal_id}-{index // 300}"
            self.maps[name] = (proposal_id, [dict(e) for e in entries[index : index + 300]])
            names.append(name)
        return names

    def read_plan(self, namespace: str, names: Sequence[str], proposal_id: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for name in names:
            stored_id, entries = self.maps[name]
            assert stored_id == proposal_id
            out.extend(entries)
        return out

    def delete_configmaps(self, namespace: str, names: Sequence[str]) -> None:
        self.deleted.extend(names)
        for name in names:
            self.maps.pop(name, None)


def resource(status: dict[str, Any] | None = None) -> ReassignmentResource:
    return ReassignmentResource(
        namespace="ns", name="big", uid="u-1", generation=1, created="2025-01-01T00:00:00Z",
        annotations={}, spec={"mode": "Explicit"}, status=status or {}, deleting=False,
    )  # fmt: skip


def big_cluster(partitions: int) -> ClusterView:
    return ClusterView(
        brokers={1: "a", 2: "b", 3: "c"}, assignments={"t": {p: (1, 2) for p in range(partitions)}}
    )


def explicit(partitions: int) -> ReassignmentRequest:
    return ReassignmentRequest(
        mode=Mode.EXPLICIT,
        partitions=tuple(RequestedPartition("t", p, (2, 3)) for p in range(partitions)),
        batch=BatchLimits(max_partitions=100, max_moves_per_broker=100),
    )


def test_a_small_plan_lives_in_the_status() -> None:
    proposal = make_proposal(explicit(3), big_cluster(3), NOW)
    storage = FakeStorage()
    fields = store_plan(storage, resource(), ReassignmentStatus(), proposal)
    assert fields["plan_truncated"] is False and fields["plan_config_maps"] is None
    assert len(fields["plan"]) == 3
    stored = ReassignmentStatus(plan=fields["plan"], proposal=proposal.fields)
    assert load_plan(storage, resource(), stored) == proposal.plan.moves
    assert proposal.fields["batches"] == 1 and proposal.fields["moves"] == 3
    assert proposal.fields["batch"] == {"maxPartitions": 100, "maxMovesPerBroker": 100}


def test_a_large_plan_goes_to_configmaps_and_comes_back_whole() -> None:
    proposal = make_proposal(explicit(700), big_cluster(700), NOW)
    storage = FakeStorage()
    fields = store_plan(storage, resource(), ReassignmentStatus(), proposal)
    assert fields["plan_truncated"] is True and len(fields["plan"]) == 500
    assert fields["plan_config_maps"] == tuple(f"big-plan-{proposal.id}-{i}" for i in range(3))
    status = ReassignmentStatus(**fields, proposal=proposal.fields)
    assert load_plan(storage, resource(), status) == proposal.plan.moves


def test_a_new_proposal_deletes_the_configmaps_of_the_old_one() -> None:
    storage = FakeStorage()
    first = make_proposal(explicit(700), big_cluster(700), NOW)
    old = store_plan(storage, resource(), ReassignmentStatus(), first)
    second = make_proposal(explicit(10), big_cluster(700), NOW)
    store_plan(storage, resource(), ReassignmentStatus(**old), second)
    assert sorted(storage.deleted) == sorted(old["plan_config_maps"]) and storage.maps == {}


def test_stored_limits_win_over_a_changed_spec() -> None:
    status = ReassignmentStatus.parse({"proposal": {"batch": {"maxPartitions": 7, "maxMovesPerBroker": 2}}})
    assert status.proposal_limits(BatchLimits()) == BatchLimits(7, 2)
    assert ReassignmentStatus.parse({}).proposal_limits(BatchLimits(3, 3)) == BatchLimits(3, 3)


def test_stale_sources_flags_partitions_moved_by_someone_else() -> None:
    moves = (
        PartitionMove("t", 0, (1, 2), (2, 3)),
        PartitionMove("t", 1, (1, 2), (2, 3)),
        PartitionMove("t", 9, (1,), (2,)),
    )
    view = ClusterView(brokers={1: None}, assignments={"t": {0: (1, 2), 1: (3, 1)}})
    assert stale_sources(moves, view) == ["t-1", "t-9 (gone)"]


def test_invalid_explicit_requests_make_no_proposal() -> None:
    with pytest.raises(errors.InvalidSpec):
        make_proposal(
            ReassignmentRequest(mode=Mode.EXPLICIT, partitions=(RequestedPartition("t", 0, (9,)),)),
            big_cluster(1),
            NOW,
        )
