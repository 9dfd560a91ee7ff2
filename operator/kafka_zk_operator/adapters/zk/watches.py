"""ZooKeeper watches as recipes over the store's session, so nothing outside ``adapters.zk``
touches kazoo.

- :func:`watch_children`: kazoo's ``ChildrenWatch`` on one znode (``/brokers/ids``).
- :class:`ZnodeWatches`: data watches on many znodes - every managed topic's znode and each of its
  partition ``state`` znodes - with one callback. kazoo's ``DataWatch`` costs about 1.4 KB of
  objects per znode (its own retry policy, lock and session listener) and, after every
  reconnection, one thread per znode to read it again; at 10,000 topics that was 28 MB of the
  operator's peak (issue #16). Here a watch is what ZooKeeper has: a one-shot registration
  (kazoo keeps one entry per path, whatever armed it), armed again by the same shared callback
  each time it fires, and armed again for every znode by one thread after a reconnection (kazoo
  does not resend watches to the server).

A callback runs on kazoo's threads, so it should only record that something changed and leave
the reading to another thread.

A caller that has just read a znode can add its watch ``since`` the zxid it knew before that
read (``KazooClient.last_zxid``): a read sees every transaction up to that zxid, so when the
znode's ``mzxid`` at arming is not past it, nothing changed between the read and the watch and
the first report is only "unchanged" (``on_unchanged``): the caller need not read it again. A
restarted operator adopting 10,000 topics read each one twice before (issue #16).

A reader can also set the watch with its own read (:meth:`ZnodeWatches.priming`: the store's reads
of the wanted znodes carry the watch) and then hand the znodes over with
:meth:`ZnodeWatches.adopt`, which costs no request at all: a reconcile's read of a topic is then
also the health reporter's watch of it (issue #16: an adopted topic's watches were 2 of its 8
requests). A hand-over is refused - and the caller arms the watch itself - when anything could
have come between the read and the hand-over: a watch of these that fired before it was handed
over, or a lost connection (kazoo does not set its watches again on a new connection).

A watch whose znode is no longer wanted ends when it next fires, and :meth:`ZnodeWatches.discard`
also drops kazoo's record of it: a watch on the znode of a topic deleted after the operator
stopped following it would otherwise stay in the client for the session's lifetime (issue #17).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import (
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NoNodeError,
    SessionExpiredError,
)
from kazoo.protocol.states import EventType, KazooState
from kazoo.recipe.watchers import ChildrenWatch

from kafka_zk_operator import metrics

#: Called with the children's names, now and after every change of the list.
ChildrenCallback = Callable[[list[str]], bool | None]
#: Called with a watched path and, for a znode watched with ``read=True``, its data (``None``:
#: it does not exist; always ``None`` for the others) when it changed, appeared or went.
ChangeCallback = Callable[[str, bytes | None], None]

#: The connection went while the request was on its way: a reconnection arms every watch again.
_DISCONNECTED = (ConnectionLoss, SessionExpiredError, ConnectionClosedError)
#: Watches armed again at a time after a reconnection, each batch answered before the next.
REARM_BATCH = 500
#: The hook into kazoo's watch registrations, in ``kzo_private_hook_active`` and its warning.
HOOK = "kazoo_watch_registrations"
log = logging.getLogger(__name__)


@dataclass
class Priming:
    """One reader's reads that set a :class:`ZnodeWatches`' watch as they read
    (:meth:`ZnodeWatches.priming`); the store fills ``armed`` (``StoreBase.priming_watches``)."""

    #: The watch the reads carry: the :class:`ZnodeWatches`' own callback.
    watcher: Callable[[Any], None]
    #: Which znodes' reads carry it.
    wanted: Callable[[str], bool]
    #: The :class:`ZnodeWatches`' lapse count when the reads began (see ``ZnodeWatches._lapses``).
    lapses: int
    #: Path → its data, for each znode a read with the watch found: ZooKeeper set the watch then.
    armed: dict[str, bytes] = field(default_factory=dict)


def _registrations(client: KazooClient) -> dict[str, set[Any]] | None:
    """kazoo's record of the client's data watches (``_data_watchers``: full path, chroot included →
    watchers); None, with a warning, when this kazoo has none: then no watch is handed over
    (:meth:`ZnodeWatches.adopt` asks the caller to arm it) and none is forgotten before it fires."""
    registered = getattr(client, "_data_watchers", None)
    if isinstance(registered, dict):
        return registered
    metrics.private_hook(
        HOOK,
        False,
        "KazooClient has no _data_watchers dict (adapters/zk/watches.py): no watch a read set is handed"
        " over, each is armed by a request of its own",
    )
    return None


def _install(client: KazooClient, watch: Callable[[], object]) -> None:
    """Set a watch now, or - while the connection is down - on a kazoo thread of its own.

    kazoo's watch recipes read their znode in their constructor and, disconnected, wait for the
    connection to come back: a reconcile that starts watching during a ZooKeeper outage would
    hang for the whole outage instead of reporting it (found by the quorum-loss fault test).
    The watch is then set when the connection returns.
    """
    if client.state == KazooState.CONNECTED:
        watch()
    else:
        client.handler.spawn(watch)


def watch_children(client: KazooClient, path: str, callback: ChildrenCallback) -> None:
    """Call ``callback`` with the children of ``path`` now (once connected) and whenever they change."""
    _install(client, lambda: ChildrenWatch(client, path, callback))


class ZnodeWatches:
    """Data watches on many znodes of one session, reported to one callback (see the module).

    ``add(path, read=True)`` reports the znode's data now and after every change;
    ``add(path, read=False)`` reports only changes (its first report is for the first change,
    so a caller reads the znode after adding it). With ``since`` (a zxid the caller read the
    znode after), the first report of an unchanged znode goes to ``on_unchanged`` instead (only for
    ``read=True``, with its data; an unchanged ``read=False`` znode is not reported), and a znode that changed
    since, or is missing, is reported to ``on_change`` as a change. Never blocks: safe on
    kazoo's threads.
    """

    def __init__(
        self, client: KazooClient, on_change: ChangeCallback, on_unchanged: ChangeCallback | None = None
    ) -> None:
        self._client = client
        self._on_change = on_change
        self._on_unchanged = on_unchanged
        self._lock = threading.Lock()
        #: Path → whether its data is reported.
        self._paths: dict[str, bool] = {}
        self._stopped = False
        #: Counts what may have undone a watch a primed read set before it was handed over: a
        #: watch of a path not (yet) wanted fired, or the connection went. A hand-over
        #: (:meth:`adopt`) is refused when it moved since its reads began.
        self._lapses = 0
        self._reconnecting = client.state != KazooState.CONNECTED
        #: The one callback every registration uses: kazoo keeps a set per path, so arming a
        #: path again while armed adds nothing.
        self._watcher = self._fired
        client.add_listener(self._on_state)

    # ------------------------------------------------------------------ API
    def add(self, path: str, *, read: bool, since: int | None = None) -> None:
        with self._lock:
            if self._stopped or path in self._paths:
                return
            self._paths[path] = read
        self._arm(path, read, report=read or since is not None, since=since)

    def priming(self, wanted: Callable[[str], bool]) -> Priming:
        """What a reader's reads of ``wanted`` znodes carry so that their watch is set by the
        read itself, to be handed over with :meth:`adopt` (``StoreBase.priming_watches``)."""
        with self._lock:
            return Priming(self._watcher, wanted, self._lapses)

    def adopt(self, path: str, priming: Priming, *, read: bool) -> bool:
        """Watch ``path`` from now on, as :meth:`add` with a ``since`` that finds it unchanged
        would, without a request: a read of ``priming`` found it and set the watch, and nothing
        that could have undone the watch happened since (see the module). ``False``: it is not
        handed over, the caller arms it (:meth:`add`). ``True`` also when it is already watched."""
        with self._lock:
            if self._stopped:
                return False
            if path in self._paths:
                return True
            if priming.lapses != self._lapses or path not in priming.armed:
                return False
            registrations = _registrations(self._client)
            if registrations is None:
                return False  # the caller arms it
            registered = registrations.get(self._client.chroot + path, ())
            if self._watcher not in registered:
                return False  # kazoo holds no such watch (it fired, or was never set)
            self._paths[path] = read
            return True

    def release(self, priming: Priming) -> None:
        """Drop kazoo's record of the watches ``priming``'s reads set and nobody took over (a
        topic its reconcile did not track): they would stay in the client until they fired."""
        with self._lock:  # so that no add of the same path comes between the check and the drop
            for path in priming.armed:
                if path not in self._paths:
                    self._forget_registration(path)

    def discard(self, path: str) -> None:
        """Stop reporting ``path``; kazoo forgets its registration (ZooKeeper's own ends when it
        fires or with the connection)."""
        with self._lock:  # as in release: no add of the same path between the pop and the drop
            if self._paths.pop(path, None) is None:
                return
            self._forget_registration(path)

    def _forget_registration(self, path: str) -> None:
        registered = _registrations(self._client)
        if registered is None:
            return
        full_path = self._client.chroot + path
        watchers = registered.get(full_path)
        if watchers is not None:
            watchers.discard(self._watcher)
            if not watchers:
                registered.pop(full_path, None)

    def watched(self) -> int:
        with self._lock:
            return len(self._paths)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._paths.clear()
        self._client.remove_listener(self._on_state)

    # ------------------------------------------------------------------ arming
    def _wanted(self, path: str) -> bool | None:
        """Whether ``path``'s data is reported; ``None``: it is not watched (any more)."""
        with self._lock:
            return self._paths.get(path)

    def _arm(self, path: str, read: bool, *, report: bool, since: int | None = None) -> Any:
        """Send the read that registers the watch; its answer is reported if ``report`` (as
        unchanged when it was not modified after zxid ``since``)."""
        if read:
            result = self._client.get_async(path, watch=self._watcher)
        else:
            result = self._client.exists_async(path, watch=self._watcher)
        result.rawlink(functools.partial(self._armed, path, read, report, since))
        return result

    def _armed(self, path: str, read: bool, report: bool, since: int | None, result: Any) -> None:
        try:
            answer = result.get(block=False)
        except NoNodeError:
            if self._wanted(path) is None:
                return  # discarded while the read was on its way: an exists would stay set for good
            # A read of a missing znode sets no watch: watch for it to appear instead.
            self._client.exists_async(path, watch=self._watcher).rawlink(
                functools.partial(self._appeared, path, report)
            )
            return
        except _DISCONNECTED:
            return  # armed again when the connection is back
        except KazooException as error:
            log.warning("could not watch ZooKeeper znode %s: %s", path, error)
            return
        if not report or self._wanted(path) is None:
            return
        stat = answer[1] if read else answer
        data = answer[0] if read else None
        if since is not None and stat is not None and stat.mzxid <= since:
            if self._on_unchanged is not None and read:
                self._on_unchanged(path, data)
            return
        self._on_change(path, data)

    def _appeared(self, path: str, report: bool, result: Any) -> None:
        try:
            stat = result.get(block=False)
        except _DISCONNECTED:
            return
        except KazooException as error:
            log.warning("could not watch ZooKeeper znode %s: %s", path, error)
            return
        if stat is not None:  # created between the two requests: read it
            self._arm(path, True, report=report)
        elif report and self._wanted(path) is not None:
            self._on_change(path, None)

    def _fired(self, event: Any) -> None:
        with self._lock:
            read = None if event.type == EventType.NONE else self._paths.get(event.path)
            if read is None:
                self._lapses += 1  # perhaps a primed read's watch, not handed over yet
        if event.type == EventType.NONE:
            return  # kazoo's "session lost" to every watcher: the state listener arms them again
        if read is not None:
            self._arm(event.path, read, report=True)

    # ------------------------------------------------------------------ reconnection
    def _on_state(self, state: str) -> None:
        if state != KazooState.CONNECTED:
            with self._lock:
                self._lapses += 1  # the server forgets the connection's watches
            self._reconnecting = True
        elif self._reconnecting:
            self._reconnecting = False
            self._client.handler.spawn(self._rearm_all)

    def _rearm_all(self) -> None:
        """Arm and report every watch again: the server dropped them with the connection, and
        what changed meanwhile is unknown."""
        with self._lock:
            paths = list(self._paths.items())
        for start in range(0, len(paths), REARM_BATCH):
            batch = [
                self._arm(path, read, report=True)
                for path, read in paths[start : start + REARM_BATCH]
                if self._wanted(path) is not None
            ]
            for result in batch:
                result.wait(30)
            if self._client.state != KazooState.CONNECTED:
                return  # gone again: the next reconnection starts over
