"""handlers.event_feed: kopf's per-event processor is wrapped in the kopf the operator installs;
the wrapper indexes an event of the operator's kinds before kopf processes it, tells the resync
passes of a KafkaTopic's once kopf has, and leaves every other event and kopf's result alone;
without that processor, the ``@kopf.on.event`` handlers are registered instead."""

from __future__ import annotations

import asyncio
import importlib
import sys
import types
from typing import Any, cast

import kopf
import pytest

import kafka_zk_operator.main  # noqa: F401  (installs the feed, as the operator does)
from kafka_zk_operator.domain.crd_identity import GROUP, KAFKA_TOPIC, PARTITION_REASSIGNMENT, VERSION
from kafka_zk_operator.handlers import event_feed, indexes, kafkatopic_resync
from kafka_zk_operator.runtime.resource_index import ResourceIndex


def _body(uid: str) -> dict[str, Any]:
    return {
        "metadata": {"uid": uid, "namespace": "team-a", "name": f"res-{uid}"},
        "spec": {"topic": f"t-{uid}"},
    }


@pytest.fixture
def fed(monkeypatch: pytest.MonkeyPatch) -> tuple[ResourceIndex, ResourceIndex, list[str]]:
    """A KafkaTopic index and a PartitionReassignment index in place of the real ones, and the
    uids the resync passes are told kopf saw."""
    topics = ResourceIndex("topics", lambda body, memo: {body["spec"]["topic"]: memo})
    moves = ResourceIndex("moves", lambda body, memo: {body["spec"]["topic"]: memo})
    monkeypatch.setattr(indexes, "INDEXES", {KAFKA_TOPIC: (topics,), PARTITION_REASSIGNMENT: (moves,)})
    seen: list[str] = []
    monkeypatch.setattr(kafkatopic_resync, "kopf_saw", seen.append)
    return topics, moves, seen


def test_the_installed_kopf_has_its_processor_wrapped_once() -> None:
    processing = importlib.import_module(event_feed.PROCESSOR_MODULE)
    wrapped = processing.process_resource_event
    assert getattr(wrapped, "__kzo_event_feed__", False)
    assert event_feed.install() == "processor"
    assert processing.process_resource_event is wrapped  # not wrapped twice


def test_an_event_is_indexed_before_kopf_processes_it_and_reported_after(
    fed: tuple[ResourceIndex, ResourceIndex, list[str]],
) -> None:
    topics, moves, seen = fed
    during: list[tuple[list[Any], list[str]]] = []

    async def original(*, resource: Any, raw_event: Any, memobase: Any, **_: Any) -> str:
        during.append((topics.get("t-1"), list(seen)))
        return "rv-7"

    process = event_feed.feeding(original)
    kafka_topics = kopf.Resource(GROUP, VERSION, KAFKA_TOPIC.plural)
    result = asyncio.run(
        process(resource=kafka_topics, raw_event={"type": "ADDED", "object": _body("1")}, memobase="m")
    )
    assert result == "rv-7"
    assert during == [(["m"], [])]  # indexed before kopf's processing, not yet reported as seen
    assert seen == ["1"]
    asyncio.run(
        process(resource=kafka_topics, raw_event={"type": "DELETED", "object": _body("1")}, memobase="m")
    )
    assert topics.get("t-1") == [] and seen == ["1", "1"]

    reassignments = kopf.Resource(GROUP, VERSION, PARTITION_REASSIGNMENT.plural)
    asyncio.run(process(resource=reassignments, raw_event={"type": None, "object": _body("2")}, memobase="m"))
    assert moves.get("t-2") == ["m"] and seen == ["1", "1"]  # only KafkaTopics are resynced


def test_other_kinds_pass_through_untouched_and_positional_arguments_are_read_by_name(
    fed: tuple[ResourceIndex, ResourceIndex, list[str]],
) -> None:
    topics, moves, seen = fed
    calls: list[Any] = []

    async def original(resource: Any, raw_event: Any, memobase: Any) -> None:
        calls.append(resource.plural)

    process = event_feed.feeding(original)
    same_plural_elsewhere = kopf.Resource("example.com", "v1", KAFKA_TOPIC.plural)
    asyncio.run(process(same_plural_elsewhere, {"type": "ADDED", "object": _body("3")}, "m"))
    pods = kopf.Resource("", "v1", "pods")
    asyncio.run(process(resource=pods, raw_event={"type": "ADDED", "object": _body("4")}, memobase="m"))
    assert calls == [KAFKA_TOPIC.plural, "pods"]
    assert topics.keys() == [] and moves.keys() == [] and seen == []

    asyncio.run(
        process(kopf.Resource(GROUP, VERSION, KAFKA_TOPIC.plural), {"type": None, "object": _body("5")}, "m")
    )
    assert topics.get("t-5") == ["m"] and seen == ["5"]


def test_without_kopfs_processor_the_event_handlers_are_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    unexpected = types.ModuleType("kzo_test_unexpected_processing")

    async def process_resource_event(event: Any) -> None:  # not the arguments the feed reads
        return None

    unexpected.process_resource_event = process_resource_event  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, unexpected.__name__, unexpected)
    for module in (unexpected.__name__, "kzo_test_no_such_module"):
        registry = kopf.OperatorRegistry()
        assert event_feed.install(module, registry) == "handlers"
        names = sorted(handler.id for handler in registry._watching.get_all_handlers())
        assert names == ["kafkatopic_events", "partitionreassignment_events"]
    assert unexpected.process_resource_event is process_resource_event


def test_the_fallback_handlers_feed_the_indexes(fed: tuple[ResourceIndex, ResourceIndex, list[str]]) -> None:
    topics, moves, seen = fed
    asyncio.run(
        event_feed.kafkatopic_events(type="ADDED", body=kopf.Body(cast(kopf.RawBody, _body("6"))), memo="m")
    )
    asyncio.run(
        event_feed.partitionreassignment_events(
            type="ADDED", body=kopf.Body(cast(kopf.RawBody, _body("7"))), memo="m"
        )
    )
    assert topics.get("t-6") == ["m"] and moves.get("t-7") == ["m"] and seen == ["6"]
