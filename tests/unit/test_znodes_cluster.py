"""Unit tests for ``/controller``, ``/controller_epoch``, ``/cluster/id``, ``/migration`` and ``/feature``."""

from __future__ import annotations

import pytest

from kafka_zk_operator.adapters.zk import znodes
from kafka_zk_operator.domain import errors

CONTROLLER_V1 = b'{"version":1,"brokerid":2,"timestamp":"1700000000000"}'
CONTROLLER_V2 = b'{"version":2,"brokerid":2,"timestamp":"1700000000000","kraftControllerEpoch":-1}'
CONTROLLER_KRAFT = b'{"version":2,"brokerid":3000,"timestamp":"1700000000000","kraftControllerEpoch":5}'
CLUSTER_ID = b'{"version":"1","id":"Bq7XH0WxQz6l8w7cQ3mR9A"}'
# /migration exactly as Kafka 3.9.2's own ``kafka.zk.MigrationZNode.encode`` returns it (called on
# the 3.9.2 jars with ``ZkMigrationLeadershipState.EMPTY``, then with a KRaft controller, then with
# the offset after the initial copy): a Scala map of five entries, so hash order, not source order.
MIGRATION_CREATED = (
    b'{"version":0,"kraft_metadata_offset":-1,"kraft_controller_id":-1,'
    b'"kraft_metadata_epoch":-1,"kraft_controller_epoch":-1}'
)
MIGRATION_CLAIMED = (
    b'{"version":0,"kraft_metadata_offset":-1,"kraft_controller_id":3000,'
    b'"kraft_metadata_epoch":-1,"kraft_controller_epoch":1}'
)
MIGRATION = (
    b'{"version":0,"kraft_metadata_offset":42,"kraft_controller_id":3000,'
    b'"kraft_metadata_epoch":1,"kraft_controller_epoch":1}'
)


# --------------------------------------------------------------------------- /controller


@pytest.mark.parametrize("data", [CONTROLLER_V1, CONTROLLER_V2, CONTROLLER_KRAFT], ids=["v1", "v2", "kraft"])
def test_controller_round_trips_byte_exact(data: bytes) -> None:
    assert znodes.ControllerZNode.encode(znodes.ControllerZNode.decode(data)) == data


def test_controller_fields_and_kraft_detection() -> None:
    v1 = znodes.ControllerZNode.decode(CONTROLLER_V1)
    assert (v1.broker_id, v1.timestamp, v1.kraft_controller_epoch, v1.version) == (2, 1700000000000, None, 1)
    assert not v1.is_kraft_controller
    v2 = znodes.ControllerZNode.decode(CONTROLLER_V2)
    assert v2.kraft_controller_epoch == znodes.ZK_CONTROLLER_KRAFT_EPOCH
    assert not v2.is_kraft_controller
    assert znodes.ControllerZNode.decode(CONTROLLER_KRAFT).is_kraft_controller


