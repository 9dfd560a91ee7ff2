"""Partition sizes for ``kzo snapshot --sizes-from-bootstrap``: the DescribeLogDirs adapter
(``adapters.kafka.log_dirs``), its errors as the CLI's one-line errors."""

from __future__ import annotations

from kafka_zk_operator.adapters.kafka.log_dirs import PartitionKey, SizesUnavailable
from kafka_zk_operator.adapters.kafka.log_dirs import fetch_sizes as _fetch
from kafka_zk_operator.adapters.kafka.log_dirs import sizes_from_log_dirs as sizes_from_log_dirs
from kafka_zk_operator.cli.errors import CliError


def fetch_sizes(bootstrap: str, timeout_s: float = 30.0) -> dict[PartitionKey, int]:
    """Ask every broker reachable through ``bootstrap`` for its replicas' sizes.

    :raises CliError: kafka-python is missing, Kafka cannot be reached, or the request fails.
    """
    try:
        return _fetch(bootstrap, client_id="kzo-snapshot", timeout_s=timeout_s)
    except SizesUnavailable as exc:
        message = str(exc).replace("reading partition sizes needs", "--sizes-from-bootstrap needs")
        raise CliError(message) from None
