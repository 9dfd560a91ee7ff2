"""Bytes per broker in the plan report, byte sizes with units, and the disk capacity check (pure)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.byte_sizes import format_percent, format_size, parse_size
from kafka_zk_operator.domain.documents.snapshot import parse_snapshot_json, snapshot_to_arrays
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement import ClusterArrays, PlanReport, PlanRequest, plan
from kafka_zk_operator.domain.placement.capacity import (
    NO_SIZES,
    BrokerCapacity,
    check_capacity,
    parse_capacity,
)
from kafka_zk_operator.domain.placement.report import broker_bytes
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster

#: Three brokers, no racks, RF 2; sizes chosen so every sum below is unambiguous.
HAND_MADE = {
    "brokers": {"1": {"rack": None}, "2": {"rack": None}, "3": {"rack": None}},
    "topics": {
        "t": {
            "partitions": {"0": [1, 2], "1": [2, 3], "2": [3, 1], "3": [1, 2]},
            "sizes": {"0": 100, "1": 10, "2": 1000, "3": 5},
        }
    },
}


def _cluster(with_sizes: bool = True) -> ClusterArrays:
    doc = json.loads(json.dumps(HAND_MADE))
    if not with_sizes:
        del doc["topics"]["t"]["sizes"]
    return snapshot_to_arrays(parse_snapshot_json(json.dumps(doc)))


def _remove_3(with_sizes: bool = True) -> PlanReport:
    return plan(_cluster(with_sizes), PlanRequest(Mode.REMOVE_BROKERS, brokers=(3,))).report


def test_bytes_per_broker_before_and_after_on_a_hand_made_cluster() -> None:
    report = _remove_3()
    held = {b.broker_id: (b.bytes_before, b.bytes_after) for b in report.brokers}
    # before: 1 holds p0 p2 p3, 2 holds p0 p1 p3, 3 holds p1 p2; after: 1 and 2 hold everything.
    assert held == {1: (1105, 1115), 2: (115, 1115), 3: (1010, 0)}
    assert report.sizes_known and report.bytes_moved == 1010
    assert all(b.capacity is None for b in report.brokers) and report.warnings == ()


def test_without_sizes_every_byte_figure_is_zero_and_flagged_unknown() -> None:
    report = _remove_3(with_sizes=False)
    assert not report.sizes_known
    assert all((b.bytes_before, b.bytes_after) == (0, 0) for b in report.brokers)


def test_broker_bytes_ignores_empty_and_unplaced_slots() -> None:
    replicas = np.array([[0, 1, -1], [2, 3, 1], [1, -1, -1]], dtype=np.int64)  # 3 = UNPLACED (n = 3)
    sizes = np.array([7, 2**52, 1], dtype=np.int64)
    assert broker_bytes(replicas, sizes, 3).tolist() == [7, 7 + 2**52 + 1, 2**52]
    assert broker_bytes(np.zeros((2, 0), dtype=np.int64), sizes[:2], 2).tolist() == [0, 0]


@pytest.mark.parametrize("seed", [0, 1])
def test_bytes_match_the_plans_own_matrices(seed: int) -> None:
    cluster = synthetic_cluster(9, 3, 400, seed=seed, layout="kafka").with_brokers(make_brokers(3, 3, 40))
    result = plan(cluster, PlanRequest(Mode.ADD_BROKERS, brokers=(40, 41, 42), seed=seed))
    for i, line in enumerate(result.report.brokers):
        rows_before = (cluster.replicas == i).any(axis=1)
        rows_after = (result.replicas == i).any(axis=1)
        assert line.bytes_before == int(cluster.sizes[rows_before].sum())
        assert line.bytes_after == int(cluster.sizes[rows_after].sum())
    total = int((cluster.sizes * (cluster.replicas >= 0).sum(axis=1)).sum())
    assert sum(b.bytes_after for b in result.report.brokers) == total  # no replica added or dropped


SIZES = {
    "1073741824": 2**30,
    "512B": 512,
    "500GiB": 500 * 2**30,
    "2TiB": 2 * 2**40,
    "2 tib": 2 * 2**40,
    "750GB": 750 * 10**9,
    "1.5TiB": 3 * 2**39,
    "500Gi": 500 * 2**30,
    "1kb": 1000,
    "1KiB": 1024,
    "3PB": 3 * 10**15,
    " 10 MiB ": 10 * 2**20,
    "0.5B": 0,  # refused below: rounds down to nothing
}


@pytest.mark.parametrize("text", sorted(set(SIZES) - {"0.5B"}))
def test_sizes_with_units(text: str) -> None:
    assert parse_size(text) == SIZES[text]


BAD_SIZES = {
    "": "expected a number and a unit",
    "abc": "expected a number and a unit",
    "-5GiB": "expected a number and a unit",
    "1e3GB": "expected a number and a unit",
    "5G": "ambiguous size '5G': write GiB (powers of 1024) or GB (powers of 1000)",
    "2t": "ambiguous",
    "5XB": "unknown unit 'xb'",
    "0": "at least 1 byte",
    "0.5B": "at least 1 byte",
    "5EiB": "unknown unit",
    "9999PiB": "at most 4 EiB",
    "1,5TiB": "expected a number and a unit",
    "\u0663GiB": "expected a number and a unit",  # an Arabic-Indic three
}


@pytest.mark.parametrize("text", sorted(BAD_SIZES))
def test_bad_sizes_are_refused_with_the_reason(text: str) -> None:
    with pytest.raises(errors.InvalidSpec, match=BAD_SIZES[text].replace("(", r"\(").replace(")", r"\)")):
        parse_size(text)


def test_format_size_and_percent() -> None:
    assert [format_size(v) for v in (0, 1023, 1024, 1536, 5 * 2**40, 3 * 2**50)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "1.5 KiB",
        "5.0 TiB",
        "3.0 PiB",
    ]
    assert format_percent(1200, 1000) == "120%"
    assert format_percent(1000, 1000) == "100%"
    assert format_percent(1001, 1000) == "100.1%"  # above capacity never reads as exactly 100 %
    assert format_percent(2**40 + 1, 2**40) == "100.000%"
    assert format_percent(999, 1000) == "99.9%"


def test_capacity_forms() -> None:
    assert parse_capacity("2TiB") == BrokerCapacity(default=2 * 2**40)
    per = parse_capacity("7=2TiB, 8 = 750GB")
    assert per.default is None and dict(per.per_broker) == {7: 2 * 2**40, 8: 750 * 10**9}
    assert (per.of(7), per.of(8), per.of(9)) == (2 * 2**40, 750 * 10**9, None)
    assert per.unknown([1, 7, 9]) == (8,)


BAD_CAPACITIES = {
    "7:1TiB": "invalid capacity '7:1TiB': expected SIZE for every broker, or ID=SIZE,ID=SIZE,...",
    "7:1TiB,8:1TiB": "invalid capacity",
    "1,5TiB": "invalid capacity '1,5TiB'",
    "x=1TiB": "invalid entry 'x=1TiB'",
    "=1TiB": "invalid entry '=1TiB'",
    "7=": "invalid size ''",
    "7=1TiB,": "invalid entry ''",
    "1TiB,7=2TiB": "invalid entry '1TiB'",
    "7=1TiB,7=2TiB": "broker 7 is given a capacity more than once",
    "99999999999=1TiB": "invalid entry",
    "7=5G": "ambiguous",
    "5 apples": "unknown unit",
}


@pytest.mark.parametrize("text", sorted(BAD_CAPACITIES))
def test_bad_capacities_are_refused(text: str) -> None:
    with pytest.raises(errors.InvalidSpec, match=BAD_CAPACITIES[text]):
        parse_capacity(text)


def test_capacity_for_every_broker() -> None:
    checked = check_capacity(_remove_3(), BrokerCapacity(default=1000))
    assert [b.capacity for b in checked.brokers] == [1000, 1000, 1000]
    assert checked.warnings == (
        # 1: above before (1105) and fuller after (1115)
        "broker 1 is already above its capacity of 1000 B with 1.1 KiB (110%) and the plan adds 10 B: "
        "1.1 KiB after (112%)",
        # 2: below before (115), above after (1115); 3 is emptied (1010 -> 0): no warning
        "broker 2 would hold 1.1 KiB after the plan, above its capacity of 1000 B (112%); it holds 115 B "
        "before (12%)",
    )


def test_capacity_per_broker_checks_only_those() -> None:
    checked = check_capacity(_remove_3(), parse_capacity("2=1115,3=1000"))
    assert [b.capacity for b in checked.brokers] == [None, 1115, 1000]
    assert checked.warnings == ()  # 2 is exactly full (not above); 3 ends empty
    checked = check_capacity(_remove_3(), parse_capacity("2=1114"))
    assert len(checked.warnings) == 1 and checked.warnings[0].startswith("broker 2 would hold")


def test_a_broker_that_stays_above_its_capacity_is_reported_too() -> None:
    report = _remove_3()
    lines = tuple(
        dataclasses.replace(b, bytes_before=3000, bytes_after=2500) if b.broker_id == 1 else b
        for b in report.brokers
    )
    checked = check_capacity(dataclasses.replace(report, brokers=lines), parse_capacity("1=2000"))
    assert checked.warnings == (
        "broker 1 stays above its capacity of 2.0 KiB: 2.4 KiB after the plan (125%), 2.9 KiB before (150%)",
    )


def test_capacity_without_sizes_is_one_warning_and_nothing_checked() -> None:
    checked = check_capacity(_remove_3(with_sizes=False), BrokerCapacity(default=1))
    assert checked.warnings == (NO_SIZES,)
    assert "--sizes-from-bootstrap" in NO_SIZES
    assert all(b.capacity is None for b in checked.brokers)


def test_capacity_for_an_unknown_broker_is_refused() -> None:
    with pytest.raises(errors.InvalidSpec, match="not in the cluster: 4, 9"):
        check_capacity(_remove_3(), parse_capacity("9=1TiB,4=1TiB,1=1TiB"))


def test_the_capacity_check_leaves_everything_else_alone() -> None:
    report = _remove_3()
    checked = check_capacity(report, BrokerCapacity(default=1000))
    stripped = dataclasses.replace(
        checked,
        brokers=tuple(dataclasses.replace(b, capacity=None) for b in checked.brokers),
        warnings=(),
    )
    assert stripped == report
