"""Tenant access (``rbac.aggregateToDefaultRoles``, docs/install.md#tenant-access) on a real API server
with Kubernetes' own clusterrole-aggregation controller (``own_control_plane``).

The built-in ``view``/``edit``/``admin`` ClusterRoles get their rules from that controller, which
runs in kube-controller-manager; the session's stack runs none, so this module starts one that runs
only that controller. Users ``alice`` (edit), ``bob`` (view) and ``carol`` (admin) are bound to the
built-in roles in one namespace by RoleBindings, as a cluster administrator binds a team; the
answers come from SubjectAccessReviews and from real requests made as those users.

* Value off (the default): the chart renders no aggregated ClusterRole, and ``edit`` lets alice
  create neither kind.
* Value on: ``edit`` and ``admin`` may create, update, patch and delete both kinds, ``view`` only
  read them; nobody but the operator may write their status; nothing reaches other namespaces.
* Turning the value off again (the ClusterRoles deleted, as ``helm upgrade`` does) takes the rules
  out of the built-in roles.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from kafka_zk_operator.devstack import tools
from tests.integration.helpers import wait_for
from tests.integration.own_control_plane import CRDS, OwnControlPlane, own_control_plane
from tests.integration.test_chart import render

GROUP = "kafka.zk-operator.io"
KINDS = ("kafkatopics", "partitionreassignments")
NAMESPACE = "team-a"
OTHER_NAMESPACE = "team-b"
AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"
BOUND = {"alice": "edit", "bob": "view", "carol": "admin"}
READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete", "deletecollection")


@dataclass
class Tenant:
    plane: OwnControlPlane
    api: k8s.ApiClient
    roles: list[dict[str, Any]]
    rendered_off: list[dict[str, Any]]
    alice_before: dict[str, bool]


def aggregated_roles(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        d
        for d in docs
        if d["kind"] == "ClusterRole"
        and any(k.startswith(AGGREGATE) for k in d["metadata"].get("labels", {}))
    ]


def chart(tmp_path: Path, name: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    path = tmp_path / f"values-{name}.yaml"
    path.write_text(yaml.safe_dump(values))
    return render(tools.helm_binary(), path)


def allowed(api: k8s.ApiClient, user: str, verb: str, resource: str, namespace: str = NAMESPACE) -> bool:
    """SubjectAccessReview: may ``user`` (an authenticated user) do ``verb`` on ``resource[/sub]``?"""
    name, _, subresource = resource.partition("/")
    review = k8s.V1SubjectAccessReview(
        spec=k8s.V1SubjectAccessReviewSpec(
            user=user,
            groups=["system:authenticated"],
            resource_attributes=k8s.V1ResourceAttributes(
                verb=verb, group=GROUP, resource=name, subresource=subresource or None, namespace=namespace
            ),
        )
    )
    answer = k8s.AuthorizationV1Api(api).create_subject_access_review(review)
    assert answer.status is not None, f"no status in the SubjectAccessReview for {user} {verb} {resource}"
    return bool(answer.status.allowed)


def rules_of(plane: OwnControlPlane, role: str) -> set[tuple[str, str]]:
    """``(resource, verb)`` pairs of this project's group in a ClusterRole as aggregated now."""
    found = plane.kubectl_json("get", "clusterrole", role)
    return {
        (resource, verb)
        for rule in found.get("rules") or []
        if GROUP in rule.get("apiGroups", [])
        for resource in rule.get("resources", [])
        for verb in rule.get("verbs", [])
    }


def alice_can_create(api: k8s.ApiClient) -> dict[str, bool]:
    return {kind: allowed(api, "alice", "create", kind) for kind in KINDS}


@pytest.fixture(scope="module")
def tenant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tenant]:
    tmp = tmp_path_factory.mktemp("tenant-rbac")
    with own_control_plane(tmp, aggregation_controller=True) as plane:
        plane.apply(CRDS)
        plane.wait_established(*(f"{kind}.{GROUP}" for kind in KINDS))
        # The controller works: the built-in edit role has its own rules (pods, ...) aggregated.
        wait_for(
            lambda: plane.kubectl_json("get", "clusterrole", "edit").get("rules"), what="edit aggregated"
        )
        for namespace in (NAMESPACE, OTHER_NAMESPACE):
            plane.kubectl("create", "namespace", namespace)
        for user, role in BOUND.items():
            plane.kubectl(
                "create",
                "rolebinding",
                f"{user}-{role}",
                f"--clusterrole={role}",
                f"--user={user}",
                "-n",
                NAMESPACE,
            )
        api: k8s.ApiClient = k8s_config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=str(plane.kubeconfig)
        )
        rendered_off = chart(tmp, "off", {})
        alice_before = alice_can_create(api)
        roles = aggregated_roles(chart(tmp, "on", {"rbac": {"aggregateToDefaultRoles": True}}))
        plane.apply("\n---\n".join(yaml.safe_dump(r) for r in roles))
        wait_for(lambda: ("kafkatopics", "create") in rules_of(plane, "edit"), what="our rules in edit")
        try:
            yield Tenant(plane, api, roles, rendered_off, alice_before)
        finally:
            api.close()  # type: ignore[no-untyped-call]


