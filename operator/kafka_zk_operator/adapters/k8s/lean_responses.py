"""API responses handed to kopf without ``metadata.managedFields``.

The API server sends every object with its ``managedFields`` (server-side apply's record of who
set which field: one entry per client and subresource, a nested ``f:``/``k:`` tree each). Nothing
in the operator reads them, but kopf keeps each object's latest body while its handlers run, so
in a burst of 10,000 KafkaTopics created at once, or when a restarted operator lists and resumes
10,000, they were about half of every body held (issue #16: the operator's peak memory).

:class:`LeanResponse` wraps a response of kopf's session: ``json()`` (lists, single objects,
patch results) and the watch stream's lines (``content.iter_chunked``, what kopf reads a watch
with) come without them. A watch line is parsed and serialised once more for that (about twice
kopf's own parse of the line); a line without the field, or one that is not a JSON object, is
passed on untouched.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

_FIELD = "managedFields"
_FIELD_BYTES = b'"managedFields"'


def strip_managed_fields(data: Any) -> Any:
    """``data`` (an object, a list of them, or a watch event) with each object's managedFields
    removed, in place; anything else unchanged."""
    if not isinstance(data, dict):
        return data
    for obj in (data, data.get("object"), *(data.get("items") or ())):
        if isinstance(obj, dict):
            metadata = obj.get("metadata")
            if isinstance(metadata, dict):
                metadata.pop(_FIELD, None)
    return data


def lean_line(line: bytes) -> bytes:
    """One watch event line without the object's managedFields."""
    if _FIELD_BYTES not in line:
        return line
    try:
        event = json.loads(line)
    except ValueError:
        return line  # kopf reports what it cannot parse
    return json.dumps(strip_managed_fields(event), separators=(",", ":")).encode()


class LeanStream:
    """A response body read in chunks, as kopf reads a watch: the same bytes, line by line, each
    line through :func:`lean_line`."""

    def __init__(self, content: aiohttp.StreamReader) -> None:
        self._content = content

    async def iter_chunked(self, n: int) -> AsyncIterator[bytes]:
        buffer = b""
        async for data in self._content.iter_chunked(n):
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            if lines:
                yield b"".join(lean_line(line) + b"\n" for line in lines)
        if buffer:
            yield lean_line(buffer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._content, name)


class LeanResponse:
    """An ``aiohttp.ClientResponse`` whose JSON comes without managedFields (see the module)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aenter__(self) -> LeanResponse:
        await self._response.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._response.__aexit__(*exc)

    async def json(self, **kwargs: Any) -> Any:
        return strip_managed_fields(await self._response.json(**kwargs))

    @property
    def content(self) -> LeanStream:
        return LeanStream(self._response.content)

    def __getattr__(self, name: str) -> Any:  # status, headers, close(), text() ...: the response's own
        return getattr(self._response, name)
