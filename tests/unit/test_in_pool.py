"""handlers.in_pool: a cancelled handler waits for its call that is running in a thread, and drops
its call that is still queued (it never ran, so nothing of it can land later)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from kafka_zk_operator.handlers.in_pool import run_in_pool, run_in_pool_unless_stopped


@pytest.fixture
def memo() -> Iterator[SimpleNamespace]:
    executor = ThreadPoolExecutor(max_workers=1)
    yield SimpleNamespace(executor=executor)
    executor.shutdown(wait=True)


def test_it_returns_the_result_in_the_callers_context(memo: SimpleNamespace) -> None:
    assert asyncio.run(run_in_pool(memo, lambda a, b=0: a + b, 2, b=3)) == 5


def test_a_cancelled_call_that_is_running_is_waited_for(memo: SimpleNamespace) -> None:
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow() -> None:
        started.set()
        release.wait(10)
        finished.set()

    async def scenario() -> None:
        task = asyncio.create_task(run_in_pool(memo, slow))
        await asyncio.to_thread(started.wait, 10)
        task.cancel()
        await asyncio.sleep(0.1)
        assert not task.done(), "it must not end while its thread still runs"
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert finished.is_set()

    asyncio.run(scenario())


@contextlib.asynccontextmanager
async def the_only_worker_busy(memo: SimpleNamespace) -> AsyncIterator[None]:
    """The pool's one thread runs something until the block ends: a call made inside it queues."""
    started, release = threading.Event(), threading.Event()

    def busy() -> None:
        started.set()
        release.wait(10)

    blocker = asyncio.create_task(run_in_pool(memo, busy))
    await asyncio.to_thread(started.wait, 10)
    try:
        yield
    finally:
        release.set()
        await blocker


def test_a_cancelled_call_still_queued_never_runs(memo: SimpleNamespace) -> None:
    """One worker, busy: the second call waits in the queue; cancelling its handler drops it at
    once instead of waiting for a thread to run it (a stopping operator with 9,000 queued resyncs
    ran every one of them before it exited)."""
    ran: list[str] = []

    async def scenario() -> None:
        async with the_only_worker_busy(memo):
            queued = asyncio.create_task(run_in_pool(memo, lambda: ran.append("queued")))
            await asyncio.sleep(0.05)
            queued.cancel()
            await asyncio.wait({queued}, timeout=2)
            dropped = queued.done()
        await asyncio.wait({queued}, timeout=2)
        assert dropped and queued.cancelled(), "the queued call ended with its handler"

    asyncio.run(scenario())
    memo.executor.shutdown(wait=True)
    assert ran == []


class Stopped:
    """kopf's ``stopped`` flag as a timer gets it: ``await stopped.wait()``."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    async def wait(self) -> None:
        await self.event.wait()


def test_a_stopped_timers_queued_call_is_dropped_and_gives_none(memo: SimpleNamespace) -> None:
    ran: list[str] = []

    def resync() -> int:
        ran.append("resync")
        return 1

    async def scenario() -> None:
        async with the_only_worker_busy(memo):
            stopped = Stopped()
            timer = asyncio.create_task(run_in_pool_unless_stopped(memo, stopped, resync))
            await asyncio.sleep(0.05)
            stopped.event.set()
            assert await asyncio.wait_for(timer, timeout=2) is None

    asyncio.run(scenario())
    memo.executor.shutdown(wait=True)
    assert ran == []


def test_an_unstopped_timer_gets_the_result(memo: SimpleNamespace) -> None:
    assert asyncio.run(run_in_pool_unless_stopped(memo, Stopped(), lambda: 7)) == 7
