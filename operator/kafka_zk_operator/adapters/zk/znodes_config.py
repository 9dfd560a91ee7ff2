"""Codecs for dynamic configs: ``/config/<type>/<name>`` entities and ``/config/changes`` notifications.

Called by the ZooKeeper store adapter (through ``znodes``) to read and fully rewrite topic and broker
configs (throttles included) and to create the sequential change notification that makes brokers
re-read them. Pure: no ZooKeeper client. Decoders raise ``MalformedZnode``; the config encoder
raises ``InvalidConfig`` for non-string keys or values, other encoders ``ValueError`` for misuse.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from kafka_zk_operator.adapters.zk import znodes_common as common
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka.lines import FIRST_THROTTLE_LINE, ClusterLine

CONFIG_PATH: Final = "/config"
CONFIG_CHANGES_PATH: Final = "/config/changes"
#: Name prefix of the sequential notification children; ZooKeeper appends a 10-digit counter.
CONFIG_CHANGE_PREFIX: Final = "config_change_"
#: Path to pass to a sequential create (``create(..., sequence=True)``).
CONFIG_CHANGE_CREATE_PATH: Final = f"{CONFIG_CHANGES_PATH}/{CONFIG_CHANGE_PREFIX}"
#: ZooKeeper's sequence suffix is ``%010d`` of a signed 32-bit counter.
SEQUENCE_SUFFIX_LENGTH: Final = 10
#: ``ZooKeeperInternals.DEFAULT_STRING``: the entity name of cluster-wide defaults.
DEFAULT_ENTITY_NAME: Final = "<default>"
CONFIG_ENTITY_VERSION: Final = 1

#: Notification formats: v2 ``entity_path`` (0.10.1+), v1 ``entity_type``/``entity_name``
#: (0.9.0-0.10.0, topics and clients only), and 0.8's bare JSON string of a topic name (no version
#: field; ``CONFIG_CHANGE_LEGACY`` stands for it).
CONFIG_CHANGE_V2: Final = 2
CONFIG_CHANGE_V1: Final = 1
CONFIG_CHANGE_LEGACY: Final = 0
CONFIG_CHANGE_VERSIONS: Final = (CONFIG_CHANGE_LEGACY, CONFIG_CHANGE_V1, CONFIG_CHANGE_V2)

_SEQUENCE_SUFFIX: Final = re.compile(r"-?[0-9]+")
_ENTITY_KEYS: Final = ("version", "config")


class ConfigEntityType(enum.StrEnum):
    """The entity directories under ``/config`` (``ConfigType.ALL``)."""

    TOPICS = "topics"
    CLIENTS = "clients"
    USERS = "users"
    BROKERS = "brokers"
    IPS = "ips"


#: Entity types a v1 notification may name (3.9 accepts no others; 0.9/0.10.0 had no others).
_V1_ENTITY_TYPES: Final = frozenset({ConfigEntityType.TOPICS, ConfigEntityType.CLIENTS})


# --------------------------------------------------------------------------- paths


def config_entity_path(entity_type: ConfigEntityType | str, entity_name: str) -> str:
    """``/config/<type>/<name>``; ``entity_name`` is one (already sanitized) znode name."""
    kind = ConfigEntityType(entity_type)
    if kind is ConfigEntityType.TOPICS:
        return topic_config_path(entity_name)
    return f"{CONFIG_PATH}/{kind.value}/{common.entity_segment(entity_name, f'{kind.value} entity name')}"


def topic_config_path(topic: str) -> str:
    """``/config/topics/<t>``; raises ``InvalidTopicName`` for names that would escape the path."""
    return f"{CONFIG_PATH}/{ConfigEntityType.TOPICS.value}/{common.topic_segment(topic)}"


def broker_config_path(broker_id: int | None) -> str:
    """``/config/brokers/<id>``, or ``/config/brokers/<default>`` for ``None``."""
    name = DEFAULT_ENTITY_NAME if broker_id is None else common.broker_id_segment(broker_id)
    return f"{CONFIG_PATH}/{ConfigEntityType.BROKERS.value}/{name}"


def user_client_config_path(user: str, client_id: str) -> str:
    """``/config/users/<user>/clients/<client-id>`` (both sanitized, or ``<default>``)."""
    user_part = common.entity_segment(user, "user entity name")
    client_part = common.entity_segment(client_id, "client entity name")
    users, clients = ConfigEntityType.USERS.value, ConfigEntityType.CLIENTS.value
    return f"{CONFIG_PATH}/{users}/{user_part}/{clients}/{client_part}"


# --------------------------------------------------------------------------- /config/<type>/<name>


@dataclass(frozen=True, slots=True)
class ConfigEntity:
    """The **complete** override set of one entity (writers read, modify and write it back whole)."""

    config: Mapping[str, str]
    version: int = CONFIG_ENTITY_VERSION
    extra: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))


class ConfigEntityZNode:
    """``/config/<type>/<name>`` ↔ ``ConfigEntity`` (``ZkData :: ConfigEntityZNode``)::

        {"version":1,"config":{"retention.ms":"86400000","cleanup.policy":"compact"}}

    Every value is a string (Kafka's reader fails on anything else). Config keys keep their order.
    Unknown top-level keys are kept in ``extra`` and written back after ``config``.
    """

    @staticmethod
    def path(entity_type: ConfigEntityType | str, entity_name: str) -> str:
        return config_entity_path(entity_type, entity_name)

    @staticmethod
    def encode(entity: ConfigEntity | Mapping[str, str]) -> bytes:
        """Encode a ``ConfigEntity`` (keeps its ``extra``) or a plain name → value mapping.

        :raises InvalidConfig: a key or value is not a string. :raises ValueError: bad version/extra.
        """
        if not isinstance(entity, ConfigEntity):
            entity = ConfigEntity(config=entity)
        if entity.version != CONFIG_ENTITY_VERSION:
            raise ValueError(f"config entity version {entity.version} is not one Kafka writes (1)")
        for key, value in entity.config.items():
            if not isinstance(key, str) or not key:
                raise errors.InvalidConfig(f"Config name {key!r} is not a non-empty string.")
            if not isinstance(value, str):
                raise errors.InvalidConfig(
                    f"Config '{key}' has value {value!r} ({type(value).__name__}); "
                    "Kafka stores configs as strings."
                )
        common.check_no_collision(entity.extra, _ENTITY_KEYS, "config entity znode")
        document: dict[str, object] = {"version": entity.version, "config": dict(entity.config)}
        document.update(entity.extra)
        return common.dump_json(document)

    @staticmethod
    def decode(data: bytes | None, path: str) -> ConfigEntity:
        """:raises MalformedZnode: not an object, version other than 1, ``config`` missing or not a
        string → string object."""
        obj = common.load_json_object(data, path)
        version = common.version_field(obj, path, (CONFIG_ENTITY_VERSION,))
        raw = common.require_object(common.field(obj, "config", path), path, "'config'")
        config: dict[str, str] = {}
        for key, value in raw.items():
            if not isinstance(value, str):
                raise errors.MalformedZnode(
                    path, f"config '{key}' has value {common.describe(value)}, expected a string"
                )
            config[key] = value
        return ConfigEntity(
            config=MappingProxyType(config),
            version=version,
            extra=MappingProxyType(common.extra_fields(obj, _ENTITY_KEYS)),
        )


# --------------------------------------------------------------------------- /config/changes


def config_change_sequence(child_name: str) -> int:
    """The sequence number of a ``/config/changes`` child, e.g. ``config_change_0000000042`` → 42.

    Brokers parse every child with ``substring(prefix).toLong``: one misnamed child breaks the
    whole batch, hence ``MalformedZnode`` (naming the child's path) for anything else.
    """
    path = f"{CONFIG_CHANGES_PATH}/{child_name}"
    suffix = child_name.removeprefix(CONFIG_CHANGE_PREFIX)
    if (
        suffix == child_name
        or len(suffix) != SEQUENCE_SUFFIX_LENGTH
        or not _SEQUENCE_SUFFIX.fullmatch(suffix)
    ):
        raise errors.MalformedZnode(
            path, f"is not named {CONFIG_CHANGE_PREFIX}<{SEQUENCE_SUFFIX_LENGTH}-digit sequence number>"
        )
    return int(suffix)


def config_change_version_for(kafka_version: tuple[int, ...]) -> int:
    """The notification format a cluster of this Kafka version understands and writes itself."""
    if kafka_version >= (0, 10, 1):
        return CONFIG_CHANGE_V2
    if kafka_version >= (0, 9):
        return CONFIG_CHANGE_V1
    return CONFIG_CHANGE_LEGACY


#: The first line that reads v2 notifications and has dynamic broker and user configs (KIP-55, KIP-73).
_FIRST_V2_LINE: Final = FIRST_THROTTLE_LINE


def config_change_version_for_line(line: ClusterLine, entity_type: ConfigEntityType | str) -> int:
    """The notification format every live broker of ``line`` reads.

    Kafka 0.10.0 rejects v2 ("requirement failed" in ``DynamicConfigManager``, seen on a real
    0.10.0.1; at start-up that aborts the broker, and the notification is never purged), so lines
    before 0.10.1 - including a cluster with no broker registered, whose line is unknown - get v1,
    which every broker since 0.9 reads for topics and clients. Other entities need 0.10.1+.

    :raises NotSupported: a broker, user or ip config on a line before 0.10.1, which has none.
    """
    kind = ConfigEntityType(entity_type)
    if line.at_least(_FIRST_V2_LINE):
        return CONFIG_CHANGE_V2
    if kind in _V1_ENTITY_TYPES:
        return CONFIG_CHANGE_V1
    raise errors.NotSupported(
        f"dynamic {kind.value.removesuffix('s')} configs (replication throttles among them) need Kafka "
        "0.10.1 or later; "
        f"this cluster runs {line.describe()}"
    )


@dataclass(frozen=True, slots=True)
class ConfigChangeNotification:
    """A change trigger for one entity, as a v2 ``entity_path``: ``topics/foo``, ``brokers/3``,
    ``brokers/<default>``, ``users/<user>/clients/<client>``. ``version`` is the format read or to write.
    """

    entity_path: str
    version: int = CONFIG_CHANGE_V2

    @property
    def entity_type(self) -> ConfigEntityType:
        return ConfigEntityType(self.entity_path.partition("/")[0])

    @property
    def entity_name(self) -> str:
        """The (sanitized) name after the type; may itself contain ``/`` for user/client quotas."""
        return self.entity_path.partition("/")[2]

    @staticmethod
    def for_entity(
        entity_type: ConfigEntityType | str, entity_name: str, version: int = CONFIG_CHANGE_V2
    ) -> ConfigChangeNotification:
        """The notification for ``/config/<type>/<name>`` (``name`` sanitized; ``<user>/clients/<id>`` ok)."""
        kind = ConfigEntityType(entity_type)
        for segment in entity_name.split("/"):
            common.entity_segment(segment, f"{kind.value} entity name element")
        return ConfigChangeNotification(f"{kind.value}/{entity_name}", version)

    @staticmethod
    def for_topic(topic: str, version: int = CONFIG_CHANGE_V2) -> ConfigChangeNotification:
        return ConfigChangeNotification(
            f"{ConfigEntityType.TOPICS.value}/{common.topic_segment(topic)}", version
        )

    @staticmethod
    def for_broker(broker_id: int | None, version: int = CONFIG_CHANGE_V2) -> ConfigChangeNotification:
        name = DEFAULT_ENTITY_NAME if broker_id is None else common.broker_id_segment(broker_id)
        return ConfigChangeNotification(f"{ConfigEntityType.BROKERS.value}/{name}", version)


def _entity_path_problem(entity_path: str) -> str | None:
    kind, slash, name = entity_path.partition("/")
    if not slash or kind not in tuple(ConfigEntityType) or not name:
        types = ", ".join(f"'{t.value}/'" for t in ConfigEntityType)
        return (
            f"entity_path {common.render(entity_path)} does not start with one of {types} followed by a name"
        )
    for segment in name.split("/"):
        problem = common.check_path_segment(segment, "entity name element")
        if problem is not None:
            return f"entity_path {common.render(entity_path)}: {problem}"
    return None


class ConfigChangeZNode:
    """``/config/changes/config_change_NNNNNNNNNN`` ↔ ``ConfigChangeNotification``::

        v2      {"version":2,"entity_path":"topics/foo"}                      0.10.1+
        v1      {"version":1,"entity_type":"topics","entity_name":"foo"}     0.9.0-0.10.0
        legacy  "foo"                                                        0.8.x, topics only

    Unknown keys are ignored (a notification is never rewritten).
    """

    @staticmethod
    def create_path() -> str:
        """The path for a sequential create; ZooKeeper appends the counter."""
        return CONFIG_CHANGE_CREATE_PATH

    @staticmethod
    def encode(notification: ConfigChangeNotification) -> bytes:
        """Writes ``notification.version`` (v2 for 0.10.1+, v1 before; see ``config_change_version_for``).

        :raises ValueError: a bad entity path, or one the requested format cannot express.
        """
        problem = _entity_path_problem(notification.entity_path)
        if problem is not None:
            raise ValueError(problem)
        version = notification.version
        if version == CONFIG_CHANGE_V2:
            return common.dump_json({"version": version, "entity_path": notification.entity_path})
        kind, name = notification.entity_type, notification.entity_name
        if version == CONFIG_CHANGE_V1:
            if kind not in _V1_ENTITY_TYPES or "/" in name:
                raise ValueError(f"a v1 notification cannot express '{notification.entity_path}'")
            return common.dump_json({"version": version, "entity_type": kind.value, "entity_name": name})
        if version == CONFIG_CHANGE_LEGACY:
            if kind is not ConfigEntityType.TOPICS:
                raise ValueError(f"a 0.8 notification names only topics, not '{notification.entity_path}'")
            return common.dump_json(name)
        raise ValueError(
            f"config change notification version {version} is not one of {CONFIG_CHANGE_VERSIONS}"
        )

    @staticmethod
    def decode(data: bytes | None, path: str) -> ConfigChangeNotification:
        """:raises MalformedZnode: unknown version, v1 for other types than topics/clients, missing
        fields, or an entity path that names no entity."""
        document = common.load_json(data, path)
        if isinstance(document, str):
            problem = common.check_path_segment(document, "0.8 notification topic name")
            if problem is not None:
                raise errors.MalformedZnode(path, problem)
            return ConfigChangeNotification(
                f"{ConfigEntityType.TOPICS.value}/{document}", CONFIG_CHANGE_LEGACY
            )
        obj = common.require_object(document, path, "the znode data")
        version = common.version_field(obj, path, (CONFIG_CHANGE_V1, CONFIG_CHANGE_V2))
        if version == CONFIG_CHANGE_V2:
            entity_path = common.str_field(obj, "entity_path", path)
        else:
            kind = common.str_field(obj, "entity_type", path)
            if kind not in _V1_ENTITY_TYPES:
                raise errors.MalformedZnode(
                    path, f"version 1 'entity_type' is {common.render(kind)}, expected 'topics' or 'clients'"
                )
            name = common.str_field(obj, "entity_name", path)
            problem = common.check_path_segment(name, "'entity_name'")
            if problem is not None:
                raise errors.MalformedZnode(path, problem)
            entity_path = f"{kind}/{name}"
        problem = _entity_path_problem(entity_path)
        if problem is not None:
            raise errors.MalformedZnode(path, problem)
        return ConfigChangeNotification(entity_path, version)
