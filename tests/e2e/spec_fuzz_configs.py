"""``spec.config`` of a KafkaTopic for the spec fuzzing: every key of Kafka 3.9's topic config table
(``domain.kafka.topic_configs``, generated from Kafka's own ``LogConfig``) with right and wrong
values for its type, plus unknown, broker-level, password-like and class-like keys, keys the CRD
forbids, values of other JSON types and over 4096 characters, and maps of 100 and 101 keys.

Pure: no I/O.
"""

from __future__ import annotations

from hypothesis import strategies as st

from kafka_zk_operator.domain.kafka.topic_configs import TOPIC_CONFIG_KEYS, ConfigType, TopicConfigKey
from tests.e2e.spec_fuzz_values import (
    INT_MAX,
    LONG_MAX,
    MISSING,
    Drawn,
    plain,
    refused_as,
    weighted,
    wrong_type,
    wrong_types,
)


def _int_values(key: TopicConfigKey) -> tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]:
    top = INT_MAX if key.type is ConfigType.INT else LONG_MAX
    low = int(key.minimum) if key.minimum is not None else -top - 1
    high = int(key.maximum) if key.maximum is not None else top
    if key.name == "compression.gzip.level":
        return st.sampled_from(["-1", "1", " 9"]).map(plain), st.sampled_from(["0", "10", "-2"]).map(
            refused_as("not -1 or 1 to 9")
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
    return st.one_of(spelled, unicode_digits).map(plain), bad.map(refused_as(why))


def _double_values() -> tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]:
    good = st.sampled_from(["0", "1", "0.5", "1.0", ".5", "5e-1", "0.5d", " 0.25 ", "1e-400", "-0.0", "NaN"])
    bad = st.sampled_from(["1.0000001", "-0.1", "Infinity", "-Infinity", "abc", "", "0,5", "1e400", "0.5.1"])
    return good.map(plain), bad.map(refused_as("not a number in [0, 1]"))


def _boolean_values() -> tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]:
    good = st.sampled_from(["true", "false", "TRUE", " False ", "tRuE"])
    bad = st.sampled_from(["yes", "1", "0", "", "tru", "truee", "on"])
    return good.map(plain), bad.map(refused_as("not true or false"))


def _choice_values(key: TopicConfigKey) -> tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]:
    choices = key.choices
    good: st.SearchStrategy[str] = st.sampled_from(choices)
    if key.type is ConfigType.LIST:
        good = st.lists(st.sampled_from(choices), min_size=1, max_size=2, unique=True).map(", ".join)
    others = ["none", "org.apache.kafka.common.Fake", "x" * 4096]
    others += [",", "compact,,delete"] if key.type is ConfigType.LIST else [""]
    bad = st.sampled_from([c.upper() for c in choices if c.upper() != c] + others)
    return good.map(plain), bad.map(refused_as(f"not one of {', '.join(choices)}"))


def _values_of(key: TopicConfigKey) -> tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]:
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
        owned = st.sampled_from(["*", "0:1", "", "0:1,1:2"]).map(
            refused_as("a throttle list the operator owns")
        )
        return owned, owned
    if key.name == "message.format.version":
        return (
            st.sampled_from(["0.8.0", "0.10.2-IV0", "2.8", "3.0-IV1"]).map(plain),
            st.sampled_from(["", "abc", "99.0", "3.0-IV99"]).map(refused_as("not a Kafka version")),
        )
    raise AssertionError(f"no value strategy for {key.name} ({key.type})")


_VALUES = {name: _values_of(key) for name, key in TOPIC_CONFIG_KEYS.items()}
_PASSWORD = 'org.apache.kafka.common.security.plain.PlainLoginModule required password="hunter2";'


def _config_entries(broken: bool) -> st.SearchStrategy[tuple[str, Drawn]]:
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
    ).map(lambda k: (k, Drawn(_PASSWORD, f"{k[:30]} is not a topic config")))
    forbidden_key = st.sampled_from(
        ["Retention.ms", "retention_ms", "retention-ms", "", " ", "ré.tention", "\U0001f984"]
    ).map(lambda k: (k, Drawn("1000", "a config key the CRD forbids")))
    wrong_type = st.sampled_from(names).flatmap(
        lambda k: wrong_types(but=str).map(lambda v: (k, Drawn(v, "a config value that is not a string")))
    )
    too_long = st.sampled_from([4097, 10_240]).map(
        lambda n: ("retention.ms", Drawn("1" * n, "a value over 4096 characters"))
    )
    return weighted((3, wrong_value), (3, unknown), (1, forbidden_key), (1, wrong_type), (1, too_long))


def configs(broken: bool) -> st.SearchStrategy[Drawn]:
    def combine(entries: list[tuple[str, Drawn]]) -> Drawn:
        config = {k: d.value for k, d in entries}
        reasons = [d.invalid for k, d in entries if d.invalid and config.get(k) is d.value]
        return Drawn(config, "; ".join(r for r in reasons if r) or None)

    if not broken:
        return weighted(
            (2, st.just(Drawn(MISSING))),
            (1, st.just(Drawn({}))),
            (4, st.lists(_config_entries(False), min_size=1, max_size=4).map(combine)),
        )
    some_wrong = st.tuples(
        st.lists(_config_entries(False), max_size=3), st.lists(_config_entries(True), min_size=1, max_size=3)
    ).map(lambda both: combine(both[0] + both[1]))
    huge = st.sampled_from([100, 101]).map(
        lambda n: Drawn({f"unknown.key{i}": "v" * 40 for i in range(n)}, f"{n} unknown keys")
    )
    every_key_at_4096 = st.just(
        Drawn({f"k{i}.{'x' * 40}": "v" * 4096 for i in range(100)}, "100 unknown keys, 4096 characters each")
    )
    return st.one_of(some_wrong, some_wrong, huge, every_key_at_4096, wrong_type(dict))
