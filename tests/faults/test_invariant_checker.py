"""The invariant checker itself, with no operator running: it finds each kind of mismatch
between the KafkaTopics and Kafka, and nothing where they agree, with Kafka asked in batches
smaller than the namespace (so a check of thousands of topics reads the same as one of three).

Kafka's side is made with Kafka's own CreateTopics; a resource is marked Ready by a plain status
patch, as an operator would. Every fault test's verdict rests on this checker. The check that a
topic's znodes were written once (``written_once``) is run on znodes written by hand under a
chroot of its own, which no broker watches: the shapes a create by the operator, Kafka's
``topic_id`` write, its resend after a ZooKeeper leader change and a second write leave.
"""

from __future__ import annotations

import contextlib
import uuid
from functools import partial
from typing import Any, cast

import pytest
from kazoo.client import KazooClient
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests.conftest import KafkaCluster
from tests.e2e import kafka_client
from tests.e2e.conftest import GROUP, VERSION, Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.faults.invariants import topic_violations, written_once
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


def test_written_once_accepts_only_the_create_and_kafkas_topic_id_writes(kafka_cluster: KafkaCluster) -> None:
    """Promise: version 1 of the topic znode (the create, then Kafka's ``topic_id``) passes; a
    version 2 fails unless the test says ZooKeeper's leader was lost, and even then only when the
    second write holds the ``topic_id`` and came before the partition's ``state`` znode (Kafka's
    controller resending its write), not after it (a writer going over the topic again)."""
    chroot = f"/kzo-written-once-{uuid.uuid4().hex[:8]}"
    root = KazooClient(hosts=kafka_cluster.zk_hosts)
    root.start(timeout=30)
    root.ensure_path(chroot)
    zk = KazooClient(hosts=kafka_cluster.zk_hosts + chroot)
    zk.start(timeout=30)
    created = b'{"version":2,"partitions":{"0":[1,2,3]},"adding_replicas":{},"removing_replicas":{}}'
    with_id = b'{"version":3,"topic_id":"hJP_N1rTRr68NW_Yx9w2LA","partitions":{"0":[1,2,3]}}'
    state = b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}'

    def topic(name: str, *writes: str) -> str:
        """``name`` created as the operator does, then ``writes`` in order: ``id`` (the topic
        znode set with its ``topic_id``), ``state`` (the partition's state znode created)."""
        zk.create(f"/config/topics/{name}", b'{"version":1,"config":{}}', makepath=True)
        zk.create(f"/brokers/topics/{name}", created, makepath=True)
        for write in writes:
            if write == "id":
                zk.set(f"/brokers/topics/{name}", with_id)
            else:
                zk.create(f"/brokers/topics/{name}/partitions/0/state", state, makepath=True)
        return name

    try:
        once = topic("once", "id", "state")
        resent = topic("resent", "id", "id", "state")
        rewritten = topic("rewritten", "id", "state", "id")
        no_id = topic("no-id", "state")

        assert written_once(zk, once) == []
        assert written_once(zk, once, zookeeper_leader_lost=True) == []
        assert written_once(zk, resent) == [f"/brokers/topics/resent: version 2, data {with_id!r}"]
        assert written_once(zk, resent, zookeeper_leader_lost=True) == []
        assert written_once(zk, rewritten, zookeeper_leader_lost=True) == [
            f"/brokers/topics/rewritten: version 2, data {with_id!r}"
        ]
        assert written_once(zk, no_id) == [f"/brokers/topics/no-id: version 0, data {created!r}"]
        zk.set(f"/config/topics/{once}", b'{"version":1,"config":{"retention.ms":"1"}}')
        assert written_once(zk, once) == ["/config/topics/once: version 1"]
        assert written_once(zk, once, config_changes=1) == []
    finally:
        zk.stop()
        zk.close()
        root.delete(chroot, recursive=True)
        root.stop()
        root.close()
