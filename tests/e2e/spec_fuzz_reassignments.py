"""PartitionReassignment specs for the spec fuzzing (``spec_fuzz_values`` says how cases are built):
every mode with missing or contradictory fields, explicit partitions and Kafka's reassignment JSON
that are almost valid, broker and topic lists, batch limits and the other fields, a second spec
that replaces the first, and the CRD's largest values. A reassignment that could move more than
the module's anchor topic is sent with approval ``Manual`` (:func:`anchor_only`).

Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from tests.e2e.spec_fuzz_values import (
    ANCHOR,
    ANCHOR_PARTITIONS,
    BROKERS,
    DNS_CHARS,
    GROUP,
    INT_MAX,
    LONG_MAX,
    MISSING,
    SERIAL,
    VERSION,
    Drawn,
    SpecCase,
    clusters,
    plain,
    put,
    refused_as,
    wrong_type,
    wrong_types,
)
from tests.unit.fuzz_support import json_values, mutate

MODES = ("Explicit", "AddBrokers", "RemoveBrokers", "Rebalance", "ReplicationFactor", "DemoteBrokers")
MODE_FIELDS = ("partitions", "reassignmentJson", "brokers", "topics", "topicsRegex", "replicationFactors")
#: The fields each mode reads (the CRD's CEL rules); any other of MODE_FIELDS contradicts it.
ALLOWED: dict[str, tuple[str, ...]] = {
    "Explicit": ("partitions", "reassignmentJson"),
    "AddBrokers": ("brokers",),
    "RemoveBrokers": ("brokers",),
    "Rebalance": ("topics", "topicsRegex"),
    "ReplicationFactor": ("replicationFactors",),
    "DemoteBrokers": ("brokers",),
}


def _anchor_partition(broken: bool) -> st.SearchStrategy[Drawn]:
    if not broken:
        return st.integers(min_value=0, max_value=ANCHOR_PARTITIONS - 1).map(plain)
    return st.one_of(
        st.sampled_from([3, INT_MAX]).map(refused_as(f"{ANCHOR} has {ANCHOR_PARTITIONS} partitions")),
        st.sampled_from([-1, 2**31, 2**63]).map(refused_as("out of range")),
        wrong_type(int),
    )


def _replica_list(broken: bool) -> st.SearchStrategy[Drawn]:
    valid = st.integers(min_value=1, max_value=3).flatmap(
        lambda n: st.permutations(BROKERS).map(lambda p: list(p[:n]))
    )
    if not broken:
        return valid.map(plain)
    return st.one_of(
        valid.map(lambda r: Drawn([*r, r[0]], "a broker twice")),
        st.tuples(valid, st.sampled_from([0, 4, 999, INT_MAX])).map(
            lambda rb: Drawn([*rb[0][:-1], rb[1]], f"broker {rb[1]} is not registered")
        ),
        valid.map(lambda r: Drawn([*r[:-1], -1], "a negative broker id")),
        valid.map(lambda r: Drawn([*r[:-1], 2**31], "a broker id beyond 32 bits")),
        st.just(Drawn([], "an empty replica list")),
        st.just(Drawn(list(range(1, 34)), "33 replicas")),
        wrong_type(list),
    )


def _explicit_topic(broken: bool) -> st.SearchStrategy[Drawn]:
    if not broken:
        return st.just(Drawn(ANCHOR))
    return st.one_of(
        st.just(Drawn(f"missing-{SERIAL}", "a topic that does not exist")),
        st.sampled_from(["", "x" * 250]).map(refused_as("a topic name the CRD forbids")),
        st.text(min_size=1, max_size=10).map(refused_as("a topic that does not exist")),
        wrong_type(str),
    )


@st.composite
def _explicit_partitions(draw: st.DrawFn, broken: bool) -> Drawn:
    """``spec.partitions``: entries for the anchor's partitions; when broken, some flawed."""
    reasons: list[str] = []
    entries: list[Any] = []
    partitions = draw(st.lists(st.integers(0, ANCHOR_PARTITIONS - 1), min_size=1, max_size=3, unique=True))
    for partition in partitions:
        flawed = broken and draw(st.booleans())
        part = draw(st.sampled_from(["topic", "partition", "replicas", "field"])) if flawed else ""
        topic = draw(_explicit_topic(part == "topic"))
        number = draw(_anchor_partition(True)) if part == "partition" else Drawn(partition)
        replicas = draw(_replica_list(part == "replicas"))
        entry = {"topic": topic.value, "partition": number.value, "replicas": replicas.value}
        if part == "field":
            del entry[draw(st.sampled_from(["topic", "partition", "replicas"]))]
            reasons.append("an entry without one of its fields")
        entries.append(entry)
        reasons += [d.invalid for d in (topic, number, replicas) if d.invalid]
    if broken and not reasons:
        if draw(st.booleans()):
            entries.append(json.loads(json.dumps(entries[0])))
            reasons.append("a partition listed twice")
        else:
            entries, reasons = [], ["no partitions"]
    return Drawn(entries, "; ".join(reasons) or None)


