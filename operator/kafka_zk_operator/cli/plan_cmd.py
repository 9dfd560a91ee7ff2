"""``kzo plan``: plan a minimal-move, rack-aware reassignment from a cluster snapshot file.

Registered by ``cli.main`` (``SUBCOMMAND_MODULES``). Reads a snapshot (``domain.documents.snapshot``), runs
the placement engine (``domain.placement``) and writes Kafka's reassignment JSON (only the
partitions that change, broker lists leader first) for ``kafka-reassign-partitions --execute`` or
``/admin/reassign_partitions``; prints a summary table (moves vs M_LB, leader changes, per-broker
counts, and bytes when the snapshot has sizes, before and after) and optionally a PNG.

``--broker-capacity 2TiB`` (every broker) or ``--broker-capacity 7=2TiB,8=1.5TiB`` (those brokers)
checks the bytes each broker would hold after the plan against its disk (``placement.capacity``):
one ``kzo plan: warning: ...`` line on stderr per broker above it, exit code still 0. It never
changes the plan.

New brokers for ``--mode add-brokers`` are either listed in the snapshot's ``brokers`` (with no
replica) or given here as ``--brokers 7:rack-a,8:rack-b`` (id and rack; plain ids when the
cluster has no racks). Empty snapshot brokers that are *not* listed receive nothing in this mode.

Brokers the snapshot marks ``"live": false`` (down) must not be named by any partition the plan
changes (``placement.liveness``: Kafka would never complete those moves): such a plan is refused
with one line naming the brokers and the way out (``--mode remove-brokers --brokers ID`` to move
their replicas away, or a fresh snapshot once they are back); nothing is written. A plan that does
not touch them (e.g. the one removing them) is written as usual.

User errors (bad flags, unreadable or invalid snapshot, impossible parameters) are one line on
stderr with exit code 2, via ``cli.main``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from kafka_zk_operator.cli.main import CliError
from kafka_zk_operator.cli.plan_render import ProgressBar, summary
from kafka_zk_operator.cli.zk_reading import check_output, write_output
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.documents.snapshot import parse_snapshot_json, snapshot_to_arrays
from kafka_zk_operator.domain.model import Broker
from kafka_zk_operator.domain.modes import ENGINE_MODES, Mode
from kafka_zk_operator.domain.placement import (
    ClusterArrays,
    DataMovement,
    PlanReport,
    PlanRequest,
    plan,
)
from kafka_zk_operator.domain.placement.byte_targets import DEFAULT_BYTE_TOLERANCE
from kafka_zk_operator.domain.placement.capacity import BrokerCapacity, check_capacity, parse_capacity
from kafka_zk_operator.domain.placement.liveness import check_down_brokers
from kafka_zk_operator.domain.placement.plan_types import Balance

_MAX_ID = 2**31 - 1
#: Kafka's replication factor is a 16-bit integer in its protocol.
_MAX_REPLICATION_FACTOR = 2**15 - 1
#: Far above any real imbalance; keeps the engine's integer arithmetic in range.
_MAX_TOLERANCE = 1_000_000
#: Chart formats ``--plot`` writes (by the file's extension).
PLOT_FORMATS = (".png", ".svg", ".pdf")


def register(subparsers: Any) -> None:
    """Add the ``plan`` subcommand to the ``kzo`` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "plan",
        help="plan a minimal-move, rack-aware partition reassignment from a snapshot",
        description=(
            "Plan a partition reassignment with the fewest replica moves that balances replicas (±1 per "
            "broker) and preferred leaders, keeps every partition on min(RF, racks) racks, and empties "
            "removed brokers. Writes Kafka's reassignment JSON (changed partitions only)."
        ),
    )
    parser.add_argument(
        "--snapshot", required=True, type=Path, metavar="FILE", help="cluster snapshot (JSON)"
    )
    parser.add_argument(
        "--mode", required=True, choices=[m.cli_name for m in ENGINE_MODES], help="what to plan"
    )
    parser.add_argument(
        "--brokers",
        type=parse_broker_list,
        default=[],
        metavar="ID[:RACK],...",
        help="brokers being added (ID:RACK adds a broker missing from the snapshot) or removed",
    )
    parser.add_argument(
        "--topics", metavar="REGEX", help="only topics whose whole name matches (default: all)"
    )
    parser.add_argument("--exclude-topics", metavar="REGEX", help="topics never changed (whole-name match)")
    parser.add_argument(
        "--replication-factor",
        type=_replication_factor,
        metavar="N",
        help="new RF (mode replication-factor)",
    )
    parser.add_argument(
        "--engine",
        choices=["local", "spark"],
        default="local",
        help="planner engine: local (in-process) or spark (the PySpark job; same plan, needs [spark] and Java)",
    )
    parser.add_argument(
        "--spark-master", default="local[*]", metavar="URL", help="Spark master for --engine spark"
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="N", help="tie-break seed (same seed, same plan)"
    )
    parser.add_argument(
        "--tolerance",
        type=_non_negative,
        default=0,
        metavar="N",
        help="allowed deviation in replicas per broker",
    )
    parser.add_argument(
        "--data-movement",
        choices=[d.value for d in DataMovement],
        default=DataMovement.MINIMAL.value,
        help=(
            "which replicas to prefer moving (same number of moves): minimal = small partitions "
            "first, least data copied; proportional = size-blind, so receiving brokers (added ones) "
            "get typical partitions and data follows replica counts"
        ),
    )
    parser.add_argument(
        "--balance",
        choices=[b.value for b in Balance],
        default=Balance.REPLICAS.value,
        help=(
            "what to even out: replicas = replica counts within ±1 with the fewest moves; bytes = data "
            "per broker within --byte-tolerance of its target with few bytes copied; both = the replicas "
            "plan, then data evened out by swaps that keep the counts (bytes and both need sizes)"
        ),
    )
    parser.add_argument(
        "--byte-tolerance",
        type=_byte_tolerance,
        default=DEFAULT_BYTE_TOLERANCE,
        metavar="FRACTION",
        help=f"with --balance bytes or both: how far a broker may end from its target, as a fraction of the mean "
        f"bytes per broker (default {DEFAULT_BYTE_TOLERANCE})",
    )
    parser.add_argument(
        "--broker-capacity",
        type=_broker_capacity,
        metavar="SIZE|ID=SIZE,...",
        help=(
            "disk capacity to check the plan against (warnings), and with --balance bytes a limit the plan "
            "keeps: one for every broker or per broker id; bytes or units KiB..PiB (1024^n), KB..PB (1000^n)"
        ),
    )
    parser.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="reassignment JSON ('-' = stdout)"
    )
    parser.add_argument(
        "--plot", type=_plot_path, metavar="PNG", help="write a before/after chart (.png, .svg or .pdf)"
    )
    parser.add_argument("--report", type=Path, metavar="FILE", help="also write the full report as JSON")
    parser.add_argument("--progress", action="store_true", help="show the progress bar even without a TTY")
    parser.add_argument(
        "--allow-mixed-rf", action="store_true", help="accept topics with mixed replica counts"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load, plan, write; domain errors propagate to ``cli.main`` (exit code 2)."""
    _check_outputs(args)
    engine = _spark_engine(args.spark_master) if args.engine == "spark" else plan
    bar = ProgressBar(sys.stderr, enabled=args.progress or sys.stderr.isatty())
    try:
        bar("load", 0.0)
        cluster, down = _load(args.snapshot, allow_mixed_rf=args.allow_mixed_rf)
        if cluster.n_partitions == 0:
            raise CliError(f"snapshot {args.snapshot} has no topics: there is nothing to plan")
        mode = Mode.parse(args.mode)
        cluster, ids = _with_new_brokers(cluster, args.brokers, mode)
        _check_capacity_brokers(args.broker_capacity, cluster)
        request = PlanRequest(
            mode=mode,
            brokers=ids,
            topics=args.topics,
            exclude_topics=args.exclude_topics,
            replication_factor=args.replication_factor,
            tolerance=args.tolerance,
            seed=args.seed,
            data_movement=DataMovement(args.data_movement),
            balance=Balance(args.balance),
            byte_tolerance=args.byte_tolerance,
            broker_capacity=_capacity_limits(args.broker_capacity, cluster, Balance(args.balance)),
        )
        started = time.perf_counter()
        result = engine(cluster, request, progress=lambda stage, f: bar(stage, 0.05 + 0.9 * f))
        elapsed = time.perf_counter() - started
        check_down_brokers(result, down, request)  # before anything is written
        bar("write", 0.97)
        report = result.report
        if args.broker_capacity is not None:
            report = check_capacity(report, args.broker_capacity)
        document = json.dumps(result.reassignment(), separators=(",", ":")) + "\n"
        if args.plot is not None:  # first: the one writer that can still refuse (matplotlib)
            from kafka_zk_operator.cli.plan_plot import write_plot

            write_plot(report, args.plot)
        if args.report is not None:
            write_output(str(args.report), json.dumps(_report_dict(report), indent=1) + "\n")
        write_output(args.output, document)
        bar("done", 1.0)
    finally:
        bar.close()
    out = sys.stderr if args.output == "-" else sys.stdout
    out.write(summary(report, elapsed=elapsed))
    out.flush()
    for warning in report.warnings:
        print(f"kzo plan: warning: {warning}", file=sys.stderr)
    return 0


def _spark_engine(master: str) -> Any:
    """``run_plan`` bound to a Spark session; one-line error when PySpark or Java is missing."""
    try:
        from kafka_zk_operator.spark import job, session
    except ImportError:
        raise CliError("--engine spark needs PySpark: pip install 'kafka-zk-operator[spark]'") from None
    try:
        spark = session.local_session(master)
    except session.SparkUnavailable as exc:
        raise CliError(f"--engine spark: {exc}") from None
    except Exception as exc:  # the JVM did not start (bad master URL, broken Java)
        raise CliError(f"--engine spark: cannot start Spark ({master}): {str(exc).splitlines()[0]}") from None

    def engine(cluster: ClusterArrays, request: PlanRequest, *, progress: Any = None) -> Any:
        return job.run_plan(spark, cluster, request, progress=progress)

    return engine


def _load(path: Path, *, allow_mixed_rf: bool) -> tuple[ClusterArrays, frozenset[int]]:
    """The snapshot's arrays and the ids of the brokers it marks down (``"live": false``)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read snapshot {path}: {exc.strerror or exc}") from None
    snapshot = parse_snapshot_json(data, allow_mixed_rf=allow_mixed_rf)
    return snapshot_to_arrays(snapshot), snapshot.down


def _with_new_brokers(
    cluster: ClusterArrays, brokers: list[Broker | int], mode: Mode
) -> tuple[ClusterArrays, tuple[int, ...]]:
    """Add ``ID:RACK`` brokers missing from the snapshot (add-brokers only); return all listed ids."""
    known = set(cluster.broker_ids.tolist())
    extra: list[Broker] = []
    ids: list[int] = []
    for entry in brokers:
        if isinstance(entry, Broker):
            if entry.id in known:
                rack = cluster.racks[int(cluster.broker_rack[cluster.broker_index(entry.id)])]
                if rack != entry.rack:
                    raise CliError(
                        f"broker {entry.id} is in the snapshot with rack {rack!r}, not {entry.rack!r}"
                    )
            elif mode is not Mode.ADD_BROKERS:
                raise CliError(
                    f"broker {entry.id} is not in the snapshot (ID:RACK only adds brokers in add-brokers)"
                )
            else:
                if not cluster.has_racks:
                    raise CliError(f"the cluster has no racks, so broker {entry.id} cannot have one")
                extra.append(entry)
            ids.append(entry.id)
        else:
            if entry not in known:
                if mode is Mode.ADD_BROKERS and not cluster.has_racks:
                    extra.append(Broker(entry))
                elif mode is Mode.ADD_BROKERS:
                    raise CliError(f"broker {entry} is not in the snapshot: give its rack as {entry}:RACK")
                else:
                    raise CliError(f"broker {entry} is not in the snapshot")
            ids.append(entry)
    return cluster.with_brokers(extra), tuple(ids)


def parse_broker_list(text: str) -> list[Broker | int]:
    """``7,8`` or ``7:rack-a,8:rack-b`` -> ints or brokers; duplicates refused."""
    out: list[Broker | int] = []
    seen: set[int] = set()
    for raw in text.split(","):
        entry = raw.strip()
        id_text, colon, rack = entry.partition(":")
        if not (id_text.isascii() and id_text.isdigit()) or int(id_text) > _MAX_ID or (colon and not rack):
            raise argparse.ArgumentTypeError(
                f"invalid broker {entry!r}: expected ID or ID:RACK, e.g. 7,8 or 7:rack-a"
            )
        broker_id = int(id_text)
        if broker_id in seen:
            raise argparse.ArgumentTypeError(f"broker {broker_id} is listed more than once")
        seen.add(broker_id)
        out.append(Broker(broker_id, rack) if colon else broker_id)
    return out


def _broker_capacity(text: str) -> BrokerCapacity:
    try:
        return parse_capacity(text)
    except errors.InvalidSpec as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _capacity_limits(
    capacity: BrokerCapacity | None, cluster: ClusterArrays, balance: Balance
) -> tuple[tuple[int, int], ...]:
    """With ``--balance bytes`` or ``both``, ``--broker-capacity`` is a hard limit of the plan too."""
    if capacity is None or balance is Balance.REPLICAS:
        return ()
    limits = ((int(b), capacity.of(int(b))) for b in cluster.broker_ids.tolist())
    return tuple((b, size) for b, size in limits if size is not None)


def _check_capacity_brokers(capacity: BrokerCapacity | None, cluster: ClusterArrays) -> None:
    """Before planning: every broker given a capacity is in the cluster (snapshot or ``--brokers``)."""
    unknown = capacity.unknown(cluster.broker_ids.tolist()) if capacity is not None else ()
    if unknown:
        raise CliError(
            f"--broker-capacity names broker(s) not in the snapshot or --brokers: {', '.join(map(str, unknown))}"
        )


def _non_negative(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) > _MAX_TOLERANCE:
        raise argparse.ArgumentTypeError(
            f"expected a non-negative integer up to {_MAX_TOLERANCE:,}, got {text!r}"
        )
    return int(text)


def _byte_tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 < value <= 0.5:
        raise argparse.ArgumentTypeError(
            f"expected a fraction of the mean bytes per broker above 0 and at most 0.5 (e.g. 0.02), got {text!r}"
        )
    return value


def _replication_factor(text: str) -> int:
    value = text.strip()
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= _MAX_REPLICATION_FACTOR:
        raise argparse.ArgumentTypeError(
            f"expected a replication factor from 1 to {_MAX_REPLICATION_FACTOR}, got {text!r}"
        )
    return int(value)


def _plot_path(text: str) -> Path:
    path = Path(text)
    if path.suffix.lower() not in PLOT_FORMATS:
        raise argparse.ArgumentTypeError(
            f"the chart file must end in {', '.join(PLOT_FORMATS)} (it picks the format), got {text!r}"
        )
    return path


def _check_outputs(args: argparse.Namespace) -> None:
    """Before any work: every output can be written, and no two name the same file (or the input)."""
    outputs = [("-o", args.output)]
    outputs += [("--report", str(args.report))] if args.report is not None else []
    outputs += [("--plot", str(args.plot))] if args.plot is not None else []
    seen: dict[Path, str] = {Path(args.snapshot).resolve(): "--snapshot"}
    for flag, path in outputs:
        check_output(path)
        if path == "-":
            continue
        resolved = Path(path).resolve()
        if resolved in seen:
            raise CliError(f"{flag} {path} is the same file as {seen[resolved]}: give each its own file")
        seen[resolved] = flag


def _report_dict(report: PlanReport) -> dict[str, Any]:
    from dataclasses import asdict

    data: dict[str, Any] = asdict(report)
    data["moves_over_bound"] = report.moves_over_bound
    return data
