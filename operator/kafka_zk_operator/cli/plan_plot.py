"""``kzo plan --plot``: per-broker replicas and leaders before and after, as a PNG (matplotlib Agg).

A third panel shows the data per broker when the snapshot had sizes (capacities, when checked, as
markers). matplotlib is an optional extra (``plot``); a missing install is a user error with the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.placement import PlanReport

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
#: One panel: y label, before, after, markers (targets or capacities) and their legend ("": none).
_Panel = tuple[str, Sequence[float], Sequence[float], Sequence[float], str]


def write_plot(report: PlanReport, path: Path) -> None:
    """Panels replicas, leaders (and data with sizes): before and after bars, targets as markers."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise errors.InvalidSpec("--plot needs matplotlib: pip install 'kafka-zk-operator[plot]'") from None
    brokers = report.brokers
    xs = list(range(len(brokers)))
    width = max(8.0, min(40.0, 0.25 * len(brokers) + 4))
    panels: list[_Panel] = [
        (
            "replicas",
            [b.replicas_before for b in brokers],
            [b.replicas_after for b in brokers],
            [b.replica_target for b in brokers],
            "target",
        ),
        (
            "leaders",
            [b.leaders_before for b in brokers],
            [b.leaders_after for b in brokers],
            [b.leader_target for b in brokers],
            "target",
        ),
    ]
    if report.sizes_known:
        panels.append(_data_panel(report))
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, 3.5 * len(panels)), sharex=True)
    for ax, (name, before, after, marks, marks_label) in zip(axes, panels, strict=True):
        ax.bar([x - 0.2 for x in xs], before, width=0.4, label="before", color="#bbbbbb")
        ax.bar([x + 0.2 for x in xs], after, width=0.4, label="after", color="#3a78b5")
        if marks_label:
            ax.scatter(xs, marks, marker="_", color="#d62728", s=80, label=marks_label, zorder=3)
        ax.set_ylabel(name)
        ax.legend(loc="upper right", fontsize="small")
    step = max(1, len(brokers) // 40)
    axes[-1].set_xticks(xs[::step])
    axes[-1].set_xticklabels([str(b.broker_id) for b in brokers][::step], rotation=90, fontsize="small")
    axes[-1].set_xlabel("broker")
    axes[0].set_title(
        f"{report.mode}: {report.moves} moves (M_LB {report.m_lb}), {report.leader_changes} leader changes"
    )
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100)
    except OSError as exc:
        raise errors.InvalidSpec(f"cannot write the plot to {path}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)


def _data_panel(report: PlanReport) -> _Panel:
    """Bytes before and after per broker, and capacities (NaN: none), in one binary unit."""
    top = max([1, *(max(b.bytes_before, b.bytes_after, b.capacity or 0) for b in report.brokers)])
    power = min(len(_BINARY_UNITS) - 1, (top.bit_length() - 1) // 10)
    scale = float(1024**power)
    return (
        f"data ({_BINARY_UNITS[power]})",
        [b.bytes_before / scale for b in report.brokers],
        [b.bytes_after / scale for b in report.brokers],
        [b.capacity / scale if b.capacity is not None else float("nan") for b in report.brokers],
        "capacity" if any(b.capacity is not None for b in report.brokers) else "",
    )
