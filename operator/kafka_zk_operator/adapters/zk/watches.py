"""ZooKeeper watches as a recipe over the store's session, so nothing outside ``adapters.zk``
touches kazoo: the caller names a znode and a callback, kazoo's ``ChildrenWatch``/``DataWatch``
keep the watch set across firings and reconnections.

A callback returning ``False`` ends its watch (kazoo's rule); it runs on kazoo's event thread,
so it should only record that something changed and leave the reading to another thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

#: Called with the children's names, now and after every change of the list.
ChildrenCallback = Callable[[list[str]], bool | None]
#: Called with the data (None: the znode does not exist) and its stat, now and after every change.
DataCallback = Callable[[bytes | None, Any], bool | None]


def _install(client: KazooClient, watch: Callable[[], object]) -> None:
    """Set a watch now, or - while the connection is down - on a kazoo thread of its own.

    kazoo's watch recipes read their znode in their constructor and, disconnected, wait for the
    connection to come back: a reconcile that starts watching a new topic during a ZooKeeper
    outage would hang for the whole outage instead of reporting it (found by the quorum-loss
    fault test). The watch is then set when the connection returns.
    """
    if client.state == KazooState.CONNECTED:
        watch()
    else:
        client.handler.spawn(watch)


def watch_children(client: KazooClient, path: str, callback: ChildrenCallback) -> None:
    """Call ``callback`` with the children of ``path`` now (once connected) and whenever they change."""
    _install(client, lambda: ChildrenWatch(client, path, callback))


def watch_data(client: KazooClient, path: str, callback: DataCallback) -> None:
    """Call ``callback`` with the data of ``path`` now (once connected) and whenever it changes
    (or appears, goes)."""
    _install(client, lambda: DataWatch(client, path, callback))