@st.composite
def _reassignment_json(draw: st.DrawFn, broken: bool) -> Drawn:
    partitions = draw(_explicit_partitions(broken and draw(st.booleans())))
    document: Any = {"version": 1, "partitions": partitions.value}
    if draw(st.booleans()):
        for entry in partitions.value:
            if isinstance(entry, dict) and isinstance(entry.get("replicas"), list):
                entry["log_dirs"] = ["any"] * len(entry["replicas"])
    how = draw(st.sampled_from(["mutated", "not json", "huge", "version"])) if broken else "as is"
    if how == "as is":
        return Drawn(json.dumps(document), partitions.invalid)
    if how == "mutated":
        return Drawn(json.dumps(mutate(draw(st.data()), document)))  # valid or not: either answer
    if how == "not json":
        text = draw(st.sampled_from(["", "{", "[]", "null", "{}", "nan", "{'version': 1}", "\u0000"]))
        return Drawn(text, "not a reassignment document")
    if how == "huge":  # the version is echoed in the refusal: up to 1 MiB of message to report
        size = draw(st.sampled_from([300_000, 1_048_576, 1_048_577]))
        return Drawn('{"version":"' + "v" * (size - 30) + '","partitions":[]}', "a huge document")
    return Drawn(json.dumps({**document, "version": draw(json_values)}), None)


def _broker_lists(broken: bool) -> st.SearchStrategy[Drawn]:
    valid = st.lists(st.sampled_from(BROKERS), min_size=1, max_size=3, unique=True)
    if not broken:
        return valid.map(plain)
    return st.one_of(
        valid.map(lambda b: Drawn([*b, b[0]], "a broker twice")),
        st.sampled_from([[4], [0], [INT_MAX], [1, 999]]).map(refused_as("a broker that is not registered")),
        st.sampled_from([[-1], [2**31], []]).map(refused_as("out of range or empty")),
        st.just(Drawn(list(range(1001)), "over 1000 brokers")),
        wrong_type(list),
    )


def _topic_lists(broken: bool) -> st.SearchStrategy[Drawn]:
    if not broken:
        return st.just(Drawn([ANCHOR]))
    return st.one_of(
        st.just(Drawn([ANCHOR, f"missing-{SERIAL}"], "a topic that does not exist")),
        st.sampled_from([[""], [ANCHOR, ANCHOR], [], ["x" * 250]]).map(refused_as("a list the CRD forbids")),
        st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=3, unique=True).map(
            refused_as("topics that do not exist")
        ),
        wrong_type(list),
    )


def _topic_regexes(broken: bool) -> st.SearchStrategy[Drawn]:
    if not broken:
        return st.sampled_from([re.escape(ANCHOR), ".*"]).map(plain)
    return st.one_of(
        st.sampled_from(["(", "[a-", "*", "(?P<x>", "a{2,1}"]).map(refused_as("not a regular expression")),
        st.sampled_from(["nothing-matches-#####", "(a+)+$", "x" * 1024]).map(refused_as("selects no topic")),
        st.sampled_from(["x" * 1025, ""]).map(refused_as("a length the CRD forbids")),
        wrong_type(str),
    )


def _replication_factor_maps(broken: bool) -> st.SearchStrategy[Drawn]:
    if not broken:
        return st.integers(min_value=1, max_value=3).map(lambda rf: Drawn({ANCHOR: rf}))
    return st.one_of(
        st.sampled_from([4, 32767]).map(lambda rf: Drawn({ANCHOR: rf}, "more replicas than brokers")),
        st.sampled_from([0, -1, 32768, 2**31]).map(lambda rf: Drawn({ANCHOR: rf}, "out of range")),
        st.just(Drawn({f"missing-{SERIAL}": 2}, "a topic that does not exist")),
        st.just(Drawn({}, "empty")),
        st.just(Drawn({f"t{i}": 1 for i in range(10_001)}, "over 10000 topics")),
        wrong_type(dict),
        wrong_types(but=int).map(lambda v: Drawn({ANCHOR: v}, "not an integer")),
    )


