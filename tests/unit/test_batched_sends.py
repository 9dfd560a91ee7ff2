"""Unit tests for ``adapters.zk.batched_sends``: one turn of kazoo's connection loop writes, in one
message, exactly the bytes kazoo's own turns write one request at a time (same framing, xids and
order), moves each request to ``_pending`` with its xid, keeps the wake-up pipe consistent and
stops at its limits. On a real ZooKeeper: ``tests/integration/test_batched_sends.py``.

No server here: a client that is never started, whose connection writes to one end of a socket
pair and wakes up on another, as kazoo's does.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import SessionExpiredError
from kazoo.protocol import connection as kazoo_connection
from kazoo.protocol.connection import ConnectionDropped, ConnectionHandler
from kazoo.protocol.serialization import Auth, Create, Exists, GetData, SetData, Transaction
from kazoo.security import OPEN_ACL_UNSAFE

from kafka_zk_operator.adapters.zk import batched_sends


class Wired:
    """An unstarted client whose connection is wired to socket pairs: what it sends is read from
    ``peer``; ``queue()`` does what ``KazooClient._call`` does (queue, then one wake-up byte)."""

    def __init__(self, *, batched: bool) -> None:
        self.client = KazooClient(hosts="127.0.0.1:1")
        if batched:
            assert batched_sends.install(self.client)
        self.connection: Any = self.client._connection
        self.connection._socket, self.peer = socket.socketpair()
        self.connection._read_sock, self.connection._write_sock = socket.socketpair()
        self.connection._xid = 0  # as a connection attempt starts
        self.peer.settimeout(2)

    def queue(self, *requests: Any) -> None:
        for request in requests:
            self.client._queue.append((request, object()))
            self.client._connection._write_sock.send(b"\0")

    def turn(self) -> None:
        self.connection._send_request(10.0, 10.0)

    def sent(self) -> bytes:
        self.peer.setblocking(False)
        chunks = []
        try:
            while chunk := self.peer.recv(1 << 20):
                chunks.append(chunk)
        except BlockingIOError:
            pass
        return b"".join(chunks)

    def wakeups_waiting(self) -> int:
        sock = self.connection._read_sock
        try:
            return len(sock.recv(1 << 16, socket.MSG_DONTWAIT))
        except BlockingIOError:
            return 0

    def close(self) -> None:
        for sock in (
            self.connection._socket,
            self.peer,
            self.connection._read_sock,
            self.connection._write_sock,
        ):
            sock.close()


@pytest.fixture
def wired() -> Iterator[tuple[Wired, Wired]]:
    """(kazoo's own connection, the batching one), fed the same requests."""
    pair = Wired(batched=False), Wired(batched=True)
    yield pair
    for one in pair:
        one.close()


def _requests() -> list[Any]:
    transaction = Transaction([Create("/t", b"x", OPEN_ACL_UNSAFE, 0), SetData("/u", b"y", 3)])
    return [
        Exists("/brokers/ids", None),
        GetData("/brokers/topics/a", None),
        Auth(0, "digest", "user:secret"),
        Create("/config/changes/config_change_", b'{"version":2}', OPEN_ACL_UNSAFE, 2),
        transaction,
        SetData("/config/topics/a", b"{}", 7),
    ]


def _fed_alike(own: Wired, batched: Wired) -> list[Any]:
    """Queue the same requests in both and let kazoo's own connection take its turns (one each)."""
    requests = _requests()
    own.queue(*requests)
    batched.queue(*requests)
    for _ in requests:
        own.turn()
    return requests


def test_install_swaps_only_kazoos_own_handler() -> None:
    client = KazooClient(hosts="127.0.0.1:1")
    assert batched_sends.install(client) is True
    assert type(client._connection) is batched_sends.BatchingConnectionHandler
    assert batched_sends.install(client) is False  # not kazoo's own any more: left as it is


def test_one_turn_sends_what_kazoos_turns_send_in_one_write(wired: tuple[Wired, Wired]) -> None:
    own, batched = wired
    _fed_alike(own, batched)
    writes: list[bytes] = []
    original_write = batched.connection._write

    def write(message: bytes, timeout: float) -> None:
        writes.append(message)
        original_write(message, timeout)

    batched.connection._write = write
    batched.turn()

    assert batched.sent() == own.sent()
    assert len(writes) == 1
    assert not batched.client._queue
    assert batched.wakeups_waiting() == 0


def test_pending_requests_carry_the_xids_sent_in_order(wired: tuple[Wired, Wired]) -> None:
    own, batched = wired
    requests = _fed_alike(own, batched)
    batched.turn()

    def described(pending: Any) -> list[tuple[type, int]]:
        return [(type(request), xid) for request, _, xid in pending]

    assert described(batched.client._pending) == described(own.client._pending)
    assert [xid for request, _, xid in batched.client._pending if isinstance(request, Auth)] == [
        kazoo_connection.AUTH_XID
    ]
    assert batched.connection._xid == own.connection._xid == len(requests) - 1


def test_a_turn_stops_at_its_limit_and_wakes_the_loop_for_the_rest(
    wired: tuple[Wired, Wired], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, batched = wired
    monkeypatch.setattr(batched_sends, "MAX_BATCH", 4)
    batched.queue(*(GetData(f"/z{n}", None) for n in range(10)))

    batched.turn()
    assert len(batched.client._pending) == 4
    assert len(batched.client._queue) == 6
    assert batched.wakeups_waiting() == 1  # its own: the caller's bytes were all read

    batched.turn()
    batched.turn()  # no byte needed for this one: the test drained it above
    assert len(batched.client._pending) == 10
    assert not batched.client._queue
    assert [request.path for request, _, _ in batched.client._pending] == [f"/z{n}" for n in range(10)]


def test_waking_the_loop_again_never_waits_on_a_full_pipe(wired: tuple[Wired, Wired]) -> None:
    """The connection thread is the pipe's only reader: waiting for room there would be forever
    (callers' bytes fill it during a burst; found with eight threads of 250 requests)."""
    _, batched = wired
    write_sock = batched.connection._write_sock
    write_sock.setblocking(False)
    with contextlib.suppress(BlockingIOError):
        while True:
            write_sock.send(b"\0")
    write_sock.setblocking(True)
    woke = threading.Thread(target=batched.connection._wake_again, daemon=True)
    woke.start()
    woke.join(2)
    assert not woke.is_alive()
    assert batched.wakeups_waiting() > 0  # the full pipe wakes the loop anyway


def test_a_turn_stops_at_its_byte_limit(wired: tuple[Wired, Wired], monkeypatch: pytest.MonkeyPatch) -> None:
    _, batched = wired
    monkeypatch.setattr(batched_sends, "MAX_BATCH_BYTES", 100)
    big = b"x" * 150
    batched.queue(SetData("/a", big, -1), SetData("/b", big, -1))

    batched.turn()
    assert len(batched.client._pending) == 1  # one request may be longer than the limit
    batched.turn()
    assert len(batched.client._pending) == 2


def test_a_turn_with_nothing_queued_sends_nothing(wired: tuple[Wired, Wired]) -> None:
    _, batched = wired
    batched.connection._write_sock.send(b"\0\0")  # bytes of requests an earlier turn already took
    batched.turn()
    assert batched.sent() == b""
    assert batched.wakeups_waiting() == 0


@pytest.mark.parametrize(
    ("sentinel", "error"),
    [
        (kazoo_connection._SESSION_EXPIRED, SessionExpiredError),
        (kazoo_connection._CONNECTION_DROP, ConnectionDropped),
    ],
)
def test_kazoos_test_sentinels_act_after_the_requests_before_them(
    wired: tuple[Wired, Wired], sentinel: object, error: type[Exception]
) -> None:
    _, batched = wired
    batched.queue(GetData("/before", None), sentinel, GetData("/after", None))

    batched.turn()
    assert [request.path for request, _, _ in batched.client._pending] == ["/before"]
    with pytest.raises(error):
        batched.turn()
    assert batched.client._queue[0][0] is sentinel  # kazoo fails it with the rest, as its own


def test_a_request_that_cannot_be_serialized_lets_those_before_it_go(wired: tuple[Wired, Wired]) -> None:
    _, batched = wired

    class Broken(GetData):  # type: ignore[misc]  # kazoo is untyped
        def serialize(self) -> bytes:
            raise ValueError("cannot serialize")

    batched.queue(GetData("/first", None), Broken("/second", None))
    with pytest.raises(ValueError, match="cannot serialize"):
        batched.turn()
    assert [request.path for request, _, _ in batched.client._pending] == ["/first"]
    assert batched.sent()  # /first was written


def test_kazoos_own_turn_is_what_the_comparison_is_with() -> None:
    """Guard of the comparison above: kazoo's handler still sends one request per turn."""
    own = Wired(batched=False)
    try:
        own.queue(GetData("/a", None), GetData("/b", None))
        own.turn()
        assert len(own.client._pending) == 1
        assert type(own.connection) is ConnectionHandler
    finally:
        own.close()
