"""A ZooKeeper call made while the connection is down fails at once with ClusterUnavailable
instead of waiting in kazoo's queue for the connection to come back (found by the fault suite:
during a quorum loss every reconcile hung for the whole outage)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from kazoo.protocol.states import KazooState

from kafka_zk_operator.adapters.zk.errors import mapped
from kafka_zk_operator.domain import errors


@pytest.mark.parametrize("state", [KazooState.SUSPENDED, KazooState.LOST])
def test_a_call_while_disconnected_is_refused_before_it_is_queued(state: str) -> None:
    ran = []
    refused = pytest.raises(
        errors.ClusterUnavailable, match=r"ZooKeeper is unreachable .*while accessing /brokers/ids"
    )
    with refused, mapped(SimpleNamespace(state=state), "/brokers/ids"):
        ran.append(True)
    assert not ran


def test_a_call_while_connected_runs() -> None:
    with mapped(SimpleNamespace(state=KazooState.CONNECTED), "/brokers/ids"):
        ran = True
    assert ran
