"""Codecs for cluster-wide znodes: ``/controller``, ``/controller_epoch``, ``/cluster/id``, ``/migration``
and ``/feature``.

Called by the ZooKeeper store adapter (through ``znodes``) to find the active controller, fence on the
controller epoch, identify the cluster and read the state of a ZooKeeper → KRaft migration (the
facts of the migration-phase probe, ``adapters.zk.migration_probe``).
Kafka writes all of these; the operator only reads them, so the encoders serve fakes and golden
tests, and ``/feature`` is decode only. Pure: no ZooKeeper client.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from kafka_zk_operator.adapters.zk import znodes_common as common
from kafka_zk_operator.domain import errors, model

CONTROLLER_PATH: Final = "/controller"
CONTROLLER_EPOCH_PATH: Final = "/controller_epoch"
CLUSTER_ID_PATH: Final = "/cluster/id"
MIGRATION_PATH: Final = "/migration"
FEATURE_PATH: Final = "/feature"

#: ``/controller`` v1 up to 3.3; v2 (3.4+) adds ``kraftControllerEpoch``.
CONTROLLER_ZNODE_VERSIONS: Final = (1, 2)
#: ``kraftControllerEpoch`` of a ZooKeeper-mode controller; a KRaft controller writes its epoch (> 0).
ZK_CONTROLLER_KRAFT_EPOCH: Final = -1
#: ``/controller_epoch`` is created as 0; each election increments it.
INITIAL_CONTROLLER_EPOCH: Final = 0
#: ``/cluster/id`` writes its version as the JSON *string* "1".
CLUSTER_ID_VERSION: Final = "1"
MIGRATION_ZNODE_VERSION: Final = 0
#: ``/feature`` v1 has min and max levels; v2 (metadata version 3.3+) only ``max_version_level``.
FEATURE_ZNODE_VERSIONS: Final = (1, 2)
MAX_FEATURE_LEVEL: Final = 32767

_CONTROLLER_EPOCH_TEXT_MAX = len(str(common.INT32_MAX))


# --------------------------------------------------------------------------- /controller


@dataclass(frozen=True, slots=True)
class ControllerRegistration:
    """``/controller``: the active controller's broker id (a KRaft node id during migration)."""

    broker_id: model.BrokerId
    timestamp: int
    kraft_controller_epoch: int | None = ZK_CONTROLLER_KRAFT_EPOCH
    version: int = 2

    @property
    def is_kraft_controller(self) -> bool:
        """True when a KRaft controller owns ``/controller`` (Kafka's own guard: epoch > 0)."""
        return self.kraft_controller_epoch is not None and self.kraft_controller_epoch > 0


class ControllerZNode:
    """``/controller`` ↔ ``ControllerRegistration`` (``ZkData :: ControllerZNode``)::

        v1 {"version":1,"brokerid":2,"timestamp":"1700000000000"}
        v2 {"version":2,"brokerid":2,"timestamp":"1700000000000","kraftControllerEpoch":-1}

    Unknown keys are ignored.
    """

    @staticmethod
    def path() -> str:
        return CONTROLLER_PATH

    @staticmethod
    def encode(registration: ControllerRegistration) -> bytes:
        """:raises ValueError: unknown version, or the epoch presence does not match the version."""
        version = registration.version
        if version not in CONTROLLER_ZNODE_VERSIONS:
            raise ValueError(
                f"/controller version {version} is not one Kafka writes {CONTROLLER_ZNODE_VERSIONS}"
            )
        document: dict[str, object] = {
            "version": version,
            "brokerid": registration.broker_id,
            "timestamp": str(registration.timestamp),
        }
        if (version >= 2) != (registration.kraft_controller_epoch is not None):
            raise ValueError("/controller has kraftControllerEpoch exactly in version 2")
        if registration.kraft_controller_epoch is not None:
            document["kraftControllerEpoch"] = registration.kraft_controller_epoch
        return common.dump_json(document)

    @staticmethod
    def decode(data: bytes | None, path: str = CONTROLLER_PATH) -> ControllerRegistration:
        """:raises MalformedZnode: unknown version, missing or mistyped fields."""
        obj = common.load_json_object(data, path)
        version = common.version_field(obj, path, CONTROLLER_ZNODE_VERSIONS)
        epoch: int | None = None
        if version >= 2:
            epoch = common.int32_field(obj, "kraftControllerEpoch", path, minimum=ZK_CONTROLLER_KRAFT_EPOCH)
        elif "kraftControllerEpoch" in obj:
            raise errors.MalformedZnode(
                path, "version 1 has 'kraftControllerEpoch', which Kafka writes from version 2"
            )
        return ControllerRegistration(
            broker_id=common.int32_field(obj, "brokerid", path, minimum=0),
            timestamp=common.timestamp_field(obj, path),
            kraft_controller_epoch=epoch,
            version=version,
        )


