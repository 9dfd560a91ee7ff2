"""Hypothesis strategies for hostile KafkaTopic and PartitionReassignment specs (issue #17, item 4).

Each case starts from a spec that may be valid and breaks a few of its fields, drawn at random
(none in some cases, so that valid specs are exercised too). A broken field gets a value of the
type the schema allows but extreme (0, negative, 2**31, 2**63, the schema's own limits and one
past them), a value of the wrong type, an empty, unicode or long string, or a large map. Topic
configs take every Kafka type (int, long, double, boolean, list, string with choices or versions)
with values right and wrong, unknown keys, broker-level, password-like and class-like keys.
Explicit assignments and explicit reassignments are almost valid: a broker named twice, unequal
lengths, a missing or extra partition, brokers that are not registered, negative or
32-bit-overflowing ids. Reassignment modes come with missing or contradictory fields. Some cases
carry a second spec that replaces the first once it is reported. The largest values the CRDs allow
(1,000,000 partitions, 100 config values of 4096 characters, a 1 MiB reassignmentJson, 20,000
explicit partitions, ...) are sent in every run as explicit examples.

A case carries the body and ``known_invalid``: the reasons, decided here independently of the
product, why Kafka or the CRD forbids the spec (empty when it may be valid). The test requires
that such a spec is refused at admission or reported, never carried out. Values Kafka takes but
the operator documents refusing (``segment.index.bytes`` below 12, non-ASCII digits, NaN,
``min.insync.replicas`` above the replication factor) are not marked: either answer is right for them.

Two constraints keep the shared test cluster (3 brokers, racks rack-a/b/c) usable; they say
nothing about what the product may accept:

* A spec that may be valid creates at most 6 partitions, or at least 250,000 (whose topic znode is
  several MB, more than ZooKeeper takes in one request, so it can never be created). Counts in
  between come only with a spec invalid for another reason that is checked before any write.
* A reassignment that may run on approval ``Auto`` moves only the module's own anchor topic.
  Modes whose scope is the whole cluster (AddBrokers, RemoveBrokers, DemoteBrokers, Rebalance of
  all topics) are sent with approval ``Manual``: their proposal is computed and reported, never run.

Names: ``#####`` in names is replaced by the test with a serial number of five digits (unique per
case); :data:`ANCHOR` is the module's own topic (3 partitions). Hypothesis draws its simplest
value first, so each weighted choice lists the ordinary value first.

Pure: no I/O.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from kafka_zk_operator.domain.topic_config_keys import TOPIC_CONFIG_KEYS, ConfigType, TopicConfigKey
from tests.unit.fuzz_support import json_values, mutate

GROUP, VERSION = "kafka.zk-operator.io", "v1alpha1"
#: The module's own Kafka topic (3 partitions): reassignments may move it, collisions aim at it.
ANCHOR = f"fuzz_anchor_{uuid.uuid4().hex[:6]}"
ANCHOR_PARTITIONS = 3
#: The brokers of the shared test cluster.
BROKERS = (1, 2, 3)
#: Where the test puts the serial number (5 characters, so lengths stay exact).
SERIAL = "#####"
#: The operator's cluster name in the e2e stack (``OperatorProcess``'s default).
CLUSTER_NAME = "local"

INT_MAX, LONG_MAX = 2**31 - 1, 2**63 - 1
#: Partition counts a spec that may be valid can ask for: small, or too large for any znode.
SAFE_SMALL_PARTITIONS = 6
UNWRITABLE_PARTITIONS = (250_000, 1_000_000)

_MISSING: Any = object()
_LEGAL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
_DNS = "abcdefghijklmnopqrstuvwxyz0123456789-"


@dataclass
class SpecCase:
    """One generated resource and why it must fail, if it must."""

    kind: str
    body: dict[str, Any]
    known_invalid: list[str] = field(default_factory=list)
    #: A second spec that replaces the first once it is reported (KafkaTopic only), and why it must
    #: fail, if it must.
    update: dict[str, Any] | None = None
    update_invalid: list[str] = field(default_factory=list)

    def render(self, serial: int) -> SpecCase:
        """The case with ``#####`` replaced by ``serial`` everywhere in the body."""
        text = json.dumps([self.body, self.update]).replace(SERIAL, f"{serial:05d}")
        body, update = json.loads(text)
        return SpecCase(self.kind, body, list(self.known_invalid), update, list(self.update_invalid))


