"""Unit tests for the ``znodes`` facade and the shared codec helpers (JSON style, errors, paths).

Per-schema tests live in ``test_znodes_topics``, ``test_znodes_brokers``, ``test_znodes_cluster``,
``test_znodes_config`` and ``test_znodes_admin``.
"""

from __future__ import annotations

import pytest

from kafka_zk_operator.adapters.zk import znodes, znodes_common
from kafka_zk_operator.domain import errors


def test_every_public_name_is_exported() -> None:
    for name in znodes.__all__:
        assert hasattr(znodes, name), name
    assert len(set(znodes.__all__)) == len(znodes.__all__)


def test_any_version_is_zookeepers_wildcard() -> None:
    assert znodes.ANY_VERSION == -1


@pytest.mark.parametrize(
    "codec",
    [
        znodes.TopicZNode,
        znodes.BrokerIdZNode,
        znodes.ControllerZNode,
        znodes.ControllerEpochZNode,
        znodes.ClusterIdZNode,
        znodes.MigrationZNode,
        znodes.ConfigEntityZNode,
        znodes.ConfigChangeZNode,
        znodes.ReassignPartitionsZNode,
        znodes.PreferredReplicaElectionZNode,
    ],
)
def test_read_write_codecs_have_encode_and_decode(codec: type) -> None:
    assert callable(getattr(codec, "encode", None))
    assert callable(getattr(codec, "decode", None))


def test_fixed_paths() -> None:
    assert znodes.ControllerZNode.path() == "/controller"
    assert znodes.ControllerEpochZNode.path() == "/controller_epoch"
    assert znodes.ClusterIdZNode.path() == "/cluster/id"
    assert znodes.MigrationZNode.path() == "/migration"
    assert znodes.FeatureZNode.path() == "/feature"
    assert znodes.ReassignPartitionsZNode.path() == "/admin/reassign_partitions"
    assert znodes.PreferredReplicaElectionZNode.path() == "/admin/preferred_replica_election"


def test_json_output_is_compact_utf8_and_refuses_nan() -> None:
    assert znodes_common.dump_json({"a": [1, 2], "b": {"c": "é"}}) == '{"a":[1,2],"b":{"c":"é"}}'.encode()
    with pytest.raises(ValueError):
        znodes_common.dump_json({"a": float("nan")})


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "has no data, expected JSON"),
        (b"\xc3\x28", "not valid UTF-8"),
        (b'{"a":Infinity}', "not valid JSON"),
        (b'{"a":1} trailing', "not valid JSON"),
    ],
)
def test_load_json_refusals(data: bytes, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes_common.load_json(data, "/x")
    assert caught.value.path == "/x" and problem in caught.value.problem


def test_malformed_znode_messages_name_path_and_problem() -> None:
    with pytest.raises(
        errors.MalformedZnode, match=r"^znode /brokers/topics/t is malformed: has no 'version'$"
    ):
        znodes.TopicZNode.decode(b'{"partitions":{}}', "/brokers/topics/t")


def test_long_values_are_shortened_in_messages() -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.TopicZNode.decode(b'{"version":"' + b"x" * 500 + b'","partitions":{}}', "/p")
    assert len(caught.value.problem) < 120 and "..." in caught.value.problem


@pytest.mark.parametrize("name", ["ok", "a.b_c-1", "<default>", "user%40example.com"])
def test_path_segment_accepts_ordinary_names(name: str) -> None:
    assert znodes_common.check_path_segment(name, "name") is None


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "is empty"),
        (".", "relative path element"),
        ("..", "relative path element"),
        ("a/b", "contains '/'"),
        ("a\x00b", "U+0000"),
        ("a\x7fb", "U+007F"),
        ("a\ufffeb", "U+FFFE"),
    ],
)
def test_path_segment_refusals(name: str, problem: str) -> None:
    reason = znodes_common.check_path_segment(name, "name")
    assert reason is not None and problem in reason
