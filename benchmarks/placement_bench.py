"""Benchmark of the placement engine's single-process core (reference §8 tiers and scenarios).

Prints one table row per (tier, scenario): wall time and peak memory of ``plan()`` (each run in
its own child process, median of ``--runs`` with the range, peak RSS from ``wait4``), moves against
the bound M_LB, the moves Kafka's
``kafka-reassign-partitions --generate`` would make on the same input (every topic recomputed by
``assignReplicasToBrokers`` with a random start), balance (max/avg replicas and leaders per
broker), rack violations, and whether two runs produced identical plans. With ``--spark``, the
PySpark job (``kafka_zk_operator.spark``) plans each case once more in ``local[2]`` in its own
process tree (``spark_bench.py``): plan time (``run_plan``) plus the SparkSession start, peak RSS
of the whole tree (driver, JVM, Python workers), and whether its plan equals the core's.

Tiers (3 racks, RF 3, heavy-tailed topic sizes, seeded): S 6 brokers / 1K partitions, M 30 / 30K,
L 300 / 1M, XL 600 / 2M. Scenarios: ``add`` (10 % more brokers, spread over the racks),
``add-1rack`` (the same brokers all in one rack), ``remove`` (1 broker), ``skew`` (rebalance of a
cluster whose topics were each placed by Kafka's own algorithm), and on request ``add1`` (one
broker added). Note: with ``k`` brokers added to ``N``, ``--generate`` moves about ``1 - RF/(N+k)``
of all replicas and the bound is ``k/(N+k)``, so no planner can beat ``--generate`` by more than
about ``(N + k - RF) / k`` (10x for 3 added to 30, 28x for 1 added to 30) in replica moves. The
data copied is compared too (``data moved``, ``gen/ours data``): the planner moves the smallest
replicas that reach the bound, so it copies far less data than its share of replicas; it balances
replica counts, not bytes.

Usage::

    .venv/bin/python benchmarks/placement_bench.py --tiers S,M,L [--scenarios add,remove]
        [--runs 3] [--no-generate] [--spark [--spark-master local[2]]] [--markdown] [--cache-dir .kzo/bench]

Inputs and ``--generate`` counts are computed once and cached in the cache directory. Not a
test: it prints.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "operator"))

from kafka_zk_operator.domain.kafka import assignment  # noqa: E402
from kafka_zk_operator.domain.model import Broker  # noqa: E402
from kafka_zk_operator.domain.modes import Mode  # noqa: E402
from kafka_zk_operator.domain.placement import ClusterArrays, PlanRequest, plan  # noqa: E402
from kafka_zk_operator.domain.placement.synthetic import make_brokers, synthetic_cluster  # noqa: E402

TIERS = {"S": (6, 1_000), "M": (30, 30_000), "L": (300, 1_000_000), "XL": (600, 2_000_000)}
SCENARIOS = ("add", "add-1rack", "remove", "skew")
#: Extra scenario (not in the default list): one broker added.
EXTRA_SCENARIOS = ("add1",)
RACKS = 3
RF = 3


@dataclass(frozen=True)
class Case:
    tier: str
    scenario: str
    cluster_file: Path
    request: dict[str, object]


# -- inputs ----------------------------------------------------------------------------------------
def _save(cluster: ClusterArrays, path: Path) -> None:
    np.savez(
        path,
        broker_ids=cluster.broker_ids,
        broker_rack=cluster.broker_rack,
        racks=np.array(json.dumps(list(cluster.racks))),
        topics=np.array(cluster.topics),
        topic_of=cluster.topic_of,
        partition_of=cluster.partition_of,
        replicas=cluster.replicas,
        sizes=cluster.sizes,
    )


def _load(path: Path) -> ClusterArrays:
    with np.load(path) as data:
        return ClusterArrays(
            broker_ids=data["broker_ids"],
            broker_rack=data["broker_rack"],
            racks=tuple(json.loads(str(data["racks"]))),
            topics=tuple(str(t) for t in data["topics"]),
            topic_of=data["topic_of"],
            partition_of=data["partition_of"],
            replicas=data["replicas"],
            sizes=data["sizes"],
        )


def _cases(tier: str, scenarios: list[str], cache: Path, seed: int) -> list[Case]:
    n, partitions = TIERS[tier]
    added = max(1, n // 10)
    cases: list[Case] = []
    base_file = cache / f"{tier}-balanced-{seed}.npz"
    if any(s != "skew" for s in scenarios) and not base_file.exists():
        print(f"  generating {tier} balanced cluster ...", file=sys.stderr)
        _save(synthetic_cluster(n, RACKS, partitions, rf=RF, seed=seed, layout="balanced"), base_file)
    for scenario in scenarios:
        if scenario in ("add", "add-1rack", "add1"):
            path = cache / f"{tier}-{scenario}-{seed}.npz"
            count = 1 if scenario == "add1" else added
            if not path.exists():
                base = _load(base_file)
                if scenario == "add-1rack":
                    new = [Broker(n + i, base.racks[0]) for i in range(count)]
                else:
                    new = make_brokers(count, RACKS, first_id=n)
                _save(base.with_brokers(new), path)
            request: dict[str, object] = {"mode": "add-brokers", "brokers": list(range(n, n + count))}
            cases.append(Case(tier, scenario, path, request))
        elif scenario == "remove":
            cases.append(Case(tier, scenario, base_file, {"mode": "remove-brokers", "brokers": [0]}))
        elif scenario == "skew":
            path = cache / f"{tier}-kafka-{seed}.npz"
            if not path.exists():
                print(f"  generating {tier} cluster with Kafka's per-topic placement ...", file=sys.stderr)
                _save(synthetic_cluster(n, RACKS, partitions, rf=RF, seed=seed, layout="kafka"), path)
            cases.append(Case(tier, scenario, path, {"mode": "rebalance"}))
        else:
            raise SystemExit(f"unknown scenario {scenario!r}")
    return cases


def _request(raw: dict[str, object]) -> PlanRequest:
    brokers = raw.get("brokers", [])
    assert isinstance(brokers, list)
    return PlanRequest(Mode.parse(str(raw["mode"])), brokers=tuple(int(b) for b in brokers))


# -- Kafka's --generate ---------------------------------------------------------------------------
def generate_moves(cluster: ClusterArrays, request: PlanRequest, seed: int) -> tuple[int, int]:
    """Replica moves and bytes copied by ``kafka-reassign-partitions --generate``: every topic
    recomputed from scratch by Kafka's ``assignReplicasToBrokers`` over the target brokers, random
    start. A moved replica copies its partition's size."""
    brokers = cluster.brokers()
    if request.mode is Mode.REMOVE_BROKERS:
        brokers = [b for b in brokers if b.id not in request.brokers]
    ordered = assignment.brokers_for_assignment(brokers)
    rng = random.Random(seed * 7919 + 17)  # not the generator's stream (that would reproduce it)
    index = {int(b): i for i, b in enumerate(cluster.broker_ids)}
    starts = np.r_[0, np.flatnonzero(np.diff(cluster.topic_of)) + 1, cluster.n_partitions]
    moves = moved_bytes = 0
    for t in range(len(starts) - 1):
        lo, hi = int(starts[t]), int(starts[t + 1])
        rf = int((cluster.replicas[lo] >= 0).sum())
        new = assignment.assign_replicas_to_brokers(ordered, hi - lo, rf, rng=rng)
        proposed = np.array([[index[b] for b in new[p]] for p in range(hi - lo)], dtype=np.int64)
        old = cluster.replicas[lo:hi, :rf]
        kept = (proposed[:, :, None] == old[:, None, :]).any(axis=2)
        moved = (~kept).sum(axis=1)
        moves += int(moved.sum())
        moved_bytes += int((moved * cluster.sizes[lo:hi]).sum())
    return moves, moved_bytes


