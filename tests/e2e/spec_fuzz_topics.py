"""KafkaTopic specs for the spec fuzzing (``spec_fuzz_values`` says how cases are built): names,
partition counts and replication factors, configs (``spec_fuzz_configs``), explicit assignments
that are almost valid, a second spec that replaces the first, and the CRD's largest values.

Pure: no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from tests.e2e.spec_fuzz_configs import configs
from tests.e2e.spec_fuzz_values import (
    BROKERS,
    GROUP,
    INT_MAX,
    MISSING,
    PARTITIONS_MAX,
    SAFE_SMALL_PARTITIONS,
    SERIAL,
    UNWRITABLE_PARTITIONS,
    VERSION,
    Drawn,
    SpecCase,
    clusters,
    is_int,
    plain,
    put,
    refused_as,
    resource_names,
    topic_names,
    weighted,
    wrong_type,
)
from tests.unit.fuzz_support import json_values

# ------------------------------------------------------------------ KafkaTopic numbers


def _partitions(broken: bool) -> st.SearchStrategy[Drawn]:
    if not broken:
        return st.integers(min_value=1, max_value=SAFE_SMALL_PARTITIONS).map(plain)
    extreme = st.sampled_from([0, -1, -(2**31), INT_MAX, 2**31, 2**63, PARTITIONS_MAX + 1, 1_000_000]).map(
        lambda n: Drawn(n, "out of range" if n < 1 or n > PARTITIONS_MAX else None)
    )
    return weighted(
        (2, st.sampled_from(UNWRITABLE_PARTITIONS).map(plain)),
        (2, extreme),
        # Between small and unwritable: kept only when something else is invalid (module doc).
        (1, st.sampled_from([7, 13, 64, 200]).map(plain)),
        (1, wrong_type(int)),
    )


def _replication_factors(broken: bool) -> st.SearchStrategy[Drawn]:
    if not broken:
        return st.integers(min_value=1, max_value=3).map(plain)
    return weighted(
        (2, st.sampled_from([4, 5, 32767]).map(refused_as("more replicas than the 3 brokers"))),
        (1, st.sampled_from([0, -1, 32768, 2**31, 2**63]).map(refused_as("out of range"))),
        (1, wrong_type(int)),
    )


# ------------------------------------------------------------------ explicit assignment

_FLAWS = (
    "duplicate",
    "short",
    "long",
    "missing",
    "extra",
    "unregistered",
    "negative",
    "overflow",
    "key",
    "strings",
    "empty",
    "huge",
)


@st.composite
def assignment_of(draw: st.DrawFn, partitions: Any, rf: Any, broken: bool) -> Drawn:
    """An assignment for ``partitions`` x ``rf`` on brokers 1-3; when broken, with one flaw."""
    count = partitions if is_int(partitions) and 1 <= partitions <= SAFE_SMALL_PARTITIONS else 3
    width = rf if is_int(rf) and 1 <= rf <= 3 else 2
    replicas = st.permutations(BROKERS).map(lambda p: list(p[:width]))
    assignment: dict[str, Any] = {str(p): draw(replicas) for p in range(count)}
    mismatch = None
    if count != partitions or width != rf:
        mismatch = f"{count} x {width} entries for {partitions!r} partitions x {rf!r} replicas"
    if not broken:
        return Drawn(assignment, mismatch)
    flaw = draw(st.sampled_from(_FLAWS))
    last = str(count - 1)
    if flaw == "duplicate":
        assignment[last] = [*assignment[last], assignment[last][0]]
    elif flaw == "short":
        assignment[last] = assignment[last][:-1] or [4]
    elif flaw == "long":
        assignment[last] = [*assignment[last], 9]
    elif flaw == "missing":
        del assignment[last]
        assignment = assignment or {"1": [1]}
    elif flaw == "extra":
        assignment[str(count)] = assignment[last]
    elif flaw == "unregistered":
        assignment[last] = [draw(st.sampled_from([0, 4, 999, INT_MAX])), *assignment[last][1:]]
    elif flaw == "negative":
        assignment[last] = [-1, *assignment[last][1:]]
    elif flaw == "overflow":
        assignment[last] = [2**31, *assignment[last][1:]]
    elif flaw == "key":
        key = draw(st.sampled_from(["01", "-0", " 0", "0x0", "\uff11", "1e0", "4294967296"]))
        assignment[key] = assignment.pop(last)
    elif flaw == "strings":
        assignment[last] = [str(b) for b in assignment[last]]
    elif flaw == "empty":
        assignment[last] = []
    else:  # the CRD's 10000 entries, the last naming a broker that is not registered
        assignment = {str(p): [1 + p % 3] for p in range(10_000)}
        assignment["9999"] = [4]
        return Drawn(assignment, "10000 partitions, one on broker 4 (not registered)")
    return Drawn(assignment, f"an assignment with a flaw ({flaw})")


# ------------------------------------------------------------------ KafkaTopic

TOPIC_FIELDS = (
    "metadata.name",
    "topicName",
    "partitions",
    "replicationFactor",
    "config",
    "assignment",
    "placement",
    "deletionPolicy",
    "cluster",
    "absent",
    "unknown",
)


@st.composite
def kafkatopic_cases(draw: st.DrawFn) -> SpecCase:
    """A KafkaTopic with a few of its fields broken (possibly none)."""
    broken = set(draw(st.lists(st.sampled_from(TOPIC_FIELDS), max_size=2, unique=True)))
    bad: list[str] = []
    spec: dict[str, Any] = {}
    name = draw(resource_names("metadata.name" in broken))
    topic_name = draw(topic_names("topicName" in broken))
    put(spec, "topicName", topic_name, bad)
    if name.invalid and topic_name.value is MISSING:  # with topicName, neither limit applies
        bad.append(f"metadata.name: {name.invalid}")
    partitions = draw(_partitions("partitions" in broken))
    rf = draw(_replication_factors("replicationFactor" in broken))
    put(spec, "replicationFactor", rf, bad)
    put(spec, "config", draw(configs("config" in broken)), bad)
    if "assignment" in broken or draw(st.sampled_from([False, False, False, True])):
        if draw(st.sampled_from([False, False, False, False, True])):
            put(spec, "assignment", draw(wrong_type(dict)), bad)
        else:
            put(
                spec,
                "assignment",
                draw(assignment_of(partitions.value, rf.value, "assignment" in broken)),
                bad,
            )
    placements = [MISSING, "Kafka", "Balanced"]
    put(
        spec,
        "placement",
        draw(st.sampled_from(["balanced", "", "Random", 1]).map(refused_as("not Kafka or Balanced")))
        if "placement" in broken
        else draw(st.sampled_from(placements).map(plain)),
        bad,
    )
    put(
        spec,
        "deletionPolicy",
        draw(st.sampled_from(["delete", "Keep", "", 0]).map(refused_as("not Delete or Retain")))
        if "deletionPolicy" in broken
        else draw(st.sampled_from([MISSING, "Delete", "Retain"]).map(plain)),
        bad,
    )
    put(spec, "cluster", draw(clusters("cluster" in broken)), bad)
    if "unknown" in broken:
        spec["unknownField"] = draw(json_values)  # pruned by the API server: harmless
    count = partitions.value
    if is_int(count) and SAFE_SMALL_PARTITIONS < count < UNWRITABLE_PARTITIONS[0] and not bad:
        # Between small and unwritable needs another reason to fail (module doc).
        partitions = Drawn(SAFE_SMALL_PARTITIONS)
        if isinstance(spec.get("assignment"), dict):
            spec["assignment"] = {str(p): [1 + p % 3] for p in range(SAFE_SMALL_PARTITIONS)}
            spec["replicationFactor"] = 1
    put(spec, "partitions", partitions, bad)
    if "absent" in broken:
        missing = draw(st.sampled_from(["partitions", "replicationFactor"]))
        spec.pop(missing, None)
        bad.append(f"{missing} missing")
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "KafkaTopic",
        "metadata": {"name": name.value},
        "spec": spec,
    }
    case = SpecCase("KafkaTopic", body, bad)
    if not bad and draw(st.booleans()):
        case.update, case.update_invalid = draw(_topic_update(spec))
    return case


UPDATE_FIELDS = ("partitions", "config", "assignment", "topicName", "cluster", "deletionPolicy")


@st.composite
def _topic_update(draw: st.DrawFn, spec: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A new spec for a KafkaTopic created with ``spec`` (valid as far as known): its partitions
    grown, its config replaced, and a few fields broken. The replication factor stays (changing it
    hands the topic to a PartitionReassignment, which has its own fuzz test)."""
    broken = set(draw(st.lists(st.sampled_from(UPDATE_FIELDS), max_size=2, unique=True)))
    bad: list[str] = []
    new = json.loads(json.dumps(spec))
    before = int(spec["partitions"])
    if "partitions" in broken:
        partitions = draw(
            st.one_of(
                st.just(Drawn(before - 1, "partitions decreased")),
                st.sampled_from(UNWRITABLE_PARTITIONS).map(plain),
                st.sampled_from([0, 2**31]).map(refused_as("out of range")),
                wrong_type(int),
            )
        )
    else:
        partitions = Drawn(min(SAFE_SMALL_PARTITIONS, before + draw(st.integers(0, 2))))
    put(new, "partitions", partitions, bad)
    assignment = new.get("assignment")
    if (
        isinstance(assignment, dict)
        and is_int(partitions.value)
        and partitions.value <= SAFE_SMALL_PARTITIONS
    ):
        width = len(next(iter(assignment.values())))
        for p in range(before, partitions.value):
            assignment[str(p)] = draw(st.permutations(BROKERS).map(lambda b: list(b[:width])))
    if "assignment" in broken and isinstance(assignment, dict):
        flawed = draw(assignment_of(partitions.value, new["replicationFactor"], True))
        new["assignment"] = flawed.value
        bad.append(f"assignment: {flawed.invalid}")
    config = draw(configs("config" in broken))
    new.pop("config", None)
    put(new, "config", config, bad)
    if "topicName" in broken:
        new["topicName"] = f"G{SERIAL}_renamed"
        bad.append("topicName changed")
    if "cluster" in broken:
        put(new, "cluster", draw(clusters(True)), bad)
    if "deletionPolicy" in broken:
        new["deletionPolicy"] = draw(st.sampled_from(["delete", "Keep", ""]))
        bad.append("deletionPolicy not Delete or Retain")
    return new, bad


