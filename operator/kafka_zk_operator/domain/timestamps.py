"""The one timestamp format of the operator's status fields: RFC 3339 UTC to the second
(``2026-01-31T12:00:00Z``), as Kubernetes writes ``metav1.Time``."""

from __future__ import annotations

import functools
from datetime import UTC, datetime

FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def format_timestamp(now: datetime) -> str:
    """``now`` (timezone-aware) in UTC, to the second."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return now.astimezone(UTC).strftime(FORMAT)


def parse_timestamp(value: object) -> datetime | None:
    """A status timestamp as an aware datetime; ``None`` for anything else (absent, malformed)."""
    if not isinstance(value, str) or not value:
        return None
    return _parsed(value)


@functools.lru_cache(maxsize=4096)
def _parsed(value: str) -> datetime | None:
    """Kept per string: a resync or restart reads the same few timestamps in thousands of statuses
    (written in the same seconds), and ``strptime`` is most of a no-change status comparison."""
    try:
        return datetime.strptime(value, FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None
