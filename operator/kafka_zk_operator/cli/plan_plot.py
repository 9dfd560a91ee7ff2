"""``kzo plan --plot``: per-broker replicas and leaders before and after, as a PNG (matplotlib Agg).

matplotlib is an optional extra (``plot``); a missing install is a user error with the fix.
"""

from __future__ import annotations

from pathlib import Path

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.placement import PlanReport


def write_plot(report: PlanReport, path: Path) -> None:
    """Two panels (replicas, leaders), before and after bars per broker, targets as markers."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise errors.InvalidSpec("--plot needs matplotlib: pip install 'kafka-zk-operator[plot]'") from None
    brokers = report.brokers
    xs = list(range(len(brokers)))
    width = max(8.0, min(40.0, 0.25 * len(brokers) + 4))
    fig, axes = plt.subplots(2, 1, figsize=(width, 7), sharex=True)
    panels = (
        (
            "replicas",
            [b.replicas_before for b in brokers],
            [b.replicas_after for b in brokers],
            [b.replica_target for b in brokers],
        ),
        (
            "leaders",
            [b.leaders_before for b in brokers],
            [b.leaders_after for b in brokers],
            [b.leader_target for b in brokers],
        ),
    )
    for ax, (name, before, after, target) in zip(axes, panels, strict=True):
        ax.bar([x - 0.2 for x in xs], before, width=0.4, label="before", color="#bbbbbb")
        ax.bar([x + 0.2 for x in xs], after, width=0.4, label="after", color="#3a78b5")
        ax.scatter(xs, target, marker="_", color="#d62728", s=80, label="target", zorder=3)
        ax.set_ylabel(name)
        ax.legend(loc="upper right", fontsize="small")
    step = max(1, len(brokers) // 40)
    axes[1].set_xticks(xs[::step])
    axes[1].set_xticklabels([str(b.broker_id) for b in brokers][::step], rotation=90, fontsize="small")
    axes[1].set_xlabel("broker")
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
