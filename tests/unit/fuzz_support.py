"""Shared pieces of the Hypothesis fuzz tests: JSON values of every shape, and one mutation of a
valid JSON document (a value replaced by one of another type, an entry removed or added, or the
whole document wrapped in a list)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)


def _paths(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key/index path in a JSON document (the root included)."""
    found = [prefix]
    if isinstance(document, dict):
        for key, value in document.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += _paths(value, (*prefix, index))
    return found


def _replace(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(document))
    holder = copy
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = value
    return copy


def _delete(document: Any, path: tuple[Any, ...]) -> Any:
    copy = json.loads(json.dumps(document))
    holder = copy
    for step in path[:-1]:
        holder = holder[step]
    del holder[path[-1]]
    return copy


def mutate(choice: st.DataObject, document: Any) -> Any:
    """``document`` with one change drawn from ``choice``."""
    where = choice.draw(st.sampled_from(_paths(document)))
    action = choice.draw(st.sampled_from(["replace", "delete", "add", "wrap"]))
    if action == "replace" or (action == "delete" and not where):
        return _replace(document, where, choice.draw(json_values))
    if action == "delete":
        return _delete(document, where)
    if action == "add" and isinstance(document, dict):
        return {**document, choice.draw(st.text(max_size=12)): choice.draw(json_values)}
    return [document]
