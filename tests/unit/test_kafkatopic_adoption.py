"""handlers.kafkatopic_adoption: a listing event of a settled KafkaTopic kopf has no memory of is
resumed with the resume handler's reconcile and kopf is not called; anything kopf would do more
with it (add the finalizer, delete, handle a changed spec, continue a handler's progress, remove
a legacy annotation), or a reconcile that did not finish cleanly, goes to kopf's processor."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import kopf
import pytest

from kafka_zk_operator.domain.crd_identity import (
    FINALIZER,
    GROUP,
    KAFKA_TOPIC,
    LEGACY_KOPF_ANNOTATIONS,
    VERSION,
)
from kafka_zk_operator.handlers import (
    diffbase,
    event_feed,
    indexes,
    kafkatopic,
    kafkatopic_adoption,
    kafkatopic_resync,
)


def _settings() -> kopf.OperatorSettings:
    settings = kopf.OperatorSettings()
    settings.persistence.finalizer = FINALIZER
    settings.persistence.progress_storage = diffbase.progress_storage()
    settings.persistence.diffbase_storage = diffbase.DigestingStatusDiffBaseStorage()
    return settings


def _settled(uid: str = "u-1") -> dict[str, Any]:
    """A KafkaTopic as the operator leaves it: finalizer, a report, kopf's diff base of its spec."""
    body: dict[str, Any] = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "KafkaTopic",
        "metadata": {
            "uid": uid,
            "namespace": "team-a",
            "name": "orders",
            "generation": 1,
            "finalizers": [FINALIZER],
            "labels": {"team": "a"},
        },
        "spec": {"partitions": 3, "replicationFactor": 3},
        "status": {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"}]},
    }
    storage = _settings().persistence.diffbase_storage
    essence = storage.build(body=kopf.Body(cast(kopf.RawBody, body)))
    body["status"]["kopf"] = {"last-handled-configuration": json.dumps(essence, separators=(",", ":"))}
    return body


def _changed(path: str, value: Any) -> dict[str, Any]:
    body = _settled()
    *parents, last = path.split(".")
    node = body
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return body


def test_a_settled_resource_is_adoptable() -> None:
    assert kafkatopic_adoption.adoptable(_settled(), _settings())


@pytest.mark.parametrize(
    "body",
    [
        _changed("spec.partitions", 6),  # kopf would see a change: its update handler
        _changed("metadata.labels", {"team": "b"}),
        _changed("metadata.deletionTimestamp", "2026-11-30T00:00:00Z"),
        _changed("metadata.finalizers", []),
        _changed("status.observedGeneration", None),
        _changed("status.kopf.progress", {"kafkatopic_resume": {"retries": 1}}),
        _changed("metadata.annotations", {LEGACY_KOPF_ANNOTATIONS[0]: "{}"}),
        _changed("status.kopf", {}),  # no diff base: kopf decides
    ],
    ids=["spec", "labels", "deleting", "no-finalizer", "never-reported", "progress", "legacy", "no-diffbase"],
)
def test_what_kopf_would_do_more_with_is_not_adoptable(body: dict[str, Any]) -> None:
    assert not kafkatopic_adoption.adoptable(body, _settings())


class _Memories:
    def __init__(self, *uids: str) -> None:
        self._items = {uid: object() for uid in uids}


class _Memo:
    executor = None


