"""The one list of reassignment modes: both spellings, and the engine refusing the modes it does not plan."""

from __future__ import annotations

import pytest

from kafka_zk_operator.domain import errors, placement
from kafka_zk_operator.domain.modes import ENGINE_MODES, Mode
from kafka_zk_operator.domain.placement.synthetic import synthetic_cluster
from kafka_zk_operator.domain.reassignment.request import MODES


def test_every_mode_has_a_rule_and_the_engine_modes_are_modes() -> None:
    assert set(MODES) == set(Mode)
    assert {MODES[m].engine_requests is not None for m in ENGINE_MODES} == {True}


@pytest.mark.parametrize(
    ("mode", "cli_name"),
    [
        (Mode.ADD_BROKERS, "add-brokers"),
        (Mode.REMOVE_BROKERS, "remove-brokers"),
        (Mode.REBALANCE, "rebalance"),
        (Mode.REPLICATION_FACTOR, "replication-factor"),
        (Mode.DEMOTE_BROKERS, "demote-brokers"),
        (Mode.EXPLICIT, "explicit"),
    ],
)
def test_both_spellings_parse(mode: Mode, cli_name: str) -> None:
    assert mode.cli_name == cli_name
    assert Mode.parse(cli_name) is mode
    assert Mode.parse(mode.value) is mode


def test_an_unknown_mode_names_the_known_ones() -> None:
    with pytest.raises(errors.InvalidSpec, match=r"unknown mode 'shuffle'.*add-brokers"):
        Mode.parse("shuffle")


@pytest.mark.parametrize("mode", [m for m in Mode if m not in ENGINE_MODES])
def test_the_engine_refuses_a_mode_it_does_not_plan(mode: Mode) -> None:
    cluster = synthetic_cluster(3, 1, 4, rf=2, seed=1)
    with pytest.raises(errors.InvalidSpec, match=f"does not plan mode {mode.cli_name}"):
        placement.plan(cluster, placement.PlanRequest(mode=mode))
