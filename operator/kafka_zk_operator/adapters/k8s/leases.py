"""Read and write the operator's leader Lease (``coordination.k8s.io/v1``), conditionally.

Only what leader election needs (``runtime.leadership``): read it, create it holding it, and
replace it on the ``resourceVersion`` read - a write returns the record as written (its new
``resourceVersion``, so that the holder can renew next time without reading first), and a write
that lost a race returns None instead of raising, so that the caller reads again.

Every request has a timeout (``timeout_s``): a connection that hangs must not use up the
leader's renew deadline in one attempt.
"""

from __future__ import annotations

from datetime import UTC, datetime

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator.adapters.k8s.api import KubernetesApiError, reachable
from kafka_zk_operator.domain.leader_lease import LeaseRecord


class LeaseApi:
    def __init__(self, api: client.ApiClient, namespace: str, name: str, *, timeout_s: float = 5.0) -> None:
        self.coordination = client.CoordinationV1Api(api)
        self.namespace = namespace
        self.name = name
        self.timeout_s = timeout_s

    @property
    def ref(self) -> str:
        return f"Lease {self.namespace}/{self.name}"

    def read(self) -> LeaseRecord | None:
        """:raises KubernetesApiError: the API server refused or could not be reached."""
        with reachable(f"reading {self.ref}"):
            try:
                lease = self.coordination.read_namespaced_lease(
                    self.name, self.namespace, _request_timeout=self.timeout_s
                )
            except ApiException as exc:
                if exc.status == 404:
                    return None
                raise self._error("reading", exc) from exc
        return _record(lease)

    def create(self, holder: str, duration_s: float) -> LeaseRecord | None:
        """Create the Lease held by ``holder``; None when another replica created it first."""
        body = self._lease(holder, duration_s, transitions=0, acquired_at=None, resource_version=None)
        with reachable(f"creating {self.ref}"):
            try:
                written = self.coordination.create_namespaced_lease(
                    self.namespace, body, _request_timeout=self.timeout_s
                )
            except ApiException as exc:
                if exc.status == 409:
                    return None
                raise self._error("creating", exc) from exc
        return _record(written)

    def replace(
        self, record: LeaseRecord, holder: str, duration_s: float, *, transitions: int, acquired: bool
    ) -> LeaseRecord | None:
        """Write the Lease as held by ``holder`` (empty: released) if it is still at ``record``'s
        version; None when it changed since (someone else wrote it first)."""
        body = self._lease(
            holder,
            duration_s,
            transitions=transitions,
            acquired_at=None if acquired else record.acquired_at,
            resource_version=record.resource_version,
        )
        with reachable(f"writing {self.ref}"):
            try:
                written = self.coordination.replace_namespaced_lease(
                    self.name, self.namespace, body, _request_timeout=self.timeout_s
                )
            except ApiException as exc:
                if exc.status in (404, 409):
                    return None
                raise self._error("writing", exc) from exc
        return _record(written)

    def _lease(
        self,
        holder: str,
        duration_s: float,
        *,
        transitions: int,
        acquired_at: datetime | None,
        resource_version: str | None,
    ) -> client.V1Lease:
        """``acquired_at``: the holder's acquire time to keep (None: acquired now)."""
        now = datetime.now(UTC)
        return client.V1Lease(
            api_version="coordination.k8s.io/v1",
            kind="Lease",
            metadata=client.V1ObjectMeta(
                name=self.name, namespace=self.namespace, resource_version=resource_version
            ),
            spec=client.V1LeaseSpec(
                holder_identity=holder or None,
                lease_duration_seconds=max(1, round(duration_s)),
                lease_transitions=transitions,
                acquire_time=acquired_at or now,
                renew_time=now,
            ),
        )

    def _error(self, doing: str, exc: ApiException) -> KubernetesApiError:
        hint = ""
        if exc.status == 403:
            hint = (
                f"; the operator's ServiceAccount needs get, create and update on leases "
                f"(coordination.k8s.io) in namespace {self.namespace} (the chart's Role grants them)"
            )
        return KubernetesApiError(f"{doing} {self.ref} failed: {exc.status} {exc.reason}{hint}")


def _record(lease: client.V1Lease) -> LeaseRecord:
    spec = lease.spec or client.V1LeaseSpec()
    return LeaseRecord(
        holder=spec.holder_identity or "",
        duration_s=float(spec.lease_duration_seconds or 0),
        transitions=int(spec.lease_transitions or 0),
        resource_version=str(lease.metadata.resource_version if lease.metadata else ""),
        acquired_at=spec.acquire_time,
    )
