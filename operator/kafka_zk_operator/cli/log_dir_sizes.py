"""Partition sizes for ``kzo snapshot --sizes-from-bootstrap`` / ``--sizes-from-cluster``: the
DescribeLogDirs adapter (``adapters.kafka.log_dirs``), its errors as the CLI's one-line errors."""

from __future__ import annotations

from kafka_zk_operator import config
from kafka_zk_operator.adapters.kafka.log_dirs import PartitionKey, SizesUnavailable
from kafka_zk_operator.adapters.kafka.log_dirs import fetch_sizes as _fetch
from kafka_zk_operator.adapters.kafka.log_dirs import sizes_from_log_dirs as sizes_from_log_dirs
from kafka_zk_operator.cli.errors import CliError
from kafka_zk_operator.config.kafka_security import PLAINTEXT, KafkaClientSecurity


def fetch_sizes(
    bootstrap: str,
    timeout_s: float = 30.0,
    security: KafkaClientSecurity = PLAINTEXT,
    flag: str = "--sizes-from-bootstrap",
) -> dict[PartitionKey, int]:
    """Ask every broker reachable through ``bootstrap`` for its replicas' sizes.

    :raises CliError: kafka-python is missing, Kafka cannot be reached, or the request fails.
    """
    try:
        return _fetch(bootstrap, client_id="kzo-snapshot", timeout_s=timeout_s, security=security)
    except SizesUnavailable as exc:
        message = str(exc).replace("reading partition sizes needs", f"{flag} needs")
        raise CliError(message) from None


def cluster_connection(name: str) -> tuple[str, KafkaClientSecurity]:
    """``bootstrapServers`` and ``kafkaSecurity`` of cluster ``name`` in the operator's settings,
    to connect as the operator does (checked before anything is read).

    :raises CliError: the settings do not load, name no such cluster or give it no
        ``bootstrapServers``.
    """
    try:
        settings = config.load()
    except config.SettingsError as exc:
        raise CliError(f"--sizes-from-cluster reads the operator's settings: {exc}") from None
    cluster = next((c for c in settings.clusters if c.name == name), None)
    if cluster is None:
        names = ", ".join(repr(c.name) for c in settings.clusters)
        raise CliError(
            f"--sizes-from-cluster {name!r}: the operator's settings have no such cluster "
            f"(they have {names}; the clusters file is KZO_CLUSTERS_FILE)"
        )
    if not cluster.bootstrap_servers:
        raise CliError(
            f"--sizes-from-cluster {name!r}: that cluster has no bootstrapServers in the clusters file; "
            "add them (clusters[].bootstrapServers) or use --sizes-from-bootstrap HOST:PORT"
        )
    return cluster.bootstrap_servers, cluster.kafka_security
