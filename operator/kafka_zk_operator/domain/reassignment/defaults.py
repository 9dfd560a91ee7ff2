"""The defaults a PartitionReassignment runs with when its spec leaves ``approval`` or
``throttle`` out, and how an upgrade keeps the behaviour of resources that already exist.

A reassignment committed to Git starts as soon as it is applied; the computed modes (AddBrokers,
RemoveBrokers, Rebalance, ReplicationFactor, DemoteBrokers) move replicas nobody listed, so without
``spec.approval`` they wait for approval (``Manual``, as Strimzi's and Cruise Control's rebalances
do), while an ``Explicit`` list of moves keeps ``Auto``. Without ``spec.throttle`` the operator's
``KZO_DEFAULT_THROTTLE`` (bytes/s, chart value ``reassignment.defaultThrottle``) applies, if set.

The defaults are not a CRD ``default:`` (the API server would apply one to every stored object when
read, changing resources created before the upgrade). The operator records them in
``status.defaults`` the first time it sees a resource and applies the recorded ones from then on:
a resource whose status an older operator wrote (it has a status but no ``defaults``) records the
old behaviour (``computedApproval: Auto``, no throttle), so nothing changes for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.reassignment.spec import Approval

#: The modes whose moves the operator computes: without ``spec.approval`` they wait for a person.
COMPUTED_MODES = frozenset(
    {Mode.ADD_BROKERS, Mode.REMOVE_BROKERS, Mode.REBALANCE, Mode.REPLICATION_FACTOR, Mode.DEMOTE_BROKERS}
)
#: The status key holding the recorded defaults.
STATUS_KEY = "defaults"


def defaults_for(status: Mapping[str, Any], default_throttle: int | None = None) -> dict[str, Any]:
    """The defaults of a resource with this stored ``status``: the recorded ones; the old behaviour
    for a status an older operator wrote; today's for a resource seen for the first time. Pure."""
    recorded = status.get(STATUS_KEY)
    if isinstance(recorded, Mapping):
        return dict(recorded)
    if status.get("phase") or status.get("proposal") or status.get("conditions"):
        return {"computedApproval": Approval.AUTO.value}  # written before defaults existed
    fresh: dict[str, Any] = {"computedApproval": Approval.MANUAL.value}
    if default_throttle:
        fresh["throttle"] = default_throttle
    return fresh


def with_defaults(spec: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``spec`` with the fields it leaves out filled from ``defaults`` (what the run works with)."""
    effective = dict(spec)
    if effective.get("approval") is None:
        computed = str(effective.get("mode")) in {m.value for m in COMPUTED_MODES}
        chosen = (
            str(defaults.get("computedApproval") or Approval.AUTO.value) if computed else Approval.AUTO.value
        )
        effective["approval"] = chosen
    if effective.get("throttle") is None and defaults.get("throttle"):
        effective["throttle"] = defaults["throttle"]
    return effective
