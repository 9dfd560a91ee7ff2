"""``kzo assign``: print the replica assignment Kafka's own tools would choose for a new topic.

Registered by ``cli.main`` (``SUBCOMMAND_MODULES``). Brokers are given as ``ID`` or ``ID:RACK``
and, like ``kafka-topics``, go through ``AdminZkClient.getBrokerMetadatas`` rules (rack-aware mode,
then sorted by id) before Kafka's ``assignReplicasToBrokers`` runs; see ``domain.kafka.assignment``.

Output is one JSON line shaped like a version-1 topic znode (``/brokers/topics/<t>``)::

    {"version":1,"partitions":{"0":[0,1,2],"1":[1,2,0]}}

Bad input (malformed ``--brokers``, duplicate ids, impossible counts, negative indexes) is
reported by ``cli.main`` as one ``kzo assign: error: ...`` line with exit code 2.
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

from kafka_zk_operator.domain.kafka import assignment
from kafka_zk_operator.domain.model import Broker

#: Kafka broker ids are Java ints.
_MAX_BROKER_ID = 2**31 - 1


def register(subparsers: Any) -> None:
    """Add the ``assign`` subcommand to the ``kzo`` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "assign",
        help="print Kafka's default replica assignment for a new topic",
        description=(
            "Print the replica assignment Kafka 3.9 (AdminUtils.assignReplicasToBrokers) computes for a "
            "topic, as one JSON line. Brokers are sorted by id first, as kafka-topics does."
        ),
    )
    parser.add_argument(
        "--brokers",
        required=True,
        type=parse_brokers,
        metavar="ID[:RACK],...",
        help="live brokers, e.g. 0:rack-a,1:rack-b,2 (a broker without a rack is just its id)",
    )
    parser.add_argument("--partitions", required=True, type=int, metavar="N", help="number of partitions")
    parser.add_argument(
        "--replication-factor", required=True, type=int, metavar="R", help="replicas per partition"
    )
    parser.add_argument(
        "--start-index",
        type=_non_negative_int,
        default=None,
        metavar="S",
        help="index (in the broker list) of the first leader, also the initial follower shift; "
        "random when omitted",
    )
    parser.add_argument(
        "--start-partition",
        type=_non_negative_int,
        default=None,
        metavar="P",
        help="first partition id to assign (default 0)",
    )
    parser.add_argument(
        "--disable-rack-aware",
        action="store_true",
        help="ignore racks (required when only some brokers have one)",
    )
    parser.add_argument(
        "--seed", type=int, default=None, metavar="N", help="seed for the random start index and shift"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compute and print the assignment; domain errors propagate to ``cli.main``."""
    mode = assignment.RackAwareMode.DISABLED if args.disable_rack_aware else assignment.RackAwareMode.ENFORCED
    brokers = assignment.brokers_for_assignment(args.brokers, mode)
    result = assignment.assign_replicas_to_brokers(
        brokers,
        args.partitions,
        args.replication_factor,
        fixed_start_index=-1 if args.start_index is None else args.start_index,
        start_partition_id=-1 if args.start_partition is None else args.start_partition,
        rng=random.Random(args.seed),
    )
    print(render_assignment(result))
    return 0


def render_assignment(partitions: dict[int, list[int]]) -> str:
    """``{"version":1,"partitions":{...}}`` on one line, partition keys as strings in numeric order."""
    body = {str(partition): partitions[partition] for partition in sorted(partitions)}
    return json.dumps({"version": 1, "partitions": body}, separators=(",", ":"))


def parse_brokers(text: str) -> list[Broker]:
    """Parse ``0:rack-a,1:rack-b,2`` into brokers, refusing malformed entries and duplicate ids."""
    brokers: list[Broker] = []
    seen: set[int] = set()
    for entry in text.split(","):
        broker = _parse_broker(entry.strip())
        if broker.id in seen:
            raise argparse.ArgumentTypeError(f"broker id {broker.id} is listed more than once")
        seen.add(broker.id)
        brokers.append(broker)
    return brokers


def _parse_broker(entry: str) -> Broker:
    id_text, colon, rack = entry.partition(":")
    if not _is_decimal(id_text) or int(id_text) > _MAX_BROKER_ID or ":" in rack or (colon and not rack):
        raise argparse.ArgumentTypeError(
            f"invalid broker {entry!r}: expected ID or ID:RACK with a non-negative integer ID, "
            "e.g. 0:rack-a,1:rack-b,2"
        )
    return Broker(int(id_text), rack if colon else None)


def _is_decimal(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _non_negative_int(text: str) -> int:
    if not _is_decimal(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return int(text)
