"""Which Kafka line a cluster runs, as far as ZooKeeper and the operator's settings tell.

A *line* is a Kafka release series whose rules the operator models ("0.10.0", "0.10.1", "0.10.2",
"0.11.0", "1.0", ... "3.9", and the KRaft-only "4.0" and "4.1"), written as a tuple: ``(0, 10, 0)``,
``(1, 0, 0)``, ``(3, 9, 0)``, ``(4, 1, 0)``. Kafka 4.0 removed ZooKeeper mode, so a ZooKeeper-mode
cluster runs at most :data:`NEWEST_ZK_LINE` (3.9); the 4.x lines are for KRaft clusters only.
Topic configs, the ``/config/changes`` format and dynamic broker configs differ between lines,
and a broker fails at start-up on a topic config its own line does not accept, so every write
follows the rules of the **oldest line a live broker may run** (during a rolling upgrade, the
not-yet-upgraded brokers).

ZooKeeper holds no software version. Each broker's ``/brokers/ids/<id>`` JSON version is what it
does hold, chosen by Kafka from the binary and ``inter.broker.protocol.version`` (IBP):

==========  =====================================================================
 version     written by
==========  =====================================================================
 1, 2        0.8 / 0.9, or any later binary at an IBP before 0.10.0-IV1
 3           0.10.0 and 0.10.1
 4           0.10.2 to 3.9 (3.x only at an IBP before 2.7)
 5           2.7 to 3.9 at IBP 2.7-IV0 or later
==========  =====================================================================

So the registrations bound each broker's line from below and above. The cluster setting
``kafkaVersion`` names the oldest line the brokers run exactly; it must fit those bounds. Without
it the operator takes the lowest line the registrations allow, which never lets a broker fail
but may refuse a value the brokers would accept (the refusal says to set ``kafkaVersion``).

A KRaft cluster has no registrations to read; its finalized ``metadata.version`` feature (which no
broker older than that release can run) bounds its brokers' line from below the same way
(:func:`kraft_cluster_line`).

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from kafka_zk_operator.domain import errors

KafkaLine = tuple[int, int, int]

#: Every line with a ZooKeeper mode the operator supports, oldest first (0.8/0.9 have no ``broker.rack``).
ZK_LINES: tuple[KafkaLine, ...] = (
    (0, 10, 0),
    (0, 10, 1),
    (0, 10, 2),
    (0, 11, 0),
    (1, 0, 0),
    (1, 1, 0),
    *((2, minor, 0) for minor in range(9)),
    *((3, minor, 0) for minor in range(10)),
)
#: The lines without ZooKeeper mode (Kafka 4.0 removed it): KRaft clusters only.
KRAFT_ONLY_LINES: tuple[KafkaLine, ...] = ((4, 0, 0), (4, 1, 0))
#: Every line the operator supports, oldest first.
SUPPORTED_LINES: tuple[KafkaLine, ...] = (*ZK_LINES, *KRAFT_ONLY_LINES)
OLDEST_LINE: KafkaLine = SUPPORTED_LINES[0]
NEWEST_LINE: KafkaLine = SUPPORTED_LINES[-1]
#: The newest line a ZooKeeper-mode broker can run (and write ``/brokers/ids``).
NEWEST_ZK_LINE: KafkaLine = ZK_LINES[-1]
#: The first line whose KRaft mode is production-ready (KIP-833): a cluster without ZooKeeper runs
#: at least this.
OLDEST_KRAFT_LINE: KafkaLine = (3, 3, 0)

#: ``/brokers/ids`` JSON version → (oldest, newest) line a broker writing it may run.
_REGISTRATION_RANGES: Mapping[int, tuple[KafkaLine, KafkaLine]] = {
    1: (OLDEST_LINE, NEWEST_ZK_LINE),
    2: (OLDEST_LINE, NEWEST_ZK_LINE),
    3: ((0, 10, 0), (0, 10, 1)),
    4: ((0, 10, 2), NEWEST_ZK_LINE),
    5: ((2, 7, 0), NEWEST_ZK_LINE),
}
#: The first ``metadata.version`` feature level of each line (``MetadataVersion``: 1 is 3.0-IV1,
#: 21 3.9-IV0, 25 4.0-IV3, 27 4.1-IV1, as Kafka 3.9.2, 4.0.2 and 4.1.2 list them).
_METADATA_VERSION_LEVELS: tuple[tuple[int, KafkaLine], ...] = (
    (1, (3, 0, 0)),
    (2, (3, 1, 0)),
    (3, (3, 2, 0)),
    (4, (3, 3, 0)),
    (8, (3, 4, 0)),
    (9, (3, 5, 0)),
    (12, (3, 6, 0)),
    (15, (3, 7, 0)),
    (20, (3, 8, 0)),
    (21, (3, 9, 0)),
    (22, (4, 0, 0)),
    (26, (4, 1, 0)),
)
#: The last ``metadata.version`` level of :data:`NEWEST_LINE` (4.1-IV1); above it a newer Kafka.
_NEWEST_METADATA_VERSION_LEVEL = 27
_VERSION = re.compile(r"(0)\.(\d+)\.(\d+)(?:\.\d+)?|([1-9]\d*)\.(\d+)(?:\.\d+)?", re.ASCII)


def line_name(line: KafkaLine) -> str:
    """``(0, 10, 2)`` → ``"0.10.2"``, ``(2, 0, 0)`` → ``"2.0"``."""
    return ".".join(map(str, line)) if line[0] == 0 else f"{line[0]}.{line[1]}"


def parse_line(text: str) -> KafkaLine:
    """The line of a Kafka version: ``"2.0"``, ``"2.0.1"``, ``"0.10.2"`` and ``"0.10.2.2"`` all work.

    :raises ValueError: not a version, or a line the operator does not support (the message says
        which lines it supports).
    """
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a Kafka version (e.g. 2.8, 2.8.2, 0.10.2)")
    if match.group(1) is not None:
        line: KafkaLine = (0, int(match.group(2)), int(match.group(3)))
    else:
        line = (int(match.group(4)), int(match.group(5)), 0)
    if line not in SUPPORTED_LINES:
        raise ValueError(
            f"Kafka {line_name(line)} is not supported: the operator manages ZooKeeper-mode clusters of "
            f"Kafka {line_name(OLDEST_LINE)} to {line_name(NEWEST_ZK_LINE)} and KRaft clusters of Kafka "
            f"{line_name(OLDEST_KRAFT_LINE)} to {line_name(NEWEST_LINE)}"
        )
    return line


def runs_kraft(line: KafkaLine) -> bool:
    """Whether brokers of ``line`` can run without ZooKeeper (KRaft mode)."""
    return line >= OLDEST_KRAFT_LINE


def runs_zookeeper(line: KafkaLine) -> bool:
    """Whether brokers of ``line`` can run in ZooKeeper mode (Kafka 4.0 removed it)."""
    return line <= NEWEST_ZK_LINE


def metadata_version_line(level: int) -> KafkaLine | None:
    """The line that introduced ``metadata.version`` feature ``level`` (no older broker runs at it);
    ``None`` for a level below 1 (none finalized). A level newer than :data:`NEWEST_LINE` knows is
    that line's: the newest rules the operator has."""
    found = [line for first, line in _METADATA_VERSION_LEVELS if first <= level]
    return found[-1] if found else None


