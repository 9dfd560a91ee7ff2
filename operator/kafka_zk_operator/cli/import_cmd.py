"""``kzo import``: write KafkaTopic YAML for a cluster's existing topics, ready to commit to Git.

Applying the YAML makes the operator adopt each topic without writing to ZooKeeper: every
resource states the topic exactly as ZooKeeper holds it (partitions, replication factor, the
config overrides of ``/config/topics/<t>`` minus the operator-owned throttle keys), with
``spec.topicName`` always set and ``deletionPolicy: Retain`` unless ``--deletion-policy Delete``,
so neither importing nor pruning the resources later can delete a topic. See docs/import.md.

* Topics: every topic except Kafka-internal ones (``--with-internal`` adds them, but the
  KafkaTopic CRD refuses their names), filtered by ``--topics REGEX`` (full match, like
  kafka-topics). Topics queued for deletion are never imported.
* ``metadata.name``: the topic name when it is a valid Kubernetes name, else a sanitised form with
  a short hash suffix (``My_Topic`` -> ``my-topic-1a2b3c4d``); stable from one import to the next.
* Output: one multi-document file (``-o FILE``, default stdout) or one file per topic
  (``--output-dir DIR``, files named ``<metadata.name>.yaml``); documents sorted by topic name;
  a header comment says where and when the import ran (``SOURCE_DATE_EPOCH`` fixes the time).
* Anything that would stop the operator from adopting a topic as is (a config it refuses, a
  reassignment in flight, uneven replication factors) is printed as a warning on stderr.

Read-only towards ZooKeeper. Errors are one ``kzo import: error: ...`` line with exit code 2.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.cli import zk_reading
from kafka_zk_operator.cli.errors import CliError
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import topic_names
from kafka_zk_operator.domain.topic import importing as topic_import
from kafka_zk_operator.domain.topic import k8s_names

COMMAND = "import"
#: File names stay below the usual 255-byte limit (metadata.name may be 253 characters).
MAX_FILE_STEM = 240
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def register(subparsers: Any) -> None:
    """Add the ``import`` subcommand to the ``kzo`` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        COMMAND,
        help="write KafkaTopic YAML for existing topics so the operator adopts them (read-only)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    zk_reading.add_zookeeper_arguments(parser)
    parser.add_argument("--namespace", type=_namespace, metavar="NS", help="set metadata.namespace")
    parser.add_argument(
        "--cluster",
        type=_cluster,
        metavar="NAME",
        help="set spec.cluster (the operator's name for the cluster)",
    )
    parser.add_argument(
        "--topics", type=_regex, metavar="REGEX", help="only topics whose whole name matches REGEX"
    )
    parser.add_argument(
        "--with-internal",
        action="store_true",
        help="include Kafka-internal topics (the KafkaTopic CRD refuses them: for reference only)",
    )
    parser.add_argument(
        "--deletion-policy",
        choices=[p.value for p in topic_import.DeletionPolicy],
        default=topic_import.DeletionPolicy.RETAIN.value,
        help="spec.deletionPolicy of every resource (default Retain: deleting a resource keeps the topic)",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="FILE",
        help="one multi-document YAML file ('-' = stdout, the default)",
    )
    output.add_argument("--output-dir", metavar="DIR", help="one <metadata.name>.yaml file per topic")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary or warnings on stderr")
    parser.set_defaults(func=run)


def _namespace(text: str) -> str:
    if not _DNS1123_LABEL.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"invalid namespace {text!r}: at most 63 lower-case letters, digits and '-', "
            "starting and ending with a letter or digit"
        )
    return text


def _cluster(text: str) -> str:
    if not text or len(text) > 253:
        raise argparse.ArgumentTypeError(f"invalid cluster name {text!r}: 1 to 253 characters")
    return text


def _regex(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"invalid --topics regular expression {text!r}: {exc}") from exc


@dataclass(frozen=True)
class Selection:
    """Topic names sorted into what is imported and what is left out, and why."""

    wanted: list[str]
    internal: list[str]
    deleting: list[str]


def select_topics(
    names: list[str], deleting: set[str], *, pattern: re.Pattern[str] | None, with_internal: bool
) -> Selection:
    matching = [n for n in sorted(names) if pattern is None or pattern.fullmatch(n)]
    internal = [n for n in matching if topic_names.is_internal(n) and not with_internal]
    queued = [n for n in matching if n in deleting]
    skipped = set(internal) | set(queued)
    return Selection([n for n in matching if n not in skipped], internal, queued)


