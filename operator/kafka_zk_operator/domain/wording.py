"""Small helpers for readable messages: counted nouns and broker lists in the right number."""

from __future__ import annotations

from collections.abc import Iterable


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 partition``, ``3 partitions`` (``plural`` for irregular nouns)."""
    return f"{count} {noun if count == 1 else (plural or noun + 's')}"


def brokers_are(ids: Iterable[int]) -> str:
    """``broker 7 is`` / ``brokers 7, 8 are``, for "... not registered" and the like."""
    listed = list(ids)
    names = ", ".join(map(str, listed))
    return f"broker {names} is" if len(listed) == 1 else f"brokers {names} are"
