"""Disk capacity check of a plan: the brokers that would hold more bytes than their disks take.

A check, not an objective: it reads a finished :class:`PlanReport` (bytes per broker before and
after, ``report.build_report``) and returns a copy with ``BrokerLine.capacity`` set and one
warning per broker above its capacity after the plan. The plan itself never sees a capacity, so it
is the same with or without one (and the same from every engine).

Capacities are given in bytes, either one for every broker or per broker id (a broker without one
is not checked). Without partition sizes in the snapshot nothing can be checked, which is a
warning of its own. Bytes per broker count every replica in full (the partition's size), and
nothing else on the disk (indexes beyond the log size, other log directories, free-space margins).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.byte_sizes import format_percent, format_size, parse_size
from kafka_zk_operator.domain.placement.report import BrokerLine, PlanReport

_MAX_ID = 2**31 - 1
_FORMS = "SIZE for every broker, or ID=SIZE,ID=SIZE,... (e.g. 2TiB, or 7=2TiB,8=1.5TiB)"

#: The warning when capacities are given but the snapshot has no sizes.
NO_SIZES = (
    "no disk capacity can be checked: the snapshot has no partition sizes "
    "(kzo snapshot --sizes-from-bootstrap HOST:PORT adds them)"
)


@dataclass(frozen=True)
class BrokerCapacity:
    """Disk capacity in bytes: ``default`` for every broker, or ``per_broker`` by broker id."""

    default: int | None = None
    per_broker: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))

    def of(self, broker_id: int) -> int | None:
        """The capacity of ``broker_id`` (``None``: not checked)."""
        return self.per_broker.get(broker_id, self.default)

    def unknown(self, broker_ids: Iterable[int]) -> tuple[int, ...]:
        """Broker ids given a capacity that are not among ``broker_ids``, sorted."""
        return tuple(sorted(set(self.per_broker) - set(broker_ids)))


def parse_capacity(text: str) -> BrokerCapacity:
    """``2TiB`` (every broker) or ``7=2TiB,8=1.5TiB`` (those brokers); :class:`InvalidSpec` otherwise."""
    if "=" not in text:
        if ":" in text or "," in text:  # a list, but not of ID=SIZE
            raise errors.InvalidSpec(f"invalid capacity {text.strip()!r}: expected {_FORMS}")
        return BrokerCapacity(default=parse_size(text))
    per_broker: dict[int, int] = {}
    for raw in text.split(","):
        id_text, equals, size = (part.strip() for part in raw.partition("="))
        if not equals or not (id_text.isascii() and id_text.isdigit()) or int(id_text) > _MAX_ID:
            raise errors.InvalidSpec(f"invalid entry {raw.strip()!r}: expected {_FORMS}")
        broker_id = int(id_text)
        if broker_id in per_broker:
            raise errors.InvalidSpec(f"broker {broker_id} is given a capacity more than once")
        per_broker[broker_id] = parse_size(size)
    return BrokerCapacity(per_broker=MappingProxyType(per_broker))


def check_capacity(report: PlanReport, capacity: BrokerCapacity) -> PlanReport:
    """``report`` with each broker's capacity and a warning per broker above it after the plan.

    :raises InvalidSpec: a capacity names a broker the report does not have.
    """
    unknown = capacity.unknown(line.broker_id for line in report.brokers)
    if unknown:
        raise errors.InvalidSpec(f"capacity given for broker(s) not in the cluster: {_ids(unknown)}")
    if not report.sizes_known:
        return dataclasses.replace(report, warnings=(*report.warnings, NO_SIZES))
    lines = tuple(dataclasses.replace(b, capacity=capacity.of(b.broker_id)) for b in report.brokers)
    found = tuple(w for w in (_warning(b) for b in lines) if w is not None)
    return dataclasses.replace(report, brokers=lines, warnings=(*report.warnings, *found))


def over_capacity(line: BrokerLine, *, after: bool = True) -> bool:
    """Whether the broker holds more than its capacity after (or before) the plan."""
    held = line.bytes_after if after else line.bytes_before
    return line.capacity is not None and held > line.capacity


def _warning(line: BrokerLine) -> str | None:
    if line.capacity is None or not over_capacity(line):
        return None
    cap, before, after = line.capacity, line.bytes_before, line.bytes_after
    if not over_capacity(line, after=False):
        return (
            f"broker {line.broker_id} would hold {format_size(after)} after the plan, above its capacity "
            f"of {format_size(cap)} ({format_percent(after, cap)}); it holds {format_size(before)} before "
            f"({format_percent(before, cap)})"
        )
    if after > before:
        return (
            f"broker {line.broker_id} is already above its capacity of {format_size(cap)} with "
            f"{format_size(before)} ({format_percent(before, cap)}) and the plan adds "
            f"{format_size(after - before)}: {format_size(after)} after ({format_percent(after, cap)})"
        )
    return (
        f"broker {line.broker_id} stays above its capacity of {format_size(cap)}: {format_size(after)} "
        f"after the plan ({format_percent(after, cap)}), {format_size(before)} before "
        f"({format_percent(before, cap)})"
    )


def _ids(ids: Iterable[int]) -> str:
    return ", ".join(str(i) for i in ids)
