"""A burst of KafkaTopic creates sent from a background thread, so that a fault test can strike
while the client is still creating and the operator still writing: "in the middle of the burst"
then holds by construction (the test checks that the client had not finished), not by timing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from tests.e2e.conftest import Resources


def _create_all(topics: Resources, namespace: str, bodies: list[dict[str, Any]]) -> None:
    for body in bodies:
        topics.create(namespace, body)


@contextlib.contextmanager
def creating(topics: Resources, namespace: str, bodies: list[dict[str, Any]]) -> Iterator[Future[None]]:
    """Create ``bodies`` one after the other in a thread while the block runs; the block gets the
    thread's future (``done()`` says whether the client finished). Leaving the block waits for the
    last create and raises the client's error, if it had one."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="burst") as pool:
        burst = pool.submit(_create_all, topics, namespace, bodies)
        yield burst
        burst.result()
