"""Topic-selection regular expressions matched in time linear in the name: no backtracking.

Python's ``re`` backtracks: ``(a+)+$`` against a 249-character topic name of ``a`` then ``!``
never finishes in practice, and it holds the GIL meanwhile, so one ``spec.topicsRegex`` would stop
the whole operator. Here a pattern is parsed by ``re``'s own parser (the syntax and its errors are
exactly Python's), turned into a Thompson NFA, and run as a lazily built DFA
(``domain.kafka.topic_automaton``): each character of a name costs one cached step, and building a
step visits at most the NFA's states. Two bounds, defined there, make the cost finite and small
whatever the input (docs/reliability.md, "Regular expressions"):

* ``MAX_STATES`` NFA states (counted repetitions such as ``x{1000}`` are expanded), refused
  above that;
* ``STEP_BUDGET`` NFA-state visits in total for one matcher (cache misses only; a cache hit is
  one dictionary look-up per character), refused once spent with ``PatternTooCostly``.

Constructs that are not regular (backreferences, lookarounds, conditionals, atomic groups and
possessive quantifiers) are refused: they are what makes a linear engine impossible, and Go's
``regexp`` (topicmappr's ``--topics``) and RE2 refuse them too. A pattern that is an alternation of
escaped literals (the selection the operator builds from ``spec.topics`` or
``spec.replicationFactors``) is recognised without parsing and matched by set membership, so
10,000 names never become a parse tree. Full match only (``re.fullmatch`` semantics).

Used by ``domain.reassignment.request`` (the spec's ``topicsRegex``) and
``domain.placement.setup`` (every topic selection of a plan). Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import topic_automaton

_METACHARS = frozenset(".^$*+?{}[]()|\\")


def literal_alternatives(pattern: str) -> frozenset[str] | None:
    """The names of a pattern made only of ``re.escape``'d literals joined by ``|``, else ``None``."""
    names: list[str] = []
    current: list[str] = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            escaped = next(chars, None)
            if escaped is None or escaped.isalnum() or escaped == "_":  # \d, \1, \A ... are not literals
                return None
            current.append(escaped)
        elif char == "|":
            names.append("".join(current))
            current = []
        elif char in _METACHARS:
            return None
        else:
            current.append(char)
    names.append("".join(current))
    return frozenset(names)


_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")


def top_level_branches(pattern: str) -> list[str]:
    """``pattern`` split at its top-level ``|`` (outside groups and sets); ``re``'s grammar."""
    branches: list[str] = []
    depth, start, i, end = 0, 0, 0, len(pattern)
    while i < end:
        char = pattern[i]
        if char == "\\":
            i += 1
        elif char == "[":
            i += 1
            if i < end and pattern[i] == "^":
                i += 1
            if i < end and pattern[i] == "]":  # a leading ] is a member
                i += 1
            while i < end and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char == "|" and depth == 0:
            branches.append(pattern[start:i])
            start = i + 1
        i += 1
    branches.append(pattern[start:])
    return branches


def compile_matcher(pattern: str) -> Callable[[str], bool]:
    """A full-match predicate for ``pattern``, linear in the name's length.

    :raises InvalidSpec: the pattern is invalid, not regular, or larger than :data:`topic_automaton.MAX_STATES`;
        the returned predicate raises :class:`topic_automaton.PatternTooCostly` once its budget is spent.
    """
    literals = literal_alternatives(pattern)
    if literals is not None:
        return literals.__contains__
    if _GLOBAL_FLAGS.match(pattern):  # flags for every branch: no literal shortcut
        return topic_automaton.nfa_matcher(pattern)
    names: set[str] = set()
    others: list[str] = []
    for branch in top_level_branches(pattern):
        literal = literal_alternatives(branch)
        if literal is None:
            others.append(branch)
        else:
            names.update(literal)
    if not others:
        return names.__contains__
    rest = topic_automaton.nfa_matcher("|".join(others))
    return lambda name: name in names or rest(name)


def check_pattern(pattern: str, where: str) -> None:
    """Refuse, naming ``where``, a pattern :func:`compile_matcher` cannot take. :raises InvalidSpec:"""
    try:
        compile_matcher(pattern)
    except errors.InvalidSpec as exc:
        raise errors.InvalidSpec(f"{where}: {exc}") from None
