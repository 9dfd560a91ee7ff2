"""The invariant checker itself, with no operator running: it finds each kind of mismatch
between the KafkaTopics and Kafka, and nothing where they agree, with Kafka asked in batches
smaller than the namespace (so a check of thousands of topics reads the same as one of three).

Kafka's side is made with Kafka's own CreateTopics; a resource is marked Ready by a plain status
patch, as an operator would. Every fault test's verdict rests on this checker.
"""

from __future__ import annotations

import contextlib
import uuid
from functools import partial
from typing import Any, cast

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests.e2e import kafka_client
from tests.e2e.conftest import GROUP, VERSION, Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.faults.invariants import topic_violations
from tests.integration.helpers import wait_for

pytestmark = pytest.mark.usefixtures("suite_operator_paused")

CONFIG = {"retention.ms": "3600000"}


def _mark_ready(api: client.ApiClient, namespace: str, name: str) -> None:
    custom = client.CustomObjectsApi(api)
    body = cast(
        "dict[str, Any]", custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "kafkatopics", name)
    )
    status = {
        "observedGeneration": body["metadata"]["generation"],
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "InSync",
                "message": "marked by the test",
                "lastTransitionTime": "2026-12-01T00:00:00Z",
            }
        ],
    }
    custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, "kafkatopics", name, {"status": status}
    )


def test_the_checker_names_every_mismatch_and_passes_what_agrees(
    api: client.ApiClient, ns: str, kafka_view: KafkaView, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Promise: a resource Kafka serves as specified and Ready passes; a wrong config, a wrong
    partition count, a topic Kafka lacks and a resource not Ready are each reported by name."""
    monkeypatch.setattr(kafka_client, "CHUNK", 2)  # 3 topics in Kafka: two batches of each request
    tag = uuid.uuid4().hex[:6]
    agreeing, wrong_config, wrong_count, absent = (
        f"chk-{tag}-ok",
        f"chk-{tag}-config",
        f"chk-{tag}-count",
        f"chk-{tag}-absent",
    )
    kafka_view.create_topic(agreeing, 2, 3, CONFIG)
    kafka_view.create_topic(wrong_config, 1, 3, {"retention.ms": "1000"})
    kafka_view.create_topic(wrong_count, 1, 3)
    for topic in (agreeing, wrong_config, wrong_count):
        wait_for(partial(kafka_view.describe, topic), timeout=60, what=f"Kafka to serve {topic}")
    resources = Resources(api, "kafkatopics")
    names = (agreeing, wrong_config, wrong_count, absent, f"chk-{tag}-pending")
    try:
        resources.create(ns, kafkatopic(agreeing, partitions=2, rf=3, config=CONFIG))
        resources.create(ns, kafkatopic(wrong_config, partitions=1, rf=3, config=CONFIG))
        resources.create(ns, kafkatopic(wrong_count, partitions=3, rf=3))
        resources.create(ns, kafkatopic(absent, partitions=1, rf=3))
        for name in (agreeing, wrong_config, wrong_count, absent):
            _mark_ready(api, ns, name)
        resources.create(ns, kafkatopic(f"chk-{tag}-pending", partitions=1, rf=3))

        found = sorted(topic_violations(api, ns, kafka_view))

        assert found == sorted(
            [
                f"{ns}/{wrong_config}: retention.ms='1000' in Kafka, spec says '3600000'",
                f"{ns}/{wrong_count}: 1 partitions in Kafka, spec says 3",
                f"{ns}/{absent}: Kafka has no topic {absent!r}",
                f"{ns}/chk-{tag}-pending: not Ready (None)",
                f"{ns}/chk-{tag}-pending: Kafka has no topic 'chk-{tag}-pending'",
            ]
        ), found
    finally:  # no operator runs: no finalizer holds them, and the suite's operator must not adopt them
        for name in names:
            with contextlib.suppress(ApiException):  # one the test did not get to create
                resources.delete(ns, name)
