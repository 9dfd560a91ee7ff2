"""Small helpers for readable messages: counted nouns and broker lists in the right number."""

from __future__ import annotations

from collections.abc import Iterable


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 partition``, ``3 partitions`` (``plural`` for irregular nouns)."""
    return f"{count} {noun if count == 1 else (plural or noun + 's')}"


#: Ids a message lists at most (a spec may name a thousand brokers).
SHOWN = 20


def listed(items: Iterable[object], shown: int = SHOWN) -> str:
    """``a, b, c`` with at most ``shown`` items, then ``and N more``."""
    every = list(items)
    names = ", ".join(map(str, every[:shown]))
    return names + (f" and {len(every) - shown:,} more" if len(every) > shown else "")


def brokers_are(ids: Iterable[int]) -> str:
    """``broker 7 is`` / ``brokers 7, 8 are``, for "... not registered" and the like (at most
    :data:`SHOWN` ids listed)."""
    every = list(ids)
    return f"broker {listed(every)} is" if len(every) == 1 else f"brokers {listed(every)} are"
