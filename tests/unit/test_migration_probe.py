"""Unit tests of the migration-phase probe (``adapters.zk.migration_probe``) on canned znodes: the
reads it makes, the facts it decodes, and the guard's verdict."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kafka_zk_operator.adapters.zk import migration_probe
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.migration.phase import Phase
from tests.unit.test_znodes_cluster import CONTROLLER_KRAFT, CONTROLLER_V2, MIGRATION, MIGRATION_CREATED


def _probe(znodes: dict[str, bytes], brokers: list[int]) -> tuple[migration_probe.Probe, list[str]]:
    asked: list[str] = []

    def get(path: str) -> tuple[bytes, SimpleNamespace] | None:
        asked.append(path)
        return None if path not in znodes else (znodes[path], SimpleNamespace(version=7))

    def broker_ids() -> list[int]:
        asked.append("/brokers/ids")
        return brokers

    return migration_probe.probe(get, broker_ids), asked


def test_a_zookeeper_mode_probe_reads_three_znodes_epoch_first_and_no_registrations() -> None:
    probed, asked = _probe({"/controller_epoch": b"4", "/controller": CONTROLLER_V2}, [1, 2])
    assert asked == ["/controller_epoch", "/migration", "/controller"]
    assert list(migration_probe.PROBE_PATHS) == asked
    assert probed.epoch_version == 7 and probed.facts.controller_epoch == 4
    assert probed.facts.zk_broker_ids is None
    assert probed.decision().phase is Phase.ZOOKEEPER
    migration_probe.refuse_unless_writable(probed.decision())


def test_the_all_unset_migration_znode_is_read_as_pending() -> None:
    probed, _ = _probe(
        {"/controller_epoch": b"4", "/controller": CONTROLLER_V2, "/migration": MIGRATION_CREATED}, []
    )
    assert probed.facts.migration is not None and probed.facts.migration.kraft_controller_id == -1
    assert probed.decision().phase is Phase.MIGRATION_PENDING


def test_a_kraft_owned_cluster_reads_the_registrations_and_is_refused_with_a_retryable_reason() -> None:
    probed, asked = _probe(
        {"/controller_epoch": b"5", "/controller": CONTROLLER_KRAFT, "/migration": MIGRATION}, [2]
    )
    assert asked[-1] == "/brokers/ids" and probed.facts.zk_broker_ids == (2,)
    with pytest.raises(errors.KRaftMigrationDetected) as refused:
        migration_probe.refuse_unless_writable(probed.decision())
    assert refused.value.retryable and refused.value.phase == Phase.HYBRID.value
    assert refused.value.reason is errors.Reason.KRAFT_MIGRATION
    assert "no Kafka Admin API backend yet" in refused.value.message


def test_a_malformed_migration_znode_is_reported_not_guessed() -> None:
    with pytest.raises(errors.MalformedZnode, match="/migration"):
        _probe({"/migration": b'{"version":0}'}, [])


def test_a_phase_change_is_reported_once() -> None:
    zk, _ = _probe({"/controller": CONTROLLER_V2}, [])
    pending, _ = _probe({"/controller": CONTROLLER_V2, "/migration": MIGRATION_CREATED}, [])
    assert migration_probe.report_change(None, zk.decision())
    assert not migration_probe.report_change(zk.decision(), zk.decision())
    assert migration_probe.report_change(zk.decision(), pending.decision())


def test_the_phase_metric_has_one_phase_at_1_per_cluster() -> None:
    from prometheus_client import REGISTRY

    from kafka_zk_operator import metrics

    phases = [p.value for p in Phase]
    metrics.migration_phase("east", Phase.ZOOKEEPER.value, phases)
    metrics.migration_phase("east", Phase.DUAL_WRITE.value, phases)
    metrics.migration_phase("west", Phase.ZOOKEEPER.value, phases)

    def value(cluster: str, name: str) -> float | None:
        return REGISTRY.get_sample_value("kzo_kraft_migration_phase", {"cluster": cluster, "phase": name})

    assert [p for p in phases if value("east", p) == 1] == [Phase.DUAL_WRITE.value]
    assert all(value("east", p) == 0 for p in phases if p != Phase.DUAL_WRITE.value)
    assert [p for p in phases if value("west", p) == 1] == [Phase.ZOOKEEPER.value]
