"""What ``adapters.zk.batched_sends`` saves on one real ZooKeeper, against kazoo's one request per turn.

One ZooKeeper (the local stack's jars), ``--znodes`` znodes, then rounds alternating a session
opened as the operator opens it (batched) and the same session with kazoo's own connection handler:
``--threads`` threads each read all the znodes in groups of ``--group`` sent together and then
waited for (as a reconcile's ``reading_ahead`` does). Printed per round: the time, this process's
CPU (the client: kazoo's connection thread and the readers), ZooKeeper's CPU, socket writes.

    .venv/bin/python benchmarks/batched_sends_bench.py --znodes 2000 --threads 16 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient
from kazoo.protocol.connection import ConnectionHandler

from kafka_zk_operator.adapters.zk import batched_sends, session
from kafka_zk_operator.config.zookeeper import ZkConnectionSettings
from kafka_zk_operator.devstack import artifacts, ports
from kafka_zk_operator.devstack.zookeeper import ZooKeeperServer

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and its threads so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def counted(client: KazooClient) -> list[int]:
    writes = [0]
    connection: Any = client._connection
    original = connection._write

    def write(message: bytes, timeout: float) -> None:
        writes[0] += 1
        original(message, timeout)

    connection._write = write
    return writes


def run_round(connect: str, batched: bool, paths: list[str], threads: int, group: int, zk_pid: int) -> str:
    if not batched:
        original = batched_sends.install
        batched_sends.install = lambda client: False  # type: ignore[assignment]
    try:
        client = session.connect(ZkConnectionSettings(connect=connect))
    finally:
        if not batched:
            batched_sends.install = original  # type: ignore[assignment]
    is_batched = type(client._connection) is batched_sends.BatchingConnectionHandler
    assert is_batched == batched and (batched or type(client._connection) is ConnectionHandler)
    writes = counted(client)

    def reader() -> None:
        for start in range(0, len(paths), group):
            for result in [client.get_async(path) for path in paths[start : start + group]]:
                result.get(timeout=30)

    workers = [threading.Thread(target=reader) for _ in range(threads)]
    zk_before, own_before, started = cpu_of(zk_pid), time.process_time(), time.monotonic()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - started
    own, zk = time.process_time() - own_before, cpu_of(zk_pid) - zk_before
    session.close(client)
    requests = len(paths) * threads
    return (
        f"{'batched' if batched else 'kazoo  '}  {requests} reads  {elapsed:6.2f} s  client CPU {own:6.2f} s"
        f"  ZooKeeper CPU {zk:6.2f} s  writes {writes[0]} ({requests / max(writes[0], 1):.1f} per write)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--znodes", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--group", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kzo-batched-") as tmp:
        server = ZooKeeperServer(
            Path(tmp), ports.free_port(), artifacts.kafka_libs(artifacts.DEFAULT_KAFKA_VERSION)
        )
        server.start()
        try:
            server.wait_ready(timeout=60)
            assert server.process is not None and server.process.pid is not None
            setup = KazooClient(hosts=server.connect)
            setup.start(timeout=15)
            paths = [f"/bench/z{i}" for i in range(args.znodes)]
            setup.ensure_path("/bench")
            for result in [setup.create_async(path, b"x" * 200) for path in paths]:
                result.get(timeout=30)
            setup.stop()
            setup.close()
            print(
                f"ZooKeeper {server.connect}: {args.znodes} znodes, {args.threads} threads, groups of {args.group}"
            )
            for round_ in range(args.rounds):
                for batched in (True, False):
                    line = run_round(
                        server.connect, batched, paths, args.threads, args.group, server.process.pid
                    )
                    print(f"round {round_ + 1}  {line}", flush=True)
        finally:
            if server.process is not None:
                server.process.stop()


if __name__ == "__main__":
    main()