def test_controller_ignores_unknown_keys() -> None:
    assert znodes.ControllerZNode.decode(CONTROLLER_V2[:-1] + b',"x":1}').broker_id == 2


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "has no data"),
        (b'{"version":3,"brokerid":2,"timestamp":"1"}', "version 3 is not one Kafka writes here (1, 2)"),
        (b'{"version":1,"timestamp":"1"}', "has no 'brokerid'"),
        (b'{"version":1,"brokerid":"2","timestamp":"1"}', "'brokerid' is '2' (a string)"),
        (b'{"version":1,"brokerid":2,"timestamp":1}', "'timestamp' is 1 (an integer), expected a string"),
        (b'{"version":2,"brokerid":2,"timestamp":"1"}', "has no 'kraftControllerEpoch'"),
        (b'{"version":1,"brokerid":2,"timestamp":"1","kraftControllerEpoch":-1}', "version 1 has"),
        (b'{"version":2,"brokerid":2,"timestamp":"1","kraftControllerEpoch":-2}', "expected at least -1"),
    ],
)
def test_malformed_controller_raises_naming_the_path(data: bytes, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.ControllerZNode.decode(data, "/controller")
    assert caught.value.path == "/controller"
    assert problem in caught.value.problem


def test_controller_encoder_refuses_an_epoch_that_does_not_fit_the_version() -> None:
    with pytest.raises(ValueError, match="exactly in version 2"):
        znodes.ControllerZNode.encode(
            znodes.ControllerRegistration(1, 1, kraft_controller_epoch=None, version=2)
        )
    with pytest.raises(ValueError, match="exactly in version 2"):
        znodes.ControllerZNode.encode(
            znodes.ControllerRegistration(1, 1, kraft_controller_epoch=-1, version=1)
        )


# --------------------------------------------------------------------------- /controller_epoch


@pytest.mark.parametrize(("data", "epoch"), [(b"0", 0), (b"12", 12), (b"2147483647", 2**31 - 1)])
def test_controller_epoch_round_trips(data: bytes, epoch: int) -> None:
    assert znodes.ControllerEpochZNode.decode(data) == epoch
    assert znodes.ControllerEpochZNode.encode(epoch) == data


@pytest.mark.parametrize("data", [b"", b"x", b"-1", b"012", b" 12", b"12\n", b"2147483648", b'"12"', b"1.0"])
def test_malformed_controller_epoch(data: bytes) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.ControllerEpochZNode.decode(data)
    assert caught.value.path == znodes.CONTROLLER_EPOCH_PATH


def test_controller_epoch_encoder_refuses_negative() -> None:
    with pytest.raises(ValueError):
        znodes.ControllerEpochZNode.encode(-1)


# --------------------------------------------------------------------------- /cluster/id


def test_cluster_id_round_trips_with_string_version() -> None:
    assert znodes.ClusterIdZNode.decode(CLUSTER_ID) == "Bq7XH0WxQz6l8w7cQ3mR9A"
    assert znodes.ClusterIdZNode.encode("Bq7XH0WxQz6l8w7cQ3mR9A") == CLUSTER_ID


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b'{"version":1,"id":"abc"}', "'version' is 1 (an integer), expected the string \"1\""),
        (b'{"id":"abc"}', "has no 'version'"),
        (b'{"version":"1"}', "has no 'id'"),
        (b'{"version":"1","id":""}', "'id' is empty"),
        (b'{"version":"1","id":5}', "'id' is 5 (an integer)"),
    ],
)
def test_malformed_cluster_id(data: bytes, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.ClusterIdZNode.decode(data)
    assert caught.value.path == "/cluster/id"
    assert problem in caught.value.problem


# --------------------------------------------------------------------------- /migration


@pytest.mark.parametrize(
    ("data", "fields", "copied"),
    [
        (MIGRATION_CREATED, (-1, -1, -1, -1), False),
        (MIGRATION_CLAIMED, (3000, 1, -1, -1), False),
        (MIGRATION, (3000, 1, 42, 1), True),
    ],
    ids=["created-all-unset", "claimed", "copied"],
)
def test_migration_as_kafka_writes_it_decodes_and_round_trips_byte_exact(
    data: bytes, fields: tuple[int, int, int, int], copied: bool
) -> None:
    """Before the fix the znode a migration-enabled controller creates at start (every field -1)
    was refused: the decoder wanted a controller id of at least 0."""
    state = znodes.MigrationZNode.decode(data)
    assert (
        state.kraft_controller_id,
        state.kraft_controller_epoch,
        state.kraft_metadata_offset,
        state.kraft_metadata_epoch,
    ) == fields
    assert state.initial_copy_done is copied
    assert dict(state.extra) == {}
    assert znodes.MigrationZNode.encode(state) == data


def test_migration_defaults_are_the_znode_kafka_creates() -> None:
    assert znodes.MigrationZNode.encode(znodes.MigrationState()) == MIGRATION_CREATED


def test_migration_keeps_unknown_fields_and_a_long_offset() -> None:
    data = MIGRATION.replace(b"42", b"9007199254740993")[:-1] + b',"future":{"a":1}}'
    state = znodes.MigrationZNode.decode(data)
    assert state.kraft_metadata_offset == 9007199254740993  # beyond 32 bits: a Java long
    assert dict(state.extra) == {"future": {"a": 1}}
    assert znodes.MigrationZNode.encode(state) == data


def test_migration_encoder_refuses_extra_fields_that_shadow_its_own() -> None:
    with pytest.raises(ValueError, match="collide"):
        znodes.MigrationZNode.encode(znodes.MigrationState(extra={"kraft_metadata_offset": 1}))


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (MIGRATION.replace(b'"version":0', b'"version":1'), "version 1 is not one Kafka writes here (0)"),
        (b'{"version":0}', "has no 'kraft_controller_id'"),
        (b'{"version":0,"kraft_controller_id":1}', "has no 'kraft_controller_epoch'"),
        (MIGRATION.replace(b'"kraft_metadata_offset":42,', b""), "has no 'kraft_metadata_offset'"),
        (MIGRATION.replace(b":3000", b':"3000"'), "'kraft_controller_id' is '3000'"),
        (
            MIGRATION.replace(b'offset":42', b'offset":-2'),
            "'kraft_metadata_offset' is -2, expected at least -1",
        ),
        (MIGRATION_CREATED.replace(b'"kraft_controller_id":-1', b'"kraft_controller_id":-2'), "at least -1"),
        (MIGRATION.replace(b"42", b"1e3"), "'kraft_metadata_offset' is 1000.0"),
    ],
)
def test_malformed_migration(data: bytes, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.MigrationZNode.decode(data)
    assert caught.value.path == "/migration"
    assert problem in caught.value.problem


# --------------------------------------------------------------------------- /feature


def test_feature_v2_decodes() -> None:
    data = b'{"features":{"metadata.version":{"max_version_level":7}},"version":2,"status":1}'
    features = znodes.FeatureZNode.decode(data)
    assert features.version == 2
    assert features.status is znodes.FeatureZNodeStatus.ENABLED
    assert dict(features.features) == {"metadata.version": 7}


def test_feature_v1_decodes_and_keeps_the_max_level() -> None:
    data = b'{"version":1,"status":0,"features":{"f":{"min_version_level":1,"max_version_level":3}}}'
    features = znodes.FeatureZNode.decode(data)
    assert features.status is znodes.FeatureZNodeStatus.DISABLED
    assert dict(features.features) == {"f": 3}


def test_feature_is_decode_only() -> None:
    assert not hasattr(znodes.FeatureZNode, "encode")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b'{"version":3,"status":1,"features":{}}', "version 3 is not"),
        (b'{"version":2,"features":{}}', "has no 'status'"),
        (b'{"version":2,"status":2,"features":{}}', "'status' is 2"),
        (b'{"version":2,"status":1}', "has no 'features'"),
        (b'{"version":2,"status":1,"features":{"f":{}}}', "'features' entry 'f' has no 'max_version_level'"),
        (b'{"version":2,"status":1,"features":{"f":{"max_version_level":0}}}', "expected at least 1"),
        (b'{"version":1,"status":1,"features":{"f":{"max_version_level":2}}}', "has no 'min_version_level'"),
        (
            b'{"version":1,"status":1,"features":{"f":{"min_version_level":3,"max_version_level":2}}}',
            "min_version_level 3 above max_version_level 2",
        ),
    ],
)
def test_malformed_feature(data: bytes, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.FeatureZNode.decode(data)
    assert caught.value.path == "/feature"
    assert problem in caught.value.problem
