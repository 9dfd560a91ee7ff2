"""The brokers Kafka itself reports (Metadata through kafka-python): ``kzo check`` asks it to show
that a cluster's ``bootstrapServers`` reach Kafka, independently of what ZooKeeper says.
"""

from __future__ import annotations

import importlib
from typing import Any

from kafka_zk_operator.adapters.kafka.log_dirs import SizesUnavailable, quiet


def broker_ids(bootstrap: str, *, client_id: str, timeout_s: float = 15.0) -> list[int]:
    """The ids of the brokers in the metadata Kafka answers through ``bootstrap``.

    :raises SizesUnavailable: kafka-python is missing, or Kafka cannot be reached or fails.
    """
    try:
        kafka_admin: Any = importlib.import_module("kafka.admin")
        kafka_errors: Any = importlib.import_module("kafka.errors")
    except ImportError:
        raise SizesUnavailable("asking Kafka needs the kafka-python package") from None
    with quiet("kafka"):
        try:
            admin = kafka_admin.KafkaAdminClient(
                bootstrap_servers=bootstrap,
                client_id=client_id,
                request_timeout_ms=int(timeout_s * 1000),
                bootstrap_timeout_ms=int(timeout_s * 1000),  # kafka-python's own default: 30 s
            )
        except (kafka_errors.KafkaError, OSError, ValueError) as exc:
            raise SizesUnavailable(f"cannot reach Kafka at {bootstrap}: {exc}") from None
        try:
            described = admin.describe_cluster()
        except (kafka_errors.KafkaError, OSError, ValueError) as exc:
            raise SizesUnavailable(f"Metadata failed on {bootstrap}: {exc}") from None
        finally:
            admin.close()
    # DescribeCluster names them broker_id; kafka-python's Metadata fallback (brokers before 2.8) too.
    return sorted(int(broker["broker_id"]) for broker in described.get("brokers") or [])
