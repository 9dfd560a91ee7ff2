"""The shape of every kopf and kazoo internal the operator hooks, in the libraries installed.

Each hook works without it (slower) when its target moved, and then says so at run time
(``kzo_private_hook_active{hook=...} 0`` and a warning); these tests say so before a release: each
imports the real library and checks the exact module, attribute, signature or fields its hook
relies on, and fails with a message naming the hook and the file that uses it. Run them against the
newest releases with ``KZO_UNLOCKED=1 make unit`` (docs/development.md#private-hooks).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import importlib
import inspect
import logging
from collections.abc import Callable
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.handlers.threading import SequentialThreadingHandler
from kazoo.protocol import connection as kazoo_connection
from kazoo.protocol.connection import ConnectionHandler
from kazoo.protocol.serialization import Auth, GetData, int_struct

from kafka_zk_operator import metrics
from kafka_zk_operator.adapters.zk import batched_sends, watches
from kafka_zk_operator.handlers import event_feed, kafkatopic_adoption


def shape(hook: str, used_by: str, ok: bool, what: str) -> None:
    """Fail naming ``hook`` and ``used_by`` (the operator's file) when ``ok`` is false."""
    assert ok, f"private hook {hook} ({used_by}): the installed library changed: {what}"


def parameters(function: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(function).parameters)


def unstarted_client() -> Any:
    return KazooClient(hosts="127.0.0.1:1")


def test_kopf_event_feed_processor() -> None:
    hook, used_by = event_feed.HOOK, "operator/kafka_zk_operator/handlers/event_feed.py"
    processing = importlib.import_module(event_feed.PROCESSOR_MODULE)
    found: Any = getattr(processing, "process_resource_event", None)
    shape(hook, used_by, callable(found), f"no {event_feed.PROCESSOR_MODULE}.process_resource_event")
    original = inspect.unwrap(found)  # the operator's wrapper, when main was imported before
    shape(hook, used_by, inspect.iscoroutinefunction(original), "process_resource_event is not a coroutine")
    names = parameters(original)
    missing = [n for n in (*event_feed._READ, "settings", "memories", "event_queue") if n not in names]
    shape(hook, used_by, not missing, f"process_resource_event takes no {missing} (it takes {names})")
    # the watchers call it by keywords only (the wrapper binds positionals by name, slower)
    queueing = inspect.getsource(importlib.import_module("kopf._core.reactor.queueing"))
    shape(hook, used_by, "processor(" in queueing, "kopf's queueing no longer calls a processor per event")


def test_kopf_adoption_reads_kopfs_memories_storages_and_toggles() -> None:
    hook, used_by = kafkatopic_adoption.HOOK, "operator/kafka_zk_operator/handlers/kafkatopic_adoption.py"
    processing = importlib.import_module(event_feed.PROCESSOR_MODULE)
    names = parameters(inspect.unwrap(processing.process_resource_event))
    wanted = ("settings", "memories", "memobase", "event_queue", "operator_indexed", "resource_indexed")
    missing = [n for n in wanted if n not in names]
    shape(hook, used_by, not missing, f"process_resource_event takes no {missing}")
    inventory = importlib.import_module("kopf._core.reactor.inventory")
    memories = inventory.ResourceMemories()
    shape(
        hook,
        used_by,
        isinstance(getattr(memories, "_items", None), dict),
        "ResourceMemories has no _items dict",
    )
    import kopf

    persistence = kopf.OperatorSettings().persistence
    for storage, method, keyword in (
        (persistence.diffbase_storage, "fetch", "body"),
        (persistence.diffbase_storage, "build", "body"),
        (persistence.progress_storage, "clear", "essence"),
    ):
        call = getattr(storage, method, None)
        shape(
            hook,
            used_by,
            call is not None and keyword in parameters(call),
            f"{type(storage).__name__}.{method}({keyword}=...) is gone",
        )
    toggles = importlib.import_module("kopf._cogs.aiokits.aiotoggles")
    for name in ("drop_toggle", "wait_for"):
        shape(
            hook,
            used_by,
            inspect.iscoroutinefunction(getattr(toggles.ToggleSet, name, None)),
            f"ToggleSet.{name} is not a coroutine method",
        )


def test_kopf_posting_queue_variables() -> None:
    hook, used_by = kafkatopic_adoption.HOOK, "operator/kafka_zk_operator/handlers/kafkatopic_adoption.py"
    posting = importlib.import_module(kafkatopic_adoption._POSTING_MODULE)
    for name in ("event_queue_var", "event_queue_loop_var"):
        var = getattr(posting, name, None)
        shape(
            hook,
            used_by,
            isinstance(var, contextvars.ContextVar),
            f"{kafkatopic_adoption._POSTING_MODULE}.{name} is not a ContextVar",
        )
    # kopf.event posts through those two variables
    source = inspect.getsource(posting)
    shape(
        hook,
        used_by,
        "event_queue_var.get()" in source and "event_queue_loop_var.get()" in source,
        "kopf's posting no longer reads event_queue_var/event_queue_loop_var",
    )


def test_kazoo_batched_sends_connection_handler() -> None:
    hook, used_by = batched_sends.HOOK, "operator/kafka_zk_operator/adapters/zk/batched_sends.py"
    client = unstarted_client()
    handler = getattr(client, "_connection", None)
    shape(
        hook, used_by, type(handler) is ConnectionHandler, "KazooClient._connection is no ConnectionHandler"
    )
    for name in ("_queue", "_pending"):
        shape(
            hook,
            used_by,
            isinstance(getattr(client, name, None), collections.deque),
            f"KazooClient.{name} is no deque",
        )
    for method, wanted in (
        ("_send_request", ["self", "read_timeout", "connect_timeout"]),
        ("_write", ["self", "msg", "timeout"]),
        ("_submit", ["self", "request", "timeout", "xid"]),
    ):
        function = getattr(ConnectionHandler, method, None)
        shape(
            hook,
            used_by,
            function is not None and parameters(function) == wanted,
            f"ConnectionHandler.{method}{inspect.signature(function) if function else ' is gone'}, not {wanted}",
        )
    for name in ("_xid", "_read_sock", "_write_sock", "logger"):
        shape(hook, used_by, hasattr(handler, name), f"ConnectionHandler has no {name}")
    for name in ("AUTH_XID", "_SESSION_EXPIRED", "_CONNECTION_DROP"):
        shape(hook, used_by, hasattr(kazoo_connection, name), f"kazoo.protocol.connection has no {name}")
    # one request per turn: one wake-up byte read, one request taken
    source = inspect.getsource(ConnectionHandler._send_request)
    shape(hook, used_by, "self._read_sock.recv(1)" in source, "kazoo's turn no longer reads one wake-up byte")


@pytest.mark.parametrize(
    "request_", [GetData("/kzo/a", None), Auth(0, "digest", "u:p")], ids=["GetData", "Auth"]
)
def test_kazoo_batched_sends_frames_a_request_as_kazoo_does(request_: Any) -> None:
    hook, used_by = batched_sends.HOOK, "operator/kafka_zk_operator/adapters/zk/batched_sends.py"
    handler = unstarted_client()._connection
    written: list[bytes] = []
    handler._write = lambda msg, timeout: written.append(bytes(msg))
    handler._xid = 41
    xid = kazoo_connection.AUTH_XID if request_.type == Auth.type else 42
    ConnectionHandler._submit(handler, request_, 10.0, xid)
    handler._xid = 41
    framed_xid, framed = batched_sends.BatchingConnectionHandler._framed(handler, request_)
    shape(
        hook, used_by, (framed_xid, [framed]) == (xid, written), "kazoo's _submit frames requests otherwise"
    )
    shape(hook, used_by, written[0][4:8] == int_struct.pack(xid), "kazoo's frame is not length, xid, ...")


def test_kazoo_watch_registrations() -> None:
    hook, used_by = watches.HOOK, "operator/kafka_zk_operator/adapters/zk/watches.py"
    client = unstarted_client()
    registered = getattr(client, "_data_watchers", None)
    shape(
        hook,
        used_by,
        isinstance(registered, collections.defaultdict) and registered.default_factory is set,
        "KazooClient._data_watchers is no defaultdict(set)",
    )
    shape(hook, used_by, watches._registrations(client) is registered, "the operator does not find it")
    shape(hook, used_by, hasattr(client, "chroot") and hasattr(client, "last_zxid"), "no chroot / last_zxid")
    # a read's watch is recorded under the request's path, which carries the chroot
    reading = inspect.getsource(ConnectionHandler._read_response)
    shape(
        hook,
        used_by,
        "client._data_watchers[request.path].add(watcher)" in reading,
        "kazoo no longer records a read's watch in _data_watchers[request.path]",
    )
    shape(
        hook,
        used_by,
        "_prefix_root(self.chroot, path" in inspect.getsource(KazooClient.get_async),
        "KazooClient.get_async no longer puts the chroot in the request's path",
    )


def test_kazoo_connection_loop_is_spawned_through_the_handler() -> None:
    """``adapters/zk/session.py``'s handler catches what escapes kazoo's connection loop, which
    kazoo starts as ``handler.spawn(connection.zk_loop)``."""
    hook, used_by = "kazoo_connection_loop", "operator/kafka_zk_operator/adapters/zk/session.py"
    shape(
        hook,
        used_by,
        callable(getattr(ConnectionHandler, "zk_loop", None)),
        "ConnectionHandler has no zk_loop",
    )
    starting = inspect.getsource(ConnectionHandler.start)
    shape(hook, used_by, "self.handler.spawn(self.zk_loop)" in starting, "the loop is no longer spawned so")
    for method in ("spawn", "select", "create_connection"):
        shape(
            hook,
            used_by,
            callable(getattr(SequentialThreadingHandler, method, None)),
            f"SequentialThreadingHandler has no {method}",
        )


@pytest.fixture
def hooks_off(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """No hook reported off yet (each warns once per process)."""
    monkeypatch.setattr(metrics, "_hooks_off", set())
    caplog.set_level(logging.WARNING, logger=metrics.__name__)
    return caplog


def off(hook: str, caplog: pytest.LogCaptureFixture) -> bool:
    warned = [r.getMessage() for r in caplog.records if f"private hook {hook} is off" in r.getMessage()]
    return len(warned) == 1 and metrics.PRIVATE_HOOKS.labels(hook=hook)._value.get() == 0


def test_a_kazoo_without_the_batched_sends_shape_says_so(hooks_off: pytest.LogCaptureFixture) -> None:
    client = unstarted_client()

    class Other(ConnectionHandler):  # type: ignore[misc]  # kazoo is untyped
        pass

    client._connection.__class__ = Other
    assert batched_sends.install(client) is False
    assert batched_sends.install(client) is False
    assert off(batched_sends.HOOK, hooks_off)
    assert batched_sends.install(unstarted_client()) is True
    assert metrics.PRIVATE_HOOKS.labels(hook=batched_sends.HOOK)._value.get() == 1


def test_a_kazoo_without_watch_registrations_says_so(hooks_off: pytest.LogCaptureFixture) -> None:
    client = unstarted_client()
    del client._data_watchers
    assert watches._registrations(client) is None
    assert off(watches.HOOK, hooks_off)


def test_a_kopf_without_the_adoption_shape_says_so(hooks_off: pytest.LogCaptureFixture) -> None:
    given = {"settings": object(), "memories": object(), "memobase": object()}
    assert asyncio.run(kafkatopic_adoption.adopt(given, {"metadata": {"uid": "u"}})) is False
    assert off(kafkatopic_adoption.HOOK, hooks_off)
