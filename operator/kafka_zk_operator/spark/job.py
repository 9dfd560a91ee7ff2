"""The PySpark planning job: the same plans as ``domain.placement.plan``, computed through Spark.

:func:`run_plan` follows the engine's contract for a distributed engine (``domain.placement``
docstring): stage 1 (``broker_stage``: targets, M_LB, flows, per-group quotas) on the driver,
stage 2 (``select_moves`` per partition group) as a grouped Arrow UDF (:mod:`.stage2`), stage 3
(``finish_plan``: repair, exact check, leaders, report) on the driver. The result is the
``Plan`` the single-process engine returns for the same input, bit for bit.

Command line (also what ``spark-submit`` runs; the master then comes from spark-submit)::

    python -m kafka_zk_operator.spark.job --snapshot s.json --mode add-brokers --brokers 7,8 \\
        --output plan.json [--report report.json] [--result result.json] [--master local[*]]

``--output`` is Kafka's reassignment JSON (changed partitions only), ``--report`` the plan
report, ``--result`` the plan result document the operator collects (``domain.documents.plan_result``).
Errors in the input are one line on stderr with exit code 2; so is a plan that would place or keep
replicas on brokers the snapshot marks ``"live": false`` (``placement.liveness``, as ``kzo plan``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.documents import plan_result as plan_document
from kafka_zk_operator.domain.documents.snapshot import parse_snapshot_json, snapshot_to_arrays
from kafka_zk_operator.domain.modes import ENGINE_MODES, Mode
from kafka_zk_operator.domain.placement import (
    Balance,
    ClusterArrays,
    DataMovement,
    Plan,
    PlanRequest,
    broker_stage,
    finish_plan,
)
from kafka_zk_operator.domain.placement.byte_targets import DEFAULT_BYTE_TOLERANCE
from kafka_zk_operator.domain.placement.liveness import check_down_brokers
from kafka_zk_operator.spark.session import SparkUnavailable, local_session
from kafka_zk_operator.spark.stage2 import run_stage2

Progress = Callable[[str, float], None]


def load_snapshot(data: bytes, *, allow_mixed_rf: bool = False) -> ClusterArrays:
    """Parse snapshot bytes (``domain.documents.snapshot``). :raises InvalidSpec:"""
    return snapshot_to_arrays(parse_snapshot_json(data, allow_mixed_rf=allow_mixed_rf))


def run_plan(
    spark: Any,
    source: ClusterArrays | str | Path,
    request: PlanRequest,
    *,
    allow_mixed_rf: bool = False,
    progress: Progress | None = None,
) -> Plan:
    """Plan ``request`` on a cluster (arrays, or the path of a snapshot file) with Spark.

    :param spark: a SparkSession, or a function returning one: then it is called only once stage 1
        has validated the request and found replicas to move (no JVM for refused or empty plans).
    :raises InvalidSpec: invalid snapshot or request (as ``domain.placement.plan`` raises them).
    """
    say: Progress = progress or (lambda _stage, _fraction: None)
    if isinstance(source, ClusterArrays):
        cluster = source
    else:
        cluster = load_snapshot(Path(source).read_bytes(), allow_mixed_rf=allow_mixed_rf)
    stage = broker_stage(cluster, request, progress=say)
    say("select (spark)", 0.2)
    selection = (
        run_stage2(spark() if callable(spark) else spark, stage) if stage.quotas.total else stage.select()
    )
    return finish_plan(stage, selection, progress=say)


def session_for(master: str | None) -> Any:
    """The session for the command line: spark-submit's when launched by it, else local."""
    if master is None and "PYSPARK_GATEWAY_PORT" in os.environ:
        from pyspark.sql import SparkSession

        from kafka_zk_operator.spark.session import SQL_SETTINGS

        builder = SparkSession.builder.appName("kzo-plan")
        for key, value in SQL_SETTINGS.items():
            builder = builder.config(key, value)
        return builder.getOrCreate()
    return local_session(master or "local[*]")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m kafka_zk_operator.spark.job",
        description="Plan a minimal-move, rack-aware reassignment with Spark (same plan as kzo plan).",
    )
    parser.add_argument(
        "--snapshot", required=True, type=Path, metavar="FILE", help="cluster snapshot (JSON)"
    )
    parser.add_argument("--mode", choices=[m.cli_name for m in ENGINE_MODES], help="what to plan")
    parser.add_argument("--brokers", default="", metavar="ID,...", help="brokers being added or removed")
    parser.add_argument("--topics", metavar="REGEX", help="only topics whose whole name matches")
    parser.add_argument("--exclude-topics", metavar="REGEX", help="topics never changed")
    parser.add_argument("--replication-factor", type=int, metavar="N", help="new RF (replication-factor)")
    parser.add_argument("--tolerance", type=int, default=0, metavar="N", help="allowed deviation per broker")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="tie-break seed")
    parser.add_argument(
        "--data-movement",
        choices=[d.value for d in DataMovement],
        default=DataMovement.MINIMAL.value,
        help="which replicas to prefer moving: minimal (small first) or proportional (size-blind)",
    )
    parser.add_argument(
        "--balance",
        choices=[b.value for b in Balance],
        default=Balance.REPLICAS.value,
        help="what to even out: replicas (counts, fewest moves), bytes (data per broker, needs sizes) or both",
    )
    parser.add_argument(
        "--byte-tolerance",
        type=float,
        default=DEFAULT_BYTE_TOLERANCE,
        metavar="FRACTION",
        help="with --balance bytes: allowed distance from the byte target, a fraction of the mean",
    )
    parser.add_argument("--request", type=Path, metavar="FILE", help="the whole request as JSON instead")
    parser.add_argument("--allow-mixed-rf", action="store_true", help="accept topics with mixed RF")
    parser.add_argument("--output", metavar="FILE", help="Kafka reassignment JSON ('-' = stdout)")
    parser.add_argument("--report", type=Path, metavar="FILE", help="the plan report as JSON")
    parser.add_argument("--result", type=Path, metavar="FILE", help="the plan result document")
    parser.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    return parser.parse_args(argv)