def _batches(broken: bool) -> st.SearchStrategy[Drawn]:
    if not broken:
        limits = st.fixed_dictionaries(
            {},
            optional={
                "maxPartitions": st.sampled_from([1, 2, 50, 10_000]),
                "maxMovesPerBroker": st.sampled_from([1, 5, 1000]),
            },
        )
        return st.one_of(st.just(Drawn(MISSING)), limits.map(plain))
    return st.one_of(
        st.sampled_from(
            [
                {"maxPartitions": 0},
                {"maxPartitions": 10_001},
                {"maxMovesPerBroker": 1001},
                {"maxMovesPerBroker": -1},
            ]
        ).map(refused_as("a limit out of range")),
        wrong_types(but=int).map(lambda v: Drawn({"maxPartitions": v}, "not an integer")),
        wrong_type(dict),
    )


def _choice(broken: bool, valid: list[Any], wrong: list[Any], why: str) -> st.SearchStrategy[Drawn]:
    return st.sampled_from(wrong).map(refused_as(why)) if broken else st.sampled_from(valid).map(plain)


def _numbers(broken: bool, valid: list[int], wrong: list[int]) -> st.SearchStrategy[Drawn]:
    if not broken:
        return st.sampled_from([MISSING, *valid]).map(plain)
    return st.one_of(st.sampled_from(wrong).map(refused_as("out of range")), wrong_type(int))


def anchor_only(spec: dict[str, Any]) -> bool:
    """Whether a reassignment could move nothing but the anchor topic (then it may run on Auto)."""
    mode = spec.get("mode")
    if mode == "Explicit":
        return True  # an explicit list moves only the partitions it names: the anchor's or none
    if mode == "ReplicationFactor":
        factors = spec.get("replicationFactors")
        return isinstance(factors, dict) and set(factors) <= {ANCHOR}
    if mode == "Rebalance":
        topics, regex = spec.get("topics"), spec.get("topicsRegex")
        named = topics is None or (isinstance(topics, list) and set(topics) <= {ANCHOR})
        return named and (topics is not None or regex is not None) and regex in (None, re.escape(ANCHOR))
    return False


REASSIGNMENT_FIELDS = (
    "mode",
    "missing",
    "contradicting",
    "content",
    "approval",
    "throttle",
    "batch",
    "preferredLeaderElection",
    "rackPolicy",
    "tolerance",
    "cluster",
)


