"""Topic-selection patterns: the same answers as ``re.fullmatch``, in bounded time and memory."""

from __future__ import annotations

import random
import re
import time
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import topic_automaton, topic_patterns
from kafka_zk_operator.domain.reassignment.request import parse_request

#: Kafka's legal topic characters, plus a newline and a space for the anchors' corner cases.
_CHARS = "ab.c-_1X \n"
_ATOMS = [
    "a",
    "b",
    ".",
    r"\.",
    "[a-c]",
    "[^a]",
    r"\d",
    r"\w",
    r"\W",
    "-",
    "_",
    "X",
    r"\b",
    r"\B",
    "^",
    "$",
    r"\Z",
]


def _patterns() -> st.SearchStrategy[str]:
    atom = st.sampled_from(_ATOMS)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map("|".join),
            inner.map(lambda p: f"(?:{p})"),
            inner.map(lambda p: f"({p})"),
            st.tuples(inner, st.sampled_from(["*", "+", "?", "*?", "{2}", "{1,3}", "{0,2}?", "{2,}"])).map(
                lambda t: f"(?:{t[0]}){t[1]}"
            ),
        )

    plain = st.recursive(atom, extend, max_leaves=8)
    return st.tuples(st.sampled_from(["", "(?i)", "(?a)", "(?m)", "(?s)"]), plain).map("".join)


@settings(max_examples=400, deadline=None)
@given(pattern=_patterns(), names=st.lists(st.text(alphabet=_CHARS, max_size=7), min_size=1, max_size=12))
def test_same_answers_as_re_fullmatch(pattern: str, names: list[str]) -> None:
    matcher = topic_patterns.compile_matcher(pattern)
    for name in names:
        assert matcher(name) == (re.fullmatch(pattern, name) is not None), (pattern, name)


def test_names_and_a_regex_together_match_as_their_union() -> None:
    matcher = topic_patterns.compile_matcher(r"orders\.eu|orders\-us|(?:logs-[0-9]+)")
    assert [matcher(n) for n in ("orders.eu", "orders-us", "logs-12", "logs-", "orders.us")] == [
        True,
        True,
        True,
        False,
        False,
    ]


#: Classic catastrophic-backtracking patterns: Python's re needs 2^n or n^k steps on these names.
PATHOLOGICAL = [
    r"(a+)+$",
    r"(a|a)*b",
    r"(a*)*b",
    r"(a|aa)+c",
    r"(.*a){12}x",
    r"a*a*a*a*a*a*a*a*a*b",
    r"(\w+\d*)+!",
]


@pytest.mark.parametrize("pattern", PATHOLOGICAL)
def test_a_pathological_pattern_finishes_at_once(pattern: str) -> None:
    matcher = topic_patterns.compile_matcher(pattern)
    started = time.perf_counter()
    assert not matcher("a" * 248 + "!") or pattern.endswith("!")
    assert time.perf_counter() - started < 0.5


def test_nested_quantifiers_expand_linearly() -> None:
    """200 nested ``(?:...)+`` (1,004 characters, the CRD allows 1,024): one copy per level."""
    matcher = topic_patterns.compile_matcher("(?:" * 200 + "a+" + ")+" * 200 + "b")
    assert matcher("a" * 200 + "b") and not matcher("a" * 249)


def test_the_step_budget_bounds_any_pattern_over_many_names() -> None:
    """A pattern whose automaton grows exponentially (the 20th character from the end is an a)
    over distinct names: the work stops at the budget with a clear reason, never later."""
    matcher = topic_patterns.compile_matcher(r"[ab]*a[ab]{19}")
    rng = random.Random(7)
    started = time.perf_counter()
    with pytest.raises(topic_automaton.PatternTooCostly, match="too costly to match"):
        for _ in range(40_000):
            matcher("".join(rng.choice("ab") for _ in range(249)))
    assert time.perf_counter() - started < 30


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        (r"(a)\1", "backreference"),
        (r"(?=a)a", "lookahead"),
        (r"(?!__).*", "negative lookahead"),
        (r"(?<=a)b", "lookahead or lookbehind"),
        (r"(a)?(?(1)b|c)", "conditional"),
        (r"(?>a+)", "atomic group"),
        (r"a++", "possessive"),
        (r"(a{100}){100}", "too large"),
        (r"(", "not a valid regular expression"),
        ("(" * 600 + ")" * 600, "nests groups too deeply"),
    ],
)
def test_refusals_say_why(pattern: str, words: str) -> None:
    with pytest.raises(errors.InvalidSpec, match=re.escape(words)):
        topic_patterns.compile_matcher(pattern)


def test_the_spec_regex_is_checked_when_the_spec_is_read() -> None:
    with pytest.raises(errors.InvalidSpec, match=r"spec\.topicsRegex: .*lookahead"):
        parse_request({"mode": "Rebalance", "topicsRegex": "(?!internal).*"})
    assert parse_request({"mode": "Rebalance", "topicsRegex": "(a+)+$"}).topics_regex == "(a+)+$"


def test_ten_thousand_names_are_a_set_never_a_parse_tree() -> None:
    names = [f"{'t' * 240}-{i:05d}" for i in range(10_000)]
    pattern = "|".join(re.escape(n) for n in names)
    tracemalloc.start()
    try:
        matcher = topic_patterns.compile_matcher(pattern)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert matcher(names[1234]) and not matcher("t")
    assert peak < 16 * 2**20, peak  # re.compile of 6,000 such names took 144 MiB (max RSS)
