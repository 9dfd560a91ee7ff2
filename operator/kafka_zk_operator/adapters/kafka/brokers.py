"""The brokers Kafka itself reports (Metadata through kafka-python): ``kzo check`` asks it to show
that a cluster's ``bootstrapServers`` reach Kafka, independently of what ZooKeeper says.
"""

from __future__ import annotations

from kafka_zk_operator.adapters.kafka import admin_client
from kafka_zk_operator.adapters.kafka.log_dirs import SizesUnavailable
from kafka_zk_operator.config.kafka_security import PLAINTEXT, KafkaClientSecurity


def broker_ids(
    bootstrap: str, *, client_id: str, timeout_s: float = 15.0, security: KafkaClientSecurity = PLAINTEXT
) -> list[int]:
    """The ids of the brokers in the metadata Kafka answers through ``bootstrap``.

    :raises SizesUnavailable: kafka-python is missing, or Kafka cannot be reached or fails.
    """
    with admin_client.admin_session(
        bootstrap, client_id=client_id, timeout_s=timeout_s, security=security, unavailable=SizesUnavailable
    ) as admin:
        try:
            described = admin.describe_cluster()
        except admin_client.failures() as exc:
            raise SizesUnavailable(f"Metadata failed on {bootstrap}: {exc}") from None
    # DescribeCluster names them broker_id; kafka-python's Metadata fallback (brokers before 2.8) too.
    return sorted(int(broker["broker_id"]) for broker in described.get("brokers") or [])