def request_from_args(args: argparse.Namespace) -> PlanRequest:
    """:raises InvalidSpec:"""
    if args.request is not None:
        if args.mode is not None:
            raise errors.InvalidSpec("give either --request or --mode, not both")
        try:
            data = json.loads(args.request.read_bytes())
        except (OSError, ValueError) as exc:
            raise errors.InvalidSpec(f"cannot read the request {args.request}: {exc}") from None
        if not isinstance(data, dict):
            raise errors.InvalidSpec("the request must be a JSON object")
        return plan_document.request_from_dict(data)
    if args.mode is None:
        raise errors.InvalidSpec("--mode (or --request) is required")
    brokers = [b.strip() for b in args.brokers.split(",") if b.strip()]
    if not all(b.isascii() and b.isdigit() for b in brokers):
        raise errors.InvalidSpec(f"--brokers must be broker ids like 7,8, not {args.brokers!r}")
    return PlanRequest(
        mode=Mode.parse(args.mode),
        brokers=tuple(int(b) for b in brokers),
        topics=args.topics,
        exclude_topics=args.exclude_topics,
        replication_factor=args.replication_factor,
        tolerance=args.tolerance,
        seed=args.seed,
        data_movement=DataMovement(args.data_movement),
        balance=Balance(args.balance),
        byte_tolerance=args.byte_tolerance,
    )


def write_outputs(args: argparse.Namespace, plan: Plan, request: PlanRequest, input_sha256: str) -> None:
    """Write whichever of ``--output``, ``--report`` and ``--result`` were asked for."""
    if args.output is not None:
        text = json.dumps(plan.reassignment(), separators=(",", ":")) + "\n"
        if args.output == "-":
            sys.stdout.write(text)
        else:
            Path(args.output).write_text(text, encoding="utf-8")
    if args.report is not None:
        report: dict[str, Any] = dataclasses.asdict(plan.report)
        report["moves_over_bound"] = plan.report.moves_over_bound
        args.report.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if args.result is not None:
        document = plan_document.plan_document(plan, request=request, input_sha256=input_sha256)
        args.result.write_bytes(plan_document.dump(document))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        request = request_from_args(args)
        try:
            data = args.snapshot.read_bytes()
        except OSError as exc:
            raise errors.InvalidSpec(f"cannot read snapshot {args.snapshot}: {exc.strerror or exc}") from None
        snapshot = parse_snapshot_json(data, allow_mixed_rf=args.allow_mixed_rf)
        started = time.perf_counter()
        plan = run_plan(lambda: session_for(args.master), snapshot_to_arrays(snapshot), request)
        seconds = time.perf_counter() - started
        check_down_brokers(plan, snapshot.down, request)
        write_outputs(args, plan, request, plan_document.digest(data))
    except errors.KzoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except SparkUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = plan.report
    print(
        f"planned {report.partitions:,} partitions: {report.moves:,} moves (M_LB {report.m_lb:,}), "
        f"{report.partitions_changed:,} partitions change; {seconds:.1f} s (Spark start included)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
