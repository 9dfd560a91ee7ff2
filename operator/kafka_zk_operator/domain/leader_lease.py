"""Leader election on a ``coordination.k8s.io/v1`` Lease: what one replica does next, decided
from the lease it read and its own clock (no Kubernetes client here).

The rules are client-go's ``leaderelection`` package's, which Kubernetes' own controllers use:

- a replica that holds the lease renews it every ``retry_s``; it counts as the leader only while
  its last successful renewal *started* less than ``renew_deadline_s`` ago (shorter than the
  lease, so that it stops before anyone else may start);
- another replica takes the lease over only when the record has not changed for a whole
  ``duration_s`` *as observed on its own monotonic clock* (from when it first saw that version of
  the record), never by comparing the timestamps in the record with its clock: clocks of two
  nodes may disagree, but both measure durations alike;
- an empty holder (a leader that stepped down) may be taken at once;
- every write of the lease is conditional on the ``resourceVersion`` read, so two replicas that
  decide to take it at the same time cannot both succeed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class LeaseTimings:
    """How long a lease lasts, how long its holder may go without renewing, how often it tries."""

    duration_s: float = 10.0
    renew_deadline_s: float = 7.0
    retry_s: float = 2.0

    @property
    def request_timeout_s(self) -> float:
        """How long one request to the API server may take: one that hangs leaves time for
        another attempt before the renew deadline."""
        return max(1.0, self.renew_deadline_s - self.retry_s)

    @classmethod
    def for_duration(cls, duration_s: float) -> LeaseTimings:
        """client-go's ratios (15 s / 10 s / 2 s), scaled to ``duration_s``."""
        return cls(duration_s=duration_s, renew_deadline_s=duration_s * 0.7, retry_s=max(0.2, duration_s / 5))


@dataclass(frozen=True)
class LeaseRecord:
    """The fields of a Lease that election reads."""

    holder: str
    duration_s: float
    transitions: int
    #: ``metadata.resourceVersion``: changes on every write; writes are conditional on it.
    resource_version: str
    #: ``spec.acquireTime`` as written (kept when the holder renews).
    acquired_at: datetime | None = None


class Step(enum.Enum):
    CREATE = "create"  # no Lease yet: create it holding it
    RENEW = "renew"  # we hold it: renew
    TAKE_OVER = "take over"  # it expired or was released: take it (conditional on its version)
    WAIT = "wait"  # someone else holds it and it has not expired


@dataclass
class Observation:
    """The version of the record a replica last saw, and when it first saw it (monotonic)."""

    resource_version: str | None = None
    since: float = 0.0

    def see(self, record: LeaseRecord | None, now: float) -> None:
        version = None if record is None else record.resource_version
        if version != self.resource_version:
            self.resource_version = version
            self.since = now


def next_step(record: LeaseRecord | None, identity: str, observation: Observation, now: float) -> Step:
    """What ``identity`` does about ``record`` at monotonic time ``now`` (after ``observation.see``)."""
    if record is None:
        return Step.CREATE
    if record.holder == identity:
        return Step.RENEW
    if not record.holder or now - observation.since >= record.duration_s:
        return Step.TAKE_OVER
    return Step.WAIT


def transitions_after(record: LeaseRecord | None, identity: str) -> int:
    """``leaseTransitions`` once ``identity`` holds the lease: +1 whenever the holder changes."""
    if record is None:
        return 0
    return record.transitions if record.holder == identity else record.transitions + 1