@pytest.fixture
def reconciles(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The resume handler's reconcile and the status patch, recorded; ``changes`` is what the
    reconcile patches, ``raise``: an exception it raises after that, ``lands``: the patch's fate."""
    record: dict[str, Any] = {"calls": [], "patched": [], "changes": {}, "raise": None, "lands": True}

    def reconcile(body: kopf.Body, patch: kopf.Patch, memo: Any, index: Any, status: Any) -> None:
        record["calls"].append(body["metadata"]["uid"])
        patch.status.update(record["changes"])
        kafkatopic._pending.record(body["metadata"]["uid"], record["changes"])
        if record["raise"] is not None:
            raise record["raise"]

    def patch_status(body: Any, fields: dict[str, Any]) -> bool:
        record["patched"].append((body["metadata"]["name"], fields))
        return bool(record["lands"])

    monkeypatch.setattr(kafkatopic, "_reconcile", reconcile)
    monkeypatch.setattr(kafkatopic_resync, "patch_status", patch_status)
    return record


def _given(memories: _Memories | None = None) -> dict[str, Any]:
    return {
        "settings": _settings(),
        "memories": memories or _Memories(),
        "memobase": _Memo(),
        "event_queue": asyncio.Queue,  # only set in a context variable here
    }


def test_adopting_reconciles_and_patches_the_status(reconciles: dict[str, Any]) -> None:
    reconciles["changes"] = {"lastSyncTime": "now"}
    assert asyncio.run(kafkatopic_adoption.adopt(_given(), _settled()))
    assert reconciles["calls"] == ["u-1"]
    assert reconciles["patched"] == [("orders", {"lastSyncTime": "now"})]
    kafkatopic._pending.forget("u-1")


def test_a_resource_kopf_remembers_or_would_handle_otherwise_is_left_to_kopf(
    reconciles: dict[str, Any],
) -> None:
    assert not asyncio.run(kafkatopic_adoption.adopt(_given(_Memories("u-1")), _settled()))
    assert not asyncio.run(kafkatopic_adoption.adopt(_given(), _changed("spec.partitions", 6)))
    assert not asyncio.run(kafkatopic_adoption.adopt({**_given(), "settings": None}, _settled()))
    assert not asyncio.run(kafkatopic_adoption.adopt({**_given(), "event_queue": None}, _settled()))
    assert reconciles["calls"] == []


def test_a_retry_is_left_to_kopf_with_its_report_patched(reconciles: dict[str, Any]) -> None:
    reconciles["changes"] = {"conditions": [{"type": "Ready", "status": "False"}]}
    reconciles["raise"] = kopf.TemporaryError("ZooKeeper is not reachable", delay=5)
    assert not asyncio.run(kafkatopic_adoption.adopt(_given(), _settled()))
    assert reconciles["patched"] == [("orders", reconciles["changes"])]
    # kopf's retry starts from that report: it is pending until the watch brings it
    assert kafkatopic._pending.current("u-1", {})["conditions"] == reconciles["changes"]["conditions"]
    kafkatopic._pending.forget("u-1")


def test_a_status_patch_that_did_not_land_is_left_to_kopf(reconciles: dict[str, Any]) -> None:
    reconciles["changes"] = {"lastSyncTime": "now"}
    reconciles["lands"] = False
    assert not asyncio.run(kafkatopic_adoption.adopt(_given(), _settled()))
    assert kafkatopic._pending.current("u-1", {}) == {}  # forgotten: kopf reconciles from the body


def test_a_failing_reconcile_is_left_to_kopf(reconciles: dict[str, Any]) -> None:
    reconciles["raise"] = RuntimeError("boom")
    assert not asyncio.run(kafkatopic_adoption.adopt(_given(), _settled()))


def test_the_feed_skips_kopf_for_an_adopted_listing_event_only(
    reconciles: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    monkeypatch.setattr(kafkatopic_resync, "kopf_saw", seen.append)
    monkeypatch.setattr(indexes, "feed", lambda *args: None)
    processed: list[Any] = []

    async def original(**kwargs: Any) -> str:
        processed.append(kwargs["raw_event"]["type"])
        return "rv"

    process = event_feed.feeding(original)
    kafka_topics = kopf.Resource(GROUP, VERSION, KAFKA_TOPIC.plural)
    listed = {"type": None, "object": _settled()}
    assert asyncio.run(process(resource=kafka_topics, raw_event=listed, **_given())) is None
    assert processed == [] and reconciles["calls"] == ["u-1"] and seen == ["u-1"]

    modified = {"type": "MODIFIED", "object": _settled()}
    assert asyncio.run(process(resource=kafka_topics, raw_event=modified, **_given())) == "rv"
    changed = {"type": None, "object": _changed("spec.partitions", 6)}
    assert asyncio.run(process(resource=kafka_topics, raw_event=changed, **_given())) == "rv"
    assert processed == ["MODIFIED", None] and reconciles["calls"] == ["u-1"]
    assert seen == ["u-1", "u-1", "u-1"]
