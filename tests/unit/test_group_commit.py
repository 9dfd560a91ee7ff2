"""CreateBatcher without ZooKeeper: how creates are grouped, and who gets which answer."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk import group_commit
from kafka_zk_operator.adapters.zk.store_writes import MAX_REQUEST_BYTES
from kafka_zk_operator.domain import errors

#: Never started: its transactions only collect operations here (nothing is sent).
_CLIENT = KazooClient(hosts="127.0.0.1:1")


def _create(name: str, *, epoch: int = 4, data: bytes = b"{}") -> tuple[Any, list[str]]:
    tx = _CLIENT.transaction()
    tx.check("/controller_epoch", epoch)
    tx.create(f"/config/topics/{name}", data)
    tx.create(f"/brokers/topics/{name}", data)
    return tx, ["/controller_epoch", f"/config/topics/{name}", f"/brokers/topics/{name}"]


class _Recorder:
    def __init__(self, refuse: str | None = None, lose: bool = False) -> None:
        self.sent: list[list[str]] = []
        self.refuse, self.lose = refuse, lose
        self._lock = threading.Lock()

    def __call__(self, tx: Any, paths: list[str]) -> None:
        with self._lock:
            self.sent.append(paths)
        if self.lose:
            raise errors.ClusterUnavailable("lost the ZooKeeper connection")
        if self.refuse is not None and self.refuse in paths:
            raise errors.ResourceConflict(f"{self.refuse} already exists")


def _run(
    batcher: group_commit.CreateBatcher, creates: list[tuple[Any, list[str]]]
) -> list[BaseException | None]:
    start = threading.Barrier(len(creates))

    def one(create: tuple[Any, list[str]]) -> BaseException | None:
        start.wait()
        try:
            batcher.create(*create, guards=1)
        except errors.KzoError as error:
            return error
        return None

    with ThreadPoolExecutor(max_workers=len(creates)) as pool:
        return list(pool.map(one, creates))


def test_creates_in_one_window_share_one_transaction_with_the_guard_once() -> None:
    commit = _Recorder()
    batcher = group_commit.CreateBatcher(_CLIENT.transaction, commit, window=0.5)
    assert _run(batcher, [_create(f"t{i}") for i in range(5)]) == [None] * 5
    assert len(commit.sent) == 1
    sent = commit.sent[0]
    assert sent.count("/controller_epoch") == 1 and sent[0] == "/controller_epoch"
    assert sorted(p for p in sent if p.startswith("/brokers/topics/")) == [
        f"/brokers/topics/t{i}" for i in range(5)
    ]


def test_a_refused_transaction_is_sent_again_one_create_at_a_time() -> None:
    commit = _Recorder(refuse="/brokers/topics/t2")
    batcher = group_commit.CreateBatcher(_CLIENT.transaction, commit, window=0.5)
    outcomes = _run(batcher, [_create(f"t{i}") for i in range(4)])
    assert [type(o).__name__ for o in outcomes] == ["NoneType", "NoneType", "ResourceConflict", "NoneType"]
    assert len(commit.sent) == 1 + 4


def test_a_lost_connection_is_every_creates_answer_and_nothing_is_sent_again() -> None:
    commit = _Recorder(lose=True)
    batcher = group_commit.CreateBatcher(_CLIENT.transaction, commit, window=0.5)
    outcomes = _run(batcher, [_create(f"t{i}") for i in range(3)])
    assert all(isinstance(o, errors.ClusterUnavailable) for o in outcomes)
    assert len(commit.sent) == 1


def test_groups_split_on_different_guards_and_on_the_request_size() -> None:
    def pending(name: str, epoch: int = 4, size: int = 100) -> group_commit.PendingCreate:
        tx, paths = _create(name, epoch=epoch)
        return group_commit.PendingCreate(tx, paths, guards=1, size=size)

    groups = group_commit._groups([pending("a"), pending("b"), pending("c", epoch=5), pending("d", epoch=5)])
    assert [[p.paths[1] for p in g] for g in groups] == [
        ["/config/topics/a", "/config/topics/b"],
        ["/config/topics/c", "/config/topics/d"],
    ]
    big = MAX_REQUEST_BYTES // 2 + 1  # two do not fit one request
    assert [len(g) for g in group_commit._groups([pending(n, size=big) for n in "abc"])] == [1, 1, 1]
    many = [pending(f"t{i}") for i in range(group_commit.MAX_TOPICS_PER_TRANSACTION + 1)]
    assert [len(g) for g in group_commit._groups(many)] == [group_commit.MAX_TOPICS_PER_TRANSACTION, 1]
