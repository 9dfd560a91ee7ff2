"""``metrics.TopicHealthCollector``: the per-topic partition gauges, read from the health
reporters' tables when Prometheus scrapes (no gauge object per topic)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from kafka_zk_operator.metrics import TopicHealthCollector


def _registry(collector: TopicHealthCollector) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(collector)
    return registry


def test_every_source_is_exposed_with_cluster_and_topic_labels() -> None:
    collector = TopicHealthCollector()
    registry = _registry(collector)
    collector.add(lambda: [("main", "orders", 2, 0), ("main", "audit", 0, 1)])
    collector.add(lambda: [("dr", "orders", 0, 0)])
    value = registry.get_sample_value
    assert value("kzo_topic_under_replicated_partitions", {"cluster": "main", "topic": "orders"}) == 2
    assert value("kzo_topic_offline_partitions", {"cluster": "main", "topic": "audit"}) == 1
    assert value("kzo_topic_offline_partitions", {"cluster": "dr", "topic": "orders"}) == 0


def test_a_removed_source_is_gone_and_the_metrics_stay_declared() -> None:
    collector = TopicHealthCollector()
    registry = _registry(collector)

    def source() -> list[tuple[str, str, int, int]]:
        return [("main", "orders", 1, 1)]

    collector.add(source)
    collector.remove(source)
    collector.remove(source)  # twice: a reporter stopped twice
    text = generate_latest(registry).decode()
    assert "# TYPE kzo_topic_under_replicated_partitions gauge" in text
    assert "# TYPE kzo_topic_offline_partitions gauge" in text
    assert 'topic="orders"' not in text


def test_a_scrape_reads_the_source_each_time() -> None:
    collector = TopicHealthCollector()
    registry = _registry(collector)
    table = {"orders": (0, 0)}
    collector.add(lambda: [("main", topic, u, o) for topic, (u, o) in table.items()])
    table["orders"] = (3, 0)
    assert (
        registry.get_sample_value(
            "kzo_topic_under_replicated_partitions", {"cluster": "main", "topic": "orders"}
        )
        == 3
    )