@dataclass
class _Drawn:
    """A field value and why it makes the spec invalid (None: it may be fine)."""

    value: Any
    invalid: str | None = None


def _ok(value: Any) -> _Drawn:
    return _Drawn(value)


def _bad(why: str) -> Callable[[Any], _Drawn]:
    return lambda value: _Drawn(value, why)


def _weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of ``choices``, each ``weight`` times as likely; the first is Hypothesis' simplest."""
    return st.sampled_from([s for weight, s in choices for _ in range(weight)]).flatmap(lambda s: s)


def _set(spec: dict[str, Any], key: str, drawn: _Drawn, bad: list[str]) -> None:
    if drawn.value is not _MISSING:
        spec[key] = drawn.value
    if drawn.invalid:
        bad.append(f"{key}: {drawn.invalid}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _wrong_types(*, but: type) -> st.SearchStrategy[Any]:
    """JSON values of another type than ``but``. Never ``null``: the API server drops a null field
    (none of these is nullable), so it means "absent", which other cases cover. Never a whole
    float: 3.0 is an integer to the API server."""
    values = st.one_of(
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
        st.text(max_size=12),
        st.lists(st.integers(min_value=0, max_value=5), max_size=3),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    )
    if but is int:
        return values.filter(lambda v: not _is_int(v))
    return values.filter(lambda v: not isinstance(v, but))


def _wrong(but: type) -> st.SearchStrategy[_Drawn]:
    return _wrong_types(but=but).map(_bad(f"not a {but.__name__}"))


# ------------------------------------------------------------------ names and cluster


def _resource_names(broken: bool) -> st.SearchStrategy[_Drawn]:
    """``metadata.name``: always a valid Kubernetes name (the fuzz is about the spec)."""
    short = st.text(alphabet=_DNS, max_size=20).map(lambda s: f"f{SERIAL}-{s}x")
    dotted = st.integers(min_value=1, max_value=5).map(lambda n: f"f{SERIAL}" + ".a" * n)
    if not broken:
        return st.one_of(short, dotted, st.just(f"f{SERIAL}-" + "a" * 242)).map(_ok)
    return st.one_of(
        st.sampled_from([250, 253]).map(lambda n: _Drawn(f"f{SERIAL}-" + "a" * (n - 7), "longer than 249")),
        st.just(_Drawn(ANCHOR.replace("_", "."), f"collides with topic {ANCHOR}")),
    )


def _kafka_invalid_name(name: str) -> str | None:
    if name in ("", ".", ".."):
        return "empty, '.' or '..'"
    if len(name.encode("utf-16-le", "surrogatepass")) // 2 > 249:
        return "longer than 249"
    if not set(name) <= set(_LEGAL):
        return "characters Kafka does not allow"
    if name in ("__consumer_offsets", "__transaction_state", "__share_group_state", "__cluster_metadata"):
        return "a Kafka-internal topic"
    if name != ANCHOR and name.replace(".", "_") == ANCHOR:
        return f"collides with topic {ANCHOR}"
    return None


def _topic_names(broken: bool) -> st.SearchStrategy[_Drawn]:
    """``spec.topicName``, including names Kafka forbids."""
    legal = st.text(alphabet=_LEGAL, max_size=20).map(lambda s: f"F{SERIAL}_{s}")
    if not broken:
        return _weighted((3, st.just(_MISSING)), (2, legal), (1, st.just(f"F{SERIAL}_" + "x" * 242))).map(_ok)
    forbidden = st.one_of(
        st.sampled_from(
            [
                "",
                ".",
                "..",
                "__consumer_offsets",
                "__transaction_state",
                "__share_group_state",
                "__cluster_metadata",
                ANCHOR.replace("_", "."),
                "a/b",
                "a b",
                "topic\x00",
                "tópico",
                "\u0442\u043e\u043f\u0438\u043a",
                "\U0001f984",
                f"F{SERIAL}_" + "x" * 243,
                "t" * 10_240,
            ]
        ),
        st.text(max_size=12),
    )
    collision = ANCHOR.replace("_", ".")
    return _weighted(
        (3, forbidden.map(lambda n: _Drawn(n, _kafka_invalid_name(n)))),
        (2, st.just(_Drawn(collision, _kafka_invalid_name(collision)))),
        (1, st.just(_Drawn(f"__consumer.offsets{SERIAL}"))),
        (1, _wrong(str)),
    )


def _clusters(broken: bool) -> st.SearchStrategy[_Drawn]:
    if not broken:
        return st.sampled_from([_MISSING, CLUSTER_NAME, ""]).map(_ok)
    return _weighted(
        (3, st.sampled_from(["nope", "LOCAL", "lócal", "local ", "x" * 253, "x" * 254])),
        (1, _wrong_types(but=str)),
    ).map(_bad("a cluster the operator does not serve, or not a string"))


# ------------------------------------------------------------------ KafkaTopic numbers


def _partitions(broken: bool) -> st.SearchStrategy[_Drawn]:
    if not broken:
        return st.integers(min_value=1, max_value=SAFE_SMALL_PARTITIONS).map(_ok)
    extreme = st.sampled_from([0, -1, -(2**31), INT_MAX, 2**31, 2**63, 1_000_001]).map(
        lambda n: _Drawn(n, "out of range" if n < 1 or n > 1_000_000 else None)
    )
    return _weighted(
        (2, st.sampled_from(UNWRITABLE_PARTITIONS).map(_ok)),
        (2, extreme),
        # Between small and unwritable: kept only when something else is invalid (module doc).
        (1, st.sampled_from([7, 13, 64, 200]).map(_ok)),
        (1, _wrong(int)),
    )


def _replication_factors(broken: bool) -> st.SearchStrategy[_Drawn]:
    if not broken:
        return st.integers(min_value=1, max_value=3).map(_ok)
    return _weighted(
        (2, st.sampled_from([4, 5, 32767]).map(_bad("more replicas than the 3 brokers"))),
        (1, st.sampled_from([0, -1, 32768, 2**31, 2**63]).map(_bad("out of range"))),
        (1, _wrong(int)),
    )


# ------------------------------------------------------------------ topic config


def _int_values(key: TopicConfigKey) -> tuple[st.SearchStrategy[_Drawn], st.SearchStrategy[_Drawn]]:
    top = INT_MAX if key.type is ConfigType.INT else LONG_MAX
    low = int(key.minimum) if key.minimum is not None else -top - 1
    high = int(key.maximum) if key.maximum is not None else top
    if key.name == "compression.gzip.level":
        return st.sampled_from(["-1", "1", " 9"]).map(_ok), st.sampled_from(["0", "10", "-2"]).map(
            _bad("not -1 or 1 to 9")
        )
    numbers = st.one_of(
        st.sampled_from([low, high, min(low + 1, high)]),
        st.integers(min_value=low, max_value=min(high, low + 10_000)),
    )
    spelled = numbers.flatmap(
        lambda n: st.sampled_from(
            [str(n), f" {n} ", f"+{n}" if n >= 0 else str(n), f"0{n}" if n >= 0 else str(n)]
        )
    )
    # Java's Integer.parseInt reads any Unicode digit: Kafka takes these (the operator may refuse them).
    unicode_digits = st.sampled_from(["\uff11\uff12", "\u0663", "\u0967\u0966"])
    bad_numbers = [n for n in (low - 1, high + 1, top + 1, -top - 2) if not low <= n <= high]
    bad = st.one_of(
        st.sampled_from(bad_numbers).map(str),
        st.sampled_from(["", " ", "abc", "1.5", "5e3", "0x10", "NaN", "9" * 30, "1_000", "--1"]),
    )
    why = f"not a {key.type} in range"
    return st.one_of(spelled, unicode_digits).map(_ok), bad.map(_bad(why))


def _double_values() -> tuple[st.SearchStrategy[_Drawn], st.SearchStrategy[_Drawn]]:
    good = st.sampled_from(["0", "1", "0.5", "1.0", ".5", "5e-1", "0.5d", " 0.25 ", "1e-400", "-0.0", "NaN"])
    bad = st.sampled_from(["1.0000001", "-0.1", "Infinity", "-Infinity", "abc", "", "0,5", "1e400", "0.5.1"])
    return good.map(_ok), bad.map(_bad("not a number in [0, 1]"))


def _boolean_values() -> tuple[st.SearchStrategy[_Drawn], st.SearchStrategy[_Drawn]]:
    good = st.sampled_from(["true", "false", "TRUE", " False ", "tRuE"])
    bad = st.sampled_from(["yes", "1", "0", "", "tru", "truee", "on"])
    return good.map(_ok), bad.map(_bad("not true or false"))


def _choice_values(key: TopicConfigKey) -> tuple[st.SearchStrategy[_Drawn], st.SearchStrategy[_Drawn]]:
    choices = key.choices
    good: st.SearchStrategy[str] = st.sampled_from(choices)
    if key.type is ConfigType.LIST:
        good = st.lists(st.sampled_from(choices), min_size=1, max_size=2, unique=True).map(", ".join)
    others = ["none", "org.apache.kafka.common.Fake", "x" * 4096]
    others += [",", "compact,,delete"] if key.type is ConfigType.LIST else [""]
    bad = st.sampled_from([c.upper() for c in choices if c.upper() != c] + others)
    return good.map(_ok), bad.map(_bad(f"not one of {', '.join(choices)}"))


def _values_of(key: TopicConfigKey) -> tuple[st.SearchStrategy[_Drawn], st.SearchStrategy[_Drawn]]:
    """Right and wrong values for one known key."""
    if key.type in (ConfigType.INT, ConfigType.LONG):
        return _int_values(key)
    if key.type is ConfigType.DOUBLE:
        return _double_values()
    if key.type is ConfigType.BOOLEAN:
        return _boolean_values()
    if key.choices:
        return _choice_values(key)
    if key.name.endswith("throttled.replicas"):  # the operator's own: never from a spec
        owned = st.sampled_from(["*", "0:1", "", "0:1,1:2"]).map(_bad("a throttle list the operator owns"))
        return owned, owned
    if key.name == "message.format.version":
        return (
            st.sampled_from(["0.8.0", "0.10.2-IV0", "2.8", "3.0-IV1"]).map(_ok),
            st.sampled_from(["", "abc", "99.0", "3.0-IV99"]).map(_bad("not a Kafka version")),
        )
    raise AssertionError(f"no value strategy for {key.name} ({key.type})")


_VALUES = {name: _values_of(key) for name, key in TOPIC_CONFIG_KEYS.items()}
_PASSWORD = 'org.apache.kafka.common.security.plain.PlainLoginModule required password="hunter2";'


def _config_entries(broken: bool) -> st.SearchStrategy[tuple[str, _Drawn]]:
    """One ``spec.config`` entry: a known key with a right value, or something wrong."""
    names = sorted(name for name in _VALUES if not name.endswith("throttled.replicas"))
    right = st.sampled_from(names).flatmap(lambda k: st.tuples(st.just(k), _VALUES[k][0]))
    if not broken:
        return right
    wrong_value = st.sampled_from(sorted(_VALUES)).flatmap(lambda k: st.tuples(st.just(k), _VALUES[k][1]))
    unknown = st.sampled_from(
        [
            "ssl.keystore.password",
            "sasl.jaas.config",
            "value.serializer",
            "principal.builder.class",
            "log.retention.hours",
            "retention.msx",
            "retention",
            "confluent.placement.constraints",
            "k" * 10_240,
            "a." * 50 + "b",
        ]
    ).map(lambda k: (k, _Drawn(_PASSWORD, f"{k[:30]} is not a topic config")))
    forbidden_key = st.sampled_from(
        ["Retention.ms", "retention_ms", "retention-ms", "", " ", "ré.tention", "\U0001f984"]
    ).map(lambda k: (k, _Drawn("1000", "a config key the CRD forbids")))
    wrong_type = st.sampled_from(names).flatmap(
        lambda k: _wrong_types(but=str).map(lambda v: (k, _Drawn(v, "a config value that is not a string")))
    )
    too_long = st.sampled_from([4097, 10_240]).map(
        lambda n: ("retention.ms", _Drawn("1" * n, "a value over 4096 characters"))
    )
    return _weighted((3, wrong_value), (3, unknown), (1, forbidden_key), (1, wrong_type), (1, too_long))


def _configs(broken: bool) -> st.SearchStrategy[_Drawn]:
    def combine(entries: list[tuple[str, _Drawn]]) -> _Drawn:
        config = {k: d.value for k, d in entries}
        reasons = [d.invalid for k, d in entries if d.invalid and config.get(k) is d.value]
        return _Drawn(config, "; ".join(r for r in reasons if r) or None)

    if not broken:
        return _weighted(
            (2, st.just(_Drawn(_MISSING))),
            (1, st.just(_Drawn({}))),
            (4, st.lists(_config_entries(False), min_size=1, max_size=4).map(combine)),
        )
    some_wrong = st.tuples(
        st.lists(_config_entries(False), max_size=3), st.lists(_config_entries(True), min_size=1, max_size=3)
    ).map(lambda both: combine(both[0] + both[1]))
    huge = st.sampled_from([100, 101]).map(
        lambda n: _Drawn({f"unknown.key{i}": "v" * 40 for i in range(n)}, f"{n} unknown keys")
    )
    every_key_at_4096 = st.just(
        _Drawn({f"k{i}.{'x' * 40}": "v" * 4096 for i in range(100)}, "100 unknown keys, 4096 characters each")
    )
    return st.one_of(some_wrong, some_wrong, huge, every_key_at_4096, _wrong(dict))


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
def _assignment(draw: st.DrawFn, partitions: Any, rf: Any, broken: bool) -> _Drawn:
    """An assignment for ``partitions`` x ``rf`` on brokers 1-3; when broken, with one flaw."""
    count = partitions if _is_int(partitions) and 1 <= partitions <= SAFE_SMALL_PARTITIONS else 3
    width = rf if _is_int(rf) and 1 <= rf <= 3 else 2
    replicas = st.permutations(BROKERS).map(lambda p: list(p[:width]))
    assignment: dict[str, Any] = {str(p): draw(replicas) for p in range(count)}
    mismatch = None
    if count != partitions or width != rf:
        mismatch = f"{count} x {width} entries for {partitions!r} partitions x {rf!r} replicas"
    if not broken:
        return _Drawn(assignment, mismatch)
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
        return _Drawn(assignment, "10000 partitions, one on broker 4 (not registered)")
    return _Drawn(assignment, f"an assignment with a flaw ({flaw})")


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
    name = draw(_resource_names("metadata.name" in broken))
    topic_name = draw(_topic_names("topicName" in broken))
    _set(spec, "topicName", topic_name, bad)
    if name.invalid and topic_name.value is _MISSING:  # with topicName, neither limit applies
        bad.append(f"metadata.name: {name.invalid}")
    partitions = draw(_partitions("partitions" in broken))
    rf = draw(_replication_factors("replicationFactor" in broken))
    _set(spec, "replicationFactor", rf, bad)
    _set(spec, "config", draw(_configs("config" in broken)), bad)
    if "assignment" in broken or draw(st.sampled_from([False, False, False, True])):
        if draw(st.sampled_from([False, False, False, False, True])):
            _set(spec, "assignment", draw(_wrong(dict)), bad)
        else:
            _set(
                spec, "assignment", draw(_assignment(partitions.value, rf.value, "assignment" in broken)), bad
            )
    placements = [_MISSING, "Kafka", "Balanced"]
    _set(
        spec,
        "placement",
        draw(st.sampled_from(["balanced", "", "Random", 1]).map(_bad("not Kafka or Balanced")))
        if "placement" in broken
        else draw(st.sampled_from(placements).map(_ok)),
        bad,
    )
    _set(
        spec,
        "deletionPolicy",
        draw(st.sampled_from(["delete", "Keep", "", 0]).map(_bad("not Delete or Retain")))
        if "deletionPolicy" in broken
        else draw(st.sampled_from([_MISSING, "Delete", "Retain"]).map(_ok)),
        bad,
    )
    _set(spec, "cluster", draw(_clusters("cluster" in broken)), bad)
    if "unknown" in broken:
        spec["unknownField"] = draw(json_values)  # pruned by the API server: harmless
    count = partitions.value
    if _is_int(count) and SAFE_SMALL_PARTITIONS < count < UNWRITABLE_PARTITIONS[0] and not bad:
        # Between small and unwritable needs another reason to fail (module doc).
        partitions = _Drawn(SAFE_SMALL_PARTITIONS)
        if isinstance(spec.get("assignment"), dict):
            spec["assignment"] = {str(p): [1 + p % 3] for p in range(SAFE_SMALL_PARTITIONS)}
            spec["replicationFactor"] = 1
    _set(spec, "partitions", partitions, bad)
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
                st.just(_Drawn(before - 1, "partitions decreased")),
                st.sampled_from(UNWRITABLE_PARTITIONS).map(_ok),
                st.sampled_from([0, 2**31]).map(_bad("out of range")),
                _wrong(int),
            )
        )
    else:
        partitions = _Drawn(min(SAFE_SMALL_PARTITIONS, before + draw(st.integers(0, 2))))
    _set(new, "partitions", partitions, bad)
    assignment = new.get("assignment")
    if (
        isinstance(assignment, dict)
        and _is_int(partitions.value)
        and partitions.value <= SAFE_SMALL_PARTITIONS
    ):
        width = len(next(iter(assignment.values())))
        for p in range(before, partitions.value):
            assignment[str(p)] = draw(st.permutations(BROKERS).map(lambda b: list(b[:width])))
    if "assignment" in broken and isinstance(assignment, dict):
        flawed = draw(_assignment(partitions.value, new["replicationFactor"], True))
        new["assignment"] = flawed.value
        bad.append(f"assignment: {flawed.invalid}")
    config = draw(_configs("config" in broken))
    new.pop("config", None)
    _set(new, "config", config, bad)
    if "topicName" in broken:
        new["topicName"] = f"G{SERIAL}_renamed"
        bad.append("topicName changed")
    if "cluster" in broken:
        _set(new, "cluster", draw(_clusters(True)), bad)
    if "deletionPolicy" in broken:
        new["deletionPolicy"] = draw(st.sampled_from(["delete", "Keep", ""]))
        bad.append("deletionPolicy not Delete or Retain")
    return new, bad


