"""Errors of the local stack. ``StackError`` messages say what failed and what to do about it."""

from __future__ import annotations


class StackError(Exception):
    """A stack component could not be obtained, started or stopped."""


class PortInUse(StackError):
    def __init__(self, port: int, what: str) -> None:
        super().__init__(
            f"port {port} ({what}) is already in use by another process on 127.0.0.1; "
            "stop that process, run 'kzo dev down', or choose other ports with --base-port"
        )
        self.port = port
