"""A topic's config overrides through the Admin API: DescribeConfigs, and a write of exactly the
keys that differ (IncrementalAlterConfigs). A mixin of ``adapters.kafka.admin_backend.AdminBackend``,
which supplies the client, the error mapping, the write counter and the memory of its own writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kafka_zk_operator.adapters.kafka import admin_client, admin_errors, admin_results, own_writes
from kafka_zk_operator.domain import errors


class TopicConfigCalls:
    """``write_topic_config`` of ``service.backend.TopicBackend`` and the override reads behind it."""

    bootstrap_servers: str
    read_your_writes_s: float
    _own: own_writes.OwnWrites

    def _call(self, action: str, request: Callable[[Any], Any]) -> Any:  # pragma: no cover - supplied
        raise NotImplementedError

    def _raise_for(self, code: int, message: str | None, action: str) -> None:  # pragma: no cover - supplied
        raise NotImplementedError

    def _count_write(self) -> None:  # pragma: no cover - supplied
        raise NotImplementedError

    def _overrides(self, topic: str) -> dict[str, str] | None:
        """The topic's own config overrides (DescribeConfigs, source ``DYNAMIC_TOPIC_CONFIG``);
        None when the broker asked does not know the topic (after asking again for up to
        ``read_your_writes_s``: a broker may learn of a new topic a moment later).

        Every entry is asked for (``config_filter="all"``): kafka-python drops DescribeConfigs'
        error code, and only then does "no entries" tell an unknown topic from one without overrides.
        """
        kafka_admin = admin_client.kafka_admin()
        resource = kafka_admin.ConfigResource(kafka_admin.ConfigResourceType.TOPIC, topic)

        def read() -> dict[str, str] | None:
            described = self._call(
                f"describing the config of topic {topic!r}",
                lambda admin: admin.describe_configs([resource], config_filter="all"),
            )
            if not (described.get("topic") or {}).get(topic):
                return None
            return admin_results.topic_overrides(described, topic)

        _, written = self._own.written(topic)
        return own_writes.until_shown(
            self.read_your_writes_s, read, lambda got: got is not None and (written is None or got == written)
        )

    def _known_overrides(self, topic: str) -> dict[str, str]:
        """:meth:`_overrides` of a topic the metadata just listed.

        :raises ClusterUnavailable: the broker asked for its config still does not know it."""
        overrides = self._overrides(topic)
        if overrides is None:
            raise errors.ClusterUnavailable(
                f"Kafka's brokers at {self.bootstrap_servers} do not agree yet whether topic {topic!r} exists "
                "(its metadata lists it, its config is unknown); retrying"
            )
        return overrides

    def write_topic_config(
        self, topic: str, config: Mapping[str, str], *, expected_version: int | None
    ) -> None:
        """Make the topic's overrides exactly ``config``: describe, then one IncrementalAlterConfigs
        with SET for new or differing keys and DELETE for overrides not in ``config``; nothing is
        sent when they are equal. ``expected_version`` is ignored (no versions in the Admin API).

        :raises TopicBeingDeleted: Kafka does not know the topic (deleted, or being deleted).
        :raises InvalidConfig: Kafka refused a value.
        """
        action = f"changing the config of topic {topic!r}"
        current = self._overrides(topic)
        if current is None:
            raise errors.TopicBeingDeleted(
                f"Kafka at {self.bootstrap_servers} does not know topic {topic!r} (deleted, being deleted, or "
                "not yet known to every broker), so its config is not written; retrying"
            )
        operations = admin_results.config_operations(current, config)
        if not operations:
            return
        kafka_admin = admin_client.kafka_admin()
        resource = kafka_admin.ConfigResource(kafka_admin.ConfigResourceType.TOPIC, topic, configs=operations)
        answer = self._call(
            action, lambda admin: admin.alter_configs([resource], incremental=True, raise_on_unknown=False)
        )
        code, message = admin_errors.alter_result(str((answer.get("topic") or {}).get(topic, "OK")))
        if code == admin_errors.UNKNOWN_TOPIC_OR_PARTITION:
            raise errors.TopicBeingDeleted(
                f"topic {topic!r} is deleted or being deleted in Kafka, so its config is not written"
            )
        self._raise_for(code, message, action)
        self._count_write()
        self._own.wrote(topic, config=config)
