"""``kzo snapshot``: write a cluster's brokers (with racks) and replica placement as JSON.

The output is the snapshot format the placement engine loads (``domain.documents.snapshot``)::

    {"brokers": {"1": {"rack": "rack-a"}, ...},
     "topics": {"orders": {"partitions": {"0": [1, 2, 3], ...}}, ...}}

Read-only: it reads ``/brokers/ids``, ``/brokers/topics``, ``/admin/delete_topics`` and
``/admin/reassign_partitions`` through ``ZkStore``'s read methods and never writes to ZooKeeper.

* Brokers are the registered (live) ones. A broker that is not registered but still holds
  replicas (offline) is listed too, with ``"live": false`` and the rack given by
  ``--broker-rack ID:RACK`` (ZooKeeper forgets the rack of a broker that is down).
* Kafka-internal topics (``__consumer_offsets``, ``__transaction_state``) are left out unless
  ``--with-internal``; topics queued for deletion are always left out (Kafka refuses to move them).
* A partition being reassigned is written as its **target** replica list (where it is going), or
  with ``--reassigning original`` as its list before the move; the topic records both under
  ``"reassigning"`` and stderr says how many partitions that concerns (``domain.reassignment.replica_views``
  explains how exact each list is on each Kafka version).
* ``--sizes-from-bootstrap HOST:PORT`` adds ``"sizes"`` (bytes per partition, the largest
  replica) from the brokers' DescribeLogDirs over a plaintext listener; ``--sizes-from-cluster
  NAME`` does the same through the ``bootstrapServers`` and ``kafkaSecurity`` (TLS, SASL) of
  cluster ``NAME`` in the operator's settings (``KZO_CLUSTERS_FILE``), as the operator connects.

Progress is shown on stderr when it is a terminal; a summary and notes follow (``-q`` hides
them). Errors (unreachable ZooKeeper, no cluster at the chroot, an output path that cannot be
written) are one ``kzo snapshot: error: ...`` line with exit code 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.cli import log_dir_sizes, zk_reading
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.documents import snapshot_export
from kafka_zk_operator.domain.kafka import topic_names
from kafka_zk_operator.domain.model import TopicAssignment
from kafka_zk_operator.domain.reassignment.replica_views import ReassignmentView

COMMAND = "snapshot"


def register(subparsers: Any) -> None:
    """Add the ``snapshot`` subcommand to the ``kzo`` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        COMMAND,
        help="write the cluster's brokers, racks and replica placement as JSON (read-only)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    zk_reading.add_zookeeper_arguments(parser)
    parser.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="FILE",
        help="where to write the JSON ('-' = stdout, the default)",
    )
    parser.add_argument(
        "--with-internal",
        action="store_true",
        help="include Kafka-internal topics (__consumer_offsets, __transaction_state)",
    )
    parser.add_argument(
        "--reassigning",
        choices=[v.value for v in ReassignmentView],
        default=ReassignmentView.TARGET.value,
        help="replica list written for a partition being reassigned: its target (default) or its "
        "original (before the move)",
    )
    parser.add_argument(
        "--broker-rack",
        type=_broker_rack,
        action="append",
        default=[],
        metavar="ID:RACK",
        help="rack of a broker that is down (not registered) but holds replicas; repeatable",
    )
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument(
        "--sizes-from-bootstrap",
        metavar="HOST:PORT",
        help="add partition sizes from the brokers' DescribeLogDirs (a plaintext listener)",
    )
    sizes.add_argument(
        "--sizes-from-cluster",
        metavar="NAME",
        help="add partition sizes through the bootstrapServers and kafkaSecurity (TLS, SASL) of "
        "cluster NAME in the operator's clusters file (KZO_CLUSTERS_FILE)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary or notes on stderr")
    parser.set_defaults(func=run)


def _broker_rack(text: str) -> tuple[int, str]:
    broker, colon, rack = text.partition(":")
    if not (broker.isascii() and broker.isdigit()) or not colon or not rack:
        raise argparse.ArgumentTypeError(f"expected ID:RACK, e.g. 4:rack-b, got {text!r}")
    return int(broker), rack


@dataclass(frozen=True)
class ClusterRead:
    """What one pass over ZooKeeper found (the input of ``snapshot_export.build``)."""

    topics: list[snapshot_export.TopicInput]
    internal_skipped: list[str]
    deleting_skipped: list[str]
    unreadable: list[str]
    warnings: list[str] = field(default_factory=list)