# ------------------------------------------------------------------ the extremes, always sent


def _topic(
    name: str,
    spec: dict[str, Any],
    *invalid: str,
    update: dict[str, Any] | None = None,
    update_invalid: str = "",
) -> SpecCase:
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "KafkaTopic",
        "metadata": {"name": name},
        "spec": spec,
    }
    return SpecCase("KafkaTopic", body, list(invalid), update, [update_invalid] if update_invalid else [])


#: The largest values the CRDs allow, sent in every run (Hypothesis draws them rarely or never).
EXTREME_TOPIC_CASES = (
    _topic(f"x{SERIAL}-million", {"partitions": PARTITIONS_MAX, "replicationFactor": 3}),
    _topic(
        f"x{SERIAL}-" + "n" * 246,
        {"topicName": f"X{SERIAL}_" + "t" * 242, "partitions": 1, "replicationFactor": 1},
    ),
    _topic(
        f"x{SERIAL}-padded",
        {
            "partitions": 1,
            "replicationFactor": 1,
            "config": {"retention.ms": " " * 4000 + "3600000", "cleanup.policy": "delete" + " " * 4090},
        },
    ),
    _topic(
        f"x{SERIAL}-100-keys-of-4096",
        {
            "partitions": 1,
            "replicationFactor": 1,
            "config": {f"unknown.key{i}": "v" * 4096 for i in range(100)},
        },
        "100 unknown keys",
    ),
    _topic(
        f"x{SERIAL}-10000-partitions",
        {
            "partitions": 10_000,
            "replicationFactor": 1,
            "assignment": {str(p): [4 if p == 9_999 else 1 + p % 3] for p in range(10_000)},
        },
        "broker 4 is not registered",
    ),
    _topic(
        f"x{SERIAL}-grown-beyond-zookeeper",
        {"partitions": 2, "replicationFactor": 2},
        update={"partitions": 250_000, "replicationFactor": 2},
    ),
    _topic(
        f"x{SERIAL}-config-grown-large",
        {"partitions": 1, "replicationFactor": 1},
        update={
            "partitions": 1,
            "replicationFactor": 1,
            "config": {f"unknown.key{i}": "v" * 4096 for i in range(100)},
        },
        update_invalid="100 unknown keys",
    ),
    _topic(
        f"x{SERIAL}-moved-to-another-cluster",
        {"partitions": 1, "replicationFactor": 1},
        update={"partitions": 1, "replicationFactor": 1, "cluster": "nope"},
        update_invalid="a cluster the operator does not serve",
    ),
)
