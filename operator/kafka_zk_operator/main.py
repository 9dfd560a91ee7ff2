"""kopf entry module: operator settings, shared state in ``memo``, metrics, probes.

Importing it registers every handler. Run it with ``kzo operator`` (or ``kopf run -m
kafka_zk_operator.main``). Long-lived objects live in kopf's ``memo``: ``memo.settings``
(``config.OperatorSettings``), ``memo.clusters`` (one ZooKeeper session per cluster) and, with
leader election, ``memo.leadership`` (``runtime.leadership.LeaderElector``, passed in by ``kzo
operator`` once this replica leads).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import kopf

import kafka_zk_operator.handlers.partitionreassignment  # noqa: F401  (registers handlers)
from kafka_zk_operator import __version__, config, metrics
from kafka_zk_operator.adapters.k8s import kopf_session
from kafka_zk_operator.adapters.k8s.status_patcher import StatusPatcher
from kafka_zk_operator.domain import crd_identity, errors
from kafka_zk_operator.handlers import (  # noqa: F401  (kafkatopic* register handlers)
    diffbase,
    event_feed,
    indexes,
    kafkatopic,
    kafkatopic_resync,
    waiting,
)
from kafka_zk_operator.runtime.clusters import ClusterPool, ClusterRuntime
from kafka_zk_operator.runtime.leadership import LeaderElector

#: Every event of the operator's kinds feeds its indexes (before ``kopf.run`` builds its processor).
event_feed.install()

#: Seconds before each retry of a failed Event POST.
EVENT_BACKOFFS_S = (2.0, 8.0)


@kopf.on.startup()
def configure(
    settings: kopf.OperatorSettings, memo: Any, logger: logging.Logger | logging.LoggerAdapter[Any], **_: Any
) -> None:
    operator_settings = config.load()
    waiting.install()
    settings.persistence.finalizer = crd_identity.FINALIZER
    settings.persistence.progress_storage = diffbase.progress_storage()
    settings.persistence.diffbase_storage = diffbase.DigestingStatusDiffBaseStorage()
    settings.posting.level = logging.WARNING  # our own Events are posted explicitly
    # An Event that failed is tried twice more, not kopf's 9 times: when the API server is too
    # busy to take Events, retrying them only adds to what it cannot keep up with.
    settings.posting.default_backoffs = EVENT_BACKOFFS_S
    settings.execution.max_workers = operator_settings.worker_threads
    memo.executor = settings.execution.executor  # for async handlers that hand work to the pool
    settings.watching.server_timeout = 300
    # The initial listing in pages: a restarted operator with 10,000 KafkaTopics otherwise held the
    # whole list's text and its parse at once, on top of every resource's resume (issue #16).
    settings.watching.chunk_size = 500
    settings.watching.client_timeout = 330
    settings.networking.request_timeout = 60
    # A resource deleted while one of its timers (resync, reassignment poll) is running in a
    # worker thread: wait for that run to end in-process (they take well under a second) and
    # re-check every 2 s instead of kopf's default 60 s, which delayed such deletions by a minute.
    settings.background.instant_exit_timeout = 10
    settings.background.cancellation_polling = 2
    # At most this many resources of a kind in kopf's hands at once, each worker holding its event,
    # body, patch and loggers: a burst or a restart of 10,000 KafkaTopics otherwise ran 10,000
    # workers at once, the largest part of the memory peak (issue #16). Safe because kopf holds no
    # index (``handlers.indexes``); an idle worker frees its place after a second, not kopf's 5.
    settings.queueing.worker_limit = operator_settings.worker_limit or None
    settings.queueing.idle_timeout = 1.0
    if operator_settings.namespaces:
        # An explicit namespace list needs no namespace scanning: the chart's namespaced RBAC
        # grants no cluster-wide 'list namespaces', and kopf would retry it forever.
        settings.scanning.disabled = True
    memo.settings = operator_settings
    leadership: LeaderElector | None = getattr(memo, "leadership", None)
    memo.clusters = ClusterPool(operator_settings, StatusPatcher(crd_identity.KAFKA_TOPIC), leadership)
    metrics.serve(operator_settings.metrics_port)
    if leadership is not None:
        _claim_fences(memo.clusters, logger)
    else:
        metrics.LEADER.set(1)
    logger.info(
        "serving clusters %s in %s",
        ", ".join(c.name for c in operator_settings.clusters),
        ", ".join(operator_settings.namespaces) or "all namespaces",
    )


@kopf.on.startup()
async def load_indexes(memo: Any, logger: logging.Logger | logging.LoggerAdapter[Any], **_: Any) -> None:
    """After :func:`configure` (kopf runs start-up handlers in order): the operator's indexes are
    filled before kopf starts watching (``handlers.indexes``)."""
    await indexes.load(memo, logger)


def _claim_fences(pool: ClusterPool, logger: logging.Logger | logging.LoggerAdapter[Any]) -> None:
    """A new leader claims every cluster's fence before handling anything, so that no write of an
    earlier leader can land from now on; a cluster unreachable now is claimed when first used."""

    def claim(runtime: ClusterRuntime) -> None:
        try:
            runtime.store()
        except errors.KzoError as error:
            logger.warning("cluster %s: the leader's fence is claimed on first use (%s)", runtime.name, error)

    pool.each(claim)


@kopf.on.login()
async def login(memo: Any, **kwargs: Any) -> kopf.AiohttpSession | None:
    """kopf's default credentials on a bounded connection pool (``adapters.k8s.kopf_session``).
    kopf runs the startup handlers first, so ``memo.settings`` is there."""
    settings: config.OperatorSettings = memo.settings
    return await kopf_session.login(settings.api_connections, len(settings.namespaces), memo=memo, **kwargs)


@kopf.on.cleanup()
async def shutdown(memo: Any, **_: Any) -> None:
    """Close every cluster's ZooKeeper session. ``async``, in a thread of its own: as a sync
    handler it waited in kopf's pool behind whatever was still queued there."""
    pool: ClusterPool | None = getattr(memo, "clusters", None)
    if pool is not None:
        await asyncio.to_thread(pool.close)


@kopf.on.probe(id="zookeeper")
def zookeeper_sessions(memo: Any, **_: Any) -> dict[str, bool]:
    """Liveness detail: which clusters have an open ZooKeeper session."""
    pool: ClusterPool | None = getattr(memo, "clusters", None)
    sessions: dict[str, bool] = {}
    if pool is not None:

        def record(runtime: ClusterRuntime) -> None:
            sessions[runtime.name] = runtime.health is not None

        pool.each(record)
    return sessions


@kopf.on.probe(id="leader")
def leader(memo: Any, **_: Any) -> str:
    """Which replica answers: its Lease identity when leader election is on, else "standalone"."""
    leadership: LeaderElector | None = getattr(memo, "leadership", None)
    return "standalone" if leadership is None else leadership.identity


@kopf.on.probe(id="version")
def version(**_: Any) -> str:
    """The operator's version (``kafka_zk_operator.__version__``), as ``kzo --version`` prints it."""
    return __version__