def test_off_by_default_nothing_is_aggregated(tenant: Tenant) -> None:
    assert aggregated_roles(tenant.rendered_off) == []
    assert tenant.alice_before == {kind: False for kind in KINDS}


def test_the_value_renders_a_view_and_an_edit_role(tenant: Tenant) -> None:
    labels = {r["metadata"]["name"].rsplit("-", 1)[-1]: set(r["metadata"]["labels"]) for r in tenant.roles}
    assert set(labels) == {"view", "edit"}
    assert {f"{AGGREGATE}{r}" for r in ("view", "edit", "admin")} <= labels["view"]
    assert {f"{AGGREGATE}{r}" for r in ("edit", "admin")} <= labels["edit"]
    assert f"{AGGREGATE}view" not in labels["edit"]


def test_edit_and_admin_may_manage_both_kinds(tenant: Tenant) -> None:
    for user in ("alice", "carol"):
        for kind in KINDS:
            for verb in READ + WRITE:
                assert allowed(tenant.api, user, verb, kind), f"{user} {verb} {kind}"


def test_view_may_only_read(tenant: Tenant) -> None:
    for kind in KINDS:
        for verb in READ:
            assert allowed(tenant.api, "bob", verb, kind), f"bob {verb} {kind}"
            assert allowed(tenant.api, "bob", verb, f"{kind}/status"), f"bob {verb} {kind}/status"
        for verb in WRITE:
            assert not allowed(tenant.api, "bob", verb, kind), f"bob {verb} {kind}"


def test_only_the_operator_writes_status(tenant: Tenant) -> None:
    for user in BOUND:
        for kind in KINDS:
            for verb in ("update", "patch"):
                assert not allowed(tenant.api, user, verb, f"{kind}/status"), f"{user} {verb} {kind}/status"


def test_nothing_reaches_another_namespace(tenant: Tenant) -> None:
    for user in BOUND:
        for kind in KINDS:
            assert not allowed(tenant.api, user, "get", kind, OTHER_NAMESPACE), f"{user} get {kind}"
            assert not allowed(tenant.api, user, "create", kind, OTHER_NAMESPACE), f"{user} create {kind}"


def test_real_requests_as_the_users(tenant: Tenant) -> None:
    topic: dict[str, Any] = {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {"name": "from-bob", "namespace": NAMESPACE},
        "spec": {"partitions": 1, "replicationFactor": 1},
    }
    refused = tenant.plane.kubectl("--as=bob", "create", "-f", "-", check=False, stdin=json.dumps(topic))
    assert refused.returncode != 0 and "forbidden" in refused.stderr
    topic["metadata"]["name"] = "from-alice"
    tenant.plane.kubectl("--as=alice", "create", "-f", "-", stdin=json.dumps(topic))
    listed = tenant.plane.kubectl("--as=bob", "get", "kzt", "-n", NAMESPACE, "-o", "name").stdout.split()
    assert listed == ["kafkatopic.kafka.zk-operator.io/from-alice"]
    patch = '{"status":{"topicName":"forged"}}'
    forged = tenant.plane.kubectl(
        "--as=alice", "patch", "kzt", "from-alice", "-n", NAMESPACE, "--subresource=status",
        "--type=merge", "-p", patch, check=False,
    )  # fmt: skip
    assert forged.returncode != 0 and "forbidden" in forged.stderr
    tenant.plane.kubectl("--as=alice", "delete", "kzt", "from-alice", "-n", NAMESPACE)


def test_turning_the_value_off_again_takes_the_rules_out(tenant: Tenant) -> None:
    names = [r["metadata"]["name"] for r in tenant.roles]
    tenant.plane.kubectl("delete", "clusterrole", *names)
    try:
        wait_for(lambda: not rules_of(tenant.plane, "edit"), what="our rules out of edit")
        assert not rules_of(tenant.plane, "view") and not rules_of(tenant.plane, "admin")
        assert alice_can_create(tenant.api) == {kind: False for kind in KINDS}
    finally:  # as the other tests expect it, whatever the order
        tenant.plane.apply("\n---\n".join(yaml.safe_dump(r) for r in tenant.roles))
        wait_for(
            lambda: ("kafkatopics", "create") in rules_of(tenant.plane, "edit"), what="our rules in edit"
        )
