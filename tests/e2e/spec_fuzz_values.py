"""Hypothesis strategies for hostile KafkaTopic and PartitionReassignment specs (issue #17, item 4):
what both kinds share. The KafkaTopic strategies are in ``spec_fuzz_topics`` (their configs in
``spec_fuzz_configs``), the PartitionReassignment ones in ``spec_fuzz_reassignments``.

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
(88,307 partitions, 100 config values of 4096 characters, a 1 MiB reassignmentJson, 20,000
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
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

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
#: The CRD's spec.partitions maximum (a znode of more cannot fit in a ZooKeeper request at any RF).
PARTITIONS_MAX = 88_307
UNWRITABLE_PARTITIONS = (PARTITIONS_MAX,)

MISSING: Any = object()
LEGAL_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
DNS_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-"


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
class Drawn:
    """A field value and why it makes the spec invalid (None: it may be fine)."""

    value: Any
    invalid: str | None = None


def plain(value: Any) -> Drawn:
    return Drawn(value)


def refused_as(why: str) -> Callable[[Any], Drawn]:
    return lambda value: Drawn(value, why)


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of ``choices``, each ``weight`` times as likely; the first is Hypothesis' simplest."""
    return st.sampled_from([s for weight, s in choices for _ in range(weight)]).flatmap(lambda s: s)


def put(spec: dict[str, Any], key: str, drawn: Drawn, bad: list[str]) -> None:
    if drawn.value is not MISSING:
        spec[key] = drawn.value
    if drawn.invalid:
        bad.append(f"{key}: {drawn.invalid}")


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def wrong_types(*, but: type) -> st.SearchStrategy[Any]:
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
        return values.filter(lambda v: not is_int(v))
    return values.filter(lambda v: not isinstance(v, but))


def wrong_type(but: type) -> st.SearchStrategy[Drawn]:
    return wrong_types(but=but).map(refused_as(f"not a {but.__name__}"))


# ------------------------------------------------------------------ names and cluster


def resource_names(broken: bool) -> st.SearchStrategy[Drawn]:
    """``metadata.name``: always a valid Kubernetes name (the fuzz is about the spec)."""
    short = st.text(alphabet=DNS_CHARS, max_size=20).map(lambda s: f"f{SERIAL}-{s}x")
    dotted = st.integers(min_value=1, max_value=5).map(lambda n: f"f{SERIAL}" + ".a" * n)
    if not broken:
        return st.one_of(short, dotted, st.just(f"f{SERIAL}-" + "a" * 242)).map(plain)
    return st.one_of(
        st.sampled_from([250, 253]).map(lambda n: Drawn(f"f{SERIAL}-" + "a" * (n - 7), "longer than 249")),
        st.just(Drawn(ANCHOR.replace("_", "."), f"collides with topic {ANCHOR}")),
    )


def kafka_invalid_name(name: str) -> str | None:
    if name in ("", ".", ".."):
        return "empty, '.' or '..'"
    if len(name.encode("utf-16-le", "surrogatepass")) // 2 > 249:
        return "longer than 249"
    if not set(name) <= set(LEGAL_CHARS):
        return "characters Kafka does not allow"
    if name in ("__consumer_offsets", "__transaction_state", "__share_group_state", "__cluster_metadata"):
        return "a Kafka-internal topic"
    if name != ANCHOR and name.replace(".", "_") == ANCHOR:
        return f"collides with topic {ANCHOR}"
    return None


def topic_names(broken: bool) -> st.SearchStrategy[Drawn]:
    """``spec.topicName``, including names Kafka forbids."""
    legal = st.text(alphabet=LEGAL_CHARS, max_size=20).map(lambda s: f"F{SERIAL}_{s}")
    if not broken:
        return weighted((3, st.just(MISSING)), (2, legal), (1, st.just(f"F{SERIAL}_" + "x" * 242))).map(plain)
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
    return weighted(
        (3, forbidden.map(lambda n: Drawn(n, kafka_invalid_name(n)))),
        (2, st.just(Drawn(collision, kafka_invalid_name(collision)))),
        (1, st.just(Drawn(f"__consumer.offsets{SERIAL}"))),
        (1, wrong_type(str)),
    )


def clusters(broken: bool) -> st.SearchStrategy[Drawn]:
    if not broken:
        return st.sampled_from([MISSING, CLUSTER_NAME, ""]).map(plain)
    return weighted(
        (3, st.sampled_from(["nope", "LOCAL", "lócal", "local ", "x" * 253, "x" * 254])),
        (1, wrong_types(but=str)),
    ).map(refused_as("a cluster the operator does not serve, or not a string"))
