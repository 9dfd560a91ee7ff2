"""``adapters.zk.watches.ZnodeWatches`` on a real ZooKeeper, through Toxiproxy so that a test can
cut the connection: what is reported, that a watch is armed again after it fires and after a
reconnection (kazoo does not resend watches to the server), and what a discarded watch leaves.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient, KazooState

from kafka_zk_operator.adapters.zk.watches import ZnodeWatches
from kafka_zk_operator.devstack.toxiproxy import Proxy
from kafka_zk_operator.devstack.zookeeper import ZooKeeperServer
from tests.integration.helpers import wait_for
from tests.integration.test_toxiproxy import (  # noqa: F401  # the fixtures, shared
    WatchedClient,
    proxy,
    toxiproxy,
    zk,
    zookeeper,
)


class Reports:
    """What the watches reported, in order."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, bytes | None]] = []
        self._lock = threading.Lock()

    def __call__(self, path: str, data: bytes | None) -> None:
        with self._lock:
            self.seen.append((path, data))

    def of(self, path: str) -> list[bytes | None]:
        with self._lock:
            return [data for seen_path, data in self.seen if seen_path == path]


@pytest.fixture
def direct(zookeeper: ZooKeeperServer) -> Iterator[KazooClient]:  # noqa: F811
    """A second session, straight to ZooKeeper: changes made while the proxy is cut."""
    client = KazooClient(hosts=zookeeper.connect)
    client.start(timeout=15)
    try:
        yield client
    finally:
        client.stop()
        client.close()


@pytest.fixture
def base(direct: KazooClient) -> str:
    path = f"/watches-{uuid.uuid4().hex[:8]}"
    direct.ensure_path(path)
    return path


def _registrations(client: KazooClient, path: str) -> int:
    return len(client._data_watchers.get(client.chroot + path, ()))


def test_a_read_watch_reports_the_data_now_and_after_every_change(
    zk: WatchedClient,  # noqa: F811
    direct: KazooClient,
    base: str,
) -> None:
    reports, path = Reports(), f"{base}/topic"
    watches = ZnodeWatches(zk.client, reports)
    watches.add(path, read=True)
    wait_for(lambda: reports.of(path) == [None], what="the missing znode reported as None")
    direct.create(path, b"one")
    wait_for(lambda: reports.of(path) == [None, b"one"], what="its creation, with the data")
    direct.set(path, b"two")
    wait_for(lambda: reports.of(path)[-1:] == [b"two"], what="the change, with the new data")
    direct.delete(path)
    wait_for(lambda: reports.of(path)[-1:] == [None], what="its deletion")
    assert _registrations(zk.client, path) == 1, "one registration per path, however often armed"


def test_a_change_watch_reports_changes_only(
    zk: WatchedClient,  # noqa: F811
    direct: KazooClient,
    base: str,
) -> None:
    reports, path = Reports(), f"{base}/state"
    direct.create(path, b"leader 1")
    watches = ZnodeWatches(zk.client, reports)
    watches.add(path, read=False)
    wait_for(lambda: _registrations(zk.client, path) == 1, what="the watch registered")
    assert reports.of(path) == [], "adding reports nothing: the caller reads it"
    for count, value in enumerate((b"leader 2", b"leader 3"), start=1):
        direct.set(path, value)
        wait_for(lambda: len(reports.of(path)) == count, what=f"change {count} reported")  # noqa: B023
    assert reports.of(path) == [None, None], "no data for a change watch"


