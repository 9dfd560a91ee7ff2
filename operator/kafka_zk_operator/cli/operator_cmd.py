"""``kzo operator``: run the operator (kopf) with settings from the environment (see ``config``).

With ``KZO_LEADER_ELECTION=true`` the process first stands by until it holds the leader Lease
(``runtime.leadership``), answering its health probe and serving metrics meanwhile; kopf starts
once it leads. A leader that loses the Lease stops (exit code 1: the pod restarts and stands by);
one that is stopped normally releases it.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Mapping
from typing import Any

from kafka_zk_operator import config, metrics
from kafka_zk_operator.adapters.k8s import kopf_logging
from kafka_zk_operator.adapters.k8s.api import api_client
from kafka_zk_operator.adapters.k8s.leases import LeaseApi
from kafka_zk_operator.cli.main import CliError
from kafka_zk_operator.domain.leader_lease import LeaseTimings
from kafka_zk_operator.runtime.leadership import LeaderElector
from kafka_zk_operator.runtime.standby import StandbyHealth

log = logging.getLogger(__name__)
#: How long a leader that lost its Lease waits for kopf to stop before it exits anyway.
_STOP_GRACE_S = 15.0
#: How long a thread may hold the GIL while another waits for it (Python's default: 5 ms). The
#: operator's latency-bound threads (the Lease renewal, kazoo's connection, the health reporter)
#: each need the GIL dozens of times per request; behind kopf's event loop and the handler
#: threads of a 1,000-topic burst, each wait took up to a whole interval per thread ahead, and a
#: renewal that takes 12 ms alone took 0.5-8.7 s. Measured with six busy threads: a Lease renewal's
#: median 479 ms at 5 ms, 136 ms at 1 ms.
_GIL_SWITCH_INTERVAL_S = 0.001


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "operator",
        help="run the operator (reads KZO_* environment variables)",
        description="Run the kafka-zk-operator controller. Settings come from KZO_* environment "
        "variables (KZO_ZOOKEEPER or KZO_CLUSTERS_FILE, KZO_NAMESPACES, KZO_RESYNC_SECONDS, ...); see "
        "'Configuration' in README.md, and docs/install.md for the Helm values that set them.",
    )
    parser.add_argument(
        "--log-format",
        choices=("plain", "json", "full"),
        default=None,
        help="log format (default: $KZO_LOG_FORMAT, else json inside a pod and plain elsewhere)",
    )
    parser.add_argument("--verbose", action="store_true", help="log every handler step")
    parser.set_defaults(func=_run)


def default_log_format(env: Mapping[str, str]) -> str:
    """Structured (JSON) logs in a pod, readable text on a terminal; KZO_LOG_FORMAT wins."""
    wanted = env.get("KZO_LOG_FORMAT", "").strip().lower()
    if wanted in ("plain", "json", "full"):
        return wanted
    return "json" if env.get("KUBERNETES_SERVICE_HOST") else "plain"


def _run(args: argparse.Namespace) -> int:
    try:
        settings = config.load()
    except config.SettingsError as exc:
        raise CliError(str(exc)) from exc
    import kopf

    import kafka_zk_operator.main  # noqa: F401  (registers the handlers)

    sys.setswitchinterval(_GIL_SWITCH_INTERVAL_S)
    log_format = args.log_format or default_log_format(os.environ)
    kopf_logging.configure(log_format, verbose=args.verbose)
    memo = kopf.Memo()
    elector = None
    if settings.leader_election is not None:
        elector = _stand_by(settings)
        if elector is None:
            return 0
        memo.leadership = elector
    try:
        kopf.run(
            standalone=True,
            clusterwide=not settings.namespaces,
            namespaces=list(settings.namespaces),
            liveness_endpoint=f"http://0.0.0.0:{settings.health_port}/healthz",
            memo=memo,
        )
    finally:
        if elector is not None:
            elector.release()
    return 1 if elector is not None and elector.lost is not None else 0


def _stand_by(settings: config.OperatorSettings) -> LeaderElector | None:
    """Wait, answering probes and serving metrics, until this replica leads; then renew in a thread.

    Returns the elector, or None when a stop signal came first.
    """
    election = settings.leader_election
    assert election is not None
    timings = LeaseTimings.for_duration(election.lease_seconds)
    elector = LeaderElector(
        LeaseApi(api_client(), election.namespace, election.lease, timeout_s=timings.request_timeout_s),
        election.identity,
        timings,
    )
    metrics.LEADER.set(0)
    metrics.serve(settings.metrics_port)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    health = StandbyHealth(settings.health_port, lambda: elector.holder_seen)
    health.start()
    log.info("leader election on Lease %s/%s as %s", election.namespace, election.lease, election.identity)
    try:
        if not elector.acquire(stop):
            return None
    finally:
        health.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    elector.keep_leading(_stop_process)
    return elector


def _stop_process(reason: str) -> None:
    """Leadership lost: ask kopf to stop (as SIGTERM does), and exit anyway if it takes too long."""
    os.kill(os.getpid(), signal.SIGTERM)
    timer = threading.Timer(_STOP_GRACE_S, lambda: os._exit(1))
    timer.daemon = True
    timer.start()
