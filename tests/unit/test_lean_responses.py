"""adapters.k8s.lean_responses: kopf gets objects, lists and watch events without managedFields,
everything else byte for byte (lines split anywhere across chunks, lines it cannot parse)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from kafka_zk_operator.adapters.k8s.kopf_session import QueuedSession
from kafka_zk_operator.adapters.k8s.lean_responses import LeanResponse, lean_line, strip_managed_fields

MANAGED = [{"manager": "kubectl", "fieldsV1": {"f:spec": {"f:partitions": {}}, 'k:{"type":"Ready"}': {}}}]


def _obj(name: str) -> dict[str, Any]:
    return {
        "kind": "KafkaTopic",
        "metadata": {"name": name, "uid": f"u-{name}", "managedFields": MANAGED},
        "spec": {"partitions": 3, "note": 'a \\n and a " and managedFields in a value'},
    }


def _without(obj: dict[str, Any]) -> dict[str, Any]:
    lean: dict[str, Any] = json.loads(json.dumps(obj))
    lean["metadata"].pop("managedFields")
    return lean


def test_objects_lists_and_events_lose_managed_fields_only() -> None:
    assert strip_managed_fields(_obj("a")) == _without(_obj("a"))
    listed = {"kind": "KafkaTopicList", "metadata": {"resourceVersion": "9"}, "items": [_obj("a"), _obj("b")]}
    assert strip_managed_fields(listed)["items"] == [_without(_obj("a")), _without(_obj("b"))]
    assert strip_managed_fields({"type": "ADDED", "object": _obj("a")}) == {
        "type": "ADDED",
        "object": _without(_obj("a")),
    }
    assert strip_managed_fields(["not", "an", "object"]) == ["not", "an", "object"]
    status = {"kind": "Status", "code": 410, "message": "too old resource version"}
    assert strip_managed_fields(dict(status)) == status


def test_a_line_without_the_field_or_not_json_passes_untouched() -> None:
    plain = json.dumps({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "5"}}}).encode()
    assert lean_line(plain) is plain
    broken = b'{"type": "ADDED", "object": {"metadata": {"managedFields": ['
    assert lean_line(broken) is broken
    event = {"type": "MODIFIED", "object": _obj("a")}
    assert json.loads(lean_line(json.dumps(event).encode())) == {
        "type": "MODIFIED",
        "object": _without(_obj("a")),
    }


class _Content:
    def __init__(self, data: bytes, size: int) -> None:
        self.data, self.size = data, size

    async def iter_chunked(self, n: int) -> AsyncIterator[bytes]:
        for start in range(0, len(self.data), self.size):
            yield self.data[start : start + self.size]


class _Response:
    def __init__(self, data: bytes, size: int = 7) -> None:
        self.status, self.content, self._data, self.entered = 200, _Content(data, size), data, 0

    async def json(self) -> Any:
        return json.loads(self._data)

    async def __aenter__(self) -> _Response:
        self.entered += 1
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.entered -= 1


def test_a_watch_stream_in_odd_chunks_yields_the_same_lines_without_the_field() -> None:
    events = [{"type": "ADDED", "object": _obj(f"t{i}")} for i in range(5)]
    events.insert(2, {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "77"}}})
    data = (
        b"".join(json.dumps(e).encode() + b"\n" for e in events) + json.dumps(events[0]).encode()
    )  # last: no newline

    async def read(size: int) -> list[Any]:
        response = LeanResponse(_Response(data, size))  # type: ignore[arg-type]
        received = b""
        async with response:
            async for chunk in response.content.iter_chunked(1024 * 1024):
                received += chunk
        return [json.loads(line) for line in received.split(b"\n") if line]

    expected = [strip_managed_fields(json.loads(json.dumps(e))) for e in [*events, events[0]]]
    for size in (1, 7, 100, 10_000):
        assert asyncio.run(read(size)) == expected


def test_json_bodies_and_everything_else_of_the_response() -> None:
    inner = _Response(json.dumps({"items": [_obj("a")]}).encode())
    response = LeanResponse(inner)  # type: ignore[arg-type]

    async def body() -> Any:
        async with response:
            assert inner.entered == 1
            return await response.json()

    assert asyncio.run(body()) == {"items": [_without(_obj("a"))]}
    assert response.status == 200 and inner.entered == 0


def test_the_queued_session_hands_kopf_lean_responses() -> None:
    class Session:
        async def request(self, method: str, url: Any, **kwargs: Any) -> _Response:
            return _Response(json.dumps(_obj("a")).encode())

    async def get(url: str) -> Any:
        response = await QueuedSession(Session(), 2).request("get", url)  # type: ignore[arg-type]
        return await response.json()

    for url in ("https://api/apis/x/v1/kafkatopics", "https://api/apis/x/v1/kafkatopics?watch=true"):
        assert asyncio.run(get(url)) == _without(_obj("a"))
