"""A PartitionReassignment pass that cannot reach the API server or ZooKeeper: one warning line
from the poll timer (its next tick retries), a kopf retry from the event handlers - never the HTTP
library's exception with a traceback."""

from __future__ import annotations

import logging
from typing import Any

import kopf
import pytest
import urllib3

from kafka_zk_operator.adapters.k8s import api
from kafka_zk_operator.domain import errors
from kafka_zk_operator.handlers import partitionreassignment as handler

BODY: dict[str, Any] = {
    "apiVersion": "kafka.zk-operator.io/v1alpha1",
    "kind": "PartitionReassignment",
    "metadata": {"name": "move", "namespace": "ns", "uid": "u-1", "generation": 1},
    "spec": {"mode": "Explicit", "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}]},
}
REFUSED = urllib3.exceptions.MaxRetryError(
    None,  # type: ignore[arg-type]  # urllib3 allows no pool in its own tests too
    "/apis/kafka.zk-operator.io/v1alpha1/namespaces/ns/partitionreassignments/move",
    urllib3.exceptions.NewConnectionError(
        None,  # type: ignore[arg-type]
        "Failed to establish a new connection: [Errno 111] Connection refused",
    ),
)


def test_an_unreachable_api_server_is_a_kubernetes_api_error() -> None:
    with pytest.raises(api.KubernetesApiError) as raised, api.reachable("get ns/move"):
        raise REFUSED
    assert "could not be reached (get ns/move)" in raised.value.message
    assert "Connection refused" in raised.value.message
    with pytest.raises(api.KubernetesApiError), api.reachable("get ns/move"):
        raise ConnectionResetError(104, "Connection reset by peer")


def _failing(exc: BaseException) -> Any:
    def reconcile_now(*_: Any) -> None:
        raise exc

    return reconcile_now


@pytest.mark.parametrize("exc", [REFUSED, errors.ClusterUnavailable("ZooKeeper is unreachable")])
def test_the_poll_timer_logs_one_warning_and_leaves_the_retry_to_its_next_tick(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, exc: BaseException
) -> None:
    monkeypatch.setattr(handler, "_reconcile_now", _failing(exc))
    with caplog.at_level(logging.WARNING, logger=handler.__name__):
        handler._reconcile(kopf.Body(BODY), memo=None, index={}, poll=True)  # type: ignore[arg-type]
    assert [(r.levelname, r.exc_info) for r in caplog.records] == [("WARNING", None)]
    assert caplog.records[0].getMessage().startswith("ns/move: will retry in ")


def test_an_event_handler_asks_kopf_to_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handler, "_reconcile_now", _failing(REFUSED))
    with pytest.raises(kopf.TemporaryError) as raised:
        handler._reconcile(kopf.Body(BODY), memo=None, index={})  # type: ignore[arg-type]
    assert "Connection refused" in str(raised.value)
    assert raised.value.delay == handler.POLL_SECONDS
