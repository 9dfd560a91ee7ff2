"""The operator's own calls to the Kubernetes API (those kopf does not make for it), in one place:
the API client, the error every failed call becomes, the status merge-patch of a custom resource,
and the owner reference of an object the operator creates for one.

The client carries the credentials kopf uses: the pod's ServiceAccount in a cluster, else the
kubeconfig (``$KUBECONFIG`` / ``~/.kube/config``), or the one a caller names (the Spark driver's
``--kubeconfig``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.crd_identity import API_VERSION, GROUP, VERSION, CustomResource


class KubernetesApiError(errors.ClusterUnavailable):
    """The API server refused or failed a call; retried on the next poll (a transient reason)."""


@contextlib.contextmanager
def reachable(what: str) -> Iterator[None]:
    """Calls that could not reach the API server (connection refused or reset, timed out: it is
    restarting, or the network is down) fail as :class:`KubernetesApiError`, retried like a call
    the API server refused, instead of as the HTTP library's own exceptions."""
    try:
        yield
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise KubernetesApiError(
            f"the Kubernetes API server could not be reached ({what}): {reason}"
        ) from exc


#: Connections each client keeps open to the API server: at least the threads that may call it
#: at once (kopf's 16 handler threads, ``main.configure``, and the health reporter). The
#: library's default is 5 per core (10 here): with 16 resync threads patching statuses, each
#: call beyond 10 opened a new TLS connection and threw it away afterwards (1,659 "Connection
#: pool is full" warnings while 10,000 topics had their first resync).
CONNECTION_POOL_SIZE = 32


def api_client(kubeconfig: str | None = None) -> client.ApiClient:
    """In-cluster credentials in a pod, else the kubeconfig (``kubeconfig``, else the default one)."""
    configuration = client.Configuration()
    configuration.connection_pool_maxsize = CONNECTION_POOL_SIZE
    if kubeconfig is None:
        try:
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
            return client.ApiClient(configuration)
        except config.ConfigException:
            pass
    result: client.ApiClient = config.new_client_from_config(  # type: ignore[no-untyped-call]
        config_file=kubeconfig, client_configuration=configuration
    )
    return result


def merge_patch_status(
    custom: client.CustomObjectsApi, resource: CustomResource, ref: tuple[str, str], fields: Mapping[str, Any]
) -> bool:
    """Merge-patch ``status`` of one of the operator's resources; False when it is gone.

    :raises ApiException: any other refusal (the caller decides whether that stops it).
    """
    namespace, name = ref
    try:
        custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, resource.plural, name, {"status": dict(fields)},
            _content_type="application/merge-patch+json",
        )  # fmt: skip
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return True


def owner_reference(
    resource: CustomResource, name: str, uid: str, *, controller: bool = False
) -> dict[str, Any]:
    """An ``ownerReferences`` entry naming one of the operator's resources.

    Never blocking the owner's deletion: the garbage collector deletes the owned object with its
    owner, nothing needs to wait for it, and Argo CD cannot prune resources blocked by one
    (reference product-landscape §7.5). A ``controller`` reference says so explicitly
    (``blockOwnerDeletion: false``); others leave the field out, which means the same.
    """
    reference: dict[str, Any] = {"apiVersion": API_VERSION, "kind": resource.kind, "name": name, "uid": uid}
    if controller:
        reference.update(controller=True, blockOwnerDeletion=False)
    return reference
