"""What a PartitionReassignment asks for, and the registry of its modes: one entry per mode.

:func:`parse_request` turns the resource's ``spec`` (already checked by the CRD's OpenAPI schema
and CEL rules, but re-checked here because old CRD versions or hand-written bodies may slip
through) into a :class:`ReassignmentRequest`: the fields every mode shares
(``domain.reassignment.spec``), then what the mode's :class:`ModeRule` reads and requires.

A :class:`ModeRule` holds all that is particular to a mode: the spec fields it reads and needs,
how it is planned in-process, its requests to the placement engine (only engine modes have them,
and only they may be offloaded to a Spark job), and whether its proposal is compared with the
cluster before the start. Adding a mode is a member of :class:`~kafka_zk_operator.domain.modes.Mode`, a rule in :data:`MODES`,
the CRD's enum and rules, and the docs; the service, the offload and the status read it from here.

Pure: no I/O (the placement engine, with numpy, is loaded when an engine mode is planned).
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import topic_names, topic_patterns
from kafka_zk_operator.domain.model import BrokerId, TopicName
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.reassignment.plan import ClusterView, PartitionMove, ReassignmentPlan
from kafka_zk_operator.domain.reassignment.spec import ANY_LOG_DIR as ANY_LOG_DIR
from kafka_zk_operator.domain.reassignment.spec import (
    DEFAULT_MAX_MOVES_PER_BROKER as DEFAULT_MAX_MOVES_PER_BROKER,
)
from kafka_zk_operator.domain.reassignment.spec import DEFAULT_MAX_PARTITIONS as DEFAULT_MAX_PARTITIONS
from kafka_zk_operator.domain.reassignment.spec import Approval as Approval
from kafka_zk_operator.domain.reassignment.spec import BatchLimits as BatchLimits
from kafka_zk_operator.domain.reassignment.spec import RackPolicy as RackPolicy
from kafka_zk_operator.domain.reassignment.spec import RequestedPartition as RequestedPartition
from kafka_zk_operator.domain.reassignment.spec import (
    enum_field,
    int_field,
    int_list_field,
    partition_list_field,
)
from kafka_zk_operator.domain.reassignment.spec import parse_reassignment_json as parse_reassignment_json
from kafka_zk_operator.domain.reassignment.validation import plan_explicit
from kafka_zk_operator.domain.wording import brokers_are, listed

if TYPE_CHECKING:
    from kafka_zk_operator.domain import placement
    from kafka_zk_operator.domain.reassignment.computed import EngineInputs


@dataclass(frozen=True)
class ReassignmentRequest:
    mode: Mode
    cluster: str | None = None
    partitions: tuple[RequestedPartition, ...] = ()
    brokers: tuple[BrokerId, ...] = ()
    topics: tuple[TopicName, ...] = ()
    topics_regex: str | None = None
    replication_factors: Mapping[TopicName, int] = field(default_factory=dict)
    approval: Approval = Approval.AUTO
    throttle: int | None = None
    batch: BatchLimits = field(default_factory=BatchLimits)
    preferred_leader_election: bool = True
    rack_policy: RackPolicy = RackPolicy.ENFORCE
    tolerance: int = 0
    #: What the computed modes even out: ``replicas``, ``bytes`` or ``both`` (placement.Balance).
    balance: str = "replicas"

    @property
    def needs_sizes(self) -> bool:
        """Whether planning needs partition sizes (read from the brokers, ZooKeeper has none)."""
        return self.balance != "replicas"


Planner = Callable[[ReassignmentRequest, ClusterView], ReassignmentPlan]
EngineRequests = Callable[[ReassignmentRequest, ClusterView], "list[placement.PlanRequest]"]


@dataclass(frozen=True)
class ModeRule:
    """Everything particular to one mode."""

    #: The spec fields the mode cannot do without (``spec.brokers`` ...): refused when empty.
    needs: tuple[str, ...] = ()
    #: Reads the mode's own fields from the spec into :class:`ReassignmentRequest` fields.
    read: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    #: Plans in-process; ``None``: through the placement engine with :attr:`engine_requests`.
    plan: Planner | None = None
    #: The placement engine's requests, applied in order (engine modes only; one request may be
    #: offloaded to a Spark job, a chain runs in-process).
    engine_requests: EngineRequests | None = None
    #: Compare the proposal with the cluster before the start (a computed plan goes stale when
    #: the cluster moves; an explicit one says what the user wants whatever the cluster did).
    checks_staleness: bool = True


# ---------------------------------------------------------------------------- Explicit


def _read_explicit(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    has_list, has_json = spec.get("partitions") is not None, spec.get("reassignmentJson") is not None
    if has_list == has_json:
        raise errors.InvalidSpec(
            "Explicit mode needs exactly one of spec.partitions and spec.reassignmentJson"
        )
    if has_list:
        return {"partitions": partition_list_field(spec["partitions"], "spec.partitions")}
    return {"partitions": parse_reassignment_json(spec["reassignmentJson"])}


def _plan_explicit(request: ReassignmentRequest, cluster: ClusterView) -> ReassignmentPlan:
    return plan_explicit(request.partitions, cluster, request.rack_policy)


# ---------------------------------------------------------------------------- engine modes


def _registered(request: ReassignmentRequest, cluster: ClusterView) -> None:
    unknown = sorted(set(request.brokers) - set(cluster.brokers))
    if unknown:
        raise errors.InvalidSpec(
            f"spec.brokers: {brokers_are(unknown)} not registered "
            f"(registered: {listed(sorted(cluster.brokers))})"
        )


def _broker_requests(mode: Mode) -> EngineRequests:
    def requests(request: ReassignmentRequest, cluster: ClusterView) -> list[placement.PlanRequest]:
        from kafka_zk_operator.domain import placement

        _registered(request, cluster)
        return [
            placement.PlanRequest(
                mode=mode,
                brokers=request.brokers,
                tolerance=request.tolerance,
                balance=placement.Balance(request.balance),
            )
        ]

    return requests


def _alternation(names: Iterable[str]) -> str:
    return "|".join(re.escape(name) for name in sorted(names))


def _rebalance_requests(request: ReassignmentRequest, cluster: ClusterView) -> list[placement.PlanRequest]:
    """Rebalance takes ``spec.topics`` and ``spec.topicsRegex`` (full match, union; every
    non-internal topic when neither is given) and leaves Kafka's internal topics alone unless
    ``spec.topics`` names them."""
    from kafka_zk_operator.domain import placement

    named = set(request.topics)
    unknown = sorted(named - set(cluster.assignments))
    if unknown:
        raise errors.InvalidSpec(f"spec.topics names topics that do not exist: {listed(unknown, 10)}")
    # Top-level branches: the names stay a flat alternation of literals, which
    # topic_patterns matches as a set (never parsed); the regex is matched without backtracking.
    parts = []
    if named:
        parts.append(_alternation(named))
    if request.topics_regex:
        parts.append(f"(?:{request.topics_regex})")
    include = "|".join(parts) if parts else None
    internal = sorted(t for t in cluster.assignments if topic_names.is_internal(t) and t not in named)
    exclude = _alternation(internal) if internal else None
    if include is not None:
        selected = topic_patterns.compile_matcher(include)
        if not any(selected(t) for t in cluster.assignments):
            raise errors.InvalidSpec("spec.topics / spec.topicsRegex select no existing topic")
    return [
        placement.PlanRequest(
            mode=Mode.REBALANCE,
            topics=include,
            exclude_topics=exclude,
            tolerance=request.tolerance,
            balance=placement.Balance(request.balance),
        )
    ]


def _replication_factor_requests(
    request: ReassignmentRequest, cluster: ClusterView
) -> list[placement.PlanRequest]:
    """One engine request per distinct target replication factor, applied one after the other."""
    from kafka_zk_operator.domain import placement

    missing = sorted(set(request.replication_factors) - set(cluster.assignments))
    if missing:
        raise errors.InvalidSpec(
            f"spec.replicationFactors names topics that do not exist: {listed(missing, 10)}"
        )
    too_big = {t: rf for t, rf in request.replication_factors.items() if rf > len(cluster.brokers)}
    if too_big:
        raise errors.InvalidSpec(
            f"replication factor above the {len(cluster.brokers)} registered brokers: "
            + ", ".join(f"{t}={rf}" for t, rf in sorted(too_big.items()))
        )
    by_rf: dict[int, list[str]] = {}
    for topic, rf in sorted(request.replication_factors.items()):
        by_rf.setdefault(rf, []).append(topic)
    return [
        placement.PlanRequest(
            mode=Mode.REPLICATION_FACTOR,
            topics=_alternation(names),
            replication_factor=rf,
            tolerance=request.tolerance,
            balance=placement.Balance(request.balance),
        )
        for rf, names in sorted(by_rf.items())
    ]


# ---------------------------------------------------------------------------- DemoteBrokers


def _plan_demotion(request: ReassignmentRequest, cluster: ClusterView) -> ReassignmentPlan:
    """Leadership off ``spec.brokers`` with no data moved: each partition whose preferred leader
    (first replica) is demoted gets the same replicas, the demoted ones last; the preferred-leader
    election after each batch then moves its leader. A partition whose replicas are all demoted
    keeps its order (a note says which)."""
    _registered(request, cluster)
    demoted = set(request.brokers)
    moves: list[PartitionMove] = []
    kept: list[str] = []
    for topic in sorted(set(cluster.assignments) - set(cluster.deleting)):
        for partition, replicas in sorted(cluster.assignments[topic].items()):
            if not replicas or replicas[0] not in demoted:
                continue
            others = tuple(b for b in replicas if b not in demoted)
            if not others:
                kept.append(f"{topic}-{partition}")
                continue
            target = others + tuple(b for b in replicas if b in demoted)
            moves.append(PartitionMove(topic, partition, replicas, target))
    notes: tuple[str, ...] = ()
    if kept:
        shown = ", ".join(kept[:10]) + (f" and {len(kept) - 10} more" if len(kept) > 10 else "")
        notes = (
            f"{len(kept)} partitions have replicas on demoted brokers only and keep their leader: {shown}",
        )
    return ReassignmentPlan(moves=tuple(moves), lower_bound=0, provably_optimal=True, notes=notes)


# ---------------------------------------------------------------------------- the registry

#: One rule per mode.
MODES: Mapping[Mode, ModeRule] = {
    Mode.EXPLICIT: ModeRule(read=_read_explicit, plan=_plan_explicit, checks_staleness=False),
    Mode.ADD_BROKERS: ModeRule(needs=("brokers",), engine_requests=_broker_requests(Mode.ADD_BROKERS)),
    Mode.REMOVE_BROKERS: ModeRule(needs=("brokers",), engine_requests=_broker_requests(Mode.REMOVE_BROKERS)),
    Mode.REBALANCE: ModeRule(engine_requests=_rebalance_requests),
    Mode.REPLICATION_FACTOR: ModeRule(
        needs=("replicationFactors",), engine_requests=_replication_factor_requests
    ),
    Mode.DEMOTE_BROKERS: ModeRule(needs=("brokers",), plan=_plan_demotion),
}


def rule_of(request: ReassignmentRequest) -> ModeRule:
    return MODES[request.mode]


def engine_inputs(request: ReassignmentRequest, cluster: ClusterView) -> EngineInputs | None:
    """What to hand the placement engine for ``request``; ``None`` for a mode planned otherwise.

    :raises InvalidSpec, NotSupported: the request cannot be planned on this cluster.
    """
    rule = rule_of(request)
    if rule.engine_requests is None:
        return None
    from kafka_zk_operator.domain.reassignment.computed import engine_inputs as inputs_for

    requests = rule.engine_requests
    return inputs_for(cluster, lambda view: requests(request, view))


def plan_request(request: ReassignmentRequest, cluster: ClusterView) -> ReassignmentPlan:
    """Plan ``request`` in-process. :raises InvalidSpec, NotSupported: it cannot be planned."""
    rule = rule_of(request)
    if rule.plan is not None:
        return rule.plan(request, cluster)
    inputs = engine_inputs(request, cluster)
    assert inputs is not None, f"mode {request.mode} has neither a planner nor engine requests"
    from kafka_zk_operator.domain.reassignment.computed import plan_with_engine

    return plan_with_engine(inputs)


# ---------------------------------------------------------------------------- parsing


def _topics(spec: Mapping[str, Any]) -> tuple[TopicName, ...]:
    raw = spec.get("topics") or []
    if not isinstance(raw, list) or not all(isinstance(t, str) and t for t in raw):
        raise errors.InvalidSpec(f"spec.topics must be a list of topic names, got {raw!r}")
    return tuple(raw)


def _topics_regex(spec: Mapping[str, Any]) -> str | None:
    regex = spec.get("topicsRegex")
    if regex is None:
        return None
    if not isinstance(regex, str):
        raise errors.InvalidSpec(f"spec.topicsRegex must be a string (a regular expression), got {regex!r}")
    with warnings.catch_warnings():  # e.g. FutureWarning "Possible nested set": valid, say nothing
        warnings.simplefilter("ignore")
        # Parsed and turned into its automaton now, before anything is planned: an invalid or
        # non-regular pattern (backreference, lookaround) is refused here with the reason.
        topic_patterns.check_pattern(regex, "spec.topicsRegex")
    return regex


def _replication_factors(spec: Mapping[str, Any]) -> dict[TopicName, int]:
    raw = spec.get("replicationFactors") or {}
    if not isinstance(raw, Mapping):
        raise errors.InvalidSpec("spec.replicationFactors must map topic names to replication factors")
    return {
        str(t): int_field(v, f"spec.replicationFactors[{str(t)!r}]", minimum=1, maximum=32767)
        for t, v in raw.items()
    }


def _batch(spec: Mapping[str, Any]) -> BatchLimits:
    batch = spec.get("batch") or {}
    if not isinstance(batch, Mapping):
        raise errors.InvalidSpec(
            f"spec.batch must be an object with maxPartitions and maxMovesPerBroker, got {batch!r}"
        )
    return BatchLimits(
        max_partitions=int_field(
            batch.get("maxPartitions", DEFAULT_MAX_PARTITIONS), "spec.batch.maxPartitions", minimum=1
        ),
        max_moves_per_broker=int_field(
            batch.get("maxMovesPerBroker", DEFAULT_MAX_MOVES_PER_BROKER),
            "spec.batch.maxMovesPerBroker",
            minimum=1,
        ),
    )


_BALANCES = ("replicas", "bytes", "both")


def _balance(spec: Mapping[str, Any], rule: ModeRule) -> str:
    value = spec.get("balance")
    if value is None:
        return "replicas"
    if value not in _BALANCES:
        raise errors.InvalidSpec(f"spec.balance is {value!r}; expected one of: {', '.join(_BALANCES)}")
    if value != "replicas" and rule.engine_requests is None:
        raise errors.InvalidSpec(
            "spec.balance is only used by the computed modes (AddBrokers, RemoveBrokers, Rebalance, "
            "ReplicationFactor)"
        )
    return str(value)


def parse_request(spec: Mapping[str, Any]) -> ReassignmentRequest:
    """The request a ``spec`` makes. :raises InvalidSpec: with the field path."""
    if "mode" not in spec:
        raise errors.InvalidSpec("spec.mode is required")
    mode: Mode = enum_field(spec.get("mode"), Mode, "spec.mode", Mode.EXPLICIT)
    rule = MODES[mode]
    brokers = int_list_field(spec.get("brokers") or [], "spec.brokers")
    if len(set(brokers)) != len(brokers):
        raise errors.InvalidSpec(f"spec.brokers lists a broker twice: {list(brokers)}")
    throttle = spec.get("throttle")
    request = ReassignmentRequest(
        mode=mode,
        cluster=spec.get("cluster") or None,
        brokers=brokers,
        topics=_topics(spec),
        topics_regex=_topics_regex(spec),
        replication_factors=_replication_factors(spec),
        approval=enum_field(spec.get("approval"), Approval, "spec.approval", Approval.AUTO),
        throttle=None
        if throttle is None
        else int_field(throttle, "spec.throttle", minimum=1, maximum=2**63 - 1),
        batch=_batch(spec),
        preferred_leader_election=bool(spec.get("preferredLeaderElection", True)),
        rack_policy=enum_field(spec.get("rackPolicy"), RackPolicy, "spec.rackPolicy", RackPolicy.ENFORCE),
        tolerance=int_field(spec.get("tolerance", 0), "spec.tolerance", minimum=0),
        balance=_balance(spec, rule),
    )
    for needed in rule.needs:
        if not spec.get(needed):
            raise errors.InvalidSpec(f"{mode.value} mode needs spec.{needed}")
    if rule.read is not None:
        request = dataclasses.replace(request, **rule.read(spec))
    return request
