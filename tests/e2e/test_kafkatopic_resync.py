"""The KafkaTopic resync end to end: a quiet topic is checked by its znodes' stamps alone, and a
change made behind the operator's back is still found and reverted (``runtime.unchanged``).

The session operator resyncs every 5 s (``devstack.operator_process``).
"""

from __future__ import annotations

from kazoo.client import KazooClient

from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.e2e.conftest import Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView, expect_out_of_band_change_reverted
from tests.integration.helpers import wait_for

UNCHANGED = 'kzo_resyncs_unchanged_total{kind="kafkatopic"}'


def _resource_version(topics: Resources, namespace: str, name: str) -> str:
    body = topics.get(namespace, name)
    assert body is not None, f"KafkaTopic {namespace}/{name} is gone"
    return str(body["metadata"]["resourceVersion"])


def test_a_quiet_topic_is_resynced_by_stamps_and_drift_is_still_reverted(
    topics: Resources,
    namespace: str,
    kafka: KafkaView,
    zk: KazooClient,
    operator: OperatorProcess,
    unique_topic: str,
) -> None:
    topics.create(namespace, kafkatopic(unique_topic, partitions=2, rf=3, config={"retention.ms": "3600000"}))
    topics.wait_ready(namespace, unique_topic)
    config_path = f"/config/topics/{unique_topic}"

    # Its first resync reads in full (the Ready reason goes from Created to InSync) and records
    # the stamps; the later ones find them unchanged and write nothing anywhere.
    start = operator.metric_sum(UNCHANGED)
    wait_for(
        lambda: operator.metric_sum(UNCHANGED) > start, timeout=60, what="a resync that finds nothing new"
    )
    resource_version = _resource_version(topics, namespace, unique_topic)
    config_version = zk.exists(config_path).version
    quiet = operator.metric_sum(UNCHANGED)
    wait_for(lambda: operator.metric_sum(UNCHANGED) >= quiet + 3, timeout=60, what="three more such resyncs")
    assert zk.exists(config_path).version == config_version, "a quiet topic's config is never rewritten"
    assert _resource_version(topics, namespace, unique_topic) == resource_version, (
        "a quiet topic's resource and status are not patched"
    )
    assert kafka.configs(unique_topic).get("retention.ms") == "3600000"
    log = operator.log_path.read_text(errors="replace")
    assert "Handler 'kafkatopic_create' succeeded." in log, "kopf's other lines stay"
    assert "Timer 'kafkatopic_resync' succeeded." not in log, "no line per resync (adapters.k8s.kopf_logging)"

    # A change through Kafka's own admin API moves the config znode's stamp: the next resync
    # reads in full and reverts it.
    expect_out_of_band_change_reverted(
        kafka, unique_topic, "retention.ms", changed="1000", wanted="3600000", timeout=30
    )
