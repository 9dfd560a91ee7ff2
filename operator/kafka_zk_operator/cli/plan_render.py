"""Text output of ``kzo plan``: the summary table and the progress bar (stderr).

Pure formatting of a :class:`~kafka_zk_operator.domain.placement.PlanReport`; the progress bar
writes to the stream it is given and only when asked to (a TTY or ``--progress``). Byte figures
(data to move, data per broker) are shown only when the snapshot had partition sizes, capacity
columns only when a capacity was checked (``--broker-capacity``).
"""

from __future__ import annotations

from typing import TextIO

from kafka_zk_operator.domain.byte_sizes import format_percent, format_size
from kafka_zk_operator.domain.placement import BrokerLine, PlanReport
from kafka_zk_operator.domain.placement.capacity import over_capacity

#: Columns left-aligned in the broker table (the others are right-aligned).
_LEFT = 3


def summary(report: PlanReport, *, elapsed: float | None = None) -> str:
    """The summary table: headline figures, then one line per broker, then notes."""
    lines = [*_headline(report, elapsed), ""]
    header, rows = _broker_table(report)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:{'<' if i < _LEFT else '>'}{w}}}" for i, w in enumerate(widths))
    lines.append(fmt.format(*header).rstrip())
    lines.extend(fmt.format(*r).rstrip() for r in rows)
    if report.notes:
        lines.append("")
        lines.extend(f"note: {note}" for note in report.notes)
    return "\n".join(lines) + "\n"


def _headline(report: PlanReport, elapsed: float | None) -> list[str]:
    ratio = f"{report.moves_over_bound:.3f}" if report.m_lb else "-"
    optimal = "yes" if report.optimal else "no"
    moved = format_size(report.bytes_moved) if report.sizes_known else "unknown (the snapshot has no sizes)"
    by_bytes = report.balance == "bytes"
    optimality = (
        f"not the objective with --balance {report.balance}"
        if report.bytes_lower_bound is not None
        else f"provably optimal: {optimal} ({report.optimality})"
    )
    balanced = "yes" if report.balanced else ("no" if by_bytes else "NO")
    lines = [
        f"mode: {report.mode}   partitions: {report.partitions} ({report.partitions_selected} selected, "
        f"{report.partitions_changed} changed)"
        + (f"   planned in {elapsed:.2f} s" if elapsed is not None else ""),
        f"replica moves:    {report.moves}   M_LB: {report.m_lb}   moves/M_LB: {ratio}   {optimality}",
        f"leader changes:   {report.leader_changes}   lower bound: {report.leader_lb}",
        f"data to move:     {moved}"
        + (f"   replicas added: {report.replicas_added}" if report.replicas_added else "")
        + (f"   replicas removed: {report.replicas_removed}" if report.replicas_removed else ""),
        f"rack violations:  {report.rack_violations_after} after ({report.rack_violations_before} before)   "
        f"duplicate replicas: {report.duplicates_after}   "
        + ("replica counts within ±1" if by_bytes else "balanced")
        + f": {balanced}   leaders balanced: {'yes' if report.leaders_balanced else 'no'}",
    ]
    if report.bytes_lower_bound is not None:
        lines.append(_byte_line(report))
    checked = [b for b in report.brokers if b.capacity is not None]
    if checked:
        after = sum(over_capacity(b) for b in checked)
        before = sum(over_capacity(b, after=False) for b in checked)
        lines.append(
            f"disk capacity:    {after} of {len(checked)} broker(s) checked above capacity after the plan "
            f"({before} before)"
        )
    return lines


def _byte_line(report: PlanReport) -> str:
    """``--balance bytes``: bytes moved against their bound, and the spread before and after."""
    bound = report.bytes_lower_bound or 0
    ratio = report.bytes_over_bound
    shown = "-" if ratio is None or ratio == float("inf") else f"{ratio:.3f}"
    _, top_before, mean_before = report.byte_spread(after=False)
    low_after, top_after, mean_after = report.byte_spread(after=True)

    def share(value: float, mean: float) -> str:
        return f"{value / mean:.3f}" if mean else "-"

    return (
        f"byte balance:     moved {format_size(report.bytes_moved)}   lower bound {format_size(bound)}   "
        f"moved/bound: {shown}   max/mean data per broker {share(top_before, mean_before)} before, "
        f"{share(top_after, mean_after)} after (min/mean {share(low_after, mean_after)}); "
        + (
            "replica counts as the count plan left them"
            if report.balance == "both"
            else "replica counts are a secondary aim"
        )
    )


def _broker_table(report: PlanReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Header and rows: counts always; data before/after with sizes; capacity and use when checked."""
    header: tuple[str, ...] = (
        "broker",
        "rack",
        "role",
        "replicas",
        "before",
        "after",
        "target",
        "leaders",
        "before",
        "after",
        "target",
    )
    with_capacity = any(b.capacity is not None for b in report.brokers)
    if report.sizes_known:
        header += ("data", "before", "after")
    if with_capacity:
        header += ("capacity", "used")
    rows = [_broker_row(b, report.sizes_known, with_capacity) for b in report.brokers]
    return header, rows


def _broker_row(b: BrokerLine, sizes: bool, with_capacity: bool) -> tuple[str, ...]:
    row: tuple[str, ...] = (
        str(b.broker_id),
        b.rack or "-",
        b.role,
        "",
        str(b.replicas_before),
        str(b.replicas_after),
        str(b.replica_target),
        "",
        str(b.leaders_before),
        str(b.leaders_after),
        str(b.leader_target),
    )
    if sizes:
        row += ("", format_size(b.bytes_before), format_size(b.bytes_after))
    if with_capacity:
        if b.capacity is None:
            row += ("-", "-")
        else:
            used = format_percent(b.bytes_after, b.capacity) + (" over" if over_capacity(b) else "")
            row += (format_size(b.capacity), used)
    return row


class ProgressBar:
    """``[#####.....]  45% select`` redrawn in place on ``stream``; silent when disabled."""

    def __init__(self, stream: TextIO, *, enabled: bool, width: int = 30) -> None:
        self.stream = stream
        self.enabled = enabled
        self.width = width
        self._drawn = False

    def __call__(self, stage: str, fraction: float) -> None:
        if not self.enabled:
            return
        filled = round(max(0.0, min(1.0, fraction)) * self.width)
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r[{bar}] {fraction * 100:3.0f}% {stage:<10}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self.enabled and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
