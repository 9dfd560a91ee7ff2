"""Feeding the operator's indexes (``runtime.resource_index``): a paged listing before kopf starts
watching, then every event kopf delivers, before the change handlers of that event run.

kopf's own ``@kopf.index`` would hold every resource's worker at start-up until all are indexed,
which deadlocks under a worker bound (kopf issue #1243) and, unbounded, is the burst of one worker
per resource that made most of a restarted operator's memory peak (issue #16). With these indexes
kopf holds no index, so ``settings.queueing.worker_limit`` (``KZO_WORKER_LIMIT``) bounds its
workers safely, at start-up as during a burst.

- :func:`load` lists each kind page by page (``adapters.k8s.listing``) and indexes what it finds,
  from kopf's start-up activity: kopf starts watching only once it is done, so no handler sees a
  partial index;
- :func:`feed` indexes each event's body, or drops the resource on ``DELETED``: called for every
  event of the two kinds before kopf processes it (``handlers.event_feed``);
- a resource deleted between this listing and kopf's own never gets an event: :class:`Sweeper`
  checks, ``SWEEP_AFTER_SECONDS`` after the start, every entry that only the listing vouches for,
  and drops those the API server no longer has.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any, cast

import kopf
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.adapters.k8s.api import KubernetesApiError, api_client, reachable
from kafka_zk_operator.adapters.k8s.listing import list_resources
from kafka_zk_operator.domain.crd_identity import (
    GROUP,
    KAFKA_TOPIC,
    PARTITION_REASSIGNMENT,
    VERSION,
    CustomResource,
)
from kafka_zk_operator.handlers import kafkatopic, kafkatopic_resync_views, partitionreassignment
from kafka_zk_operator.runtime.resource_index import ResourceIndex, ref_of, uid_of

log = logging.getLogger(__name__)

#: Each kind's indexes.
INDEXES: dict[CustomResource, tuple[ResourceIndex, ...]] = {
    KAFKA_TOPIC: (kafkatopic.OWNERS, kafkatopic_resync_views.VIEWS),
    PARTITION_REASSIGNMENT: (partitionreassignment.QUEUE,),
}
#: When the sweep looks for entries no event has confirmed (kopf's own listing has delivered every
#: existing resource by then, even 10,000 under a worker bound), and again after each miss.
SWEEP_AFTER_SECONDS = 120.0
#: Seconds before kopf runs a start-up listing that failed again.
RETRY_SECONDS = 5.0


def feed(kind: CustomResource, event_type: str | None, body: Mapping[str, Any], memo: Any) -> None:
    """Index one event of ``kind``: its body, or its absence (``DELETED``)."""
    for index in INDEXES[kind]:
        if event_type == "DELETED":
            index.remove(uid_of(body))
        else:
            _index(index, body, memo)


def _index(index: ResourceIndex, body: Mapping[str, Any], memo: Any, *, listed: bool = False) -> None:
    """One resource into one index; a resource that cannot be indexed is left out of it, with a
    warning (one malformed resource must not stop the others' indexing)."""
    try:
        index.update(body, memo, listed=listed)
    except Exception as error:
        index.remove(uid_of(body))
        log.warning("%s: not indexed in %s: %s", "/".join(ref_of(body)), index.name, error)


def fill(custom: client.CustomObjectsApi, namespaces: tuple[str, ...], memo: Any) -> dict[str, int]:
    """Index every resource the API server lists now; kind → how many.

    :raises KubernetesApiError: a listing failed (nothing is half-indexed that an event or the
        next attempt would not set right: entries are per resource, and the next fill redoes all).
    """
    counts: dict[str, int] = {}
    for kind, indexes in INDEXES.items():
        counts[kind.kind] = 0
        for body in list_resources(custom, kind, namespaces):
            counts[kind.kind] += 1
            for index in indexes:
                _index(index, body, memo, listed=True)
    return counts


async def load(memo: Any, logger: logging.Logger | logging.LoggerAdapter[Any]) -> None:
    """Fill the indexes before kopf starts watching, then start the sweep (see the module
    docstring). Run from kopf's start-up activity, after ``main.configure``."""
    if getattr(memo, "settings", None) is None:
        raise kopf.TemporaryError("the operator's settings are not loaded yet", delay=RETRY_SECONDS)
    custom = client.CustomObjectsApi(api_client())
    loop = asyncio.get_running_loop()
    try:
        counts = await loop.run_in_executor(
            getattr(memo, "executor", None), fill, custom, memo.settings.namespaces, memo
        )
    except KubernetesApiError as error:
        raise kopf.TemporaryError(f"indexing the resources: {error.message}", delay=RETRY_SECONDS) from error
    logger.info("indexed %s before handling any", ", ".join(f"{n} {kind}s" for kind, n in counts.items()))
    _sweeper.start(custom, memo)


class Sweeper:
    """Drops entries of resources deleted between the start-up listing and kopf's own."""

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None

    def start(self, custom: client.CustomObjectsApi, memo: Any) -> None:
        if self.task is None:
            self.task = asyncio.create_task(self._run(custom, memo), name="index sweep")

    async def stop(self) -> None:
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self, custom: client.CustomObjectsApi, memo: Any) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(SWEEP_AFTER_SECONDS)
            left = 0
            for kind, indexes in INDEXES.items():
                unconfirmed: dict[str, tuple[str, str]] = {}
                for index in indexes:
                    unconfirmed.update(index.unconfirmed())
                for uid, ref in unconfirmed.items():
                    exists = await loop.run_in_executor(
                        getattr(memo, "executor", None), still_there, custom, kind, ref, uid
                    )
                    if exists is None:  # the API server could not tell: ask again next time
                        left += 1
                        continue
                    for index in indexes:
                        index.confirm(uid) if exists else index.remove(uid)
                    if not exists:
                        log.info("%s %s/%s is gone: dropped from the indexes", kind.kind, *ref)
            if not left:
                return


def still_there(
    custom: client.CustomObjectsApi, kind: CustomResource, ref: tuple[str, str], uid: str
) -> bool | None:
    """Whether the API server still has this resource (same uid); None: it could not tell now."""
    namespace, name = ref
    try:
        with reachable(f"get {kind.plural} {namespace}/{name}"):
            found = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, kind.plural, name)
    except ApiException as exc:
        return False if exc.status == 404 else None
    except KubernetesApiError:
        return None
    return uid_of(cast(Mapping[str, Any], found)) == uid


_sweeper = Sweeper()


@kopf.on.cleanup()
async def indexes_stop(**_: Any) -> None:
    await _sweeper.stop()
