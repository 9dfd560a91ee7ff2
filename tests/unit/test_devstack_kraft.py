"""The KRaft devstack's pure parts: node properties, cluster ids, quorum voters, migration settings."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from kafka_zk_operator.devstack import java, kraft, migration
from kafka_zk_operator.devstack.errors import StackError


def _props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_a_cluster_id_is_16_bytes_of_url_safe_base64_without_padding() -> None:
    for _ in range(200):
        cluster_id = kraft.new_cluster_id()
        assert len(cluster_id) == 22 and not cluster_id.startswith("-")
        assert len(base64.urlsafe_b64decode(cluster_id + "==")) == 16


def test_quorum_voters_name_each_controller_on_loopback() -> None:
    assert kraft.quorum_voters([(3000, 9093), (3001, 9094)]) == "3000@127.0.0.1:9093,3001@127.0.0.1:9094"


def test_a_combined_node_listens_as_broker_and_controller_and_advertises_the_broker_only() -> None:
    props = _props(
        kraft.kraft_properties(
            node_id=1, roles=kraft.COMBINED, voters="1@127.0.0.1:2", log_dir=Path("/d"),
            broker_port=1, controller_port=2, rack="rack-a",
        )
    )  # fmt: skip
    assert props["process.roles"] == "broker,controller"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:1,CONTROLLER://127.0.0.1:2"
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:1"
    assert props["broker.rack"] == "rack-a"
    assert "zookeeper.connect" not in props and "broker.id" not in props


def test_a_migration_controller_has_the_flag_and_zookeeper_and_no_broker_settings() -> None:
    props = _props(
        kraft.kraft_properties(
            node_id=3000, roles=kraft.CONTROLLER, voters="3000@127.0.0.1:2", log_dir=Path("/d"),
            controller_port=2, zk_connect="127.0.0.1:1/kafka",
        )
    )  # fmt: skip
    assert props["listeners"] == "CONTROLLER://127.0.0.1:2"
    assert props["zookeeper.metadata.migration.enable"] == "true"
    assert props["zookeeper.connect"] == "127.0.0.1:1/kafka"
    assert props["inter.broker.listener.name"] == "PLAINTEXT"
    assert "advertised.listeners" not in props and "broker.rack" not in props


def test_a_role_without_its_port_is_refused() -> None:
    with pytest.raises(StackError, match="no broker port"):
        kraft.kraft_properties(node_id=1, roles=kraft.BROKER, voters="", log_dir=Path("/d"))


def test_brokers_enter_migration_mode_with_ibp_3_9_and_the_controller_listener_mapped() -> None:
    props = migration.migration_broker_properties("3000@127.0.0.1:9")
    assert props["inter.broker.protocol.version"] == "3.9"
    assert props["zookeeper.metadata.migration.enable"] == "true"
    assert props["controller.listener.names"] == "CONTROLLER"
    assert "CONTROLLER:PLAINTEXT" in props["listener.security.protocol.map"].split(",")


def test_a_spec_with_an_unknown_controller_layout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StackError, match="controllers must be one of"):
        kraft.KRaftStack(kraft.KRaftSpec(controllers="many"), tmp_path)


def test_kafka_4_jars_get_a_log4j2_configuration_and_its_system_property(tmp_path: Path) -> None:
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "log4j-core-2.24.3.jar").touch()
    config = java.write_logging(libs, tmp_path / "node")
    assert config.name == "log4j2.properties" and "rootLogger.level = INFO" in config.read_text()
    assert f"-Dlog4j2.configurationFile={config}" in java.java_argv(libs, "X", [], heap="64m", log4j=config)


def test_kafka_3_jars_keep_the_log4j_1_configuration(tmp_path: Path) -> None:
    (tmp_path / "reload4j-1.2.19.jar").touch()
    config = java.write_logging(tmp_path, tmp_path / "node")
    assert config.name == "log4j.properties"
    assert f"-Dlog4j.configuration=file:{config}" in java.java_argv(
        tmp_path, "X", [], heap="64m", log4j=config
    )