# ------------------------------------------------------------------ PartitionReassignment

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


def _anchor_partition(broken: bool) -> st.SearchStrategy[_Drawn]:
    if not broken:
        return st.integers(min_value=0, max_value=ANCHOR_PARTITIONS - 1).map(_ok)
    return st.one_of(
        st.sampled_from([3, INT_MAX]).map(_bad(f"{ANCHOR} has {ANCHOR_PARTITIONS} partitions")),
        st.sampled_from([-1, 2**31, 2**63]).map(_bad("out of range")),
        _wrong(int),
    )


def _replica_list(broken: bool) -> st.SearchStrategy[_Drawn]:
    valid = st.integers(min_value=1, max_value=3).flatmap(
        lambda n: st.permutations(BROKERS).map(lambda p: list(p[:n]))
    )
    if not broken:
        return valid.map(_ok)
    return st.one_of(
        valid.map(lambda r: _Drawn([*r, r[0]], "a broker twice")),
        st.tuples(valid, st.sampled_from([0, 4, 999, INT_MAX])).map(
            lambda rb: _Drawn([*rb[0][:-1], rb[1]], f"broker {rb[1]} is not registered")
        ),
        valid.map(lambda r: _Drawn([*r[:-1], -1], "a negative broker id")),
        valid.map(lambda r: _Drawn([*r[:-1], 2**31], "a broker id beyond 32 bits")),
        st.just(_Drawn([], "an empty replica list")),
        st.just(_Drawn(list(range(1, 34)), "33 replicas")),
        _wrong(list),
    )


