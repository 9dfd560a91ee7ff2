"""adapters.zk.stat_probe against a real ZooKeeper: stamps move with every change that matters."""

from __future__ import annotations

import asyncio

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk import stat_probe
from kafka_zk_operator.adapters.zk.store import ZkStore
from tests.integration.helpers import sent_exists


def _stamps(zk: KazooClient, paths: tuple[str, ...]) -> tuple[stat_probe.Stamp, ...] | None:
    return asyncio.run(stat_probe.stamps(zk, paths))


def test_stamps_change_with_writes_children_and_recreation(zk: KazooClient, unique_topic: str) -> None:
    base = f"/kzo-probe-{unique_topic}"
    node, parent, missing = f"{base}/node", base, f"{base}/missing"
    zk.create(node, b"one", makepath=True)
    paths = (node, parent, missing)
    first = _stamps(zk, paths)
    assert first is not None and first[0] is not None and first[1] is not None and first[2] is None
    assert _stamps(zk, paths) == first, "nothing changed: the same stamps"

    zk.set(node, b"one")  # the same bytes written again is still a write
    after_set = _stamps(zk, paths)
    assert after_set is not None and after_set[0] != first[0] and after_set[1:] == first[1:]

    zk.create(f"{base}/child", b"")
    after_child = _stamps(zk, paths)
    assert after_child is not None and after_child[1] != after_set[1], (
        "a new child moves the parent's cversion"
    )

    data, _ = zk.get(node)
    zk.delete(node)
    zk.create(node, data)
    recreated = _stamps(zk, paths)
    assert recreated is not None and recreated[0] != after_child[0], "recreated with the same data: new stamp"
    zk.delete(base, recursive=True)


def test_a_probe_longer_than_a_chunk_keeps_order_and_lets_the_loop_run(
    zk: KazooClient, unique_topic: str
) -> None:
    base = f"/kzo-probe-{unique_topic}"
    count = stat_probe.SEND_CHUNK * 2 + 7
    present = {i for i in range(0, count, 3)}
    for i in sorted(present):
        zk.create(f"{base}/n{i}", b"", makepath=True)
    paths = tuple(f"{base}/n{i}" for i in range(count))
    ticks = 0

    async def probe_and_count_other_task_runs() -> tuple[stat_probe.Stamp, ...] | None:
        nonlocal ticks
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        try:
            return await stat_probe.stamps(zk, paths)
        finally:
            stop.set()
            await task

    got = asyncio.run(probe_and_count_other_task_runs())
    assert got is not None and len(got) == count
    assert [i for i, stamp in enumerate(got) if stamp is not None] == sorted(present), "in the order asked"
    assert ticks >= 3, "another task ran between the chunks"
    zk.delete(base, recursive=True)


def test_no_paths_and_a_closed_session(zk: KazooClient) -> None:
    assert _stamps(zk, ()) == ()
    zk.stop()
    assert _stamps(zk, ("/brokers/ids",)) is None, "a stopped client: no stamps, the caller reads in full"


def test_recent_zxid_is_asked_once_per_window_and_moves_with_every_write(
    zk: KazooClient, unique_topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ZooKeeper's last transaction id, from the header of a real reply: at least the mzxid of the
    last write; one request however many resyncs ask within ``ZXID_FRESH_S``; higher after a write."""
    node = f"/kzo-zxid-{unique_topic}"
    written = zk.create(node, b"", makepath=True, include_data=True)[1]
    now = [0.0]
    recent = stat_probe.RecentZxid(zk, clock=lambda: now[0])
    sent = sent_exists(zk, monkeypatch)

    async def ask(times: int) -> list[int | None]:
        return list(await asyncio.gather(*(recent.get() for _ in range(times))))

    first = asyncio.run(ask(50))
    assert len(set(first)) == 1 and first[0] is not None and first[0] >= written.mzxid
    assert sent == ["/"], "50 resyncs, one request"
    assert asyncio.run(ask(1)) == [first[0]] and len(sent) == 1, "still fresh"

    changed = zk.set(node, b"x")
    now[0] += stat_probe.ZXID_FRESH_S
    later = asyncio.run(ask(1))[0]
    assert later is not None and later >= changed.mzxid > first[0]
    assert len(sent) == 2
    zk.delete(node)


def test_the_cluster_wide_stamps_come_with_the_zxid_and_serve_every_probe_while_fresh(
    zk: KazooClient, unique_topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every topic's read depends on the same two cluster-wide znodes; their stamps are asked once
    per zxid round, after the zxid, and a store's probe takes them from there instead of asking
    them again for each topic."""
    base = f"/kzo-shared-{unique_topic}"
    shared_node, own = f"{base}/reassign", f"{base}/topic"
    zk.create(shared_node, b"", makepath=True)
    zk.create(own, b"")
    now = [0.0]
    recent = stat_probe.RecentZxid(zk, shared=(shared_node,), clock=lambda: now[0])
    store = ZkStore(zk)
    store._recent_zxid = recent
    sent = sent_exists(zk, monkeypatch)
    assert recent.shared_stamps() is None, "no round yet"
    assert asyncio.run(store.stamps((own, shared_node))) == _stamps(zk, (own, shared_node))
    assert sent.count(shared_node) == 2, "no round yet: the probe asked it itself"

    zxid = asyncio.run(recent.get())
    assert zxid is not None and sent[-2:] == ["/", shared_node], "the zxid first, then the shared stamps"
    sent.clear()
    probed = asyncio.run(store.stamps((own, shared_node)))
    assert probed == _stamps(zk, (own, shared_node)) and sent.count(shared_node) == 1, (
        "only the check asked it"
    )
    sent.clear()

    changed = zk.set(shared_node, b"x")
    now[0] += stat_probe.ZXID_FRESH_S
    later = asyncio.run(recent.get())
    assert later is not None and later >= changed.mzxid
    stamps_now = recent.shared_stamps()
    assert stamps_now is not None and stamps_now[shared_node] == (changed.mzxid, changed.cversion)

    now[0] += stat_probe.SHARED_FRESH_S
    assert recent.shared_stamps() is None, "too old: the probes ask themselves"
    sent.clear()
    asyncio.run(store.stamps((own, shared_node)))
    assert sent == [own, shared_node]
    zk.delete(base, recursive=True)
