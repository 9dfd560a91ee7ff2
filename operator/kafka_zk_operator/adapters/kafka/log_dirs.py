"""Partition sizes from Kafka's DescribeLogDirs (Admin API, through kafka-python).

ZooKeeper does not know how big partitions are; the brokers do. Every broker is asked for the size
of each replica in each log directory. A partition's size is the largest of its replicas' current
logs (the leader's, normally); "future" logs of an in-progress log-directory move are ignored, and
so are offline log directories. The client (secured as ``kafkaSecurity`` says) needs DESCRIBE on the cluster.
Used by ``kzo snapshot --sizes-from-bootstrap`` and by byte-balanced PartitionReassignments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafka_zk_operator.adapters.kafka import admin_client
from kafka_zk_operator.config.kafka_security import PLAINTEXT, KafkaClientSecurity
from kafka_zk_operator.domain import errors

PartitionKey = tuple[str, int]


class SizesUnavailable(errors.ClusterUnavailable):
    """The brokers could not be asked for their log sizes (retryable: they may come back)."""


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


def fetch_sizes(
    bootstrap: str, *, client_id: str, timeout_s: float = 30.0, security: KafkaClientSecurity = PLAINTEXT
) -> dict[PartitionKey, int]:
    """Ask every broker reachable through ``bootstrap`` for its replicas' sizes.

    :raises SizesUnavailable: kafka-python is missing, Kafka cannot be reached, or the request fails.
    """
    with admin_client.admin_session(
        bootstrap, client_id=client_id, timeout_s=timeout_s, security=security, unavailable=SizesUnavailable
    ) as admin:
        try:
            responses = admin.describe_log_dirs()
        except admin_client.failures() as exc:
            raise SizesUnavailable(f"DescribeLogDirs failed on {bootstrap}: {exc}") from None
    return sizes_from_log_dirs(responses)
