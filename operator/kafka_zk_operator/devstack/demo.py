"""Apply the CRDs and example manifests to the local API server and show their state: the
"main job" of ``make demo`` / ``kzo dev up --operator --apply examples/``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.adapters.k8s import api as k8s_api
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.domain.crd_identity import GROUP, KAFKA_TOPIC, PARTITION_REASSIGNMENT, VERSION

PLURALS = {resource.kind: resource.plural for resource in (KAFKA_TOPIC, PARTITION_REASSIGNMENT)}


def api_client(kubeconfig: Path) -> client.ApiClient:
    """A client of the local stack's API server (``adapters.k8s.api``, with its kubeconfig)."""
    return k8s_api.api_client(str(kubeconfig))


def install_crds(api: client.ApiClient, crd_dir: Path) -> list[str]:
    ext = client.ApiextensionsV1Api(api)
    names = []
    for path in sorted(crd_dir.glob("*.yaml")):
        body = yaml.safe_load(path.read_text())
        names.append(body["metadata"]["name"])
        try:
            ext.create_custom_resource_definition(body)
        except ApiException as exc:
            if exc.status != 409:
                raise StackError(f"the API server refused CRD {path.name}: {exc.reason}") from exc
            current = ext.read_custom_resource_definition(body["metadata"]["name"])
            body["metadata"]["resourceVersion"] = (
                current.metadata.resource_version if current.metadata else None
            )
            ext.replace_custom_resource_definition(body["metadata"]["name"], body)
    deadline = time.monotonic() + 60
    for name in names:
        while True:
            crd = ext.read_custom_resource_definition(name)
            conditions = (crd.status.conditions if crd.status else None) or []
            if any(c.type == "Established" and c.status == "True" for c in conditions):
                break
            if time.monotonic() > deadline:
                raise StackError(f"CRD {name} was not established within 60 s")
            time.sleep(0.3)
    return names


def wait_served(api: client.ApiClient, timeout: float = 60.0) -> None:
    """Wait until every custom resource can be listed: right after its CRD is Established, the API
    server answers 429 for a moment (the benchmarks start right after ``install_crds``)."""
    deadline = time.monotonic() + timeout
    for plural in PLURALS.values():
        while True:
            try:
                client.CustomObjectsApi(api).list_cluster_custom_object(GROUP, VERSION, plural)
                break
            except ApiException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)


def _documents(paths: Iterable[Path]) -> list[dict[str, Any]]:
    docs = []
    for path in paths:
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") in PLURALS:
                docs.append(doc)
    return docs


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def apply_manifests(api: client.ApiClient, paths: Iterable[Path]) -> list[tuple[str, str, str]]:
    """Create (or merge-patch) every KafkaTopic/PartitionReassignment; returns (kind, ns, name)."""
    custom = client.CustomObjectsApi(api)
    core = client.CoreV1Api(api)
    applied = []
    for doc in _documents(paths):
        meta = doc.setdefault("metadata", {})
        namespace = meta.setdefault("namespace", "default")
        try:
            core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
        except ApiException as exc:
            if exc.status != 409:
                raise
        plural = PLURALS[doc["kind"]]
        # As `kubectl apply` records it: a later `kubectl apply` of the same file then patches
        # without warning about a missing last-applied-configuration.
        meta.setdefault("annotations", {})[LAST_APPLIED] = json.dumps(
            doc, sort_keys=True, separators=(",", ":")
        )
        try:
            custom.create_namespaced_custom_object(GROUP, VERSION, namespace, plural, doc)
        except ApiException as exc:
            if exc.status != 409:
                raise StackError(
                    f"the API server refused {doc['kind']} {meta.get('name')}: {exc.body}"
                ) from exc
            custom.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                namespace,
                plural,
                meta["name"],
                {
                    "spec": doc.get("spec", {}),
                    "metadata": {"annotations": {LAST_APPLIED: meta["annotations"][LAST_APPLIED]}},
                },
                _content_type="application/merge-patch+json",
            )
        applied.append((doc["kind"], namespace, meta["name"]))
    return applied


def _ready(item: dict[str, Any]) -> tuple[str, str]:
    for cond in (item.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return str(cond.get("status")), str(cond.get("reason", ""))
    return "Unknown", ""


def wait_topics(api: client.ApiClient, applied: list[tuple[str, str, str]], timeout: float = 60) -> None:
    custom = client.CustomObjectsApi(api)
    deadline = time.monotonic() + timeout
    pending = [(ns, name) for kind, ns, name in applied if kind == "KafkaTopic"]
    while pending and time.monotonic() < deadline:
        still = []
        for ns, name in pending:
            item = cast(
                dict[str, Any],
                custom.get_namespaced_custom_object(GROUP, VERSION, ns, KAFKA_TOPIC.plural, name),
            )
            status = item.get("status") or {}
            fresh = status.get("observedGeneration") == item["metadata"].get("generation")
            if not fresh or _ready(item)[0] != "True":
                still.append((ns, name))
        pending = still
        if pending:
            time.sleep(0.5)


def topic_table(api: client.ApiClient) -> str:
    """The same columns as ``kubectl get kzt -A`` (the CRD's printer columns)."""
    custom = client.CustomObjectsApi(api)
    listing = cast(dict[str, Any], custom.list_cluster_custom_object(GROUP, VERSION, KAFKA_TOPIC.plural))
    items: list[dict[str, Any]] = listing["items"]
    rows = [
        ("NAMESPACE", "NAME", "TOPIC", "PARTITIONS", "RF", "READY", "REASON", "UNDER-REPLICATED", "LEADERS")
    ]
    for item in items:
        status = item.get("status") or {}
        leaders = ",".join(str(s.get("leader")) for s in (status.get("partitionStates") or [])[:6])
        ready, reason = _ready(item)
        rows.append((
            item["metadata"]["namespace"], item["metadata"]["name"], status.get("topicName", ""),
            str(status.get("partitions", "")), str(status.get("replicationFactor", "")), ready, reason,
            str(status.get("underReplicatedPartitions", "")), leaders + ("…" if len(status.get("partitionStates") or []) > 6 else ""),
        ))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("   ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows)
