"""The chart's Grafana dashboard (``metrics.grafanaDashboard``): a ConfigMap for Grafana's sidecar.

Every panel query must parse (``promtool check rules`` on a copy of each query as a recording rule,
with the dashboard's variables filled in) and may only use metrics the operator exports
(``kafka_zk_operator.metrics``), so a renamed metric cannot leave an empty panel behind.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml
from prometheus_client.metrics import MetricWrapperBase

from kafka_zk_operator import metrics
from kafka_zk_operator.devstack import artifacts, tools
from tests.integration.test_chart import CHART, render, run

DASHBOARD = CHART / "dashboards" / "kafka-zk-operator.json"


@pytest.fixture(scope="module")
def helm_bin() -> Path:
    return tools.helm_binary()


def _exported() -> set[str]:
    """Sample names the operator exposes (counters with _total, histograms with their series): its
    metric objects and its own collectors (``metrics.TOPIC_HEALTH``)."""
    names: set[str] = set()
    for value in vars(metrics).values():
        if not isinstance(value, MetricWrapperBase | metrics.TopicHealthCollector):
            continue
        for family in value.describe():
            if family.type == "counter":
                names.add(f"{family.name}_total")
            elif family.type == "histogram":
                names.update(f"{family.name}{suffix}" for suffix in ("_bucket", "_sum", "_count"))
            else:
                names.add(family.name)
    return names


def _queries(dashboard: dict[str, Any]) -> list[str]:
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def test_dashboard_is_grafana_json_with_a_datasource_and_cluster_variable() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "kafka-zk-operator" and dashboard["schemaVersion"] >= 36
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert (
        variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    )
    assert "kzo_zookeeper_session_connected" in variables["cluster"]["definition"]
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids)) and len(ids) >= 10
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"], panel["title"]


def test_every_query_uses_only_exported_metrics() -> None:
    exported = _exported()
    assert "kzo_kafkatopics" in exported and "kzo_reconcile_duration_seconds_bucket" in exported
    used: set[str] = set()
    for query in _queries(json.loads(DASHBOARD.read_text())):
        used.update(re.findall(r"\bkzo_[a-z_]+\b", query))
    assert used and used <= exported, f"not exported: {sorted(used - exported)}"
    dashboard_metrics = {name for name in exported if not name.endswith(("_sum", "_count"))}
    assert dashboard_metrics <= used, f"metrics no panel shows: {sorted(dashboard_metrics - used)}"


def test_every_query_parses(tmp_path: Path) -> None:
    promtool = artifacts.promtool_binary()
    queries = [q.replace("$cluster", ".*") for q in _queries(json.loads(DASHBOARD.read_text()))]
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [{"record": f"dashboard:query_{i}", "expr": q} for i, q in enumerate(queries)],
            }
        ]
    }
    path = tmp_path / "queries.yaml"
    path.write_text(yaml.safe_dump(rules))
    out = run([promtool, "check", "rules", path]).stdout
    assert f"SUCCESS: {len(queries)} rules found" in out, out


def test_configmap_carries_the_file_with_the_sidecar_label(helm_bin: Path, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(
        yaml.safe_dump(
            {
                "metrics": {
                    "grafanaDashboard": {
                        "enabled": True,
                        "annotations": {"grafana_folder": "Kafka"},
                        "namespace": "monitoring",
                    }
                }
            }
        )
    )
    maps = [
        d
        for d in render(helm_bin, values)
        if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-dashboard")
    ]
    assert len(maps) == 1
    cm = maps[0]
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["annotations"] == {"grafana_folder": "Kafka"}
    assert cm["metadata"]["namespace"] == "monitoring"
    assert json.loads(cm["data"]["kafka-zk-operator.json"]) == json.loads(DASHBOARD.read_text())
    for version in ("1.27", "1.33"):
        assert kubernetes_validate.validate(cm, version, strict=True) == version


def test_no_dashboard_by_default_or_without_metrics(helm_bin: Path, tmp_path: Path) -> None:
    for values in ({}, {"metrics": {"enabled": False, "grafanaDashboard": {"enabled": True}}}):
        path = tmp_path / "values.yaml"
        path.write_text(yaml.safe_dump(values))
        assert not [d for d in render(helm_bin, path) if d["metadata"]["name"].endswith("-dashboard")]
