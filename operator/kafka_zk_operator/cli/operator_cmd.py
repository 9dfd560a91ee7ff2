"""``kzo operator``: run the operator (kopf) with settings from the environment (see ``config``)."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_zk_operator import config
from kafka_zk_operator.cli.main import CliError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "operator",
        help="run the operator (reads KZO_* environment variables)",
        description="Run the kafka-zk-operator controller. Settings come from KZO_* environment "
        "variables (KZO_ZOOKEEPER or KZO_CLUSTERS_FILE, KZO_NAMESPACES, ...); see docs/configuration.md.",
    )
    parser.add_argument("--log-format", choices=("plain", "json", "full"), default="plain")
    parser.add_argument("--verbose", action="store_true", help="log every handler step")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    try:
        settings = config.load()
    except config.SettingsError as exc:
        raise CliError(str(exc)) from exc
    import kopf

    import kafka_zk_operator.main  # noqa: F401  (registers the handlers)

    kopf.configure(verbose=args.verbose, log_format=kopf.LogFormat[args.log_format.upper()])
    kopf.run(
        standalone=True,
        clusterwide=not settings.namespaces,
        namespaces=list(settings.namespaces),
        liveness_endpoint=f"http://0.0.0.0:{settings.health_port}/healthz",
    )
    return 0