def _explicit_topic(broken: bool) -> st.SearchStrategy[_Drawn]:
    if not broken:
        return st.just(_Drawn(ANCHOR))
    return st.one_of(
        st.just(_Drawn(f"missing-{SERIAL}", "a topic that does not exist")),
        st.sampled_from(["", "x" * 250]).map(_bad("a topic name the CRD forbids")),
        st.text(min_size=1, max_size=10).map(_bad("a topic that does not exist")),
        _wrong(str),
    )


@st.composite
def _explicit_partitions(draw: st.DrawFn, broken: bool) -> _Drawn:
    """``spec.partitions``: entries for the anchor's partitions; when broken, some flawed."""
    reasons: list[str] = []
    entries: list[Any] = []
    partitions = draw(st.lists(st.integers(0, ANCHOR_PARTITIONS - 1), min_size=1, max_size=3, unique=True))
    for partition in partitions:
        flawed = broken and draw(st.booleans())
        part = draw(st.sampled_from(["topic", "partition", "replicas", "field"])) if flawed else ""
        topic = draw(_explicit_topic(part == "topic"))
        number = draw(_anchor_partition(True)) if part == "partition" else _Drawn(partition)
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
    return _Drawn(entries, "; ".join(reasons) or None)


@st.composite
def _reassignment_json(draw: st.DrawFn, broken: bool) -> _Drawn:
    partitions = draw(_explicit_partitions(broken and draw(st.booleans())))
    document: Any = {"version": 1, "partitions": partitions.value}
    if draw(st.booleans()):
        for entry in partitions.value:
            if isinstance(entry, dict) and isinstance(entry.get("replicas"), list):
                entry["log_dirs"] = ["any"] * len(entry["replicas"])
    how = draw(st.sampled_from(["mutated", "not json", "huge", "version"])) if broken else "as is"
    if how == "as is":
        return _Drawn(json.dumps(document), partitions.invalid)
    if how == "mutated":
        return _Drawn(json.dumps(mutate(draw(st.data()), document)))  # valid or not: either answer
    if how == "not json":
        text = draw(st.sampled_from(["", "{", "[]", "null", "{}", "nan", "{'version': 1}", "\u0000"]))
        return _Drawn(text, "not a reassignment document")
    if how == "huge":  # the version is echoed in the refusal: up to 1 MiB of message to report
        size = draw(st.sampled_from([300_000, 1_048_576, 1_048_577]))
        return _Drawn('{"version":"' + "v" * (size - 30) + '","partitions":[]}', "a huge document")
    return _Drawn(json.dumps({**document, "version": draw(json_values)}), None)


