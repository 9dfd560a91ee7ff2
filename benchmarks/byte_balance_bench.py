"""Benchmark of byte balance (``--balance bytes``, and ``both``: the count plan then swaps) against
count balance (``--balance replicas``).

Prints one table row per (tier, scenario, balance: replicas, bytes, both): plan time and peak RSS of ``plan()`` (each run
in its own child process, median of ``--runs``), replica moves against the count bound M_LB, bytes
moved against the byte lower bound (``placement.byte_balance.bytes_lower_bound``, for the balance
the plan reached), bytes per broker (max/mean before, max/mean and min/mean after), replica counts
after (max/mean), rack violations, whether the runs gave identical plans. Then one check line per
acceptance figure of the byte mode (``bytes``; ``both`` is printed for comparison): max bytes per broker <= 1.05 x mean (or the report's note that
the instance does not allow it), bytes moved <= 1.10 x the bound, 0 rack violations, tier L within
10 s.

Inputs are ``placement_bench.py``'s (cached in the same directory): tiers S 6 brokers / 1K
partitions, M 30 / 30K, L 300 / 1M, XL 600 / 2M; 3 racks, RF 3, heavy-tailed topic sizes,
lognormal partition sizes; scenarios ``add`` (10 % more brokers over the racks), ``add-1rack``
(all in one rack: the rack limits pin the other racks above the mean), ``remove`` (1 broker),
``skew`` (rebalance of a cluster placed topic by topic by Kafka's algorithm).

Usage::

    .venv/bin/python benchmarks/byte_balance_bench.py --tiers S,M,L [--scenarios add,skew]
        [--runs 3] [--byte-tolerance 0.02] [--markdown]

Not a test: it prints.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "operator"))

from placement_bench import SCENARIOS, TIERS, Case, _cases, _load, run_child  # noqa: E402
from placement_bench import _print_table as print_table  # noqa: E402

from kafka_zk_operator.domain.modes import Mode  # noqa: E402
from kafka_zk_operator.domain.placement import Balance, PlanRequest, plan  # noqa: E402
from kafka_zk_operator.domain.placement.byte_targets import DEFAULT_BYTE_TOLERANCE  # noqa: E402

BALANCES = (Balance.REPLICAS, Balance.BYTES, Balance.BOTH)


def child(cluster_file: Path, request_json: str) -> None:
    raw = json.loads(request_json)
    cluster = _load(cluster_file)
    request = PlanRequest(
        Mode.parse(str(raw["mode"])),
        brokers=tuple(int(b) for b in raw.get("brokers", [])),
        balance=Balance(raw["balance"]),
        byte_tolerance=float(raw["byte_tolerance"]),
    )
    started = time.perf_counter()
    result = plan(cluster, request)
    seconds = time.perf_counter() - started
    report = result.report
    _, top_before, mean_before = report.byte_spread(after=False)
    low_after, top_after, mean_after = report.byte_spread(after=True)
    _, top_count, mean_count = report.spread()
    kept = [b for b in report.brokers if b.role not in ("removed", "idle")]
    rack_mean = {
        rack: np.mean([b.bytes_after for b in kept if b.rack == rack]) for rack in {b.rack for b in kept}
    }
    print(
        json.dumps(
            {
                "seconds": seconds,
                "moves": report.moves,
                "m_lb": report.m_lb,
                "bytes_moved": report.bytes_moved,
                "bytes_lb": report.bytes_lower_bound,
                "max_before": top_before / mean_before,
                "max_after": top_after / mean_after,
                "min_after": low_after / mean_after,
                "max_count": top_count / mean_count,
                "max_rack": max(b.bytes_after / rack_mean[b.rack] for b in kept),
                "violations": report.rack_violations_after,
                "duplicates": report.duplicates_after,
                "pinned": any("cannot come down to the mean" in n for n in report.notes),
                "left": [n for n in report.notes if "their byte band" in n],
                "digest": hashlib.sha256(np.ascontiguousarray(result.replicas).tobytes()).hexdigest()[:16],
            }
        )
    )


def _run_child(case: Case, balance: Balance, tolerance: float) -> dict[str, object]:
    request = {**case.request, "balance": str(balance), "byte_tolerance": tolerance}
    cmd = [sys.executable, __file__, "--child", str(case.cluster_file), json.dumps(request)]
    return run_child(cmd, f"{case.tier}/{case.scenario}/{balance}")


COLUMNS = (
    ("tier", "tier"),
    ("scenario", "scenario"),
    ("balance", "balance"),
    ("time", "time s"),
    ("rss", "peak MB"),
    ("moves", "moves (M_LB)"),
    ("data", "data moved GiB"),
    ("lb", "bound GiB"),
    ("ratio", "moved/bound"),
    ("before", "max/mean data before"),
    ("after", "max/mean data after"),
    ("low", "min/mean data after"),
    ("rack", "max/rack mean after"),
    ("count", "max/mean replicas after"),
    ("viol", "rack viol"),
    ("same", "identical"),
)


def _row(case: Case, balance: Balance, runs: list[dict[str, object]]) -> dict[str, str]:
    first = runs[0]
    times = sorted(float(r["seconds"]) for r in runs)  # type: ignore[arg-type]
    lb = first["bytes_lb"]
    moved = int(first["bytes_moved"])  # type: ignore[call-overload]
    return {
        "tier": case.tier,
        "scenario": case.scenario,
        "balance": str(balance),
        "time": f"{times[len(times) // 2]:.2f}",
        "rss": f"{max(float(r['peak_rss_mb']) for r in runs):.0f}",  # type: ignore[arg-type]
        "moves": f"{int(first['moves']):,} ({int(first['m_lb']):,})",  # type: ignore[call-overload]
        "data": f"{moved / 2**30:,.0f}",
        "lb": "-" if lb is None else f"{int(lb) / 2**30:,.0f}",  # type: ignore[call-overload]
        "ratio": "-" if lb is None else (f"{moved / int(lb):.4f}" if lb else "-"),  # type: ignore[call-overload]
        "before": f"{float(first['max_before']):.3f}",  # type: ignore[arg-type]
        "after": f"{float(first['max_after']):.3f}",  # type: ignore[arg-type]
        "low": f"{float(first['min_after']):.3f}",  # type: ignore[arg-type]
        "rack": f"{float(first['max_rack']):.3f}",  # type: ignore[arg-type]
        "count": f"{float(first['max_count']):.3f}",  # type: ignore[arg-type]
        "viol": str(first["violations"]),
        "same": "yes" if len({r["digest"] for r in runs}) == 1 else "NO",
    }


def _checks(case: Case, runs: list[dict[str, object]]) -> list[str]:
    first = runs[0]
    tag = f"{case.tier}/{case.scenario}"
    out = []
    top = float(first["max_after"])  # type: ignore[arg-type]
    if top <= 1.05:
        out.append(f"[ok] {tag}: max bytes per broker {top:.3f} x mean (<= 1.05)")
    elif first["pinned"]:
        in_rack = float(first["max_rack"])  # type: ignore[arg-type]
        out.append(
            f"[{'ok' if in_rack <= 1.05 else 'FAIL'}] {tag}: max bytes per broker {top:.3f} x mean, which the "
            f"report says the rack limits impose on any plan; {in_rack:.3f} x its rack's mean (<= 1.05)"
        )
    else:
        out.append(f"[FAIL] {tag}: max bytes per broker {top:.3f} x mean (> 1.05) {first['left']}")
    lb, moved = first["bytes_lb"], int(first["bytes_moved"])  # type: ignore[call-overload]
    ratio = moved / int(lb) if lb else (1.0 if moved == 0 else float("inf"))  # type: ignore[call-overload]
    out.append(f"[{'ok' if ratio <= 1.10 else 'FAIL'}] {tag}: bytes moved / bound {ratio:.4f} (<= 1.10)")
    out.append(f"[{'ok' if int(first['violations']) == 0 else 'FAIL'}] {tag}: 0 rack violations")  # type: ignore[call-overload]
    same = len({r["digest"] for r in runs}) == 1
    out.append(f"[{'ok' if same else 'FAIL'}] {tag}: identical plans over {len(runs)} runs")
    if case.tier == "L":
        times = sorted(float(r["seconds"]) for r in runs)  # type: ignore[arg-type]
        secs = times[len(times) // 2]
        out.append(f"[{'ok' if secs <= 10 else 'FAIL'}] {tag}: planned in {secs:.2f} s (<= 10 s)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Benchmark byte balance against count balance (prints a table)."
    )
    parser.add_argument("--tiers", default="S,M,L", help="comma-separated tiers: S, M, L, XL")
    parser.add_argument(
        "--scenarios", default=",".join(SCENARIOS), help="comma-separated: " + ",".join(SCENARIOS)
    )
    parser.add_argument("--runs", type=int, default=3, help="plans per case and balance (median time)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed")
    parser.add_argument(
        "--byte-tolerance", type=float, default=DEFAULT_BYTE_TOLERANCE, help="band half-width"
    )
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--cache-dir", type=Path, default=HERE.parent / ".kzo" / "bench", help="input cache")
    parser.add_argument("--child", nargs=2, metavar=("NPZ", "REQUEST"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), args.child[1])
        return
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, str]] = []
    checks: list[str] = []
    for tier in (t.strip().upper() for t in args.tiers.split(",") if t.strip()):
        if tier not in TIERS:
            raise SystemExit(f"unknown tier {tier!r} (choose from {', '.join(TIERS)})")
        scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
        for case in _cases(tier, scenarios, args.cache_dir, args.seed):
            for balance in BALANCES:
                print(f"  {tier}/{case.scenario}/{balance}: planning ...", file=sys.stderr)
                runs = [_run_child(case, balance, args.byte_tolerance) for _ in range(max(1, args.runs))]
                rows.append(_row(case, balance, runs))
                if balance is Balance.BYTES:
                    checks.extend(_checks(case, runs))
    print(
        f"# byte balance benchmark: single-process core, {os.cpu_count()} CPUs, byte tolerance "
        f"{args.byte_tolerance}, numpy {np.__version__}, python {sys.version.split()[0]}, "
        f"max RSS of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )
    print_table(rows, args.markdown, COLUMNS, left=3)
    print()
    for line in checks:
        print(line)


if __name__ == "__main__":
    main()
