"""Plot the KafkaTopic scaling curve (docs/images/kafkatopic-scaling.png) from measured rows.

The rows are ``benchmarks/results/topics_bench.csv``: one line per ``topics_bench.py`` run
copied from its output (date, code, N and the figures), nothing estimated. Four panels against
N: time to all Ready, operator CPU until then, operator peak RSS (the burst's and the adoption's)
and the adoption time, with issue #16's targets as dashed lines.

Usage: .venv/bin/python benchmarks/topics_curve.py [--csv PATH] [--out PATH]
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROOT = Path(__file__).resolve().parents[1]
#: (column, panel title, y label, issue #16's target at 10,000 or None)
PANELS = (
    ("all_ready_s", "Time until all are Ready", "seconds", 120.0),
    ("operator_cpu_s", "Operator CPU until all Ready", "CPU seconds", None),
    ("peak_rss_mb", "Operator peak RSS (burst; adoption dotted)", "MB", 400.0),
    ("adopt_s", "Restarted operator adopts all", "seconds", 60.0),
)


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return [row for row in csv.DictReader(handle) if not row["date"].startswith("#")]


def plot(rows: list[dict[str, str]], out: Path) -> None:
    series: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        series[f"{row['date']} ({row['code']})"].append(row)
    rows_of_legend = (len(series) + 2) // 3
    figure, axes = plt.subplots(2, 2, figsize=(12, 7.5 + 0.22 * rows_of_legend))
    # One colour per run, also past the default cycle's ten (tab20 and tab20b: forty).
    palette = [plt.get_cmap("tab20")(i) for i in range(20)] + [plt.get_cmap("tab20b")(i) for i in range(20)]
    colours = {label: palette[i % len(palette)] for i, label in enumerate(series)}
    for ax, (column, title, unit, target) in zip(axes.flat, PANELS, strict=True):
        for label, points in series.items():
            points = sorted(points, key=lambda r: int(r["n"]))
            xs = [int(r["n"]) for r in points]
            line = ax.plot(
                xs, [float(r[column]) for r in points], marker="o", label=label, color=colours[label]
            )[0]
            if column == "peak_rss_mb":
                adoption = [float(r["adopt_peak_rss_mb"]) for r in points]
                ax.plot(xs, adoption, marker=".", linestyle=":", color=line.get_color())
        if target is not None:
            ax.axhline(target, color="grey", linestyle="--", linewidth=1)
            ax.annotate(f"target at 10,000: {target:g}", (0.02, target), xycoords=("axes fraction", "data"),
                        va="bottom", fontsize=8, color="grey")  # fmt: skip
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("KafkaTopics created at once (1 partition, RF 3)")
        ax.set_ylabel(unit)
        ax.grid(alpha=0.3)
    # Below the panels, so that no run's points are hidden behind it.
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    figure.suptitle("kafka-zk-operator, benchmarks/topics_bench.py on a 2-core machine (whole stack on it)")
    figure.tight_layout(rect=(0, 0.22 * rows_of_legend / (7.5 + 0.22 * rows_of_legend) + 0.01, 1, 1))
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=90)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--csv", type=Path, default=ROOT / "benchmarks/results/topics_bench.csv")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/images/kafkatopic-scaling.png")
    args = parser.parse_args()
    plot(read_rows(args.csv), args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
