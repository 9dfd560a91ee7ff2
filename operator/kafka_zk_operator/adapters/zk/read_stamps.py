"""The stamps of the znodes a read found, taken from the read's own answers.

A resync ends without a read when the znodes of the topic's last clean read still carry the
stamps (``mzxid``, ``cversion``) they had (``runtime.unchanged``). Every answer of a ``get`` or an
``exists`` carries the znode's stat, so a reconcile's read can say exactly which state of each
znode it decided from, at no cost: no probe before the read, and a record for the reads of kopf's
handlers (an adoption's, say) as well as for the resync's. The store notes the stat of every
``get`` and ``exists`` its thread makes while :meth:`StoreBase.recording_stamps` is open
(``adapters.zk.store_base``).

A znode read twice in one reconcile with different stamps (it changed in between) has no stamp:
which state the reconcile decided from is then not known, and the next resync reads in full.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka_zk_operator.adapters.zk.stat_probe import Stamp


class ReadStamps:
    """The stamp of each znode one thread read while it was recording (see the module docstring)."""

    def __init__(self) -> None:
        self._stamps: dict[str, Stamp] = {}
        self._changed: set[str] = set()

    def note(self, path: str, stamp: Stamp) -> None:
        """``path`` was found with ``stamp`` (``None``: it did not exist)."""
        if path in self._stamps and self._stamps[path] != stamp:
            self._changed.add(path)
        self._stamps[path] = stamp

    def has(self, path: str) -> bool:
        """Whether ``path`` was read, in one state only."""
        return path in self._stamps and path not in self._changed

    def of(self, paths: Sequence[str]) -> tuple[Stamp, ...] | None:
        """The stamps of ``paths`` in order; ``None`` when one of them was not read, or was found
        in two states."""
        if not all(self.has(path) for path in paths):
            return None
        return tuple(self._stamps[path] for path in paths)
