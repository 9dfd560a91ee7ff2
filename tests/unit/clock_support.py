"""A clock the test moves by hand, for code that takes ``clock=`` (a callable giving seconds)."""

from __future__ import annotations


class ManualClock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