def _cached_generate(case: Case, cache: Path, seed: int) -> tuple[int, int]:
    key = hashlib.sha256(json.dumps([case.cluster_file.name, case.request, seed]).encode()).hexdigest()[:16]
    path = cache / f"generate-{key}.json"
    if path.exists():
        cached = json.loads(path.read_text())
        if "bytes" in cached:  # older caches hold moves only
            return int(cached["moves"]), int(cached["bytes"])
    print(f"  {case.tier}/{case.scenario}: Kafka --generate ...", file=sys.stderr)
    moves, moved_bytes = generate_moves(_load(case.cluster_file), _request(case.request), seed)
    path.write_text(json.dumps({"moves": moves, "bytes": moved_bytes}))
    return moves, moved_bytes


# -- child: one timed plan -------------------------------------------------------------------------
def vmhwm_mb() -> float:
    """This process's own peak RSS since its exec (``VmHWM``): unlike ``ru_maxrss`` it does not
    inherit the peak of a large parent that forked it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(cluster_file: Path, request_json: str) -> None:
    cluster = _load(cluster_file)
    request = _request(json.loads(request_json))
    started = time.perf_counter()
    result = plan(cluster, request)
    seconds = time.perf_counter() - started
    report = result.report
    _, max_r, avg_r = report.spread()
    _, max_l, avg_l = report.spread(leaders=True)
    _, max_rb, avg_rb = report.spread(after=False)
    digest = hashlib.sha256(np.ascontiguousarray(result.replicas).tobytes()).hexdigest()[:16]
    out = {
        "seconds": seconds,
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "vmhwm_mb": vmhwm_mb(),
        "moves": report.moves,
        "bytes_moved": report.bytes_moved,
        "m_lb": report.m_lb,
        "optimal": report.optimal,
        "leader_changes": report.leader_changes,
        "leader_lb": report.leader_lb,
        "rack_violations": report.rack_violations_after,
        "duplicates": report.duplicates_after,
        "balanced": report.balanced,
        "max_avg_replicas": max_r / avg_r if avg_r else 0.0,
        "max_avg_replicas_before": max_rb / avg_rb if avg_rb else 0.0,
        "max_avg_leaders": max_l / avg_l if avg_l else 0.0,
        "skewed_racks": len(report.skewed_racks),
        "digest": digest,
    }
    print(json.dumps(out))


def _run_child(case: Case) -> dict[str, object]:
    cmd = [sys.executable, __file__, "--child", str(case.cluster_file), json.dumps(case.request)]
    return run_child(cmd, f"{case.tier}/{case.scenario}")


def run_child(cmd: list[str], what: str) -> dict[str, object]:
    """Run a child that prints one JSON line last; that line, with its peak RSS (``wait4``)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    assert proc.stdout is not None and proc.stderr is not None
    stdout, stderr = proc.stdout.read(), proc.stderr.read()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"child failed for {what}:\n{stderr}")
    result: dict[str, object] = json.loads(stdout.strip().splitlines()[-1])
    result["peak_rss_mb"] = usage.ru_maxrss / 1024
    return result


