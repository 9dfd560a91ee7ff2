"""The chart's PrometheusRule (``metrics.prometheusRule``), checked with Prometheus' own promtool.

``promtool check rules`` parses every expression and annotation template; ``promtool test rules``
feeds synthetic series and checks that each alert fires on the series it is for, with the labels
it should carry, and stays quiet on healthy (or deliberately excluded) series. Annotations are left
out of the unit-test copy (promtool would compare their rendered text); ``check rules`` covers them.
promtool is built from its Go module once (``artifacts.promtool_binary``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kafka_zk_operator.devstack import artifacts
from tests.integration.test_chart import CHART, render, run

JOB = "kzo-kafka-zk-operator-metrics"
NAMESPACE = "kzo-system"


@pytest.fixture(scope="module")
def promtool() -> Path:
    return artifacts.promtool_binary()


def _rules(helm: Path, tmp_path: Path, values: dict[str, Any]) -> dict[str, Any]:
    values_path = tmp_path / "values.yaml"
    values_path.write_text(yaml.safe_dump(values))
    docs = [d for d in render(helm, values_path) if d["kind"] == "PrometheusRule"]
    assert len(docs) == 1, [d["kind"] for d in render(helm, values_path)]
    rule: dict[str, Any] = docs[0]
    return rule


def _alert(alert: str, at: str, **labels: str) -> dict[str, Any]:
    return {"eval_time": at, "alertname": alert, "exp_alerts": [{"exp_labels": labels}] if labels else []}


TESTS: list[dict[str, Any]] = [
    {
        "interval": "1m",
        "input_series": [
            {"series": f'up{{job="{JOB}",namespace="{NAMESPACE}"}}', "values": "1x5 0x30"},
            {"series": f'kzo_leader{{job="{JOB}",namespace="{NAMESPACE}",pod="a"}}', "values": "1x5 0x20"},
            {"series": f'kzo_leader{{job="{JOB}",namespace="{NAMESPACE}",pod="b"}}', "values": "0x25"},
            {"series": 'kzo_zookeeper_session_connected{cluster="main"}', "values": "1 0x20"},
            {"series": 'kzo_zookeeper_session_connected{cluster="other"}', "values": "1x20"},
            {
                "series": 'kzo_kafkatopics{cluster="main",ready="False",reason="InvalidSpec"}',
                "values": "2x30",
            },
            {
                "series": 'kzo_kafkatopics{cluster="main",ready="False",reason="ReplicationFactorChanging"}',
                "values": "1x30",
            },
            {"series": 'kzo_kafkatopics{cluster="main",ready="True",reason="InSync"}', "values": "40x30"},
            {"series": 'kzo_topic_offline_partitions{cluster="main",topic="orders"}', "values": "0 0 3x10"},
            {"series": 'kzo_topic_offline_partitions{cluster="main",topic="fine"}', "values": "0x10"},
            {
                "series": 'kzo_topic_under_replicated_partitions{cluster="main",topic="orders"}',
                "values": "1x30",
            },
            {
                "series": 'kzo_topic_under_replicated_partitions{cluster="main",topic="blip"}',
                "values": "1x5 0x25",
            },
            {
                "series": (
                    'kzo_events_total{kind="partitionreassignment",type="Warning",reason="Stuck",'
                    f'namespace="{NAMESPACE}"}}'
                ),
                "values": "0 0 1x10",
            },
            {
                # 20 h from the test's epoch: far beyond the 12 h default.
                "series": 'kzo_reassignment_estimated_completion_timestamp_seconds{namespace="kafka",name="big"}',
                "values": "72000x30",
            },
            {
                "series": 'kzo_reassignment_estimated_completion_timestamp_seconds{namespace="kafka",name="quick"}',
                "values": "7200x30",
            },
        ],
        "alert_rule_test": [
            _alert("KzoOperatorDown", "10m"),  # down since 6m: not yet 10 min
            _alert("KzoOperatorDown", "17m", severity="critical"),
            _alert("KzoNoLeader", "5m"),
            _alert("KzoNoLeader", "7m"),  # no leader since 6m: not yet 2 min
            _alert("KzoNoLeader", "9m", severity="critical"),
            _alert("KzoZooKeeperDisconnected", "4m"),
            _alert("KzoZooKeeperDisconnected", "7m", cluster="main", severity="critical"),
            _alert("KzoKafkaTopicsNotReady", "10m"),
            _alert("KzoKafkaTopicsNotReady", "16m", cluster="main", reason="InvalidSpec", severity="warning"),
            _alert("KzoTopicOfflinePartitions", "4m", cluster="main", topic="orders", severity="critical"),
            _alert("KzoTopicUnderReplicated", "20m", cluster="main", topic="orders", severity="warning"),
            _alert("KzoReassignmentStuck", "1m"),
            _alert("KzoReassignmentStuck", "5m", namespace=NAMESPACE, severity="warning"),
            _alert("KzoReassignmentSlow", "20m", namespace="kafka", name="big", severity="info"),
        ],
    }
]


def test_rules_pass_promtool_check(helm_bin: Path, promtool: Path, tmp_path: Path) -> None:
    rule = _rules(helm_bin, tmp_path, {"metrics": {"prometheusRule": {"enabled": True}}})
    assert rule["metadata"]["namespace"] == "kzo-system"
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
    out = run([promtool, "check", "rules", rules_file]).stdout
    assert "SUCCESS: 8 rules found" in out, out


def test_each_alert_fires_on_its_series_and_only_there(
    helm_bin: Path, promtool: Path, tmp_path: Path
) -> None:
    rule = _rules(helm_bin, tmp_path, {"metrics": {"prometheusRule": {"enabled": True}}})
    groups = rule["spec"]["groups"]
    for group in groups:
        for item in group["rules"]:
            item.pop("annotations", None)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}))
    tests = tmp_path / "tests.yaml"
    tests.write_text(
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": TESTS})
    )
    proc = run([promtool, "test", "rules", tests], check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout


def test_thresholds_come_from_the_values(helm_bin: Path, tmp_path: Path) -> None:
    values = {
        "metrics": {
            "prometheusRule": {
                "enabled": True,
                "labels": {"release": "prom"},
                "topicsNotReadyFor": "1h",
                "reassignmentMaxRemainingHours": 48,
            }
        }
    }
    rule = _rules(helm_bin, tmp_path, values)
    by_name = {r["alert"]: r for r in rule["spec"]["groups"][0]["rules"]}
    assert rule["metadata"]["labels"]["release"] == "prom"
    assert by_name["KzoKafkaTopicsNotReady"]["for"] == "1h"
    assert "> 48 * 3600" in by_name["KzoReassignmentSlow"]["expr"]


def test_no_rule_without_metrics_or_by_default(helm_bin: Path, tmp_path: Path) -> None:
    for values in ({}, {"metrics": {"enabled": False, "prometheusRule": {"enabled": True}}}):
        path = tmp_path / "values.yaml"
        path.write_text(yaml.safe_dump(values))
        assert not [d for d in render(helm_bin, path) if d["kind"] == "PrometheusRule"]


def test_bad_threshold_is_refused(helm_bin: Path, tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump({"metrics": {"prometheusRule": {"topicsNotReadyFor": "soon"}}}))
    proc = run([helm_bin, "template", "kzo", CHART, "-f", path], check=False)
    assert proc.returncode != 0 and "topicsNotReadyFor" in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def helm_bin() -> Path:
    from kafka_zk_operator.devstack import tools

    return tools.helm_binary()


def test_helm_lint_strict_with_the_rule(helm_bin: Path) -> None:
    out = run([helm_bin, "lint", "--strict", CHART, "--set", "metrics.prometheusRule.enabled=true"]).stdout
    assert "0 chart(s) failed" in out and "[WARNING]" not in out, out
