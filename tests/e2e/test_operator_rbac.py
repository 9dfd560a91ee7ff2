"""The operator runs with ONLY the Helm chart's ServiceAccount permissions, against the real
API server: it reconciles a topic, and what it should not do is denied.

The chart's RBAC is installed with server-side apply; the operator authenticates with a client
certificate whose user name is the ServiceAccount's (``system:serviceaccount:<ns>:<name>``) and
groups are a ServiceAccount token's, so RBAC treats it exactly as the pod's identity. (A bare API
server has no token controller and no kubelet, so the pod itself cannot run here.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.devstack import tools
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from tests.conftest import KafkaCluster
from tests.e2e.conftest import GROUP, VERSION, Resources, kafkatopic
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for
from tests.integration.test_chart import Installed, install

#: What a denied request leaves in the operator's log: the API server's "... is forbidden: User
#: ..." (reason Forbidden, code 403) as kopf and the Kubernetes client report it. Not a bare
#: "403", which a random port (ZooKeeper's 40367 in one CI run) or an identity also contain.
DENIED = re.compile(r"forbidden|\(403\)|['\"]code['\"]:\s*403\b", re.IGNORECASE)


def _watched(installed: Installed) -> str:
    """The namespace the chart's namespaced RBAC grants (not the release's, which holds the Lease's Role)."""
    return str(
        next(
            d["metadata"]["namespace"]
            for d in installed.docs
            if d["kind"] == "RoleBinding" and not d["metadata"]["name"].endswith("-leader-election")
        )
    )


def _service_account_kubeconfig(cluster: KafkaCluster, installed: Installed, path: Path) -> Path:
    ns, sa = installed.namespace, installed.service_account
    assert cluster.stack.controlplane is not None
    return cluster.stack.controlplane.write_kubeconfig(
        f"system:serviceaccount:{ns}:{sa}",
        ("system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"),
        path,
    )


@pytest.fixture
def chart_operator(
    kafka_cluster: KafkaCluster,
    operator: OperatorProcess,
    api_client: client.ApiClient,
    crds: None,
    tmp_path: Path,
) -> Iterator[tuple[OperatorProcess, Installed, Path]]:
    # a short ServiceAccount name: its user name goes into a certificate CN (at most 64 characters)
    values: dict[str, Any] = {
        "rbac": {"scope": "namespaced"},
        "watchNamespaces": ["watched"],
        "fullnameOverride": "kzo",
    }
    installed = install(
        tools.helm_binary(), tools.kubectl_binary(), api_client, kafka_cluster.kubeconfig, tmp_path, values
    )
    watched = _watched(installed)
    kubeconfig = _service_account_kubeconfig(kafka_cluster, installed, tmp_path / "sa-kubeconfig")
    operator.stop()
    # As the chart's pod runs it: electing a leader on the release's Lease, with the chart's Role.
    scoped = OperatorProcess(
        kubeconfig=kubeconfig,
        zk_connect=kafka_cluster.zk_connect,
        log_path=tmp_path / "operator.log",
        extra_env={
            "KZO_NAMESPACES": watched,
            "KZO_LEADER_ELECTION": "true",
            "KZO_LEADER_ELECTION_NAMESPACE": installed.namespace,
            "KZO_LEADER_ELECTION_LEASE": "kzo",
            "POD_NAME": "kzo-0",
        },
    )
    try:
        scoped.start()
        yield scoped, installed, kubeconfig
    finally:
        scoped.stop()
        operator.start()


def test_the_operator_reconciles_with_only_the_charts_namespaced_permissions(
    chart_operator: tuple[OperatorProcess, Installed, Path],
    kafka_cluster: KafkaCluster,
    api_client: client.ApiClient,
    unique_topic: str,
) -> None:
    scoped, installed, kubeconfig = chart_operator
    watched = _watched(installed)
    wait_for(scoped.leads, timeout=60, what="the operator to hold the chart's Lease")
    topics = Resources(api_client, "kafkatopics")
    topics.create(watched, kafkatopic(unique_topic, partitions=2, rf=3, config={"retention.ms": "3600000"}))
    ready = topics.wait_ready(watched, unique_topic)
    assert ready["status"]["partitions"] == 2
    view = KafkaView(kafka_cluster.bootstrap_servers)
    try:
        assert len(wait_for(lambda: view.describe(unique_topic))) == 2
    finally:
        view.close()
    events = client.CoreV1Api(api_client).list_namespaced_event(watched).items
    assert any(e.reason == "TopicCreated" for e in events), "Events need only the chart's permissions"
    tail = scoped.log_tail(400)
    assert not DENIED.search(tail), f"the operator was denied something: {DENIED.search(tail)}"
    lease = client.CoordinationV1Api(api_client).read_namespaced_lease("kzo", installed.namespace)
    assert lease.spec is not None and str(lease.spec.holder_identity).startswith("kzo-0_")

    as_operator: client.ApiClient = config.new_client_from_config(  # type: ignore[no-untyped-call]  # kubernetes.config is untyped
        config_file=str(kubeconfig)
    )
    core = client.CoreV1Api(as_operator)
    custom = client.CustomObjectsApi(as_operator)
    denied: list[Callable[[], object]] = [
        lambda: core.list_namespaced_secret(watched),
        lambda: core.list_namespaced_secret("default"),
        lambda: core.delete_namespaced_pod("anything", watched),
        lambda: core.create_namespace(cast(Any, {"metadata": {"name": "operator-made"}})),
        lambda: custom.list_namespaced_custom_object(GROUP, VERSION, "default", "kafkatopics"),
        lambda: custom.create_namespaced_custom_object(
            GROUP, VERSION, watched, "kafkatopics", kafkatopic("made-by-operator", 1, 1)
        ),
        lambda: client.RbacAuthorizationV1Api(as_operator).list_cluster_role(),
    ]
    for attempt in denied:
        with pytest.raises(ApiException) as raised:
            attempt()
        assert raised.value.status == 403
