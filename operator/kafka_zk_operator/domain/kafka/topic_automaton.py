"""The linear-time engine behind ``topic_patterns``: a regular expression as a lazily built DFA.

A pattern is parsed by ``re``'s own parser (the syntax and its errors are exactly Python's),
turned into a Thompson NFA (:class:`_Builder`), and run as a DFA built on demand
(:class:`_Matcher`): each character of a name costs one cached step, and building a step visits at
most the NFA's states. This module owns the bounds that make the cost finite
(:data:`MAX_STATES`, :data:`STEP_BUDGET`, :data:`MAX_CACHED`) and the refusal of the constructs
that are not regular (backreferences, lookarounds, conditionals, atomic groups, possessive
quantifiers). Full match only (``re.fullmatch`` semantics).

Used only by ``domain.kafka.topic_patterns`` (:func:`nfa_matcher`), which first takes the literal
shortcuts; callers elsewhere go through that module. Pure: no I/O.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_zk_operator.domain import errors

_parser: Any = importlib.import_module("re._parser")
_c: Any = importlib.import_module("re._constants")

#: The most NFA states a pattern may expand to (a 1,024-character pattern without counted
#: repetitions has at most about 2,100).
MAX_STATES = 4096
#: NFA-state visits one matcher may spend building DFA steps (a few seconds of CPU at most).
STEP_BUDGET = 5_000_000
#: NFA states held in one matcher's cached DFA steps (about 32 bytes each); emptied when full.
MAX_CACHED = 1_000_000

_REFUSED = {
    "GROUPREF": "a backreference (\\1, (?P=name))",
    "GROUPREF_EXISTS": "a conditional group ((?(1)...))",
    "ASSERT": "a lookahead or lookbehind ((?=...), (?<=...))",
    "ASSERT_NOT": "a negative lookahead or lookbehind ((?!...), (?<!...))",
    "ATOMIC_GROUP": "an atomic group ((?>...))",
    "POSSESSIVE_REPEAT": "a possessive quantifier (*+, ++, ?+)",
}


class PatternTooCostly(errors.InvalidSpec):
    """Matching the pattern would exceed :data:`STEP_BUDGET`."""


# A state is (kind, argument, next, alternative): kind "char" (argument: a predicate on one
# character), "split" (next and alternative), "assert" (argument: an anchor name), "match".
_Pred = Callable[[str], bool]


@dataclass
class _Nfa:
    kinds: list[str] = field(default_factory=list)
    args: list[Any] = field(default_factory=list)
    outs: list[list[int]] = field(default_factory=list)

    def add(self, kind: str, arg: Any = None) -> int:
        if len(self.kinds) >= MAX_STATES:
            raise errors.InvalidSpec(
                f"the regular expression is too large: it expands to more than {MAX_STATES:,} states "
                "(counted repetitions such as x{1000} are expanded); simplify it"
            )
        self.kinds.append(kind)
        self.args.append(arg)
        self.outs.append([])
        return len(self.kinds) - 1


def _equals(code: int) -> _Pred:
    return lambda ch: ord(ch) == code


def _differs(code: int) -> _Pred:
    return lambda ch: ord(ch) != code


def _between(low: int, high: int) -> _Pred:
    return lambda ch: low <= ord(ch) <= high


def _negated(pred: _Pred) -> _Pred:
    return lambda ch: not pred(ch)


def _is_word(char: str, ascii_only: bool) -> bool:
    return (char.isalnum() or char == "_") and (char.isascii() or not ascii_only)


def _category(name: str, ascii_only: bool) -> _Pred:
    def digit(ch: str) -> bool:
        return ch.isdecimal() and (ch.isascii() or not ascii_only)

    def space(ch: str) -> bool:
        return ch.isspace() and (ch.isascii() or not ascii_only)

    def word(ch: str) -> bool:
        return _is_word(ch, ascii_only)

    base = {"DIGIT": digit, "SPACE": space, "WORD": word}
    for key, pred in base.items():
        if name == f"CATEGORY_{key}":
            return pred
        if name == f"CATEGORY_NOT_{key}":
            return _negated(pred)
    raise errors.InvalidSpec(f"the regular expression uses {name}, which is not supported")


def _in_set(items: list[tuple[Any, Any]], ascii_only: bool) -> _Pred:
    negate = False
    tests: list[_Pred] = []
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            tests.append(_equals(av))
        elif name == "RANGE":
            tests.append(_between(av[0], av[1]))
        elif name == "CATEGORY":
            tests.append(_category(str(av), ascii_only))
        else:
            raise errors.InvalidSpec(f"the regular expression uses {name} in a set, which is not supported")
    return lambda ch: any(test(ch) for test in tests) != negate


def _folded(pred: _Pred) -> _Pred:
    return lambda ch: pred(ch) or pred(ch.lower()) or pred(ch.upper())


class _Builder:
    """Thompson construction over ``re``'s parse tree: each fragment is (start, dangling exits)."""

    def __init__(self, flags: int) -> None:
        self.nfa = _Nfa()
        self.flags = flags

    def _char(self, pred: _Pred, flags: int) -> tuple[int, list[tuple[int, int]]]:
        if flags & re.IGNORECASE:
            pred = _folded(pred)
        state = self.nfa.add("char", pred)
        return state, [(state, 0)]

    def _epsilon(self) -> tuple[int, list[tuple[int, int]]]:
        state = self.nfa.add("split")
        return state, [(state, 0)]

    def patch(self, exits: list[tuple[int, int]], target: int) -> None:
        for state, slot in exits:
            outs = self.nfa.outs[state]
            while len(outs) <= slot:
                outs.append(-1)
            outs[slot] = target

    def sequence(self, items: Any, flags: int) -> tuple[int, list[tuple[int, int]]]:
        start, exits = self._epsilon()
        for op, av in items:
            frag_start, frag_exits = self.item(str(op), av, flags)
            self.patch(exits, frag_start)
            exits = frag_exits
        return start, exits

    def item(self, name: str, av: Any, flags: int) -> tuple[int, list[tuple[int, int]]]:
        ascii_only = bool(flags & re.ASCII)
        if name in _REFUSED:
            raise errors.InvalidSpec(
                f"the regular expression uses {_REFUSED[name]}, which is not supported (it is not a regular "
                "construct, and topic patterns are matched without backtracking)"
            )
        if name == "LITERAL":
            return self._char(_equals(av), flags)
        if name == "NOT_LITERAL":
            return self._char(_differs(av), flags)
        if name == "ANY":
            dotall = bool(flags & re.DOTALL)
            return self._char(lambda ch: dotall or ch != "\n", 0)
        if name == "IN":
            return self._char(_in_set(av, ascii_only), flags)
        if name == "AT":
            state = self.nfa.add("assert", (str(av), bool(flags & re.MULTILINE), ascii_only))
            return state, [(state, 0)]
        if name == "SUBPATTERN":
            _group, add, remove, body = av
            return self.sequence(body, (flags | add) & ~remove)
        if name == "BRANCH":
            start = self.nfa.add("split")
            exits: list[tuple[int, int]] = []
            for slot, branch in enumerate(av[1]):
                branch_start, branch_exits = self.sequence(branch, flags)
                self.patch([(start, slot)], branch_start)
                exits.extend(branch_exits)
            return start, exits
        if name in ("MAX_REPEAT", "MIN_REPEAT"):  # greediness does not change a full match
            return self.repeat(av, flags)
        raise errors.InvalidSpec(f"the regular expression uses {name}, which is not supported")

    def repeat(self, av: Any, flags: int) -> tuple[int, list[tuple[int, int]]]:
        low, high, body = av
        start, exits = self._epsilon()
        unbounded = high == _c.MAXREPEAT
        # x{m,} is m-1 copies, then one copy that loops (x+ holds one copy of x: nesting stays linear)
        for _ in range(low - 1 if unbounded and low else low):
            frag_start, frag_exits = self.sequence(body, flags)
            self.patch(exits, frag_start)
            exits = frag_exits
        if unbounded:
            loop = self.nfa.add("split")
            frag_start, frag_exits = self.sequence(body, flags)
            self.patch(exits, frag_start if low else loop)
            self.patch([(loop, 0)], frag_start)
            self.patch(frag_exits, loop)
            return start, [(loop, 1)]
        done: list[tuple[int, int]] = []
        for _ in range(high - low):
            choice = self.nfa.add("split")
            self.patch(exits, choice)
            frag_start, frag_exits = self.sequence(body, flags)
            self.patch([(choice, 0)], frag_start)
            done.append((choice, 1))
            exits = frag_exits
        return start, exits + done


