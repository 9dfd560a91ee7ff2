"""kazoo's connection thread, sending the requests waiting in its queue together.

kazoo 2.x sends one request per turn of its connection loop: a ``poll`` that finds its wake-up
pipe readable, one byte read from that pipe, a ``poll`` for the socket to be writable and one
``send`` - and on the loopback, the sender's ``send`` also runs the receiving side of TCP. The
operator's reads seldom come alone: a reconcile sends its reads ahead together
(``StoreBase.reading_ahead``: five or six at once) and sixteen reconciles run at a time. At
10,000 adopted topics those per-request turns were about a fifth of the operator's busy samples
(py-spy, issue #16). Here one turn takes every request queued (up to :data:`MAX_BATCH`
requests or :data:`MAX_BATCH_BYTES` bytes) and writes them with one ``send``. Measured on that
adoption (docs/performance.md): 5.7 requests per write and ZooKeeper's CPU about 15% lower; the
operator's own CPU and the adoption's time did not move beyond the runs' spread.

What kazoo relies on is kept:

- Order: requests go out in the order they were queued, each with the next xid (an ``Auth``
  packet with kazoo's auth xid), and each enters ``_pending`` - which responses are matched
  against, in order - as it leaves the queue, before the write. If the write fails, kazoo fails
  every pending and queued request with the connection loss, as it does for one.
- Wake-ups: a caller queues its request, then writes one byte to the pipe. A turn reads the
  bytes there (up to :data:`_WAKEUP_READ`; any more wake the loop again) *before* it takes
  requests, so a request whose byte it read is in the queue when it takes them; a byte written
  later wakes the loop again (a turn that finds nothing left does nothing, as kazoo's own does).
  When a turn stops at its limit with requests left, it writes a byte itself, without waiting
  (it is the pipe's only reader: a full pipe already wakes it), so that the loop comes back for
  them; the loop reads the socket between turns, so responses are still read while many requests
  wait.
- kazoo's test sentinels (session expired, connection dropped) act when they are first in the
  queue, as in kazoo; requests before them are sent first.

:func:`install` swaps the class of a client's connection handler before it starts; a kazoo
whose connection handler is not the one this was written for (2.10-2.11's ``_send_request``) is
left as it is, with a warning.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import SessionExpiredError
from kazoo.protocol import connection as kazoo_connection
from kazoo.protocol.connection import ConnectionDropped, ConnectionHandler
from kazoo.protocol.serialization import Auth, int_struct

from kafka_zk_operator import metrics

#: The most requests one turn sends; then the loop reads what answers arrived before the rest.
MAX_BATCH = 64
#: A turn stops adding requests once its message is this long (one request may be longer).
MAX_BATCH_BYTES = 256 * 1024
#: kazoo's test sentinels (``KazooClient._call`` of them drops the connection or expires the session).
_SESSION_EXPIRED = getattr(kazoo_connection, "_SESSION_EXPIRED", None)
_CONNECTION_DROP = getattr(kazoo_connection, "_CONNECTION_DROP", None)
#: Wake-up bytes read at once (each queued request wrote one).
_WAKEUP_READ = 4096
#: This hook's name in ``kzo_private_hook_active`` and its warning.
HOOK = "kazoo_batched_sends"


class BatchingConnectionHandler(ConnectionHandler):  # type: ignore[misc]  # kazoo is untyped
    """kazoo's ``ConnectionHandler`` whose turns send every queued request at once (see the module)."""

    #: kazoo's: the xid of the last request sent on this connection.
    _xid: int

    def _send_request(self, read_timeout: float, connect_timeout: float) -> None:
        del read_timeout  # as kazoo's: writes wait up to the connect timeout
        self._take_wakeups()
        client = self.client
        queue = client._queue
        pending = client._pending
        message = bytearray()
        taken = 0
        try:
            while queue and taken < MAX_BATCH and len(message) < MAX_BATCH_BYTES:
                request, async_object = queue[0]
                if request is _SESSION_EXPIRED or request is _CONNECTION_DROP:
                    if taken:
                        break  # what precedes it goes first; it acts on the next turn
                    if request is _SESSION_EXPIRED:
                        raise SessionExpiredError("Session expired: Testing")
                    raise ConnectionDropped("Connection dropped: Testing")
                xid, framed = self._framed(request)
                message += framed
                queue.popleft()
                pending.append((request, async_object, xid))
                taken += 1
        finally:
            if message:  # also when a request could not be serialized: those before it go
                self._write(bytes(message), connect_timeout)
        if queue:
            self._wake_again()

    def _framed(self, request: Any) -> tuple[int, bytes]:
        """``request`` as kazoo's ``_submit`` writes it (length, xid, type, body), with the next xid."""
        if request.type == Auth.type:
            xid = kazoo_connection.AUTH_XID
        else:
            xid = self._xid = (self._xid % 2147483647) + 1
        body = bytearray(int_struct.pack(xid))
        if request.type:
            body += int_struct.pack(request.type)
        body += request.serialize()
        if self.logger.isEnabledFor(logging.DEBUG):
            self.logger.debug("Sending request(xid=%s): %s", xid, request)
        return xid, int_struct.pack(len(body)) + bytes(body)

    def _take_wakeups(self) -> None:
        """Read the wake-up bytes there now, up to :data:`_WAKEUP_READ` (never waits)."""
        with contextlib.suppress(OSError):  # none there (a spurious wake), or closed meanwhile
            self._read_sock.recv(_WAKEUP_READ, socket.MSG_DONTWAIT)

    def _wake_again(self) -> None:
        """Requests are left after a full turn: make the loop come back for them.

        Never waits: this thread is the pipe's only reader, so a blocking write to a full pipe
        would never end (callers' bytes fill it in a burst). A full pipe wakes the loop anyway.
        """
        write_sock = self._write_sock
        if write_sock is not None:
            # Full (BlockingIOError), or closing: then kazoo fails what is queued.
            with contextlib.suppress(OSError):
                write_sock.send(b"\0", socket.MSG_DONTWAIT)


def install(client: KazooClient) -> bool:
    """Make ``client`` (not started yet) send its queued requests together; whether it could.

    Refused when kazoo's connection handler is not the one this was written for: then the client
    sends one request per turn, as kazoo does, and a warning and ``kzo_private_hook_active`` say so
    (``tests/unit/test_private_hooks.py`` checks the shape). A client already batching is left as it is.
    """
    handler = getattr(client, "_connection", None)
    known = (
        type(handler) is ConnectionHandler
        and hasattr(client, "_queue")
        and hasattr(client, "_pending")
        and hasattr(ConnectionHandler, "_send_request")
        and hasattr(ConnectionHandler, "_write")
        and _SESSION_EXPIRED is not None
        and _CONNECTION_DROP is not None
    )
    if not known:
        if type(handler) is not BatchingConnectionHandler:
            metrics.private_hook(
                HOOK,
                False,
                "kazoo's ConnectionHandler (_send_request, _write, the client's _queue/_pending, the test"
                " sentinels) is not the one adapters/zk/batched_sends.py was written for: requests are"
                " sent one at a time",
            )
        return False
    handler.__class__ = BatchingConnectionHandler
    metrics.private_hook(HOOK, True)
    return True