class ControllerEpochZNode:
    """``/controller_epoch``: the controller epoch as decimal text, e.g. ``12`` (no JSON)."""

    @staticmethod
    def path() -> str:
        return CONTROLLER_EPOCH_PATH

    @staticmethod
    def encode(epoch: int) -> bytes:
        if isinstance(epoch, bool) or not INITIAL_CONTROLLER_EPOCH <= epoch <= common.INT32_MAX:
            raise ValueError(f"controller epoch {epoch!r} is not a non-negative 32-bit int")
        return str(epoch).encode("ascii")

    @staticmethod
    def decode(data: bytes | None, path: str = CONTROLLER_EPOCH_PATH) -> int:
        """:raises MalformedZnode: not a canonical non-negative 32-bit decimal."""
        text = common.decode_text(data, path)
        epoch = common.parse_canonical_int(text) if len(text) <= _CONTROLLER_EPOCH_TEXT_MAX else None
        if epoch is None or epoch < INITIAL_CONTROLLER_EPOCH:
            raise errors.MalformedZnode(
                path, f"{common.render(text)} is not a controller epoch (decimal digits)"
            )
        return epoch


# --------------------------------------------------------------------------- /cluster/id


class ClusterIdZNode:
    """``/cluster/id`` ↔ the cluster id string: ``{"version":"1","id":"<base64 uuid>"}``.

    ``version`` is the JSON string "1" (``ZkData :: ClusterIdZNode.toJson``). Unknown keys are ignored.
    """

    @staticmethod
    def path() -> str:
        return CLUSTER_ID_PATH

    @staticmethod
    def encode(cluster_id: str) -> bytes:
        if not cluster_id:
            raise ValueError("a cluster id is a non-empty string")
        return common.dump_json({"version": CLUSTER_ID_VERSION, "id": cluster_id})

    @staticmethod
    def decode(data: bytes | None, path: str = CLUSTER_ID_PATH) -> str:
        """:raises MalformedZnode: version not the string "1", ``id`` missing, empty or not a string."""
        obj = common.load_json_object(data, path)
        version = common.field(obj, "version", path)
        if version != CLUSTER_ID_VERSION:
            raise errors.MalformedZnode(
                path, f"'version' is {common.describe(version)}, expected the string \"{CLUSTER_ID_VERSION}\""
            )
        cluster_id = common.str_field(obj, "id", path)
        if not cluster_id:
            raise errors.MalformedZnode(path, "'id' is empty")
        return cluster_id


# --------------------------------------------------------------------------- /migration


#: What Kafka writes in every ``/migration`` field it has no value for yet
#: (``ZkMigrationLeadershipState.EMPTY``): the znode a migration-enabled controller creates at start.
MIGRATION_UNSET: Final = -1
#: ``/migration``'s fields in the order Kafka 3.9's ``MigrationZNode.encode`` writes them (a Scala
#: ``Map`` of five entries is a hash map, so not the order of the source; seen in the bytes that
#: Kafka 3.9.2's own encoder returns).
_MIGRATION_KEYS: Final = (
    "version",
    "kraft_metadata_offset",
    "kraft_controller_id",
    "kraft_metadata_epoch",
    "kraft_controller_epoch",
)


@dataclass(frozen=True, slots=True)
class MigrationState:
    """``/migration`` (``ZkMigrationLeadershipState``): which KRaft controller drives the migration
    and up to which KRaft metadata offset ZooKeeper holds its writes. Every field is -1 until known:
    the first migration-enabled controller creates the znode that way at start (before any claim),
    its controller id and epoch are written once it claims ``/controller``, and the offset once the
    initial copy of the metadata to KRaft is done. Other fields are kept in ``extra``."""

    kraft_controller_id: int = MIGRATION_UNSET
    kraft_controller_epoch: int = MIGRATION_UNSET
    kraft_metadata_offset: int = MIGRATION_UNSET
    kraft_metadata_epoch: int = MIGRATION_UNSET
    version: int = MIGRATION_ZNODE_VERSION
    extra: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def initial_copy_done(self) -> bool:
        """Kafka's ``initialZkMigrationComplete``: ``kraft_metadata_offset > 0``."""
        return self.kraft_metadata_offset > 0


