"""``runtime.znode_signal.ZnodeSignal``: a ZooKeeper watch callback (kazoo's thread) wakes asyncio
waiters; a znode already gone wakes at once; no watch (ZooKeeper unreachable) is a timeout."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from kafka_zk_operator.runtime.znode_signal import ZnodeSignal


def test_the_znode_deleted_from_another_thread_wakes_the_waiter_and_a_rewrite_does_not() -> None:
    signal = ZnodeSignal()
    state = {"exists": True, "arms": 0}

    def arm(callback: Callable[[object], None]) -> bool:
        state["arms"] += 1
        if state["arms"] == 1:  # the controller rewrites the znode (a partition finished) ...
            threading.Timer(0.1, callback, args=(None,)).start()
        elif state["arms"] == 2:  # ... then deletes it (the batch is done)

            def delete() -> None:
                state["exists"] = False
                callback(None)

            threading.Timer(0.1, delete).start()
        return bool(state["exists"])

    started = time.monotonic()
    assert asyncio.run(signal.wait(arm, timeout=5.0)) is True
    assert time.monotonic() - started < 2.0
    assert state["arms"] == 3 and signal.fired == 2


def test_a_znode_already_gone_counts_as_changed() -> None:
    started = time.monotonic()
    assert asyncio.run(ZnodeSignal().wait(lambda callback: False, timeout=5.0)) is True
    assert time.monotonic() - started < 1.0


def test_no_change_within_the_timeout_is_false() -> None:
    started = time.monotonic()
    assert asyncio.run(ZnodeSignal().wait(lambda callback: True, timeout=0.3)) is False
    assert time.monotonic() - started >= 0.3


def test_a_watch_that_cannot_be_set_waits_out_the_timeout() -> None:
    def unreachable(callback: Callable[[object], None]) -> bool:
        raise ConnectionError("ZooKeeper is down")

    started = time.monotonic()
    assert asyncio.run(ZnodeSignal().wait(unreachable, timeout=0.3)) is False
    assert time.monotonic() - started >= 0.29


def test_one_deletion_wakes_every_waiter_and_a_later_wait_needs_a_new_one() -> None:
    signal = ZnodeSignal()

    async def two_waiters() -> list[bool]:
        gone = {"now": False}
        waits = [
            asyncio.ensure_future(signal.wait(lambda callback: not gone["now"], timeout=2.0))
            for _ in range(2)
        ]
        await asyncio.sleep(0.1)
        gone["now"] = True
        signal.on_event(None)
        woken = list(await asyncio.gather(*waits))
        woken.append(await signal.wait(lambda callback: True, timeout=0.2))  # there again: waits
        return woken

    assert asyncio.run(two_waiters()) == [True, True, False]