def _broker_lists(broken: bool) -> st.SearchStrategy[_Drawn]:
    valid = st.lists(st.sampled_from(BROKERS), min_size=1, max_size=3, unique=True)
    if not broken:
        return valid.map(_ok)
    return st.one_of(
        valid.map(lambda b: _Drawn([*b, b[0]], "a broker twice")),
        st.sampled_from([[4], [0], [INT_MAX], [1, 999]]).map(_bad("a broker that is not registered")),
        st.sampled_from([[-1], [2**31], []]).map(_bad("out of range or empty")),
        st.just(_Drawn(list(range(1001)), "over 1000 brokers")),
        _wrong(list),
    )


def _topic_lists(broken: bool) -> st.SearchStrategy[_Drawn]:
    if not broken:
        return st.just(_Drawn([ANCHOR]))
    return st.one_of(
        st.just(_Drawn([ANCHOR, f"missing-{SERIAL}"], "a topic that does not exist")),
        st.sampled_from([[""], [ANCHOR, ANCHOR], [], ["x" * 250]]).map(_bad("a list the CRD forbids")),
        st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=3, unique=True).map(
            _bad("topics that do not exist")
        ),
        _wrong(list),
    )


def _topic_regexes(broken: bool) -> st.SearchStrategy[_Drawn]:
    if not broken:
        return st.sampled_from([re.escape(ANCHOR), ".*"]).map(_ok)
    return st.one_of(
        st.sampled_from(["(", "[a-", "*", "(?P<x>", "a{2,1}"]).map(_bad("not a regular expression")),
        st.sampled_from(["nothing-matches-#####", "(a+)+$", "x" * 1024]).map(_bad("selects no topic")),
        st.sampled_from(["x" * 1025, ""]).map(_bad("a length the CRD forbids")),
        _wrong(str),
    )