def read_cluster(store: ZkStore, *, with_internal: bool, progress: zk_reading.Progress | None) -> ClusterRead:
    """Read every topic's assignment (read-only), skipping internal and deleting topics."""
    names = store.topic_names()
    internal = [n for n in names if topic_names.is_internal(n) and not with_internal]
    deleting = sorted(set(store.topics_marked_for_deletion()) & set(names))
    skipped = set(internal) | set(deleting)
    wanted = [n for n in names if n not in skipped]
    pending, pending_warning = zk_reading.pending_targets(store)
    if progress is not None:
        progress.total = len(wanted)
    reads = zk_reading.read_each(wanted, lambda name: _read_assignment(store, name), progress)
    topics: list[snapshot_export.TopicInput] = []
    unreadable: list[str] = []
    for name, read in zip(wanted, reads, strict=True):
        if isinstance(read, str):
            unreadable.append(read)
        elif read is not None:  # None: deleted between listing and reading
            topics.append(snapshot_export.TopicInput(name, read, pending.get(name, {})))
    warnings = [pending_warning] if pending_warning is not None else []
    return ClusterRead(topics, internal, deleting, unreadable, warnings)


def _read_assignment(store: ZkStore, name: str) -> TopicAssignment | str | None:
    """The topic's assignment, ``None`` if it vanished, or a message if Kafka's data is malformed."""
    try:
        versioned = store.read_assignment(name)
    except errors.MalformedZnode as exc:
        return f"{name}: {exc}"
    return None if versioned is None else versioned.value


def run(args: argparse.Namespace) -> int:
    connect = zk_reading.zookeeper_of(args)
    zk_reading.check_output(args.output)
    view = ReassignmentView(args.reassigning)
    kafka = log_dir_sizes.cluster_connection(args.sizes_from_cluster) if args.sizes_from_cluster else None
    with zk_reading.read_only_store(connect, args.connect_timeout) as store:
        brokers = store.live_brokers()
        progress = zk_reading.Progress(
            f"kzo {COMMAND}: reading topics", 0, enabled=False if args.quiet else None
        )
        found = read_cluster(store, with_internal=args.with_internal, progress=progress)
    sizes = None
    if args.sizes_from_bootstrap:
        sizes = log_dir_sizes.fetch_sizes(args.sizes_from_bootstrap)
    elif kafka is not None:
        sizes = log_dir_sizes.fetch_sizes(kafka[0], security=kafka[1], flag="--sizes-from-cluster")
    snapshot = snapshot_export.build(
        brokers, found.topics, view=view, offline_racks=dict(args.broker_rack), sizes=sizes
    )
    zk_reading.write_output(args.output, snapshot_export.render(snapshot.document))
    if not args.quiet:
        for line in _notes(found, snapshot, view):
            zk_reading.note(COMMAND, line)
        where = "stdout" if args.output == "-" else args.output
        topics = snapshot.document["topics"]
        assert isinstance(topics, dict)
        zk_reading.note(
            COMMAND,
            f"{len(brokers)} brokers, {len(topics)} topics, {snapshot.partition_count} partitions "
            f"from {connect} written to {where}",
        )
    return 0


def _notes(found: ClusterRead, snapshot: snapshot_export.Snapshot, view: ReassignmentView) -> list[str]:
    notes: list[str] = []
    if snapshot.moving:
        topics = len({m.topic for m in snapshot.moving})
        other = "original" if view is ReassignmentView.TARGET else "target"
        notes.append(
            f"note: {len(snapshot.moving)} partition(s) of {topics} topic(s) are being reassigned; their "
            f"{view.value} replicas are written (--reassigning {other} for the {other} ones)"
        )
        inexact = [m for m in snapshot.moving if not m.original_exact]
        if view is ReassignmentView.ORIGINAL and inexact:
            notes.append(
                f"note: for {len(inexact)} of them ZooKeeper does not keep the original list exactly "
                "(its order; before Kafka 2.4 also its set, then the current list is written)"
            )
    if snapshot.unregistered_replica_brokers:
        ids = ", ".join(map(str, snapshot.unregistered_replica_brokers))
        notes.append(
            f'note: brokers {ids} hold replicas but are not registered (down?); listed with "live": false'
        )
    if snapshot.mixed_racks:
        notes.append(
            "warning: some brokers have a rack and others none, which the planner refuses; give the "
            "racks of brokers that are down with --broker-rack ID:RACK"
        )
    if snapshot.mixed_rf_topics:
        notes.append(
            f"note: {_count(list(snapshot.mixed_rf_topics), 'topic')} mix replication factors across "
            "partitions (the planner needs them allowed explicitly)"
        )
    for name, reason in snapshot.left_out:
        notes.append(f"warning: left out topic {name}: {reason}")
    if found.internal_skipped:
        notes.append(
            f"note: left out {_count(found.internal_skipped, 'Kafka-internal topic')}; use --with-internal"
        )
    if found.deleting_skipped:
        notes.append(f"note: left out {_count(found.deleting_skipped, 'topic', 'queued for deletion')}")
    for problem in found.unreadable:
        notes.append(f"warning: left out {problem}")
    notes.extend(f"warning: {warning}" for warning in found.warnings)
    return notes


def _count(names: Sequence[str], noun: str, qualifier: str = "") -> str:
    """``2 topics queued for deletion (a, b)``: a count, then at most five names."""
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    plural = noun + ("s" if len(names) != 1 else "")
    return f"{len(names)} {plural}{' ' + qualifier if qualifier else ''} ({shown})"
