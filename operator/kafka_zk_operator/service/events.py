"""A Kubernetes Event a use case asks its handler to post about the resource it reconciled."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    type: str  # "Normal" | "Warning"
    reason: str
    message: str
