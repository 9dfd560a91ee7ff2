"""domain.wording: counted nouns and broker lists agree in number."""

from __future__ import annotations

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.reassignment.computed import cluster_arrays
from kafka_zk_operator.domain.reassignment.plan import ClusterView
from kafka_zk_operator.domain.wording import brokers_are, counted


def test_counted_nouns() -> None:
    assert counted(1, "partition") == "1 partition"
    assert counted(0, "partition") == "0 partitions"
    assert counted(3, "replica") == "3 replicas"
    assert counted(2, "entry", "entries") == "2 entries"


def test_brokers_agree_with_their_verb() -> None:
    assert brokers_are([7]) == "broker 7 is"
    assert brokers_are([7, 8]) == "brokers 7, 8 are"


@pytest.mark.parametrize(
    ("absent", "expected"),
    [([9], "broker 9 holds replicas but is not"), ([8, 9], "brokers 8, 9 hold replicas but are not")],
)
def test_unregistered_replica_holders_are_named_in_the_right_number(absent: list[int], expected: str) -> None:
    view = ClusterView(brokers={1: "a"}, assignments={"t": {0: (1, *absent)}})
    with pytest.raises(errors.NotSupported, match=expected):
        cluster_arrays(view)
