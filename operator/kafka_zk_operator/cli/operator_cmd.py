"""``kzo operator``: run the operator (kopf) with settings from the environment (see ``config``)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from kafka_zk_operator import config
from kafka_zk_operator.cli.main import CliError


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

    log_format = args.log_format or default_log_format(os.environ)
    kopf.configure(verbose=args.verbose, log_format=kopf.LogFormat[log_format.upper()])
    kopf.run(
        standalone=True,
        clusterwide=not settings.namespaces,
        namespaces=list(settings.namespaces),
        liveness_endpoint=f"http://0.0.0.0:{settings.health_port}/healthz",
    )
    return 0