def test_watches_are_armed_again_after_a_reconnection(
    proxy: Proxy,  # noqa: F811
    zk: WatchedClient,  # noqa: F811
    direct: KazooClient,
    base: str,
) -> None:
    """Changes made while the connection was cut are reported once it is back, and so are the
    ones after: ZooKeeper dropped the watches with the connection and kazoo does not resend them."""
    reports, topic, state = Reports(), f"{base}/topic", f"{base}/state"
    direct.create(topic, b"v1")
    direct.create(state, b"s1")
    watches = ZnodeWatches(zk.client, reports)
    watches.add(topic, read=True)
    watches.add(state, read=False)
    wait_for(lambda: reports.of(topic) == [b"v1"], what="the first report")
    wait_for(lambda: _registrations(zk.client, state) == 1, what="the state watch registered")
    session = zk.client.client_id[0]

    zk.clear()
    proxy.disable()
    wait_for(lambda: zk.saw(KazooState.SUSPENDED), timeout=10, what="kazoo to lose its connection")
    direct.set(topic, b"v2")
    direct.set(state, b"s2")
    proxy.enable()
    wait_for(lambda: zk.client.state == KazooState.CONNECTED, timeout=15, what="kazoo to reconnect")
    assert zk.client.client_id[0] == session, "the same session: only the connection was cut"
    wait_for(lambda: reports.of(topic)[-1:] == [b"v2"], what="the change made while cut")
    wait_for(lambda: reports.of(state), what="the state change made while cut")

    reported = len(reports.of(state))
    direct.set(topic, b"v3")
    direct.set(state, b"s3")
    wait_for(lambda: reports.of(topic)[-1:] == [b"v3"], what="a change after the reconnection")
    wait_for(lambda: len(reports.of(state)) > reported, what="a state change after the reconnection")


def test_a_discarded_watch_reports_nothing_and_leaves_nothing_in_kazoo(
    zk: WatchedClient,  # noqa: F811
    direct: KazooClient,
    base: str,
) -> None:
    reports, path, other = Reports(), f"{base}/topic", f"{base}/other"
    direct.create(path, b"v1")
    direct.create(other, b"v1")
    watches = ZnodeWatches(zk.client, reports)
    watches.add(path, read=True)
    watches.add(other, read=True)
    wait_for(lambda: reports.of(path) == [b"v1"] and reports.of(other) == [b"v1"], what="first reports")
    watches.discard(path)
    assert _registrations(zk.client, path) == 0
    assert watches.watched() == 1
    direct.set(path, b"v2")
    direct.set(other, b"v2")  # ZooKeeper sends events in the order of the changes
    wait_for(lambda: reports.of(other)[-1:] == [b"v2"], what="the other watch's report")
    assert reports.of(path) == [b"v1"]


def test_a_watch_added_since_a_read_reports_only_what_changed_after_it(
    zk: WatchedClient,  # noqa: F811
    direct: KazooClient,
    base: str,
) -> None:
    """``since``: the zxid the caller knew before reading. Znodes not modified after it are
    reported to ``on_unchanged`` (read watches, with their data) or not at all (change watches);
    one modified after it, or missing, is a change; later changes are reported as usual."""
    changed, unchanged = Reports(), Reports()
    topic, state, moved, missing = (f"{base}/{name}" for name in ("topic", "state", "moved", "missing"))
    for path in (topic, state, moved):
        direct.create(path, b"v1")
    zk.client.exists(base)  # a reply brings the zxid of everything above
    since = int(zk.client.last_zxid)
    direct.set(moved, b"v2")  # after the caller's read
    watches = ZnodeWatches(zk.client, changed, unchanged)
    watches.add(topic, read=True, since=since)
    watches.add(state, read=False, since=since)
    watches.add(moved, read=False, since=since)
    watches.add(missing, read=False, since=since)
    wait_for(lambda: unchanged.of(topic) == [b"v1"], what="the unchanged read watch's data")
    wait_for(
        lambda: changed.of(moved) == [None] and changed.of(missing) == [None],
        what="the changed and the missing",
    )
    wait_for(lambda: _registrations(zk.client, state) == 1, what="the unchanged change watch registered")
    assert changed.of(topic) == [] and changed.of(state) == [] and unchanged.of(state) == []

    direct.set(topic, b"v2")
    direct.set(state, b"s2")
    wait_for(lambda: changed.of(topic) == [b"v2"] and changed.of(state) == [None], what="later changes")
    assert unchanged.of(topic) == [b"v1"], "only the first report can be 'unchanged'"
