"""``kzo check``: can the operator, with its settings, reach what it works with?

It reads the settings ``kzo operator`` reads (``KZO_CLUSTERS_FILE`` or ``KZO_ZOOKEEPER``, the
``KZO_*`` variables) and checks, printing one line per check:

* each cluster's ZooKeeper: a session opens (with the cluster's SASL, digest and TLS settings),
  and the chroot holds a Kafka cluster with registered brokers;
* each cluster's Kafka, when it has ``bootstrapServers``: the brokers answer metadata (logged in
  as its ``kafkaSecurity`` says);
* the Kubernetes API (unless ``--no-api``): the two CRDs are installed, and KafkaTopics and
  PartitionReassignments can be listed where the operator watches (its RBAC).

Exit code 0 when every check passed, 1 otherwise (each failure says what failed and why), 2 for
settings that cannot be read. The chart's ``helm test`` pod runs it (templates/tests/).
Nothing is written anywhere.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
import warnings
from collections.abc import Callable
from typing import Any

from kafka_zk_operator import config
from kafka_zk_operator.adapters.kafka import brokers
from kafka_zk_operator.adapters.zk import session
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.cli.errors import CliError
from kafka_zk_operator.cli.zk_reading import quiet_logger
from kafka_zk_operator.config.kafka_security import PLAINTEXT
from kafka_zk_operator.config.zookeeper import ZkConnectionSettings
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import GROUP, VERSION

DEFAULT_TIMEOUT_S = 15.0
CRD_PLURALS = ("kafkatopics", "partitionreassignments")


class CheckFailed(Exception):
    """One check's failure, in words the reader can act on."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check",
        help="check that the operator's settings reach ZooKeeper, Kafka and the Kubernetes API",
        description="Check, with the settings 'kzo operator' reads (KZO_CLUSTERS_FILE or KZO_ZOOKEEPER, "
        "KZO_NAMESPACES, ...), that each cluster's ZooKeeper holds a Kafka cluster, that its "
        "bootstrapServers answer, and that the Kubernetes API serves the CRDs to this identity. "
        "Exit code 0: all passed; 1: a check failed.",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"give up on each connection after this long (default {DEFAULT_TIMEOUT_S:.0f})",
    )
    parser.add_argument("--no-api", action="store_true", help="skip the Kubernetes API checks")
    parser.set_defaults(func=_run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 600:
        raise argparse.ArgumentTypeError(f"expected seconds greater than 0 and at most 600, got {text!r}")
    return value


def _run(args: argparse.Namespace) -> int:
    try:
        settings = config.load()
    except config.SettingsError as exc:
        raise CliError(str(exc)) from exc
    timeout: float = args.timeout
    checks: list[tuple[str, Callable[[], str]]] = []
    for cluster in settings.clusters:
        if cluster.zookeeper is not None:  # a KRaft cluster has none: its Kafka check is all
            checks.append(
                (f"zookeeper {cluster.name}", functools.partial(_zookeeper, cluster.zookeeper, timeout))
            )
        if cluster.bootstrap_servers:
            checks.append((f"kafka {cluster.name}", functools.partial(_kafka, cluster, timeout)))
    if not args.no_api:
        checks.append(("kubernetes api", functools.partial(_api, settings.namespaces, timeout)))
    failed = 0
    for name, check in checks:
        try:
            print(f"ok    {name}: {check()}", flush=True)
        except CheckFailed as exc:
            failed += 1
            print(f"FAIL  {name}: {exc}", flush=True)
    if failed:
        print(f"kzo check: error: {failed} of {len(checks)} checks failed", file=sys.stderr)
        return 1
    return 0


def _zookeeper(zookeeper: ZkConnectionSettings, timeout_s: float) -> str:
    connection = dataclasses.replace(zookeeper, connection_timeout_s=timeout_s, read_only=True)
    with quiet_logger("kazoo"), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="No chroot path exists", category=UserWarning)
        try:
            client = session.connect(connection)
        except errors.ClusterUnavailable as exc:
            raise CheckFailed(str(exc)) from exc
        except ValueError as exc:
            raise CheckFailed(f"invalid connect string {connection.connect!r}: {exc}") from exc
        try:
            store = ZkStore(client)
            if not store.holds_kafka_cluster():
                raise CheckFailed(f"{connection.connect}: no Kafka cluster there (/brokers/ids is missing)")
            ids = store.broker_ids()
        except errors.ClusterUnavailable as exc:
            raise CheckFailed(f"{connection.connect}: {exc}") from exc
        finally:
            session.close(client)
    if not ids:
        raise CheckFailed(f"{connection.connect}: a Kafka cluster without any registered broker")
    return f"{connection.connect}: brokers {', '.join(map(str, ids))} registered"


def _kafka(cluster: config.ClusterSettings, timeout_s: float) -> str:
    assert cluster.bootstrap_servers is not None
    try:
        ids = brokers.broker_ids(
            cluster.bootstrap_servers,
            client_id="kzo-check",
            timeout_s=timeout_s,
            security=cluster.kafka_security,
        )
    except errors.ClusterUnavailable as exc:
        raise CheckFailed(str(exc)) from exc
    security = cluster.kafka_security
    login = f" ({security.summary})" if security != PLAINTEXT else ""
    return f"{cluster.bootstrap_servers}{login}: brokers {', '.join(map(str, ids))} answer"


def _api(namespaces: tuple[str, ...], timeout_s: float) -> str:
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config import ConfigException

    from kafka_zk_operator.adapters.k8s.api import api_client, reachable

    try:
        with reachable("kzo check"):
            api = api_client()
            extensions = client.ApiextensionsV1Api(api)
            for plural in CRD_PLURALS:
                extensions.read_custom_resource_definition(f"{plural}.{GROUP}", _request_timeout=timeout_s)
            custom = client.CustomObjectsApi(api)
            for plural in CRD_PLURALS:  # the operator's RBAC: list where it watches
                for namespace in namespaces or (None,):
                    if namespace is None:
                        custom.list_cluster_custom_object(
                            GROUP, VERSION, plural, limit=1, _request_timeout=timeout_s
                        )
                    else:
                        custom.list_namespaced_custom_object(
                            GROUP, VERSION, namespace, plural, limit=1, _request_timeout=timeout_s
                        )
    except ApiException as exc:
        raise CheckFailed(f"the API server answered {exc.status} {exc.reason}: {_message(exc)}") from exc
    except errors.ClusterUnavailable as exc:
        raise CheckFailed(str(exc)) from exc
    except ConfigException as exc:  # no in-cluster credentials and no (valid) kubeconfig
        raise CheckFailed(f"no Kubernetes credentials: {exc}") from exc
    where = ", ".join(namespaces) if namespaces else "all namespaces"
    return f"CRDs installed; KafkaTopics and PartitionReassignments listable in {where}"


def _message(exc: Any) -> str:
    try:
        return str(json.loads(exc.body).get("message", exc.body))
    except (TypeError, ValueError, AttributeError):
        return str(exc.body)