def _replication_factor_maps(broken: bool) -> st.SearchStrategy[_Drawn]:
    if not broken:
        return st.integers(min_value=1, max_value=3).map(lambda rf: _Drawn({ANCHOR: rf}))
    return st.one_of(
        st.sampled_from([4, 32767]).map(lambda rf: _Drawn({ANCHOR: rf}, "more replicas than brokers")),
        st.sampled_from([0, -1, 32768, 2**31]).map(lambda rf: _Drawn({ANCHOR: rf}, "out of range")),
        st.just(_Drawn({f"missing-{SERIAL}": 2}, "a topic that does not exist")),
        st.just(_Drawn({}, "empty")),
        st.just(_Drawn({f"t{i}": 1 for i in range(10_001)}, "over 10000 topics")),
        _wrong(dict),
        _wrong_types(but=int).map(lambda v: _Drawn({ANCHOR: v}, "not an integer")),
    )


def _batches(broken: bool) -> st.SearchStrategy[_Drawn]:
    if not broken:
        limits = st.fixed_dictionaries(
            {},
            optional={
                "maxPartitions": st.sampled_from([1, 2, 50, 10_000]),
                "maxMovesPerBroker": st.sampled_from([1, 5, 1000]),
            },
        )
        return st.one_of(st.just(_Drawn(_MISSING)), limits.map(_ok))
    return st.one_of(
        st.sampled_from(
            [
                {"maxPartitions": 0},
                {"maxPartitions": 10_001},
                {"maxMovesPerBroker": 1001},
                {"maxMovesPerBroker": -1},
            ]
        ).map(_bad("a limit out of range")),
        _wrong_types(but=int).map(lambda v: _Drawn({"maxPartitions": v}, "not an integer")),
        _wrong(dict),
    )


