"""Entity configs in the ZooKeeper store: ``/config/<type>/<name>`` read and written with its
``/config/changes`` notification in one transaction, in the format the cluster's line reads."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kafka_zk_operator.adapters.zk import znodes_config, znodes_topics
from kafka_zk_operator.adapters.zk.store_base import Versioned
from kafka_zk_operator.adapters.zk.store_writes import GuardedWrites
from kafka_zk_operator.adapters.zk.znodes_config import ConfigEntityType
from kafka_zk_operator.domain import errors

NOTIFICATION_PREFIX = znodes_config.CONFIG_CHANGE_CREATE_PATH


class ConfigStore(GuardedWrites):
    """Reads and versioned writes of topic, broker, user and client configs."""

    def read_topic_config(self, topic: str) -> Versioned[dict[str, str]] | None:
        return self.read_entity_config(ConfigEntityType.TOPICS, topic)

    def read_entity_config(
        self, entity_type: ConfigEntityType | str, name: str
    ) -> Versioned[dict[str, str]] | None:
        path = znodes_config.ConfigEntityZNode.path(entity_type, name)
        got = self._get(path)
        if got is None:
            return None
        return Versioned(dict(znodes_config.ConfigEntityZNode.decode(got[0], path).config), got[1].version)

    def write_topic_config(
        self, topic: str, config: Mapping[str, str], *, expected_version: int | None
    ) -> None:
        """:meth:`write_entity_config` of a topic (the backend protocol's name, ``service.backend``)."""
        self.write_entity_config(ConfigEntityType.TOPICS, topic, config, expected_version=expected_version)

    def write_entity_config(
        self,
        entity_type: ConfigEntityType | str,
        name: str,
        config: Mapping[str, str],
        *,
        expected_version: int | None,
    ) -> None:
        """Replace an entity's full config and notify brokers, in ONE transaction.

        ``expected_version=None`` means the config znode must not exist yet (it is created, with
        any missing parent: Kafka 0.10.1-1.0 brokers do not create ``/config/brokers``). The
        notification has the format the live brokers read (``config_change_version``). A topic's
        config is written only together with a check that its topic znode still exists.

        :raises TopicBeingDeleted: a topic config whose topic Kafka deleted (or is deleting).
        """
        entity_type = ConfigEntityType(entity_type)  # a plain "topics" must get the topic check too
        tx, paths = self._transaction()
        path = znodes_config.ConfigEntityZNode.path(entity_type, name)
        data = znodes_config.ConfigEntityZNode.encode(znodes_config.ConfigEntity(config=dict(config)))
        notification = znodes_config.ConfigChangeZNode.encode(
            znodes_config.ConfigChangeNotification(
                entity_path=f"{entity_type.value}/{name}", version=self.config_change_version(entity_type)
            )
        )
        if entity_type is ConfigEntityType.TOPICS:
            paths.append(self._check_topic_exists(tx, name))
        if expected_version is None:
            for parent in self._missing_parents(path):
                tx.create(parent, b"", acl=self._acl(parent))
                paths.append(parent)
            tx.create(path, data, acl=self._acl(path))
        else:
            tx.set_data(path, data, version=expected_version)
        tx.create(NOTIFICATION_PREFIX, notification, acl=self._acl(NOTIFICATION_PREFIX), sequence=True)
        try:
            self._commit(tx, [*paths, path, NOTIFICATION_PREFIX])
        except errors.VersionConflict as conflict:
            topic_path = (
                znodes_topics.TopicZNode.path(name) if entity_type is ConfigEntityType.TOPICS else None
            )
            if topic_path is not None and conflict.message.startswith(f"{topic_path} does not exist"):
                raise self._topic_gone(name) from conflict
            raise

    def update_entity_config(
        self,
        entity_type: ConfigEntityType | str,
        name: str,
        change: Callable[[dict[str, str]], dict[str, str]],
        *,
        attempts: int = 10,
    ) -> bool:
        """Read-modify-write an entity config with retries on conflicts; False when unchanged."""
        for _ in range(attempts):
            current = self.read_entity_config(entity_type, name)
            before = dict(current.value) if current is not None else {}
            after = change(dict(before))
            if after == before and current is not None:
                return False
            if current is None and not after:
                return False
            try:
                self.write_entity_config(
                    entity_type, name, after, expected_version=None if current is None else current.version
                )
            except (errors.VersionConflict, errors.ResourceConflict):
                continue
            return True
        raise errors.VersionConflict(
            f"config of {ConfigEntityType(entity_type).value}/{name} kept changing under concurrent writers; will retry"
        )

    def config_change_version(self, entity_type: ConfigEntityType) -> int:
        """The ``/config/changes`` format to write for ``entity_type``, by the cluster's line.

        :raises NotSupported: dynamic broker configs on a cluster whose line has none (0.10.0).
        :raises KafkaLineMismatch: the ``kafkaVersion`` setting contradicts the registrations.
        """
        return znodes_config.config_change_version_for_line(self.cluster_line(), entity_type)

    def _check_topic_exists(self, tx: Any, topic: str) -> str:
        """Add a check that ``/brokers/topics/<topic>`` still exists (as read now) to ``tx``.

        :raises TopicBeingDeleted: it does not exist (Kafka deleted it, or is finishing).
        """
        path = znodes_topics.TopicZNode.path(topic)
        stat = self._stat(path)
        if stat is None:
            raise self._topic_gone(topic)
        tx.check(path, stat.version)
        return path

    @staticmethod
    def _topic_gone(topic: str) -> errors.TopicBeingDeleted:
        return errors.TopicBeingDeleted(
            f"topic {topic!r} is deleted or being deleted in Kafka, so its config is not written "
            f"(that would re-create /config/topics/{topic} behind Kafka's deletion)"
        )

    def _missing_parents(self, path: str) -> list[str]:
        """Ancestors of ``path`` that do not exist, outermost first (``/config/brokers`` on old lines)."""
        missing: list[str] = []
        parent = path.rsplit("/", 1)[0]
        while parent and not self._exists(parent):
            missing.insert(0, parent)
            parent = parent.rsplit("/", 1)[0]
        return missing
