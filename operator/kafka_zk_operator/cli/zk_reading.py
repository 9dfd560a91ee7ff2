"""Shared by ``kzo snapshot`` and ``kzo import``: a read-only look at a Kafka cluster's ZooKeeper.

* ``--zookeeper HOST:PORT[,HOST:PORT...][/CHROOT]`` (default ``$KZO_ZOOKEEPER``, as exported by
  ``kzo dev env``) is validated before anything connects.
* :func:`read_only_store` connects, checks that the chroot holds a Kafka cluster
  (``/brokers/ids``) and yields a :class:`ZkStore` of which only read methods are called; kazoo's
  own log lines are silenced so that a failure is exactly one ``kzo <cmd>: error: ...`` line.
* :func:`read_each` reads one znode set per topic through a small thread pool (kazoo pipelines
  requests on one connection), keeping the input order, with :class:`Progress` on stderr when it
  is a terminal.
* :func:`check_output` fails fast on an output path that cannot be written, before ZooKeeper is
  read; :func:`write_output` writes atomically (``-`` = stdout).

Nothing here writes to ZooKeeper.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TextIO, TypeVar

from kafka_zk_operator.adapters.zk import session
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.adapters.zk.znodes_brokers import BROKER_IDS_PATH
from kafka_zk_operator.cli.errors import CliError
from kafka_zk_operator.config import zookeeper
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.reassignment import replica_views

T = TypeVar("T")
R = TypeVar("R")

ENV_ZOOKEEPER = "KZO_ZOOKEEPER"
DEFAULT_CONNECT_TIMEOUT_S = 15.0
#: Concurrent reads in flight; ZooKeeper answers them in order over one session.
READ_WORKERS = 16

_CONNECT_HELP = zookeeper.CONNECT_FORMAT


def connect_string(text: str) -> str:
    """argparse type for Kafka's ``zookeeper.connect``: hosts with optional ports, optional chroot."""
    value = text.strip()
    if zookeeper.hosts_problem(value) is not None:
        raise argparse.ArgumentTypeError(
            f"invalid ZooKeeper connect string {text!r}: expected {_CONNECT_HELP}"
        )
    if zookeeper.chroot_problem(value) is not None:
        raise argparse.ArgumentTypeError(
            f"invalid chroot in {text!r}: expected /NAME[/NAME...] without empty segments"
        )
    return value


#: Longest ``--connect-timeout`` accepted, in seconds.
MAX_CONNECT_TIMEOUT_S = 3600


def _positive_seconds(text: str) -> float:
    """Seconds ``0 < s <= 3600`` (the message says exactly that: 0 itself is refused)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= MAX_CONNECT_TIMEOUT_S:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds greater than 0 and at most {MAX_CONNECT_TIMEOUT_S}, got {text!r}"
        )
    return value


def add_zookeeper_arguments(parser: argparse.ArgumentParser) -> None:
    """``--zookeeper`` (default ``$KZO_ZOOKEEPER``) and ``--connect-timeout``."""
    default = os.environ.get(ENV_ZOOKEEPER) or None
    parser.add_argument(
        "--zookeeper",
        type=connect_string,
        default=default,
        metavar="HOST:PORT[/CHROOT]",
        help=f"the cluster's zookeeper.connect, chroot included (default ${ENV_ZOOKEEPER}"
        + (f", now {default}" if default else "")
        + ")",
    )
    parser.add_argument(
        "--connect-timeout",
        type=_positive_seconds,
        default=DEFAULT_CONNECT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"give up connecting to ZooKeeper after this long (default {DEFAULT_CONNECT_TIMEOUT_S:.0f})",
    )


def zookeeper_of(args: argparse.Namespace) -> str:
    if not args.zookeeper:
        raise CliError(
            f"--zookeeper is required (or set {ENV_ZOOKEEPER}), e.g. --zookeeper localhost:2181/kafka"
        )
    return str(args.zookeeper)


@contextlib.contextmanager
def quiet_logger(name: str) -> Iterator[None]:
    """Keep a library's chatter (kazoo's "Connection dropped ...", kafka-python's retries) off the
    user's terminal while the block runs."""
    logger = logging.getLogger(name)
    handler = logging.NullHandler()
    saved = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = saved