def read_topics(
    store: ZkStore, selection: Selection, progress: zk_reading.Progress | None
) -> tuple[list[topic_import.ExistingTopic], list[str], list[str]]:
    """Assignment and config of each selected topic (read-only), the unreadable ones, warnings."""
    pending, pending_warning = zk_reading.pending_targets(store)

    def read(name: str) -> topic_import.ExistingTopic | str | None:
        try:
            assignment = store.read_assignment(name)
            config = store.read_topic_config(name)
        except errors.MalformedZnode as exc:
            return f"{name}: {exc}"
        if assignment is None:
            return None  # deleted between listing and reading
        return topic_import.ExistingTopic(
            name, assignment.value, config.value if config is not None else {}, pending.get(name, {})
        )

    if progress is not None:
        progress.total = len(selection.wanted)
    found: list[topic_import.ExistingTopic] = []
    unreadable: list[str] = []
    for result in zk_reading.read_each(selection.wanted, read, progress):
        if isinstance(result, str):
            unreadable.append(result)
        elif result is not None:
            found.append(result)
    return found, unreadable, [pending_warning] if pending_warning is not None else []


def import_time() -> datetime:
    """Now, or ``SOURCE_DATE_EPOCH`` when set (reproducible output)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        try:
            return datetime.fromtimestamp(int(epoch), UTC)
        except (ValueError, OverflowError, OSError) as exc:
            raise CliError(f"SOURCE_DATE_EPOCH={epoch!r} is not a Unix timestamp") from exc
    return datetime.now(UTC)


def file_name(name: str) -> str:
    """``<metadata.name>.yaml``, shortened with a hash when the name is very long."""
    if len(name) <= MAX_FILE_STEM:
        return f"{name}.yaml"
    return f"{k8s_names.with_suffix(name[: MAX_FILE_STEM - 9], k8s_names.topic_hash(name))}.yaml"


def run(args: argparse.Namespace) -> int:
    connect = zk_reading.zookeeper_of(args)
    when = import_time()
    if args.output_dir is not None:
        zk_reading.check_output(args.output_dir, directory=True)
    else:
        zk_reading.check_output(args.output)
    options = topic_import.ImportOptions(
        namespace=args.namespace,
        cluster=args.cluster,
        deletion_policy=topic_import.DeletionPolicy(args.deletion_policy),
    )
    with zk_reading.read_only_store(connect, args.connect_timeout) as store:
        selection = select_topics(
            store.topic_names(),
            set(store.topics_marked_for_deletion()),
            pattern=args.topics,
            with_internal=args.with_internal,
        )
        progress = zk_reading.Progress(
            f"kzo {COMMAND}: reading topics", 0, enabled=False if args.quiet else None
        )
        topics, unreadable, warnings = read_topics(store, selection, progress)
        cluster_line = store.cluster_line()
    imported = topic_import.build(topics, options)
    if args.output_dir is not None:
        _write_files(Path(args.output_dir), imported, connect, when, options)
        where = f"{len(imported)} files in {args.output_dir}"
    else:
        head = topic_import.header(connect, when, len(imported), options.deletion_policy)
        zk_reading.write_output(args.output, topic_import.render_yaml([i.manifest for i in imported], head))
        where = "stdout" if args.output == "-" else args.output
    if not args.quiet:
        by_name = {t.name: t for t in topics}
        for item in imported:
            for line in topic_import.topic_notes(by_name[item.topic], cluster_line):
                zk_reading.note(COMMAND, f"warning: topic {item.topic}: {line}")
        for problem in unreadable:
            zk_reading.note(COMMAND, f"warning: left out {problem}")
        for warning in warnings:
            zk_reading.note(COMMAND, f"warning: {warning}")
        if selection.internal:
            zk_reading.note(
                COMMAND,
                f"note: left out {len(selection.internal)} Kafka-internal topic(s); use --with-internal",
            )
        if selection.deleting:
            zk_reading.note(
                COMMAND,
                f"note: left out {len(selection.deleting)} topic(s) queued for deletion: "
                + ", ".join(selection.deleting[:5])
                + (", ..." if len(selection.deleting) > 5 else ""),
            )
        if not imported:
            zk_reading.note(COMMAND, "note: no topic matched; nothing to import")
        zk_reading.note(COMMAND, f"{len(imported)} KafkaTopic(s) from {connect} written to {where}")
    return 0


def _write_files(
    directory: Path,
    imported: list[topic_import.ImportedTopic],
    connect: str,
    when: datetime,
    options: topic_import.ImportOptions,
) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"cannot create {directory}: {exc.strerror or exc}") from exc
    head = topic_import.header(connect, when, 1, options.deletion_policy)
    for item in imported:
        zk_reading.write_output(
            str(directory / file_name(item.name)), topic_import.render_yaml([item.manifest], head)
        )