def _choice(broken: bool, valid: list[Any], wrong: list[Any], why: str) -> st.SearchStrategy[_Drawn]:
    return st.sampled_from(wrong).map(_bad(why)) if broken else st.sampled_from(valid).map(_ok)


def _numbers(broken: bool, valid: list[int], wrong: list[int]) -> st.SearchStrategy[_Drawn]:
    if not broken:
        return st.sampled_from([_MISSING, *valid]).map(_ok)
    return st.one_of(st.sampled_from(wrong).map(_bad("out of range")), _wrong(int))


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
                st.sampled_from(["explicit", "", "Rebalance ", "Shrink"]).map(_bad("not a mode")),
                _wrong(str),
                st.just(_Drawn(_MISSING, "no mode")),
            )
        )
    else:
        mode = draw(st.sampled_from(MODES).map(_ok))
    _set(spec, "mode", mode, bad)
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
    builders: dict[str, Callable[[bool], st.SearchStrategy[_Drawn]]] = {
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
            _set(spec, name, draw(builders[name](name == flawed)), bad)
    approval = _choice(
        "approval" in broken, [_MISSING, "Auto", "Manual"], ["auto", "", 1], "not Manual or Auto"
    )
    _set(spec, "approval", draw(approval), bad)
    _set(
        spec,
        "throttle",
        draw(_numbers("throttle" in broken, [1, 1_000_000, LONG_MAX], [0, -1, 2**63, 2**64])),
        bad,
    )
    _set(spec, "batch", draw(_batches("batch" in broken)), bad)
    election = _choice(
        "preferredLeaderElection" in broken, [_MISSING, True, False], ["true", 1, 0], "not a boolean"
    )
    _set(spec, "preferredLeaderElection", draw(election), bad)
    rack = _choice(
        "rackPolicy" in broken, [_MISSING, "Enforce", "Warn"], ["enforce", "", 0], "not Enforce or Warn"
    )
    _set(spec, "rackPolicy", draw(rack), bad)
    _set(spec, "tolerance", draw(_numbers("tolerance" in broken, [0, 1, INT_MAX], [-1, 2**31])), bad)
    _set(spec, "cluster", draw(_clusters("cluster" in broken)), bad)
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
        "metadata": {"name": f"r{SERIAL}-" + draw(st.text(alphabet=_DNS, max_size=10)) + "x"},
        "spec": spec,
    }
    case = SpecCase("PartitionReassignment", body, bad)
    if not bad and draw(st.booleans()):
        if draw(st.booleans()):
            case.update, case.update_invalid = draw(_reassignment_spec())
        else:
            moved = draw(_clusters(True))
            case.update = {**spec, "cluster": moved.value}
            case.update_invalid = [f"cluster: {moved.invalid}"]
    return case


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


def _reassignment(name: str, spec: dict[str, Any], *invalid: str) -> SpecCase:
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PartitionReassignment",
        "metadata": {"name": name},
        "spec": spec,
    }
    return SpecCase("PartitionReassignment", body, list(invalid))


#: The largest values the CRDs allow, sent in every run (Hypothesis draws them rarely or never).
EXTREME_TOPIC_CASES = (
    _topic(f"x{SERIAL}-million", {"partitions": 1_000_000, "replicationFactor": 3}),
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