# -- table -----------------------------------------------------------------------------------------
COLUMNS = (
    ("tier", "tier"),
    ("scenario", "scenario"),
    ("brokers", "brokers"),
    ("partitions", "partitions"),
    ("time", "time s (min-max)"),
    ("rss", "peak MB"),
    ("moves", "moves"),
    ("m_lb", "M_LB"),
    ("ratio", "moves/M_LB"),
    ("generate", "--generate moves"),
    ("gen_ratio", "gen/ours"),
    ("data", "data moved GiB"),
    ("gen_data", "gen/ours data"),
    ("rep", "max/avg repl (before)"),
    ("lead", "max/avg lead"),
    ("lchg", "leader chg (LB)"),
    ("viol", "rack viol"),
    ("same", "identical"),
    ("spark", "spark s (+start)"),
    ("spark_mb", "spark peak MB"),
    ("spark_same", "spark = core"),
)


def _row(
    case: Case,
    runs: list[dict[str, object]],
    gen: tuple[int, int] | None,
    spark: dict[str, object] | None = None,
) -> dict[str, str]:
    first = runs[0]
    cluster = _load(case.cluster_file)
    times = sorted(float(r["seconds"]) for r in runs)  # type: ignore[arg-type]
    median = times[len(times) // 2]
    spread = f" ({times[0]:.2f}-{times[-1]:.2f})" if len(times) > 1 else ""
    peak = max(float(r["peak_rss_mb"]) for r in runs)  # type: ignore[arg-type]
    moves, m_lb = int(first["moves"]), int(first["m_lb"])  # type: ignore[call-overload]
    data = int(first["bytes_moved"])  # type: ignore[call-overload]
    return {
        "tier": case.tier,
        "scenario": case.scenario,
        "brokers": str(cluster.n_brokers),
        "partitions": f"{cluster.n_partitions:,}",
        "time": f"{median:.2f}{spread}",
        "rss": f"{peak:.0f}",
        "moves": f"{moves:,}",
        "m_lb": f"{m_lb:,}",
        "ratio": f"{moves / m_lb:.4f}" if m_lb else "-",
        "generate": "-" if gen is None else f"{gen[0]:,}",
        "gen_ratio": "-" if gen is None or not moves else f"{gen[0] / moves:.1f}x",
        "data": f"{data / 2**30:,.1f}",
        "gen_data": "-" if gen is None or not data else f"{gen[1] / data:.1f}x",
        "rep": f"{float(first['max_avg_replicas']):.3f} ({float(first['max_avg_replicas_before']):.3f})",  # type: ignore[arg-type]
        "lead": f"{float(first['max_avg_leaders']):.3f}",  # type: ignore[arg-type]
        "lchg": f"{int(first['leader_changes']):,} ({int(first['leader_lb']):,})",  # type: ignore[call-overload]
        "viol": str(first["rack_violations"]),
        "same": "yes" if len({r["digest"] for r in runs}) == 1 else "NO",
        **_spark_cells(runs, spark),
    }


def _spark_cells(runs: list[dict[str, object]], spark: dict[str, object] | None) -> dict[str, str]:
    if spark is None:
        return {"spark": "", "spark_mb": "", "spark_same": ""}
    same = spark["digest"] == runs[0]["digest"]
    return {
        "spark": f"{float(spark['plan_s']):.1f} (+{float(spark['session_s']):.1f})",  # type: ignore[arg-type]
        "spark_mb": f"{float(spark['peak_tree_mb']):.0f}",  # type: ignore[arg-type]
        "spark_same": "yes" if same else f"NO (contract: {'yes' if spark.get('contract') else 'NO'})",
    }


def _print_table(
    rows: list[dict[str, str]],
    markdown: bool,
    columns: tuple[tuple[str, str], ...] = COLUMNS,
    left: int = 2,
) -> None:
    """The table of ``rows`` (keys and headers from ``columns``; the first ``left`` left-aligned)."""
    headers = [h for _, h in columns]
    keys = [k for k, _ in columns]
    if markdown:
        print("| " + " | ".join(headers) + " |")
        print("|" + "|".join("---" if i < left else "--:" for i in range(len(headers))) + "|")
        for row in rows:
            print("| " + " | ".join(row[k] for k in keys) + " |")
        return
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in columns]
    print(
        "  ".join(
            h.ljust(w) if i < left else h.rjust(w)
            for i, (h, w) in enumerate(zip(headers, widths, strict=True))
        )
    )
    for row in rows:
        print(
            "  ".join(
                row[k].ljust(w) if i < left else row[k].rjust(w)
                for i, (k, w) in enumerate(zip(keys, widths, strict=True))
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark the placement engine (prints a table).")
    parser.add_argument("--tiers", default="S,M,L", help="comma-separated tiers: S, M, L, XL")
    parser.add_argument(
        "--scenarios", default=",".join(SCENARIOS), help="comma-separated: " + ",".join(SCENARIOS)
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=3,
        help="plans per case: median time, max RSS, outputs compared for identity",
    )
    parser.add_argument("--seed", type=int, default=1, help="generator seed")
    parser.add_argument(
        "--no-generate", action="store_true", help="skip the --generate column (slow on L/XL)"
    )
    parser.add_argument("--spark", action="store_true", help="also run the PySpark job (spark_bench.py)")
    parser.add_argument("--spark-master", default="local[2]", help="Spark master for --spark")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".kzo" / "bench", help="input cache")
    parser.add_argument("--child", nargs=2, metavar=("NPZ", "REQUEST"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), args.child[1])
        return
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    tiers = [t.strip().upper() for t in args.tiers.split(",") if t.strip()]
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    rows: list[dict[str, str]] = []
    checks: list[str] = []
    for tier in tiers:
        if tier not in TIERS:
            raise SystemExit(f"unknown tier {tier!r} (choose from {', '.join(TIERS)})")
        for case in _cases(tier, scenarios, args.cache_dir, args.seed):
            print(f"  {tier}/{case.scenario}: planning ...", file=sys.stderr)
            runs = [_run_child(case) for _ in range(max(1, args.runs))]
            gen = None
            if not args.no_generate:
                gen = _cached_generate(case, args.cache_dir, args.seed)
            spark = _spark_run(case, args.spark_master, runs) if args.spark else None
            rows.append(_row(case, runs, gen, spark))
            checks.extend(_check(case, runs, gen))
            checks.extend(_spark_check(case, runs, spark))
    print(
        f"# placement benchmark: single-process core, {os.cpu_count()} CPUs, numpy {np.__version__}, "
        f"python {sys.version.split()[0]}"
    )
    _print_table(rows, args.markdown)
    print()
    for line in checks:
        print(line)


def _check(case: Case, runs: list[dict[str, object]], gen: tuple[int, int] | None) -> list[str]:
    first = runs[0]
    moves, m_lb = int(first["moves"]), int(first["m_lb"])  # type: ignore[call-overload]
    tag = f"{case.tier}/{case.scenario}"
    out = []
    if case.scenario in ("add", "add1", "remove"):
        out.append(f"[{'ok' if moves == m_lb else 'FAIL'}] {tag}: moves = M_LB ({moves} vs {m_lb})")
    else:
        out.append(
            f"[{'ok' if moves <= 1.02 * m_lb else 'FAIL'}] {tag}: moves <= 1.02 x M_LB ({moves} vs {m_lb})"
        )
    out.append(f"[{'ok' if int(first['rack_violations']) == 0 else 'FAIL'}] {tag}: 0 rack violations")  # type: ignore[call-overload]
    out.append(
        f"[{'ok' if len({r['digest'] for r in runs}) == 1 else 'FAIL'}] {tag}: identical plans over {len(runs)} runs"
    )
    if case.tier == "L":
        times = sorted(float(r["seconds"]) for r in runs)  # type: ignore[arg-type]
        secs = times[len(times) // 2]
        mb = max(float(r["peak_rss_mb"]) for r in runs)  # type: ignore[arg-type]
        out.append(
            f"[{'ok' if secs <= 10 else 'FAIL'}] {tag}: planned in {secs:.2f} s, median of {len(runs)} (<= 10 s)"
        )
        out.append(f"[{'ok' if mb <= 4096 else 'FAIL'}] {tag}: peak RSS {mb:.0f} MB (<= 4 GB)")
    if case.tier == "M" and case.scenario in ("add", "add1") and gen is not None:
        ceiling = _generate_ceiling(case)
        gen_moves, gen_bytes = gen
        out.append(
            f"[{'ok' if gen_moves >= 20 * moves else 'FAIL'}] {tag}: --generate moves {gen_moves / max(moves, 1):.1f}x "
            f"ours (target >= 20x; expected for any plan at the bound: about {ceiling:.1f}x)"
        )
        data = int(first["bytes_moved"])  # type: ignore[call-overload]
        out.append(
            f"[info] {tag}: --generate copies {gen_bytes / 2**30:,.1f} GiB, ours {data / 2**30:,.1f} GiB "
            f"({gen_bytes / max(data, 1):.1f}x less data; not a byte balance: the planner balances replica "
            "counts and moves the smallest replicas that reach the bound)"
        )
    return out


def _spark_run(case: Case, master: str, runs: list[dict[str, object]]) -> dict[str, object]:
    from spark_bench import contract_digest, run_spark_case

    print(f"  {case.tier}/{case.scenario}: Spark job ({master}) ...", file=sys.stderr)
    spark = run_spark_case(case.cluster_file, json.dumps(case.request), master)
    if spark["digest"] != runs[0]["digest"]:
        spark["contract"] = spark["digest"] == contract_digest(case.cluster_file, json.dumps(case.request))
    return spark


def _spark_check(case: Case, runs: list[dict[str, object]], spark: dict[str, object] | None) -> list[str]:
    if spark is None:
        return []
    tag = f"{case.tier}/{case.scenario}"
    total = float(spark["plan_s"]) + float(spark["session_s"])  # type: ignore[arg-type]
    out = []
    if spark["digest"] == runs[0]["digest"]:
        out.append(f"[ok] {tag}: Spark plan identical to the core's")
    else:
        verdict = (
            "the Spark plan equals the contract run group by group: the core's plan() strays from it"
            if spark.get("contract")
            else "the Spark plan differs from the contract too"
        )
        out.append(f"[FAIL] {tag}: Spark plan differs from the core's ({verdict})")
    if case.tier == "L":
        out.append(
            f"[{'ok' if total <= 90 else 'FAIL'}] {tag}: Spark job planned in {total:.1f} s incl. session start (<= 90 s)"
        )
    return out


def _generate_ceiling(case: Case) -> float:
    """``(1 - RF / N') / (k / N')``: --generate's expected moves over the bound, adding k brokers."""
    brokers = case.request.get("brokers", [])
    assert isinstance(brokers, list)
    n_after = _load(case.cluster_file).n_brokers
    k = len(brokers)
    return (1 - RF / n_after) / (k / n_after)


if __name__ == "__main__":
    main()
