"""The stamps of a set of znodes, read in one pipelined round without blocking the event loop.

This is how a periodic resync learns that nothing it depends on changed since its last full
read (``runtime.unchanged``): one ``exists`` per znode, all sent before any answer is awaited
(kazoo queues them on its one connection), so N znodes cost one round trip of latency, no
decoding and no worker thread. A znode's ``mzxid`` changes with every write to it and a znode
deleted and created again gets a new one, so equal stamps mean equal content; ``cversion`` moves
whenever a child comes or goes (``/brokers/ids``: a broker registered or left).

Only ever used to decide that a read-and-compare would find nothing to do; every write still
goes through the versioned store, so a stamp can make the operator do more work, never a wrong
write.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException

#: (mzxid, cversion) of a znode; ``None`` when it does not exist.
Stamp = tuple[int, int] | None

#: How long a probe waits for its answers (a suspended connection queues them): past this, the
#: caller does the full read, which reports the connection problem properly.
PROBE_TIMEOUT_S = 5.0

#: Requests sent between two yields to the event loop (about 0.25 ms of CPU each): a long probe
#: does not hold the loop's other tasks (kopf's handlers, watches, API calls) for its whole length.
SEND_CHUNK = 256


async def stamps(client: KazooClient, paths: Sequence[str]) -> tuple[Stamp, ...] | None:
    """The stamp of every path, in order; ``None`` when any of them could not be read."""
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[None] = loop.create_future()
    remaining = len(paths)
    guard = threading.Lock()

    def settle() -> None:
        if not answered.done():
            answered.set_result(None)

    def one_answered(_: Any) -> None:  # in kazoo's callback thread
        nonlocal remaining
        with guard:
            remaining -= 1
            last = remaining == 0
        if last:
            loop.call_soon_threadsafe(settle)

    if not paths:
        return ()
    results: list[Any] = []
    try:
        for start in range(0, len(paths), SEND_CHUNK):
            if start:
                await asyncio.sleep(0)  # let the loop's other tasks run between chunks
            chunk = [client.exists_async(path) for path in paths[start : start + SEND_CHUNK]]
            for result in chunk:
                result.rawlink(one_answered)
            results.extend(chunk)
    except KazooException:
        return None
    try:
        await asyncio.wait_for(answered, PROBE_TIMEOUT_S)
        return tuple(stamp_of(result.get_nowait()) for result in results)
    except (KazooException, TimeoutError):
        return None


def stamp_of(stat: Any) -> Stamp:
    """The stamp of a znode's stat (``None``: the znode does not exist)."""
    return None if stat is None else (int(stat.mzxid), int(stat.cversion))


#: How long one answer about the ensemble's last transaction serves every resync that asks.
ZXID_FRESH_S = 1.0

#: How long the stamps of the cluster-wide znodes asked with it serve the probes (a round is asked
#: once :data:`ZXID_FRESH_S` passed, and answers a round trip or two later).
SHARED_FRESH_S = 2 * ZXID_FRESH_S


class RecentZxid:
    """The id of the last transaction ZooKeeper has applied (``zxid``), asked at most once per
    :data:`ZXID_FRESH_S` however many resyncs want it, with the stamps of the cluster-wide znodes
    every resync probes (``shared``).

    Every change to any znode is a transaction with a higher zxid, so when it has not moved since
    a resync's last read, nothing that read depended on can have changed: one request answers for
    every topic of a quiet cluster. The server puts its last applied zxid in the header of every
    reply; kazoo keeps it (``KazooClient.last_zxid``), so one ``exists`` of ``/`` brings it.

    An answer up to :data:`ZXID_FRESH_S` old can only make a resync see a change one period later,
    as if it had run that much earlier; and the zxid kept with a record is one seen before the
    read its stamps come from, so a change in between makes the zxids differ (more work, never a
    missed change).

    On a busy cluster the zxid moves all the time and every resync probes its znodes; three of the
    six a one-partition topic's read depends on are the same for every topic
    (``/admin/reassign_partitions``, ``/brokers/ids``, and ``/admin/delete_topics`` standing for
    the topic's deletion marker: ``ZkStore.topic_read_paths``). Their stamps are asked in the same
    round, right after the zxid (so they are taken after it, as every stamp kept with that zxid
    must be), and :meth:`shared_stamps` hands them to the probes (``ZkStore.stamps``) while they
    are at most :data:`SHARED_FRESH_S` old: half the requests per probe. A change they miss is
    seen one period later, as above.
    """

    def __init__(
        self, client: KazooClient, *, shared: Sequence[str] = (), clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.client = client
        self.shared = tuple(shared)
        self._clock = clock
        self._answer: tuple[float, asyncio.Future[int | None]] | None = None
        self._rounds = 0
        #: (round, when it was asked, the stamps of ``shared``) of the newest round that answered.
        self._completed: tuple[int, float, dict[str, Stamp]] | None = None

    async def get(self) -> int | None:
        """The zxid, or ``None`` when ZooKeeper did not answer."""
        now = self._clock()
        if self._answer is None or now - self._answer[0] >= ZXID_FRESH_S:
            self._rounds += 1
            self._answer = (now, asyncio.ensure_future(self._ask(self._rounds, now)))
        return await asyncio.shield(self._answer[1])

    def shared_stamps(self) -> dict[str, Stamp] | None:
        """The stamps of ``shared`` from the newest round that answered, taken after the zxid
        that round (or an older one) gave; ``None`` when that round is more than
        :data:`SHARED_FRESH_S` old, or the newest round did not answer (then a probe asks them itself)."""
        completed = self._completed
        if completed is None or self._clock() - completed[1] >= SHARED_FRESH_S:
            return None
        return completed[2]

    async def _ask(self, round_: int, asked: float) -> int | None:
        answered = await stamps(self.client, ("/",))
        zxid = int(self.client.last_zxid or 0)
        if answered is None or zxid <= 0:
            self._settle(round_, None)
            return None
        shared = await stamps(self.client, self.shared) if self.shared else ()
        self._settle(round_, None if shared is None else (asked, dict(zip(self.shared, shared, strict=True))))
        return zxid

    def _settle(self, round_: int, stamped: tuple[float, dict[str, Stamp]] | None) -> None:
        """Keep a round's shared stamps unless a newer round settled first; a round that did not
        answer drops what an older one kept (its stamps may predate the zxid a resync holds)."""
        if self._completed is not None and self._completed[0] > round_:
            return
        self._completed = None if stamped is None else (round_, *stamped)
