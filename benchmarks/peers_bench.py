"""Side by side with the peers: this planner, kafka-kit's topicmappr and Kafka's own
``kafka-reassign-partitions --generate`` planner, on the same snapshot, same machine, same run.

For each tier of ``placement_bench.py`` (S 6 brokers / 1K partitions, M 30 / 30K, L 300 / 1M,
XL 600 / 2M; 3 racks, RF 3, heavy-tailed lognormal partition sizes, seeded) and each scenario
(``add``: 10 % more brokers; ``remove``: broker 0; ``skew``: rebalance of a cluster placed topic by
topic by Kafka's algorithm), it runs, each in its own process (wall time, peak RSS from ``wait4``):

* this planner, ``--balance replicas`` and ``--balance bytes`` (``plan()`` in a child process);
* topicmappr v3.18.1 (``devstack.topicmappr``, built once) on the snapshot written into a real
  local ZooKeeper (``peer_tools.load_snapshot``; every broker's capacity ``--capacity-factor`` x
  the most bytes a broker holds, so ``StorageFree`` means something), with the commands that suit
  each job (``TOPICMAPPR_COMMANDS``; ``--optimize-leadership`` where it applies);
* Kafka 3.9.2's ``ReassignPartitionsCommand.calculateAssignment`` by reflection, ``--generate-runs``
  times (its start index is random): the row shows the median run by moves, with the range.

Every peer plan is checked (``peer_score.validate``: every partition present with its replication
factor, brokers that exist, no broker twice, removed brokers empty) before it is scored; all plans,
this planner's included, are scored by one evaluator (``peer_score.score``: the project's
``build_report``, M_LB, the byte bound). A second table gives this planner's ratio to the best peer
on each measure. Cruise Control and Strimzi are not runnable here (no artifact on any registry
this machine reaches): the table says so and quotes nothing for them.

Usage::

    nice -n 10 .venv/bin/python benchmarks/peers_bench.py --tiers S,M [--scenarios add,remove,skew]
        [--generate-runs 5] [--capacity-factor 1.2] [--csv out.csv] [--markdown]

Not a test: it prints.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "operator"))

from peer_score import plan_from_assignment, request_for, score, validate  # noqa: E402
from peer_tools import (  # noqa: E402
    KafkaGenerate,
    TimedOut,
    load_snapshot,
    run_topicmappr,
    scratch_zookeeper,
    timed,
    vmhwm_mb,
)
from placement_bench import TIERS, Case, _cases, _load  # noqa: E402
from placement_bench import _print_table as print_table  # noqa: E402

from kafka_zk_operator.devstack.topicmappr import TOPICMAPPR_MODULE_VERSION, topicmappr_binary  # noqa: E402
from kafka_zk_operator.domain.modes import Mode  # noqa: E402
from kafka_zk_operator.domain.placement import Balance, ClusterArrays, PlanRequest, plan  # noqa: E402

SCENARIOS = ("add", "remove", "skew")
#: topicmappr's commands per scenario: (label, argv builder from the cluster's broker ids and the
#: request's brokers). ``rebuild`` with new brokers listed moves nothing (it only replaces brokers
#: missing from the list), so adding brokers needs ``--force-rebuild`` (count placement, a full
#: rebuild like --generate) or ``scale`` (storage: moves the largest partitions off the fullest
#: brokers); ``rebalance`` (storage) offloads brokers well above the mean of StorageFree.
TOPICMAPPR_COMMANDS: dict[str, list[tuple[str, Callable[[list[int], list[int]], list[str]]]]] = {
    "add": [
        ("rebuild --force-rebuild", lambda ids, _: ["rebuild", "--topics", ".*", "--brokers", _csv(ids),
                                                    "--force-rebuild", "--optimize-leadership"]),
        ("rebuild --force-rebuild --placement storage", lambda ids, _: [
            "rebuild", "--topics", ".*", "--brokers", _csv(ids), "--force-rebuild", "--placement", "storage",
            "--optimize", "storage"]),
        ("scale", lambda ids, _: ["scale", "--topics", ".*", "--brokers", _csv(ids),
                                  "--partition-size-threshold", "0"]),
    ],
    "remove": [
        ("rebuild", lambda ids, gone: ["rebuild", "--topics", ".*", "--brokers",
                                       _csv([b for b in ids if b not in gone]), "--optimize-leadership"]),
        ("rebuild --placement storage", lambda ids, gone: [
            "rebuild", "--topics", ".*", "--brokers", _csv([b for b in ids if b not in gone]),
            "--placement", "storage", "--optimize", "storage"]),
    ],
    "skew": [
        ("rebuild --force-rebuild", lambda ids, _: ["rebuild", "--topics", ".*", "--brokers", _csv(ids),
                                                    "--force-rebuild", "--optimize-leadership"]),
        ("rebalance", lambda ids, _: ["rebalance", "--topics", ".*", "--brokers", "-1",
                                      "--partition-size-threshold", "0"]),
    ],
}  # fmt: skip


def _csv(ids: list[int]) -> str:
    return ",".join(str(b) for b in ids)


# -- this planner, in a child process -----------------------------------------------------------
def child(cluster_file: Path, request_json: str, out_file: Path) -> None:
    raw = json.loads(request_json)
    request = PlanRequest(
        Mode.parse(str(raw["mode"])), brokers=tuple(int(b) for b in raw.get("brokers", [])),
        balance=Balance(raw["balance"]),
    )  # fmt: skip
    cluster = _load(cluster_file)
    started = time.perf_counter()
    result = plan(cluster, request)
    seconds = time.perf_counter() - started
    np.save(out_file, result.replicas)
    print(json.dumps({"seconds": seconds, "vmhwm_mb": vmhwm_mb(os.getpid())}))


def run_ours(case: Case, balance: Balance, workdir: Path) -> tuple[np.ndarray, float, float, float]:
    out = workdir / "ours.npy"
    request = json.dumps({**case.request, "balance": str(balance)})
    text, _, peak, cpu = timed([sys.executable, __file__, "--child", str(case.cluster_file), request, str(out)],
                          what=f"plan {case.tier}/{case.scenario}")  # fmt: skip
    after = np.load(out)
    out.unlink()
    last = json.loads(text.strip().splitlines()[-1])
    return after, float(last["seconds"]), max(peak, float(last["vmhwm_mb"])), cpu


# -- one case -------------------------------------------------------------------------------------
def _measured(
    cluster: ClusterArrays,
    case: Case,
    planner: str,
    after: np.ndarray | None,
    seconds: float,
    peak: float,
    cpu: float,
    problems: list[str],
) -> dict[str, object]:
    removed = case.request.get("brokers", []) if case.request["mode"] == "remove-brokers" else []
    assert isinstance(removed, list)
    if after is not None:
        problems = problems + validate(cluster, after, removed=removed)
    row: dict[str, object] = {"tier": case.tier, "scenario": case.scenario, "planner": planner,
                              "valid": not problems, "problems": "; ".join(problems[:3]),
                              "seconds": seconds, "peak_mb": peak, "cpu_s": cpu}  # fmt: skip
    if not problems and after is not None:
        row.update(score(cluster, request_for(case.request), after))
    return row


def run_case(case: Case, *, zk: str, prefix: str, tm: Path, gen: KafkaGenerate, gen_runs: int,
             capacity_factor: float, workdir: Path, timeout: float) -> list[dict[str, object]]:  # fmt: skip
    cluster = _load(case.cluster_file)
    rows: list[dict[str, object]] = []
    for balance in (Balance.REPLICAS, Balance.BYTES):
        print(f"  {case.tier}/{case.scenario}: kzo --balance {balance} ...", file=sys.stderr)
        after, seconds, peak, cpu = run_ours(case, balance, workdir)
        rows.append(_measured(cluster, case, f"kzo --balance {balance}", after, seconds, peak, cpu, []))
    started = time.perf_counter()
    load_snapshot(zk, prefix, cluster, capacity_factor=capacity_factor)
    print(
        f"  {case.tier}/{case.scenario}: snapshot in ZooKeeper ({time.perf_counter() - started:.1f} s)",
        file=sys.stderr,
    )
    ids = [int(b) for b in cluster.broker_ids.tolist()]
    brokers = case.request.get("brokers", [])
    assert isinstance(brokers, list)
    # A no-op rebuild (every broker kept) reads the same znodes and plans nothing: its time is
    # topicmappr's ZooKeeper read, included in each command's time below.
    read = run_topicmappr(tm, zk, prefix, ["rebuild", "--topics", ".*", "--brokers", "-1"], workdir).seconds
    for label, argv in TOPICMAPPR_COMMANDS[case.scenario]:
        print(f"  {case.tier}/{case.scenario}: topicmappr {label} ...", file=sys.stderr)
        try:
            run = run_topicmappr(
                tm, zk, prefix, argv(ids, [int(b) for b in brokers]), workdir, timeout=timeout
            )
        except TimedOut as exc:
            rows.append(_measured(cluster, case, f"topicmappr {label}", None, timeout, 0.0, 0.0, [str(exc)]))
            rows[-1]["zk_read_s"] = read
            continue
        after, problems = plan_from_assignment(cluster, run.proposed)
        rows.append(_measured(cluster, case, f"topicmappr {label}", after, run.seconds, run.peak_mb,
                              run.cpu_seconds, problems))  # fmt: skip
        rows[-1]["zk_read_s"] = read
    targets = [b for b in ids if b not in brokers] if case.request["mode"] == "remove-brokers" else ids
    input_file = gen.write_input(cluster, targets)
    gen_rows = []
    for i in range(gen_runs):
        print(
            f"  {case.tier}/{case.scenario}: calculateAssignment run {i + 1}/{gen_runs} ...", file=sys.stderr
        )
        run = gen.run(input_file)
        after, problems = plan_from_assignment(cluster, run.proposed)
        gen_rows.append(_measured(cluster, case, "Kafka calculateAssignment", after,
                                  run.inner_seconds or run.seconds, run.peak_mb, run.cpu_seconds, problems))  # fmt: skip
    rows.append(_median_run(gen_rows))
    return rows


def _median_run(runs: list[dict[str, object]]) -> dict[str, object]:
    valid = [r for r in runs if r["valid"]]
    if not valid:
        return runs[0]
    ordered = sorted(valid, key=lambda r: int(r["moves"]))  # type: ignore[call-overload]
    row = dict(ordered[len(ordered) // 2])
    row["moves_range"] = f"{int(ordered[0]['moves']):,}-{int(ordered[-1]['moves']):,}"  # type: ignore[call-overload]
    row["runs"] = f"{len(valid)}/{len(runs)} valid"
    row["seconds"] = statistics.median(float(r["seconds"]) for r in runs)  # type: ignore[arg-type]
    row["peak_mb"] = max(float(r["peak_mb"]) for r in runs)  # type: ignore[arg-type]
    row["cpu_s"] = statistics.median(float(r["cpu_s"]) for r in runs)  # type: ignore[arg-type]
    row["valid"] = len(valid) == len(runs)
    return row


# -- tables ---------------------------------------------------------------------------------------
COLUMNS = (
    ("tier", "tier"), ("scenario", "scenario"), ("planner", "planner"), ("valid", "valid"),
    ("moves", "moves"), ("ratio", "moves/M_LB"), ("data", "data moved GiB"), ("dratio", "moved/byte bound"),
    ("rep", "max/mean repl"), ("bytes", "max/mean bytes"), ("lead", "max/mean lead"), ("viol", "rack viol"),
    ("time", "plan s (ZK read)"), ("cpu", "process CPU s"), ("rss", "peak MB"),
)  # fmt: skip
#: Measures of the ratio table: key, header, lower is better.
MEASURES = (("moves", "moves"), ("bytes_moved", "data moved"), ("max_mean_replicas", "max/mean repl"),
            ("max_mean_bytes", "max/mean bytes"), ("max_mean_leaders", "max/mean lead"),
            ("seconds", "plan time"), ("cpu_s", "process CPU"), ("peak_mb", "peak MB"))  # fmt: skip


def _cells(r: dict[str, object]) -> dict[str, str]:
    base = {"tier": str(r["tier"]), "scenario": str(r["scenario"]), "planner": str(r["planner"]),
            "valid": "yes" if r["valid"] else f"NO: {r['problems']}",
            "time": f"{float(r['seconds']):.2f}" + (f" (read {float(r['zk_read_s']):.2f})" if "zk_read_s" in r else ""),  # type: ignore[arg-type]
            "cpu": f"{float(r['cpu_s']):.2f}", "rss": f"{float(r['peak_mb']):.0f}"}  # type: ignore[arg-type]  # fmt: skip
    if "moves" not in r:
        return {**base, **{k: "-" for k, _ in COLUMNS if k not in base}}
    m, lb, data, blb = (int(r[k]) for k in ("moves", "m_lb", "bytes_moved", "bytes_lb"))  # type: ignore[call-overload]
    moves = f"{m:,}" + (f" ({r['moves_range']})" if "moves_range" in r else "")
    return {**base, "moves": moves, "ratio": f"{m / lb:.3f}" if lb else ("1.000" if not m else "inf"),
            "data": f"{data / 2**30:,.1f}", "dratio": f"{data / blb:.3f}" if blb else ("1.000" if not data else "inf"),
            "rep": f"{float(r['max_mean_replicas']):.3f}", "bytes": f"{float(r['max_mean_bytes']):.3f}",  # type: ignore[arg-type]
            "lead": f"{float(r['max_mean_leaders']):.3f}", "viol": str(r["rack_violations"])}  # type: ignore[arg-type]  # fmt: skip


def ratio_rows(rows: list[dict[str, object]]) -> list[dict[str, str]]:
    """Per case and measure: the best peer's value and this planner's (each balance) over it."""
    out = []
    for key in sorted(
        {(str(r["tier"]), str(r["scenario"])) for r in rows}, key=lambda k: (list(TIERS).index(k[0]), k[1])
    ):
        case = [r for r in rows if (r["tier"], r["scenario"]) == key and "moves" in r]
        peers = [r for r in case if not str(r["planner"]).startswith("kzo")]
        ours = [r for r in case if str(r["planner"]).startswith("kzo")]
        for measure, header in MEASURES:
            if not peers:
                continue
            best = min(peers, key=lambda r: float(r[measure]))  # type: ignore[arg-type]
            value = float(best[measure])  # type: ignore[arg-type]
            cells = {"tier": key[0], "scenario": key[1], "measure": header,
                     "best": f"{value:,.3f}" if value < 100 else f"{value:,.0f}", "who": str(best["planner"])}  # fmt: skip
            for r in ours:
                mine = float(r[measure])  # type: ignore[arg-type]
                cells[str(r["planner"]).split()[-1]] = (
                    f"{mine / value:.3f}" if value else ("1.000" if not mine else "inf")
                )
            out.append(cells)
    return out


RATIO_COLUMNS = (("tier", "tier"), ("scenario", "scenario"), ("measure", "measure"), ("best", "best peer"),
                 ("who", "best peer is"), ("replicas", "kzo replicas / best"), ("bytes", "kzo bytes / best"))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description="This planner side by side with topicmappr and Kafka's tool."
    )
    parser.add_argument("--tiers", default="S,M", help="comma-separated tiers: S, M, L, XL")
    parser.add_argument(
        "--scenarios", default=",".join(SCENARIOS), help="comma-separated: " + ",".join(SCENARIOS)
    )
    parser.add_argument("--generate-runs", type=int, default=5, help="calculateAssignment runs per case")
    parser.add_argument(
        "--capacity-factor",
        type=float,
        default=1.2,
        help="every broker's capacity for topicmappr: this x the most bytes a broker holds",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="seconds after which a topicmappr command is stopped (reported as not finished)",
    )
    parser.add_argument("--seed", type=int, default=1, help="generator seed")
    parser.add_argument("--csv", type=Path, help="also write every row's raw figures here")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--cache-dir", type=Path, default=HERE.parent / ".kzo" / "bench", help="input cache")
    parser.add_argument("--child", nargs=3, metavar=("NPZ", "REQUEST", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), args.child[1], Path(args.child[2]))
        return
    tiers = [t.strip().upper() for t in args.tiers.split(",") if t.strip()]
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    if bad := [t for t in tiers if t not in TIERS] + [s for s in scenarios if s not in SCENARIOS]:
        raise SystemExit(
            f"unknown tier or scenario {bad}; tiers: {', '.join(TIERS)}; scenarios: {', '.join(SCENARIOS)}"
        )
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    tm = topicmappr_binary()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="kzo-peers-") as tmp:
        work = Path(tmp)
        gen = KafkaGenerate(work)
        with scratch_zookeeper(work / "zookeeper") as zk:
            for tier in tiers:
                for n, case in enumerate(_cases(tier, scenarios, args.cache_dir, args.seed)):
                    rows.extend(run_case(case, zk=zk, prefix=f"{tier}-{n}", tm=tm, gen=gen, gen_runs=args.generate_runs,
                                         capacity_factor=args.capacity_factor, workdir=work,
                                         timeout=args.timeout))  # fmt: skip
    print(f"# peers benchmark: {os.cpu_count()} CPUs, topicmappr {TOPICMAPPR_MODULE_VERSION}, Kafka 3.9.2 "
          f"calculateAssignment x{args.generate_runs} (median by moves, range), capacity factor "
          f"{args.capacity_factor}, python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")  # fmt: skip
    print_table([_cells(r) for r in rows], args.markdown, COLUMNS, left=4)
    print()
    print("# this planner over the best peer on each measure (lower is better; < 1: this planner is ahead)")
    print_table(ratio_rows(rows), args.markdown, RATIO_COLUMNS, left=5)
    print()
    print("# Cruise Control, Strimzi topic operator: not run (no artifact on any registry this machine reaches); "
          "no figure quoted")  # fmt: skip
    invalid = [r for r in rows if not r["valid"]]
    ours_bad = [r for r in invalid if str(r["planner"]).startswith("kzo")]
    print(f"[{'ok' if not ours_bad else 'FAIL'}] this planner's plans valid; every plan scored was validated first "
          f"({len(rows) - len(invalid)} scored of {len(rows)})")  # fmt: skip
    for r in invalid:
        print(f"[info] not scored: {r['tier']}/{r['scenario']} {r['planner']}: {r['problems']}")
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted({k for r in rows for k in r})
        with args.csv.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=keys)
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
