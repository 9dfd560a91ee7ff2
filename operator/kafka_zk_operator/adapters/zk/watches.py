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
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

#: Called with the children's names, now and after every change of the list.
ChildrenCallback = Callable[[list[str]], bool | None]
#: Called with the data (None: the znode does not exist) and its stat, now and after every change.
DataCallback = Callable[[bytes | None, Any], bool | None]


def watch_children(client: KazooClient, path: str, callback: ChildrenCallback) -> None:
    """Call ``callback`` with the children of ``path`` now and whenever they change."""
    ChildrenWatch(client, path, callback)


def watch_data(client: KazooClient, path: str, callback: DataCallback) -> None:
    """Call ``callback`` with the data of ``path`` now and whenever it changes (or appears, goes)."""
    DataWatch(client, path, callback)