# ------------------------------------------------------------------------- matching
#: What an assertion at a position can look at: at the start, at the end, one before the end, and
#: the character classes either side (None: no character; else newline, word, ASCII).
_Context = tuple[bool, bool, bool, "tuple[bool, bool, bool] | None", "tuple[bool, bool, bool] | None"]


def _kind_of(char: str) -> tuple[bool, bool, bool]:
    return (char == "\n", char.isalnum() or char == "_", char.isascii())


def _context(text: str, pos: int) -> _Context:
    end = len(text)
    before = _kind_of(text[pos - 1]) if pos else None
    after = _kind_of(text[pos]) if pos < end else None
    return (pos == 0, pos == end, pos == end - 1, before, after)


def _word(kind: tuple[bool, bool, bool] | None, ascii_only: bool) -> bool:
    return kind is not None and kind[1] and (kind[2] or not ascii_only)


def _assertion(arg: tuple[str, bool, bool], ctx: _Context) -> bool:
    name, multiline, ascii_only = arg
    at_start, at_end, before_last, before, after = ctx
    if name == "AT_BEGINNING_STRING":
        return at_start
    if name == "AT_END_STRING":
        return at_end
    if name in ("AT_BEGINNING", "AT_BEGINNING_LINE"):
        return at_start or (multiline and before is not None and before[0])
    if name in ("AT_END", "AT_END_LINE"):
        newline_after = after is not None and after[0]
        return at_end or (before_last and newline_after) or (multiline and newline_after)
    empty = at_start and at_end
    if name == "AT_BOUNDARY":
        return not empty and _word(before, ascii_only) != _word(after, ascii_only)
    if name == "AT_NON_BOUNDARY":
        return not empty and _word(before, ascii_only) == _word(after, ascii_only)
    raise errors.InvalidSpec(f"the regular expression uses {name}, which is not supported")