@contextlib.contextmanager
def read_only_store(connect: str, timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S) -> Iterator[ZkStore]:
    """A :class:`ZkStore` on ``connect``; only its read methods may be called.

    :raises CliError: ZooKeeper unreachable (or lost while reading), or no Kafka cluster at the
        chroot.
    """
    settings = zookeeper.ZkConnectionSettings(connect=connect, connection_timeout_s=timeout_s, read_only=True)
    with quiet_logger("kazoo"):
        try:
            with warnings.catch_warnings():
                # kazoo warns when the chroot is missing; /brokers/ids is checked below instead.
                warnings.filterwarnings("ignore", message="No chroot path exists", category=UserWarning)
                client = session.connect(settings)
        except errors.ClusterUnavailable as exc:
            raise CliError(str(exc)) from exc
        except ValueError as exc:  # kazoo's own parsing of the connect string
            raise CliError(f"invalid ZooKeeper connect string {connect!r}: {exc}") from exc
        try:
            store = ZkStore(client)
            if not store.holds_kafka_cluster():
                raise CliError(f"no Kafka cluster at {connect}: {BROKER_IDS_PATH} does not exist")
            yield store
        except errors.ClusterUnavailable as exc:
            raise CliError(f"{exc} ({connect})") from exc
        finally:
            session.close(client)


class Progress:
    """``label done/total (pct%)`` redrawn in place on a terminal; silent otherwise."""

    def __init__(
        self,
        label: str,
        total: int,
        stream: TextIO | None = None,
        *,
        enabled: bool | None = None,
        interval_s: float = 0.1,
    ) -> None:
        self.label = label
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_tty(self.stream) if enabled is None else enabled
        self.done = 0
        self.interval_s = interval_s
        self._last = 0.0
        self._width = 0

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if self.enabled and (now - self._last >= self.interval_s or self.done >= self.total):
            self._last = now
            percent = 100 * self.done // self.total if self.total else 100
            text = f"{self.label} {self.done}/{self.total} ({percent}%)"
            self._width = max(self._width, len(text))
            self.stream.write("\r" + text.ljust(self._width))
            self.stream.flush()

    def finish(self) -> None:
        """Erase the counter so the next line starts clean."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def read_each(
    items: Sequence[T], read: Callable[[T], R], progress: Progress | None = None, workers: int = READ_WORKERS
) -> list[R]:
    """``[read(item) for item in items]``, ``workers`` at a time, in input order."""
    results: list[R] = []
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="kzo-read") as pool:
        for result in pool.map(read, items):
            results.append(result)
            if progress is not None:
                progress.advance()
    if progress is not None:
        progress.finish()
    return results


def pending_targets(store: ZkStore) -> tuple[dict[str, dict[int, tuple[int, ...]]], str | None]:
    """Targets in ``/admin/reassign_partitions`` by topic, and a warning if Kafka would ignore it.

    Kafka ignores a reassignment znode it cannot parse ("Ignoring partition reassignment due to
    invalid json"), so such a znode is reported and treated as absent rather than failing the read.
    """
    try:
        pending = store.pending_reassignment()
    except errors.MalformedZnode as exc:
        return {}, f"ignoring /admin/reassign_partitions, which Kafka cannot parse either: {exc}"
    entries = [(e.topic, e.partition, e.replicas) for e in pending.value] if pending else []
    return replica_views.pending_targets(entries), None


def note(command: str, message: str) -> None:
    """One informational line on stderr, prefixed like the errors (``kzo snapshot: note: ...``)."""
    print(f"kzo {command}: {message}", file=sys.stderr)


def check_output(path: str, *, directory: bool = False) -> None:
    """Fail before reading ZooKeeper when ``path`` (a file, or with ``directory`` a directory to
    create or fill) cannot be written. ``-`` is stdout."""
    if path == "-" and not directory:
        return
    target = Path(path)
    if directory:
        if target.exists() and not target.is_dir():
            raise CliError(f"cannot write to {path}: it exists and is not a directory")
        existing = next((p for p in (target, *target.parents) if p.exists()), Path("."))
        if not existing.is_dir():
            raise CliError(f"cannot create {path}: {existing} is not a directory")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise CliError(f"cannot write to {path}: permission denied on {existing}")
        return
    if target.is_dir():
        raise CliError(f"cannot write {path}: it is a directory (use --output-dir for one file per topic)")
    parent = target.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise CliError(f"cannot write {path}: {parent} {what}")
    if not os.access(parent, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise CliError(f"cannot write {path}: permission denied")


def write_output(path: str, text: str) -> None:
    """Write ``text`` to ``path`` (``-`` = stdout). A regular file is replaced atomically."""
    if path == "-":
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:  # e.g. piped into 'head'
            with contextlib.suppress(OSError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    target = Path(path)
    try:
        if target.exists() and not target.is_file():  # a device or FIFO: write through
            with target.open("w", encoding="utf-8") as stream:
                stream.write(text)
            return
        temporary = target.with_name(f".{target.name}.kzo-{os.getpid()}.tmp")
        try:
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, target)
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink()
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from exc