def registration_range(registration_version: int) -> tuple[KafkaLine, KafkaLine]:
    """The oldest and newest line a broker writing this ``/brokers/ids`` version may run."""
    return _REGISTRATION_RANGES.get(registration_version, (OLDEST_LINE, NEWEST_ZK_LINE))


@dataclass(frozen=True, slots=True)
class ClusterLine:
    """The line whose rules the operator follows for one cluster, and why."""

    line: KafkaLine
    #: Whether the operator's settings named it (``kafkaVersion``) rather than it being inferred.
    declared: bool = False
    #: Why this line: completes "this cluster runs Kafka X (...)" in messages.
    basis: str = ""

    @property
    def name(self) -> str:
        return line_name(self.line)

    def describe(self) -> str:
        """``"Kafka 2.0 (kafkaVersion in the operator's cluster settings)"``."""
        return f"Kafka {self.name}" + (f" ({self.basis})" if self.basis else "")

    def at_least(self, line: KafkaLine) -> bool:
        return self.line >= line


#: The rules of the newest ZooKeeper-mode line (3.9); what pure callers get when they name no cluster.
NEWEST_ZK = ClusterLine(NEWEST_ZK_LINE, basis="the newest ZooKeeper-mode line the operator supports")


def cluster_line(registrations: Mapping[int, int], declared: KafkaLine | None) -> ClusterLine:
    """The rules in force for a cluster whose live brokers register ``{broker id: JSON version}``.

    :param declared: the cluster's ``kafkaVersion`` setting (the oldest line its brokers run).
    :raises KafkaLineMismatch: ``declared`` is newer than a live broker's registration allows.
    """
    if declared is not None:
        too_old = sorted(b for b, v in registrations.items() if registration_range(v)[1] < declared)
        if too_old:
            versions = sorted({registrations[b] for b in too_old})
            newest = max(registration_range(v)[1] for v in versions)
            raise errors.KafkaLineMismatch(
                f"the operator's settings say this cluster runs Kafka {line_name(declared)} or later "
                f"(kafkaVersion), but {_brokers_register(too_old)} /brokers/ids "
                f"v{', v'.join(map(str, versions))}, which only Kafka {line_name(newest)} or older "
                "writes; set kafkaVersion to the oldest line any broker runs (the operator writes "
                "nothing until it matches)"
            )
        return ClusterLine(declared, declared=True, basis="kafkaVersion in the operator's cluster settings")
    if not registrations:
        return ClusterLine(
            OLDEST_LINE,
            basis="no broker is registered, so the operator assumes the oldest line it supports; "
            "set kafkaVersion in the operator's cluster settings to change that",
        )
    oldest = min(registrations.values(), key=lambda v: registration_range(v)[0])
    low, high = registration_range(oldest)
    brokers = sorted(b for b, v in registrations.items() if v == oldest)
    span = line_name(low) if low == high else f"{line_name(low)} to {line_name(high)}"
    return ClusterLine(
        low,
        basis=(
            f"{_brokers_register(brokers)} /brokers/ids "
            f"v{oldest}, which Kafka {span} writes; set kafkaVersion in the operator's cluster "
            "settings to the oldest line the brokers run to use its rules"
        ),
    )