class _Matcher:
    """The lazily built DFA of one NFA: state sets as frozensets, steps and closures cached."""

    def __init__(self, nfa: _Nfa, start: int, pattern: str) -> None:
        self.nfa, self.start, self.pattern = nfa, start, pattern
        self.asserts = "assert" in nfa.kinds
        self.spent = 0
        self.cached = 0
        self.closures: dict[tuple[frozenset[int], _Context | None], tuple[frozenset[int], bool]] = {}
        self.steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _spend(self, visits: int) -> None:
        self.spent += visits
        if self.spent > STEP_BUDGET:
            raise PatternTooCostly(
                f"the regular expression {self.pattern[:80]!r} is too costly to match: it needed more than "
                f"{STEP_BUDGET:,} steps of its automaton over the cluster's topic names; simplify it "
                "(fewer nested or counted repetitions)"
            )

    def _keep(self, size: int) -> None:
        """Count ``size`` more cached set elements; empty the caches past :data:`MAX_CACHED`."""
        self.cached += size
        if self.cached > MAX_CACHED:
            self.closures.clear()
            self.steps.clear()
            self.cached = size

    def _closure(self, raw: frozenset[int], text: str, pos: int) -> tuple[frozenset[int], bool]:
        ctx = _context(text, pos) if self.asserts else None
        key = (raw, ctx)
        cached = self.closures.get(key)
        if cached is not None:
            return cached
        kinds, args, outs = self.nfa.kinds, self.nfa.args, self.nfa.outs
        seen: set[int] = set()
        stack = list(raw)
        chars: set[int] = set()
        matched = False
        while stack:
            state = stack.pop()
            if state < 0 or state in seen:
                continue
            seen.add(state)
            kind = kinds[state]
            if kind == "char":
                chars.add(state)
            elif kind == "match":
                matched = True
            elif kind == "split" or (ctx is not None and _assertion(args[state], ctx)):
                stack.extend(outs[state])
        self._spend(len(seen) + 1)
        result = (frozenset(chars), matched)
        self._keep(len(raw) + len(chars))
        self.closures[key] = result
        return result

    def _step(self, current: frozenset[int], char: str) -> frozenset[int]:
        key = (current, char)
        cached = self.steps.get(key)
        if cached is not None:
            return cached
        args, outs = self.nfa.args, self.nfa.outs
        result = frozenset(outs[s][0] for s in current if args[s](char))
        self._spend(len(current) + 1)
        self._keep(len(current) + len(result))
        self.steps[key] = result
        return result

    def fullmatch(self, text: str) -> bool:
        current, matched = self._closure(frozenset((self.start,)), text, 0)
        for pos, char in enumerate(text):
            if not current:
                return False
            current, matched = self._closure(self._step(current, char), text, pos + 1)
        return matched


def _parse(pattern: str) -> Any:
    try:
        return _parser.parse(pattern, 0)
    except re.error as exc:
        raise errors.InvalidSpec(f"{pattern[:80]!r} is not a valid regular expression: {exc}") from None
    except RecursionError:
        raise errors.InvalidSpec(f"{pattern[:80]!r} nests groups too deeply") from None


def nfa_matcher(pattern: str) -> Callable[[str], bool]:
    """A full-match predicate for ``pattern`` through the NFA; no literal shortcut.

    :raises InvalidSpec: the pattern is invalid, not regular, or larger than :data:`MAX_STATES`;
        the returned predicate raises :class:`PatternTooCostly` once :data:`STEP_BUDGET` is spent.
    """
    parsed = _parse(pattern)
    builder = _Builder(parsed.state.flags)
    try:
        start, exits = builder.sequence(parsed, parsed.state.flags)
    except RecursionError:
        raise errors.InvalidSpec(f"{pattern[:80]!r} nests groups too deeply") from None
    builder.patch(exits, builder.nfa.add("match"))
    return _Matcher(builder.nfa, start, pattern).fullmatch
