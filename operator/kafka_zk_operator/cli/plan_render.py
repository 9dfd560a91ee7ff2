"""Text output of ``kzo plan``: the summary table and the progress bar (stderr).

Pure formatting of a :class:`~kafka_zk_operator.domain.placement.PlanReport`; the progress bar
writes to the stream it is given and only when asked to (a TTY or ``--progress``).
"""

from __future__ import annotations

from typing import TextIO

from kafka_zk_operator.domain.placement import PlanReport


def _size(n_bytes: int) -> str:
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} PiB"  # pragma: no cover


def summary(report: PlanReport, *, elapsed: float | None = None) -> str:
    """The summary table: headline figures, then one line per broker, then notes."""
    ratio = f"{report.moves_over_bound:.3f}" if report.m_lb else "-"
    optimal = "yes" if report.optimal else "no"
    lines = [
        f"mode: {report.mode}   partitions: {report.partitions} ({report.partitions_selected} selected, "
        f"{report.partitions_changed} changed)"
        + (f"   planned in {elapsed:.2f} s" if elapsed is not None else ""),
        f"replica moves:    {report.moves}   M_LB: {report.m_lb}   moves/M_LB: {ratio}   "
        f"provably optimal: {optimal} ({report.optimality})",
        f"leader changes:   {report.leader_changes}   lower bound: {report.leader_lb}",
        f"data to move:     {_size(report.bytes_moved)}"
        + (f"   replicas added: {report.replicas_added}" if report.replicas_added else "")
        + (f"   replicas removed: {report.replicas_removed}" if report.replicas_removed else ""),
        f"rack violations:  {report.rack_violations_after} after ({report.rack_violations_before} before)   "
        f"duplicate replicas: {report.duplicates_after}   balanced: {'yes' if report.balanced else 'NO'}   "
        f"leaders balanced: {'yes' if report.leaders_balanced else 'no'}",
        "",
    ]
    header = (
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
    rows = [
        (
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
        for b in report.brokers
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:{'<' if i < 3 else '>'}{w}}}" for i, w in enumerate(widths))
    lines.append(fmt.format(*header).rstrip())
    lines.extend(fmt.format(*r).rstrip() for r in rows)
    if report.notes:
        lines.append("")
        lines.extend(f"note: {note}" for note in report.notes)
    return "\n".join(lines) + "\n"


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
