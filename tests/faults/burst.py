"""A burst of KafkaTopic creates sent from a background thread, so that a fault test can strike
while the client is still creating and the operator still writing: "in the middle of the burst"
then holds by construction (the test checks that the client had not finished), not by timing.

A burst that must go on through the API server's own outage (kube-apiserver or etcd killed) sends
each create again until the API server takes it: a refused connection, a 5xx or a 429 is asked
again, and a 409 on a create sent again means the earlier attempt had landed (the reply was lost)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import urllib3
from kazoo.client import KazooClient
from kubernetes.client.exceptions import ApiException

from tests.e2e.conftest import Resources
from tests.faults.invariants import created_count
from tests.integration.helpers import wait_for

#: Statuses an API server answers while it or etcd is down or starting (0: no HTTP answer at all).
_ASK_AGAIN = {0, 429, 500, 502, 503, 504}


def _create_through_outages(topics: Resources, namespace: str, body: dict[str, Any], outage_s: float) -> int:
    """Create ``body``; how many times it was sent again."""
    deadline = time.monotonic() + outage_s
    sent_again = 0
    while True:
        try:
            topics.create(namespace, body)
            return sent_again
        except ApiException as exc:
            if exc.status == 409 and sent_again:
                return sent_again  # an earlier attempt landed; only its reply was lost
            if exc.status not in _ASK_AGAIN or time.monotonic() > deadline:
                raise
        except (urllib3.exceptions.HTTPError, OSError):
            if time.monotonic() > deadline:
                raise
        sent_again += 1
        time.sleep(0.5)


def _create_all(
    topics: Resources, namespace: str, bodies: list[dict[str, Any]], pace_s: float, outage_s: float
) -> int:
    sent_again = 0
    for body in bodies:
        sent_again += _create_through_outages(topics, namespace, body, outage_s)
        time.sleep(pace_s)
    return sent_again


@contextlib.contextmanager
def creating(
    topics: Resources,
    namespace: str,
    bodies: list[dict[str, Any]],
    pace_s: float = 0.0,
    outage_s: float = 0.0,
) -> Iterator[Future[int]]:
    """Create ``bodies`` one after the other in a thread while the block runs, ``pace_s`` apart;
    the block gets the thread's future (``done()`` says whether the client finished; its result is
    how many times a create was sent again). A create the API server cannot take is sent again
    for up to ``outage_s`` seconds (0: the first error is the burst's). Leaving the block waits
    for the last create and raises the client's error, if it had one."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="burst") as pool:
        burst = pool.submit(_create_all, topics, namespace, bodies, pace_s, outage_s)
        yield burst
        burst.result()


def wait_under_way(
    zk: KazooClient,
    names: list[str],
    at_least: int,
    *,
    also: Callable[[], bool] | None = None,
    timeout: float = 120.0,
) -> None:
    """Until ZooKeeper holds at least ``at_least`` of ``names`` (and ``also`` holds), asked ten
    times a second: the fault strikes as soon as the operator is writing."""
    wait_for(
        lambda: (created_count(zk, names) >= at_least and (also is None or also())) or None,
        timeout=timeout,
        interval=0.1,
        what="the burst to be under way",
    )
