"""The first step of every plan: the request checked against the cluster (brokers listed, topic
selection, replication factor) and turned into the :class:`Setup` the stages share."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import topic_patterns
from kafka_zk_operator.domain.modes import ENGINE_MODES, Mode
from kafka_zk_operator.domain.placement.arrays import BoolArray, ClusterArrays, IntArray, loads
from kafka_zk_operator.domain.placement.plan_types import Balance, PlanRequest
from kafka_zk_operator.domain.placement.state import BrokerContext


@dataclass(frozen=True, eq=False)
class Setup:
    """What every stage needs to know about the request: eligible and added brokers, movable rows,
    the new replication factor per row, rack context, and the load of the rows that stay."""

    eligible: BoolArray
    added: BoolArray
    movable: BoolArray
    rf_new: IntArray
    ctx: BrokerContext
    rack_names: tuple[str | None, ...]
    fixed_load: IntArray


def _compile(pattern: str | None, what: str) -> Callable[[str], bool] | None:
    """A full-match predicate, linear in the name (``domain.kafka.topic_patterns``: no backtracking)."""
    if pattern is None:
        return None
    with warnings.catch_warnings():  # e.g. FutureWarning "Possible nested set": valid, say nothing
        warnings.simplefilter("ignore")
        try:
            return topic_patterns.compile_matcher(pattern)
        except errors.InvalidSpec as exc:
            raise errors.InvalidSpec(f"invalid {what} regular expression: {exc}") from None


def _check_byte_balance(cluster: ClusterArrays, request: PlanRequest) -> None:
    if not 0.0 < request.byte_tolerance <= 0.5:
        raise errors.InvalidSpec(
            f"byte tolerance must be above 0 and at most 0.5 (a fraction of the mean bytes per broker; "
            f"got {request.byte_tolerance})"
        )
    known = set(cluster.broker_ids.tolist())
    for broker_id, size in request.broker_capacity:
        if broker_id not in known:
            raise errors.InvalidSpec(
                f"a capacity is given for broker {broker_id}, which is not in the cluster"
            )
        if size <= 0:
            raise errors.InvalidSpec(f"the capacity of broker {broker_id} must be above 0 bytes (got {size})")
    if len({broker_id for broker_id, _ in request.broker_capacity}) != len(request.broker_capacity):
        raise errors.InvalidSpec("a broker is given a capacity more than once")
    if request.balance is not Balance.REPLICAS and not cluster.sizes.any():
        raise errors.InvalidSpec(
            f"balance {request.balance} needs partition sizes, and this snapshot has none "
            "(kzo snapshot --sizes-from-bootstrap HOST:PORT adds them)"
        )


def make_setup(cluster: ClusterArrays, request: PlanRequest) -> Setup:
    """Check ``request`` against ``cluster`` and derive the :class:`Setup` of the plan.

    :raises InvalidSpec / InvalidReplicationFactor: the request cannot be planned on this cluster.
    """
    n = cluster.n_brokers
    if n == 0:
        raise errors.InvalidSpec("the cluster has no brokers")
    if request.tolerance < 0:
        raise errors.InvalidSpec(f"tolerance must be >= 0 (got {request.tolerance})")
    _check_byte_balance(cluster, request)
    load0 = loads(cluster.replicas, n)[:n]
    listed = [cluster.broker_index(b) for b in request.brokers]
    if len(set(listed)) != len(listed):
        raise errors.InvalidSpec("a broker is listed more than once")
    eligible = np.ones(n, dtype=np.bool_)
    added = np.zeros(n, dtype=np.bool_)
    mode = request.mode
    if mode not in ENGINE_MODES:
        raise errors.InvalidSpec(f"the placement engine does not plan mode {mode.cli_name}")
    if mode is Mode.ADD_BROKERS:
        if not listed:
            raise errors.InvalidSpec("add-brokers needs the ids of the brokers being added")
        for i in listed:
            if load0[i] > 0:
                raise errors.InvalidSpec(
                    f"broker {int(cluster.broker_ids[i])} already holds {int(load0[i])} replicas, so it is not "
                    "a new broker (use mode rebalance)"
                )
        added[listed] = True
        eligible = (load0 > 0) | added
    elif mode is Mode.REMOVE_BROKERS:
        if not listed:
            raise errors.InvalidSpec("remove-brokers needs the ids of the brokers being removed")
        eligible[listed] = False
        if not eligible.any():
            raise errors.InvalidSpec("cannot remove every broker")
    elif listed:
        raise errors.InvalidSpec(
            f"brokers may only be listed for add-brokers or remove-brokers, not {mode.cli_name}"
        )
    if mode is Mode.REPLICATION_FACTOR and request.replication_factor is None:
        raise errors.InvalidSpec("replication-factor mode needs the new replication factor")
    if mode is not Mode.REPLICATION_FACTOR and request.replication_factor is not None:
        raise errors.InvalidSpec("a replication factor may only be given in replication-factor mode")

    selected_re = _compile(request.topics, "topic")
    excluded_re = _compile(request.exclude_topics, "excluded-topic")
    topic_ok = np.array(
        [
            (selected_re is None or selected_re(name)) and (excluded_re is None or not excluded_re(name))
            for name in cluster.topics
        ],
        dtype=np.bool_,
    )
    rf = cluster.replication_factors()
    movable = (topic_ok[cluster.topic_of] if cluster.n_partitions else np.zeros(0, np.bool_)) & (rf > 0)
    if (request.topics is not None or mode is Mode.REPLICATION_FACTOR) and not movable.any():
        raise errors.InvalidSpec("no topic matches the topic selection")
    stuck = ~movable[:, None] & (cluster.replicas >= 0) & ~np.r_[eligible, True][cluster.replicas]
    if stuck.any():
        row = int(np.flatnonzero(stuck.any(axis=1))[0])
        col = int(np.flatnonzero(stuck[row])[0])
        raise errors.InvalidSpec(
            f"topic {cluster.topics[int(cluster.topic_of[row])]!r} partition {int(cluster.partition_of[row])} "
            f"is not selected but has a replica on broker {int(cluster.broker_ids[cluster.replicas[row, col]])}, "
            "which is being removed; select that topic too"
        )
    rf_new = rf.copy()
    n_eligible = int(eligible.sum())
    if mode is Mode.REPLICATION_FACTOR:
        assert request.replication_factor is not None
        new_rf = request.replication_factor
        if new_rf < 1:
            raise errors.InvalidReplicationFactor(f"replication factor must be at least 1 (got {new_rf})")
        rf_new = np.where(movable, new_rf, rf)
    too_big = movable & (rf_new > n_eligible)
    if too_big.any():
        row = int(np.flatnonzero(too_big)[0])
        raise errors.InvalidReplicationFactor(
            f"replication factor {int(rf_new[row])} of topic {cluster.topics[int(cluster.topic_of[row])]!r} "
            f"is larger than the {n_eligible} eligible brokers"
        )
    elig_racks = np.unique(cluster.broker_rack[eligible])
    k = len(elig_racks)
    remap = np.full(cluster.n_racks, k, dtype=np.int64)
    remap[elig_racks] = np.arange(k)
    rack_ext = np.r_[remap[cluster.broker_rack], k].astype(np.int64)
    rack_sizes = np.bincount(rack_ext[:n][eligible], minlength=k).astype(np.int64)
    ctx = BrokerContext(rack_ext=rack_ext, n_racks=k, rack_sizes=rack_sizes, eligible=eligible)
    fixed_rows = cluster.replicas[~movable]
    fixed_load = loads(fixed_rows, n)[:n]
    return Setup(
        eligible=eligible,
        added=added,
        movable=movable,
        rf_new=rf_new.astype(np.int64),
        ctx=ctx,
        rack_names=tuple(cluster.racks[int(r)] for r in elig_racks),
        fixed_load=fixed_load,
    )
