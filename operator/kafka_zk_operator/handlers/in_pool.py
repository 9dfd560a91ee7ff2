"""Run a blocking function from an ``async`` handler in kopf's thread pool, the way kopf runs sync handlers.

An async handler that does its cheap part on the event loop (e.g. the KafkaTopic resync's probe)
hands the rest to the same pool as kopf's sync handlers (``memo.executor``, set at startup), with
the handler's context variables (kopf posts Events and logs through them). Like kopf, it waits
for the thread to end even when the handler is cancelled (a resource deleted meanwhile): an
orphaned thread would still write while kopf believes the handler is over. A call still queued
for a thread when the handler is cancelled is dropped instead: it never ran, so nothing of it can
land later. Waiting for those too made a stopping operator with thousands of queued resyncs run
every one of them before it exited (issue #16: 9,000 timers "did not exit in time").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def run_in_pool(memo: Any, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    call = functools.partial(contextvars.copy_context().run, functools.partial(fn, *args, **kwargs))
    executor: concurrent.futures.Executor | None = getattr(memo, "executor", None)
    submitted = executor.submit(call) if executor is not None else None
    future = (
        asyncio.wrap_future(submitted)
        if submitted is not None
        else asyncio.get_running_loop().run_in_executor(None, call)
    )
    cancellation: asyncio.CancelledError | None = None
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError as error:
            if submitted is not None and submitted.cancel():  # still queued: it will never run
                raise
            cancellation = error
    if cancellation is not None:
        raise cancellation
    return future.result()


async def run_in_pool_unless_stopped(
    memo: Any, stopped: Any, fn: Callable[..., T], *args: Any, **kwargs: Any
) -> T | None:
    """:func:`run_in_pool` for periodic work: ``stopped`` is kopf's flag of a timer (the operator
    exits, the resource is gone) or the KafkaTopic resync passes' stop event. Once it is set, a
    call still queued is dropped and one running is waited for; either way the result is None:
    there is nothing more to do."""
    call = asyncio.ensure_future(run_in_pool(memo, fn, *args, **kwargs))
    stop = asyncio.ensure_future(stopped.wait())
    try:
        await asyncio.wait({call, stop}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call  # drops it if queued, waits for it if running (see run_in_pool)
        raise
    finally:
        stop.cancel()
    if call.done():
        return call.result()
    call.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await call
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError  # the handler itself was cancelled meanwhile
    return None
