"""Partition sizes for ``kzo snapshot --sizes-from-bootstrap``, from Kafka's DescribeLogDirs.

ZooKeeper does not know how big partitions are; the brokers do. Every broker is asked (Admin
API ``DescribeLogDirs``, via kafka-python, imported only when sizes are asked for) for the size of
each replica in each log directory. A partition's size is the largest of its replicas' current
logs (the leader's, normally); "future" logs of an in-progress log-directory move are ignored.
Plaintext listeners only; the Admin client needs DESCRIBE on the cluster.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any

from kafka_zk_operator.cli.errors import CliError
from kafka_zk_operator.cli.zk_reading import quiet_logger

PartitionKey = tuple[str, int]


def sizes_from_log_dirs(responses: Iterable[Mapping[str, Any]]) -> dict[PartitionKey, int]:
    """Largest replica size per (topic, partition) in kafka-python's ``describe_log_dirs`` result."""
    sizes: dict[PartitionKey, int] = {}
    for response in responses:
        for log_dir in response.get("log_dirs") or []:
            if log_dir.get("error_code", 0) != 0:
                continue  # an offline log directory: its replicas have no size to report
            for topic in log_dir.get("topics") or []:
                for partition in topic.get("partitions") or []:
                    if partition.get("is_future_key"):
                        continue
                    key = (str(topic["name"]), int(partition["partition_index"]))
                    size = max(0, int(partition.get("partition_size", 0)))
                    sizes[key] = max(size, sizes.get(key, 0))
    return sizes


def fetch_sizes(bootstrap: str, timeout_s: float = 30.0) -> dict[PartitionKey, int]:
    """Ask every broker reachable through ``bootstrap`` for its replicas' sizes.

    :raises CliError: kafka-python is missing, Kafka cannot be reached, or the request fails.
    """
    try:
        kafka_admin: Any = importlib.import_module("kafka.admin")
        kafka_errors: Any = importlib.import_module("kafka.errors")
    except ImportError as exc:
        raise CliError(
            "--sizes-from-bootstrap needs the kafka-python package (pip install 'kafka-python>=2.2')"
        ) from exc
    with quiet_logger("kafka"):
        try:
            admin = kafka_admin.KafkaAdminClient(
                bootstrap_servers=bootstrap,
                client_id="kzo-snapshot",
                request_timeout_ms=int(timeout_s * 1000),
            )
        except (kafka_errors.KafkaError, OSError, ValueError) as exc:
            raise CliError(f"cannot reach Kafka at {bootstrap}: {exc}") from exc
        try:
            responses = admin.describe_log_dirs()
        except (kafka_errors.KafkaError, OSError, ValueError) as exc:
            raise CliError(f"DescribeLogDirs failed on {bootstrap}: {exc}") from exc
        finally:
            admin.close()
    return sizes_from_log_dirs(responses)
