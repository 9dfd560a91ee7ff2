"""Small polling helpers for tests against the real stack (never fixed sleeps)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    probe: Callable[[], T | None], *, timeout: float = 60.0, interval: float = 0.25, what: str = "condition"
) -> T:
    """Call ``probe`` until it returns a truthy value and return that value."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last value: {last!r})")
