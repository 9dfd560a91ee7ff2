"""adapters.kafka.admin_backend without a cluster: it is a ``service.backend.TopicBackend`` (mypy
checks the typed assignment), refuses what is not a pure growth before asking Kafka, follows the
declared line, remembers its own writes (``own_writes``) for the reads that follow them, and can
cancel a running reassignment (the ZooKeeper store cannot)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from kafka_zk_operator.adapters.kafka import own_writes
from kafka_zk_operator.adapters.kafka.admin_backend import ADMIN_LINE, AdminBackend
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain import errors, model
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.service.backend import ReassignmentBackend, TopicBackend

#: Nothing listens there; the backend connects on first use only, and these tests never use it.
NOWHERE = "127.0.0.1:1"


def test_the_admin_backend_is_a_topic_backend() -> None:
    backend: TopicBackend = AdminBackend(NOWHERE, client_id="kzo-test")  # mypy checks the protocol
    assert backend.writes == 0
    assert backend.topics_marked_for_deletion() == []
    assert backend.controller_registration_version() is None and backend.last_zxid() is None
    assert backend.withdraw_deletion_marker("t") is False


def test_the_admin_backend_is_a_reassignment_backend() -> None:
    backend: ReassignmentBackend = AdminBackend(NOWHERE, client_id="kzo-test")  # mypy checks the protocol
    assert backend.pending_preferred_election() is None
    assert backend.can_cancel is True, "KIP-455: a running move can be cancelled"


def test_the_zookeeper_store_cannot_cancel_a_running_reassignment() -> None:
    assert ZkStore.can_cancel is False
    with pytest.raises(errors.NotSupported, match="cannot cancel"):
        ZkStore.cancel_reassignment(cast(ZkStore, None), [model.TopicPartition("t", 0)])


class _Features:
    """What ``KafkaAdminClient.describe_features`` answers, counting the calls."""

    def __init__(self, features: dict[str, Any]) -> None:
        self.features, self.calls = features, 0

    def describe_features(self) -> dict[str, Any]:
        self.calls += 1
        return self.features


def _backend_answering(features: dict[str, Any], **kwargs: Any) -> tuple[AdminBackend, _Features]:
    backend = AdminBackend(NOWHERE, client_id="kzo-test", **kwargs)
    fake = _Features(features)
    backend._admin = fake  # the client _call hands to each request
    return backend, fake


def test_the_line_is_the_declared_one_without_asking_kafka() -> None:
    backend, fake = _backend_answering({}, kafka_version=(4, 1, 0))
    declared = backend.cluster_line([])
    assert declared.line == (4, 1, 0) and declared.declared and fake.calls == 0


def test_the_line_comes_from_the_finalized_metadata_version_and_is_reused() -> None:
    backend, fake = _backend_answering(
        {"metadata.version": {"supported": (7, 27), "finalized": (27, 27), "finalized_epoch": 5}}
    )
    inferred = backend.cluster_line()
    assert inferred.line == (4, 1, 0) and not inferred.declared
    assert "finalized metadata.version is level 27" in inferred.basis
    assert backend.cluster_line().line == (4, 1, 0) and fake.calls == 1  # within LINE_TTL_S


def test_without_a_finalized_metadata_version_the_line_is_the_newest_3x() -> None:
    assert ADMIN_LINE == kafka_lines.NEWEST_ZK_LINE == (3, 9, 0)
    backend, _ = _backend_answering({"metadata.version": {"supported": (1, 21)}})  # ZooKeeper-mode brokers
    inferred = backend.cluster_line()
    assert (
        inferred.line == ADMIN_LINE
        and not inferred.declared
        and "no finalized metadata.version" in inferred.basis
    )


@pytest.mark.parametrize("new", [{}, {3: (1,)}, {2: (1,), 4: (2,)}, {1: (1,)}])
def test_anything_but_a_pure_growth_is_refused_before_kafka_is_asked(new: dict[int, tuple[int, ...]]) -> None:
    backend = AdminBackend(NOWHERE, client_id="kzo-test")
    expected = model.Versioned(model.TopicAssignment(partitions={0: (1,), 1: (2,)}), -1)
    with pytest.raises(errors.InvalidPartitions, match="must be numbered 2"):
        backend.add_partitions("t", new, expected=expected)
    assert backend.writes == 0


def test_own_writes_are_remembered_for_a_while_and_merged() -> None:
    now = [100.0]
    own = own_writes.OwnWrites(clock=lambda: now[0])
    assert own.written("t") == (None, None)
    own.wrote("t", partitions=2, config={"retention.ms": "1"})
    own.wrote("t", partitions=4)  # the growth keeps the config written before
    assert own.written("t") == (4, {"retention.ms": "1"})
    now[0] += own_writes.REMEMBER_S
    assert own.written("t") == (None, None)


def test_a_requested_deletion_covers_only_the_topic_id_it_was_asked_for() -> None:
    own = own_writes.OwnWrites()
    own.wrote("t", partitions=1)
    own.deleting("t", "id-1")
    assert own.written("t") == (None, None)
    assert own.deletion_pending("t") and own.deletion_of("t", "id-1") and not own.deletion_of("t", "id-2")
    assert not own.deletion_of("u", "id-1")
    own.gone("t")
    assert not own.deletion_pending("t") and not own.deletion_of("t", "id-1")


def test_a_read_is_asked_again_until_it_shows_the_write_and_no_longer_than_allowed() -> None:
    answers = iter([None, None, 3, 4])
    assert own_writes.until_shown(5.0, lambda: next(answers), lambda got: got is not None, pause_s=0) == 3
    asked: list[int] = []

    def read() -> int:
        asked.append(1)
        return len(asked)

    assert own_writes.until_shown(0.05, read, lambda got: False, pause_s=0.01) == len(asked)
    assert 1 <= len(asked) < 20


class _Answers(AdminBackend):
    """The backend with DescribeTopics answered from a list (one broker lags behind another)."""

    def __init__(self, answers: list[dict[str, object] | None]) -> None:
        super().__init__(NOWHERE, client_id="kzo-test")
        self.answers = answers

    def _describe_once(self, topic: str) -> dict[str, object] | None:
        return self.answers.pop(0)


def test_a_requested_deletion_stays_marked_until_the_topic_is_seen_gone_for_good() -> None:
    """A broker that already dropped the topic answers between two that still list it: the
    deletion is under way, never 'refused' (service.deletion reads not-marked as a refusal)."""
    backend = _Answers([None, {"name": "t", "topic_id": "id-1", "partitions": []}, None])
    backend._own.deleting("t", "id-1")
    assert backend.is_marked_for_deletion("t")  # this broker no longer lists it
    assert backend.is_marked_for_deletion("t")  # another still does, with the id asked for
    assert backend.topic_fully_deleted("t")
    assert not backend.is_marked_for_deletion("t")  # over: no request is made
