"""ZooKeeper watches as a recipe over the store's session, so nothing outside ``adapters.zk``
touches kazoo: the caller names a znode and a callback, kazoo's ``ChildrenWatch``/``DataWatch``
keep the watch set across firings and reconnections.

A callback returning ``False`` ends its watch (kazoo's rule); it runs on kazoo's event thread,
so it should only record that something changed and leave the reading to another thread.

kazoo sets a data watch again *before* it calls the callback, so a watch that ends that way
leaves one registration behind: in the client (``_data_watchers``, resent to the server after
every reconnection) and in the server, until the znode changes once more. When the znode was
deleted - a topic deleted after the operator stopped following it - it never changes again: with
topics created and deleted all day, that was memory growing with the churn (issue #17). A data
watch may therefore be given ``wanted``, asked each time it is about to read and set the watch
again: ``False`` ends it there, with nothing left registered.
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
#: Whether a data watch is still wanted; asked before each read that would set it again.
Wanted = Callable[[], bool]


class _DataWatchWhileWanted(DataWatch):  # type: ignore[misc]  # kazoo is untyped
    """kazoo's ``DataWatch`` that ends, without reading or setting the watch again, once
    ``wanted()`` says so: when it fires, and after a reconnection."""

    _stopped: bool  # kazoo's: the watch has ended

    def __init__(self, client: KazooClient, path: str, func: DataCallback, wanted: Wanted) -> None:
        self._wanted = wanted
        super().__init__(client, path, func)

    def _get_data(self, event: Any = None) -> None:
        if not self._stopped and not self._wanted():
            with self._run_lock:
                self._stopped = True
                self._func = None
            self._client.remove_listener(self._session_watcher)
            return
        super()._get_data(event)


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


def watch_data(client: KazooClient, path: str, callback: DataCallback, wanted: Wanted | None = None) -> None:
    """Call ``callback`` with the data of ``path`` now (once connected) and whenever it changes
    (or appears, goes); with ``wanted``, only while it returns ``True`` (see the module)."""
    if wanted is None:
        _install(client, lambda: DataWatch(client, path, callback))
    else:
        _install(client, lambda: _DataWatchWhileWanted(client, path, callback, wanted))