@st.composite
def _reassignment_spec(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
    """A PartitionReassignment spec with a few of its fields broken (possibly none), and why it
    must fail, if it must."""
    broken = set(draw(st.lists(st.sampled_from(REASSIGNMENT_FIELDS), max_size=2, unique=True)))
    bad: list[str] = []
    spec: dict[str, Any] = {}
    if "mode" in broken:
        mode = draw(
            st.one_of(
                st.sampled_from(["explicit", "", "Rebalance ", "Shrink"]).map(refused_as("not a mode")),
                wrong_type(str),
                st.just(Drawn(MISSING, "no mode")),
            )
        )
    else:
        mode = draw(st.sampled_from(MODES).map(plain))
    put(spec, "mode", mode, bad)
    key = mode.value if isinstance(mode.value, str) else ""
    allowed = ALLOWED.get(key, ())
    wanted = {allowed[0]} if allowed else set()
    if key == "Explicit" and draw(st.booleans()):
        wanted = {"reassignmentJson"}
    if key == "Rebalance":
        wanted = set(draw(st.sets(st.sampled_from(["topics", "topicsRegex"]))))
    needed = wanted - {"topics", "topicsRegex"}
    if "missing" in broken and needed:
        dropped = draw(st.sampled_from(sorted(needed)))
        wanted.discard(dropped)
        bad.append(f"{key} without {dropped}")
    if "contradicting" in broken:
        extra = draw(st.sampled_from(MODE_FIELDS))
        if extra not in allowed or (key == "Explicit" and extra not in wanted):
            bad.append(f"{extra} contradicts mode {key}")
        wanted.add(extra)
    builders: dict[str, Callable[[bool], st.SearchStrategy[Drawn]]] = {
        "partitions": _explicit_partitions,
        "reassignmentJson": _reassignment_json,
        "brokers": _broker_lists,
        "topics": _topic_lists,
        "topicsRegex": _topic_regexes,
        "replicationFactors": _replication_factor_maps,
    }
    flawed = draw(st.sampled_from(sorted(wanted))) if "content" in broken and wanted else None
    for name in MODE_FIELDS:
        if name in wanted:
            put(spec, name, draw(builders[name](name == flawed)), bad)
    approval = _choice(
        "approval" in broken, [MISSING, "Auto", "Manual"], ["auto", "", 1], "not Manual or Auto"
    )
    put(spec, "approval", draw(approval), bad)
    put(
        spec,
        "throttle",
        draw(_numbers("throttle" in broken, [1, 1_000_000, LONG_MAX], [0, -1, 2**63, 2**64])),
        bad,
    )
    put(spec, "batch", draw(_batches("batch" in broken)), bad)
    election = _choice(
        "preferredLeaderElection" in broken, [MISSING, True, False], ["true", 1, 0], "not a boolean"
    )
    put(spec, "preferredLeaderElection", draw(election), bad)
    rack = _choice(
        "rackPolicy" in broken, [MISSING, "Enforce", "Warn"], ["enforce", "", 0], "not Enforce or Warn"
    )
    put(spec, "rackPolicy", draw(rack), bad)
    put(spec, "tolerance", draw(_numbers("tolerance" in broken, [0, 1, INT_MAX], [-1, 2**31])), bad)
    put(spec, "cluster", draw(clusters("cluster" in broken)), bad)
    if not anchor_only(spec) and spec.get("approval") in (None, "Auto", "Manual"):
        spec["approval"] = "Manual"  # a cluster-wide move is proposed, never run (module doc)
    return spec, bad


@st.composite
def reassignment_cases(draw: st.DrawFn) -> SpecCase:
    """A PartitionReassignment, and for some a second spec that replaces the first once the
    first is reported: another spec altogether, or the same with another cluster."""
    spec, bad = draw(_reassignment_spec())
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PartitionReassignment",
        "metadata": {"name": f"r{SERIAL}-" + draw(st.text(alphabet=DNS_CHARS, max_size=10)) + "x"},
        "spec": spec,
    }
    case = SpecCase("PartitionReassignment", body, bad)
    if not bad and draw(st.booleans()):
        if draw(st.booleans()):
            case.update, case.update_invalid = draw(_reassignment_spec())
        else:
            moved = draw(clusters(True))
            case.update = {**spec, "cluster": moved.value}
            case.update_invalid = [f"cluster: {moved.invalid}"]
    return case


# ------------------------------------------------------------------ the extremes, always sent


def _reassignment(name: str, spec: dict[str, Any], *invalid: str) -> SpecCase:
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PartitionReassignment",
        "metadata": {"name": name},
        "spec": spec,
    }
    return SpecCase("PartitionReassignment", body, list(invalid))


EXTREME_REASSIGNMENT_CASES = (
    _reassignment(
        f"x{SERIAL}-json-1mib",
        {
            "mode": "Explicit",
            "reassignmentJson": '{"version":"' + "v" * (1_048_576 - 30) + '","partitions":[]}',
        },
        "version is 1 MiB of v",
    ),
    _reassignment(
        f"x{SERIAL}-20000-partitions",
        {
            "mode": "Explicit",
            "approval": "Manual",
            "partitions": [
                {"topic": f"missing-{SERIAL}", "partition": p, "replicas": [1, 2]} for p in range(20_000)
            ],
        },
        "a topic that does not exist",
    ),
    _reassignment(
        f"x{SERIAL}-10000-factors",
        {
            "mode": "ReplicationFactor",
            "approval": "Manual",
            "replicationFactors": {f"t{i}": 2 for i in range(10_000)},
        },
        "topics that do not exist",
    ),
    _reassignment(
        f"x{SERIAL}-10000-topics",
        {"mode": "Rebalance", "approval": "Manual", "topics": [f"t{i}" for i in range(10_000)]},
        "topics that do not exist",
    ),
    _reassignment(
        f"x{SERIAL}-1000-brokers",
        {"mode": "AddBrokers", "approval": "Manual", "brokers": list(range(1000, 2000))},
        "brokers that are not registered",
    ),
)