class MigrationZNode:
    """``/migration`` ↔ ``MigrationState`` (``ZkData :: MigrationZNode``), as Kafka 3.9 writes it::

        {"version":0,"kraft_metadata_offset":-1,"kraft_controller_id":-1,
         "kraft_metadata_epoch":-1,"kraft_controller_epoch":-1}                (created at start)
        {"version":0,"kraft_metadata_offset":42,"kraft_controller_id":3000,
         "kraft_metadata_epoch":1,"kraft_controller_epoch":1}                  (initial copy done)

    Only ``version`` 0 exists, and Kafka's decoder requires all four fields; each is -1 until known
    (ids and epochs are Java ints, the offset a long). Unknown fields are kept, in order.
    """

    @staticmethod
    def path() -> str:
        return MIGRATION_PATH

    @staticmethod
    def encode(state: MigrationState) -> bytes:
        if state.version != MIGRATION_ZNODE_VERSION:
            raise ValueError(f"/migration version {state.version} is not one Kafka writes (0)")
        common.check_no_collision(state.extra, _MIGRATION_KEYS, "/migration")
        document: dict[str, object] = {
            "version": state.version,
            "kraft_metadata_offset": state.kraft_metadata_offset,
            "kraft_controller_id": state.kraft_controller_id,
            "kraft_metadata_epoch": state.kraft_metadata_epoch,
            "kraft_controller_epoch": state.kraft_controller_epoch,
        }
        document.update(state.extra)
        return common.dump_json(document)

    @staticmethod
    def decode(data: bytes | None, path: str = MIGRATION_PATH) -> MigrationState:
        """:raises MalformedZnode: a version other than 0, a missing or mistyped field, or a value
        below -1 (Kafka's "not known yet")."""
        obj = common.load_json_object(data, path)
        version = common.version_field(obj, path, (MIGRATION_ZNODE_VERSION,))

        def int32(key: str) -> int:
            return common.int32_field(obj, key, path, minimum=MIGRATION_UNSET)

        return MigrationState(
            kraft_controller_id=int32("kraft_controller_id"),
            kraft_controller_epoch=int32("kraft_controller_epoch"),
            kraft_metadata_offset=common.int64_field(
                obj, "kraft_metadata_offset", path, minimum=MIGRATION_UNSET
            ),
            kraft_metadata_epoch=int32("kraft_metadata_epoch"),
            version=version,
            extra=MappingProxyType(common.extra_fields(obj, _MIGRATION_KEYS)),
        )


# --------------------------------------------------------------------------- /feature


class FeatureZNodeStatus(enum.IntEnum):
    """``/feature`` ``status`` (``ZkData :: FeatureZNodeStatus``)."""

    DISABLED = 0
    ENABLED = 1


@dataclass(frozen=True, slots=True)
class FinalizedFeatures:
    """``/feature``: cluster-wide finalized feature levels (KIP-584), by feature name → max level."""

    version: int
    status: FeatureZNodeStatus
    features: Mapping[str, int]


class FeatureZNode:
    """``/feature`` → ``FinalizedFeatures``. **Decode only** (the controller owns it)::

        v1 {"version":1,"status":1,"features":{"f":{"min_version_level":1,"max_version_level":2}}}
        v2 {"version":2,"status":1,"features":{"metadata.version":{"max_version_level":7}}}

    Mirrors ``FeatureZNode.decode``: status 0/1 required, ``features`` required, v1 needs
    ``1 <= min_version_level <= max_version_level``, every entry ``max_version_level >= 1``.
    """

    @staticmethod
    def path() -> str:
        return FEATURE_PATH

    @staticmethod
    def decode(data: bytes | None, path: str = FEATURE_PATH) -> FinalizedFeatures:
        """:raises MalformedZnode: see the class docstring."""
        obj = common.load_json_object(data, path)
        version = common.version_field(obj, path, FEATURE_ZNODE_VERSIONS)
        status = common.int32_field(obj, "status", path)
        if status not in tuple(FeatureZNodeStatus):
            raise errors.MalformedZnode(path, f"'status' is {status}, expected 0 (disabled) or 1 (enabled)")
        entries = common.require_object(common.field(obj, "features", path), path, "'features'")
        levels: dict[str, int] = {}
        for name, raw in entries.items():
            where = f"'features' entry '{name}' "
            entry = common.require_object(raw, path, f"'features' entry '{name}'")
            high = common.int32_field(entry, "max_version_level", path, where=where, minimum=1)
            if high > MAX_FEATURE_LEVEL:
                raise errors.MalformedZnode(
                    path, f"{where}has max_version_level {high}, above {MAX_FEATURE_LEVEL}"
                )
            if version == 1:
                low = common.int32_field(entry, "min_version_level", path, where=where, minimum=1)
                if low > high:
                    raise errors.MalformedZnode(
                        path, f"{where}has min_version_level {low} above max_version_level {high}"
                    )
            levels[name] = high
        return FinalizedFeatures(
            version=version, status=FeatureZNodeStatus(status), features=MappingProxyType(levels)
        )
