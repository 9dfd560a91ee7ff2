"""How many KafkaTopics are in each Ready state, per cluster: the ``kzo_kafkatopics`` gauge.

The handlers record each resource's Ready condition after every reconcile and forget it once the
resource is gone; the gauge holds one series per (cluster, ready, reason) that has resources, so
an alert such as ``sum by (cluster, reason) (kzo_kafkatopics{ready="False"}) > 0`` sees exactly
the current resources (a series whose last resource left is removed, not left at 0 forever).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any, Protocol

Labels = tuple[str, str, str]  # cluster, ready ("True" / "False" / "Unknown"), reason


class LabelledGauge(Protocol):
    """What is used of a ``prometheus_client.Gauge`` with three labels."""

    def labels(self, *values: str) -> Any: ...

    def remove(self, *values: str) -> None: ...


def ready_labels(cluster: str, status: Mapping[str, Any]) -> Labels:
    """(cluster, ready, reason) of a KafkaTopic status (``Unknown``/``""`` before any condition)."""
    for condition in status.get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return cluster, str(condition.get("status") or "Unknown"), str(condition.get("reason") or "")
    return cluster, "Unknown", ""


class ConditionTally:
    """Resource → its labels, and the count per label set pushed into ``gauge``. Thread-safe."""

    def __init__(self, gauge: LabelledGauge) -> None:
        self._gauge = gauge
        self._lock = threading.Lock()
        self._labels: dict[tuple[str, str], Labels] = {}
        self._counts: Counter[Labels] = Counter()

    def record(self, ref: tuple[str, str], labels: Labels) -> None:
        with self._lock:
            old = self._labels.get(ref)
            if old == labels:
                return
            self._labels[ref] = labels
            self._counts[labels] += 1
            self._gauge.labels(*labels).set(self._counts[labels])
            if old is not None:
                self._drop(old)

    def forget(self, ref: tuple[str, str]) -> None:
        with self._lock:
            old = self._labels.pop(ref, None)
            if old is not None:
                self._drop(old)

    def counts(self) -> dict[Labels, int]:
        with self._lock:
            return dict(self._counts)

    def _drop(self, labels: Labels) -> None:
        self._counts[labels] -= 1
        if self._counts[labels] > 0:
            self._gauge.labels(*labels).set(self._counts[labels])
            return
        del self._counts[labels]
        self._gauge.remove(*labels)