def kraft_cluster_line(
    metadata_version: int | None, declared: KafkaLine | None, fallback: ClusterLine
) -> ClusterLine:
    """The rules in force for a cluster served through the Admin API (KRaft, or a migration).

    :param metadata_version: the finalized ``metadata.version`` feature level (``None``: none
        finalized, as on ZooKeeper-mode brokers); a broker older than that level's release cannot
        run at it, so its line is the lowest the brokers may run.
    :param declared: the cluster's ``kafkaVersion`` setting, which wins.
    :param fallback: the rules when neither tells (the Admin backend's newest 3.x line).
    """
    if declared is not None:
        return ClusterLine(declared, declared=True, basis="kafkaVersion in the operator's cluster settings")
    line = None if metadata_version is None else metadata_version_line(metadata_version)
    if metadata_version is None or line is None:
        return fallback
    if metadata_version > _NEWEST_METADATA_VERSION_LEVEL:
        which = f"newer than Kafka {line_name(line)}, the newest line the operator knows"
    else:
        which = f"which Kafka {line_name(line)} introduced"
    return ClusterLine(
        line,
        basis=(
            f"its finalized metadata.version is level {metadata_version}, {which}; set kafkaVersion in "
            "the operator's cluster settings to the oldest line the brokers run to use its rules"
        ),
    )


def _brokers_register(ids: list[int]) -> str:
    """``broker 2 registers`` / ``brokers 2, 3 register``."""
    names = ", ".join(map(str, ids))
    return f"broker {names} registers" if len(ids) == 1 else f"brokers {names} register"


#: The first line with replication throttles and dynamic broker configs (KIP-73).
FIRST_THROTTLE_LINE: KafkaLine = (0, 10, 1)
#: The first line whose controller parses ``/admin/reassign_partitions`` strictly (Jackson).
STRICT_REASSIGNMENT_PARSING: KafkaLine = (2, 0, 0)


def unparseable_reassignment_effect(line: ClusterLine) -> str:
    """What the controller of ``line`` does with an ``/admin/reassign_partitions`` it cannot parse."""
    if line.at_least(STRICT_REASSIGNMENT_PARSING):
        return "Kafka ignores it (2.0 and later log 'Ignoring partition reassignment due to invalid json')"
    return (
        f"this cluster runs {line.describe()}, whose controller parses it leniently and may still move "
        "what it can read (strict parsing came with 2.0)"
    )
