"""Wake async waiters when a znode goes: the running reassignment's next step starts as soon as
Kafka's controller finishes a batch, not at the next poll.

A :class:`ZnodeSignal` is one ZooKeeper watch callback shared by every waiter of one Kafka
cluster. :meth:`ZnodeSignal.wait` registers the waiter, arms the watch (through a function that
sets it, e.g. ``ZkStore.watch_reassignment``) and returns when the znode is gone (at once when it
already is) or after ``timeout`` seconds, whichever comes first; the caller then reads ZooKeeper
as on any poll, so a lost watch (a session expiry drops them) costs at most one poll interval and
never a wrong step.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable


class ZnodeSignal:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        #: Times the watch fired (for tests and logs).
        self.fired = 0

    def on_event(self, _event: object = None) -> None:
        """The watch callback (runs on kazoo's thread): wake every waiter."""
        with self._lock:
            waiters, self._waiters = self._waiters, set()
            self.fired += 1
        for loop, event in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)

    async def wait(self, arm: Callable[[Callable[[object], None]], bool], timeout: float) -> bool:
        """Wait until the znode is gone, at most ``timeout`` s; True when it went.

        ``arm`` sets the watch with this signal's callback and returns whether the znode exists;
        it runs in a thread (it talks to ZooKeeper). A change that leaves the znode in place (the
        controller rewrites it as partitions finish) re-arms and waits on; a znode already gone
        returns at once (the caller saw it a moment ago: the controller finished meanwhile); a
        failure to arm is a plain timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            waiter = (loop, asyncio.Event())
            with self._lock:
                self._waiters.add(waiter)
            try:
                try:
                    exists = await asyncio.wait_for(asyncio.to_thread(arm, self.on_event), timeout)
                except Exception:  # ZooKeeper unreachable: the caller's next pass reports it
                    await asyncio.sleep(max(0.0, deadline - loop.time()))
                    return False
                if not exists:
                    return True
                try:
                    await asyncio.wait_for(waiter[1].wait(), max(0.0, deadline - loop.time()))
                except TimeoutError:
                    return False
            finally:
                with self._lock:
                    self._waiters.discard(waiter)
