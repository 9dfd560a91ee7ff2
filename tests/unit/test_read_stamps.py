"""The stamps a read records from its own answers (``adapters.zk.read_stamps``,
``StoreBase.recording_stamps``): exactly what each ``get`` and ``exists`` of the recording thread
found, nothing of another thread's reads, and no stamp for a znode found in two states. The real
ZooKeeper side (the same stamps as a probe's) is in ``tests/integration/test_store_topics.py``."""

from __future__ import annotations

import threading
from typing import Any, cast

from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import KazooState, ZnodeStat

from kafka_zk_operator.adapters.zk.read_stamps import ReadStamps
from kafka_zk_operator.adapters.zk.store import ZkStore


def _stat(mzxid: int, cversion: int = 0) -> ZnodeStat:
    return ZnodeStat(1, mzxid, 0, 0, 0, cversion, 0, 0, 0, 0, 0)


class FakeZk:
    """znodes: path -> (mzxid, cversion)."""

    state = KazooState.CONNECTED

    def __init__(self, znodes: dict[str, tuple[int, int]]) -> None:
        self.znodes = znodes

    def get(self, path: str) -> tuple[bytes, ZnodeStat]:
        if path not in self.znodes:
            raise NoNodeError()
        return b"{}", _stat(*self.znodes[path])

    def exists(self, path: str, watch: Any = None) -> ZnodeStat | None:
        return _stat(*self.znodes[path]) if path in self.znodes else None


def test_the_stamps_of_the_paths_asked_in_order_only_when_all_were_read_in_one_state() -> None:
    read = ReadStamps()
    read.note("/a", (5, 0))
    read.note("/gone", None)
    read.note("/a", (5, 0))  # read twice, same state
    assert read.of(("/gone", "/a")) == (None, (5, 0))
    assert read.of(()) == ()
    assert read.of(("/a", "/never-read")) is None
    assert read.has("/a") and read.has("/gone") and not read.has("/never-read")
    read.note("/a", (6, 0))  # and again after a write
    assert read.of(("/a",)) is None and read.of(("/gone",)) == (None,)
    assert not read.has("/a"), "found in two states: no stamp"


def test_a_store_records_what_its_thread_gets_and_stats_within_the_block() -> None:
    zk = FakeZk({"/topic": (7, 0), "/brokers/ids": (2, 9)})
    store = ZkStore(cast(Any, zk))
    store._get("/topic")  # before the block: not recorded
    with store.recording_stamps() as read:
        store._get("/topic")
        store._get("/missing")
        store._stat("/brokers/ids")
        store._stat("/marker")
        with store.recording_stamps() as inner:
            assert inner is read, "an inner block records for the outer reader"
            zk.znodes["/inner"] = (8, 0)
            store._get("/inner")

        other = threading.Thread(target=lambda: store._get("/other"))
        zk.znodes["/other"] = (9, 0)
        other.start()
        other.join()
    store._get("/after")
    assert read.of(("/topic", "/missing", "/brokers/ids", "/marker", "/inner")) == (
        (7, 0),
        None,
        (2, 9),
        None,
        (8, 0),
    )
    assert read.of(("/other",)) is None, "another thread's read is not this reader's"
    assert read.of(("/after",)) is None, "after the block: not recorded"
    with store.recording_stamps() as fresh:
        pass
    assert fresh is not read and fresh.of(("/topic",)) is None
