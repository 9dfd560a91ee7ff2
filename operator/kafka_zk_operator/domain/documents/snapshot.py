"""Cluster snapshot documents (the input of ``kzo plan``): parse, validate, convert to arrays.

A snapshot mirrors what ZooKeeper holds about placement::

    {"brokers": {"<id>": {"rack": "<rack>" | null, "live": false}, ...},  # "live" optional
     "topics":  {"<name>": {"partitions": {"<p>": [<broker id>, ...], ...},
                            "sizes": {"<p>": <bytes>, ...}}}}          # "sizes" optional

Broker ids and partition ids are decimal strings (JSON object keys), replica lists are lists of
broker ids (first = preferred leader). A broker with no replica (a new one) is simply listed under
``brokers``. ``"live": false`` marks a broker that is down (``kzo snapshot`` writes it for a broker
that holds replicas but is not registered in ``/brokers/ids``); it is kept in
:attr:`ClusterSnapshot.down`, the arrays do not carry it. Unknown keys inside broker and topic
objects are ignored (room for more facts).

Every problem is an :class:`~kafka_zk_operator.domain.errors.InvalidSpec` whose message is one
line naming the place in the document (``topics["t"].partitions["3"]``). Pure: callers read the
file; this module only sees its text or parsed value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.model import Broker, BrokerId, PartitionId, TopicName
from kafka_zk_operator.domain.placement.arrays import EMPTY, ClusterArrays, build_arrays

#: Kafka broker and partition ids are Java ints.
_MAX_ID = 2**31 - 1
#: Topic names any Kafka version accepted: today's characters, and up to 255 characters (the
#: limit before 0.10.0 made it 249), so snapshots of long-lived clusters still load.
_MAX_LEGACY_NAME_LENGTH = 255
_LEGACY_TOPIC_NAME = re.compile(rf"[a-zA-Z0-9._-]{{1,{_MAX_LEGACY_NAME_LENGTH}}}")
#: Sizes beyond this (8 PiB in one partition) are not real, and their sums would overflow.
_MAX_SIZE = 2**53
_MAX_TOTAL_SIZE = 2**62


@dataclass(frozen=True)
class TopicSnapshot:
    """One topic: partition id -> replicas (leader first), and optional sizes in bytes."""

    partitions: Mapping[PartitionId, tuple[BrokerId, ...]]
    sizes: Mapping[PartitionId, int] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class ClusterSnapshot:
    """Brokers (sorted by id) and topics (sorted by name) of a cluster.

    :ivar down: ids of the brokers the snapshot marks ``"live": false`` (down: not registered).
    """

    brokers: tuple[Broker, ...]
    topics: Mapping[TopicName, TopicSnapshot]
    down: frozenset[BrokerId] = frozenset()


def parse_snapshot_json(text: str | bytes, *, allow_mixed_rf: bool = False) -> ClusterSnapshot:
    """Parse a snapshot document; :class:`InvalidSpec` for malformed JSON or content."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise errors.InvalidSpec(f"snapshot is not valid JSON: {exc}") from None
    except RecursionError:
        raise errors.InvalidSpec("snapshot is not a snapshot: its JSON is nested too deeply") from None
    except ValueError as exc:  # e.g. a number with more digits than Python converts
        raise errors.InvalidSpec(f"snapshot has an unreadable value: {str(exc).splitlines()[0]}") from None
    return parse_snapshot(data, allow_mixed_rf=allow_mixed_rf)


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """JSON allows repeated keys (the last wins); in a snapshot one is a mistake, so say so."""
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise errors.InvalidSpec(f"snapshot repeats the key {key!r} in one object")
        found[key] = value
    return found


def parse_snapshot(data: object, *, allow_mixed_rf: bool = False) -> ClusterSnapshot:
    """Validate a parsed snapshot (module docstring).

    :param allow_mixed_rf: accept topics whose partitions have different replica counts (left
        over from manual reassignments); refused by default.
    """
    if not isinstance(data, dict):
        raise errors.InvalidSpec(f"snapshot must be a JSON object, not {_kind(data)}")
    for key in ("brokers", "topics"):
        if key not in data:
            raise errors.InvalidSpec(f"snapshot has no {key!r} object")
        if not isinstance(data[key], dict):
            raise errors.InvalidSpec(f"snapshot {key!r} must be an object, not {_kind(data[key])}")
    brokers, down = _brokers(data["brokers"])
    known = {b.id for b in brokers}
    topics: dict[TopicName, TopicSnapshot] = {}
    for name in sorted(data["topics"]):
        topics[name] = _topic(name, data["topics"][name], known, allow_mixed_rf)
    total = sum(sum(t.sizes.values()) for t in topics.values())
    if total > _MAX_TOTAL_SIZE:
        raise errors.InvalidSpec(f"snapshot sizes add up to {total} bytes, more than any real cluster holds")
    return ClusterSnapshot(tuple(brokers), MappingProxyType(topics), frozenset(down))


def _brokers(raw: dict[str, object]) -> tuple[list[Broker], list[BrokerId]]:
    """The brokers (sorted by id) and the ids of those marked ``"live": false``."""
    brokers: list[Broker] = []
    down: list[BrokerId] = []
    for key, value in raw.items():
        broker_id = _id(key, f"brokers[{key!r}]", "broker id")
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise errors.InvalidSpec(
                f'brokers[{key!r}] must be an object like {{"rack": "r1"}}, not {_kind(value)}'
            )
        rack = value.get("rack")
        if rack is not None and (not isinstance(rack, str) or not rack):
            raise errors.InvalidSpec(
                f"brokers[{key!r}].rack must be a non-empty string or null, not {rack!r}"
            )
        if rack is not None and not _printable(rack):
            raise errors.InvalidSpec(
                f"brokers[{key!r}].rack must be printable text (no control characters or lone surrogates): {rack!r}"
            )
        live = value.get("live", True)
        if not isinstance(live, bool):
            raise errors.InvalidSpec(f"brokers[{key!r}].live must be true or false, not {live!r}")
        if not live:
            down.append(broker_id)
        brokers.append(Broker(broker_id, rack))
    if not brokers:
        raise errors.InvalidSpec("snapshot lists no brokers")
    ids = [b.id for b in brokers]
    if len(set(ids)) != len(ids):
        raise errors.InvalidSpec('snapshot lists a broker id twice (e.g. "1" and "01")')
    racked = [b for b in brokers if b.rack is not None]
    if 0 < len(racked) < len(brokers):
        rackless = ", ".join(str(b.id) for b in sorted(brokers) if b.rack is None)
        raise errors.InvalidSpec(
            f"only some brokers have a rack (without: {rackless}); give every broker a rack or none"
        )
    return sorted(brokers), sorted(down)


def _topic(name: str, raw: object, known: set[int], allow_mixed_rf: bool) -> TopicSnapshot:
    where = f"topics[{name!r}]"
    if not name:
        raise errors.InvalidSpec("a topic name is empty")
    if not _LEGACY_TOPIC_NAME.fullmatch(name) or name in (".", ".."):
        raise errors.InvalidSpec(
            f"{where}: not a Kafka topic name (ASCII letters, digits, '.', '_' and '-'; at most "
            f"{_MAX_LEGACY_NAME_LENGTH} characters; not '.' or '..')"
        )
    if not isinstance(raw, dict):
        raise errors.InvalidSpec(f'{where} must be an object with "partitions", not {_kind(raw)}')
    parts_raw = raw.get("partitions")
    if not isinstance(parts_raw, dict) or not parts_raw:
        raise errors.InvalidSpec(f"{where}.partitions must be a non-empty object of partition id -> replicas")
    partitions: dict[int, tuple[int, ...]] = {}
    for key, replicas in parts_raw.items():
        p_where = f"{where}.partitions[{key!r}]"
        pid = _id(key, p_where, "partition id")
        if pid in partitions:
            raise errors.InvalidSpec(f"{p_where}: partition {pid} is listed twice")
        if not isinstance(replicas, list) or not replicas:
            raise errors.InvalidSpec(
                f"{p_where} must be a non-empty list of broker ids, not {_kind(replicas)}"
            )
        ids: list[int] = []
        for broker in replicas:
            if isinstance(broker, bool) or not isinstance(broker, int):
                raise errors.InvalidSpec(f"{p_where} must hold integer broker ids, found {broker!r}")
            if broker not in known:
                raise errors.InvalidSpec(f'{p_where} names broker {broker}, which is not in "brokers"')
            if broker in ids:
                raise errors.InvalidSpec(f"{p_where} lists broker {broker} twice: {replicas}")
            ids.append(broker)
        partitions[pid] = tuple(ids)
    rfs = {len(r) for r in partitions.values()}
    if len(rfs) > 1 and not allow_mixed_rf:
        raise errors.InvalidSpec(
            f"{where} mixes replication factors {sorted(rfs)} across partitions (allow it explicitly to plan anyway)"
        )
    sizes: dict[int, int] = {}
    sizes_raw = raw.get("sizes", {})
    if not isinstance(sizes_raw, dict):
        raise errors.InvalidSpec(
            f"{where}.sizes must be an object of partition id -> bytes, not {_kind(sizes_raw)}"
        )
    for key, size in sizes_raw.items():
        s_where = f"{where}.sizes[{key!r}]"
        pid = _id(key, s_where, "partition id")
        if pid not in partitions:
            raise errors.InvalidSpec(f"{s_where}: partition {pid} is not in {where}.partitions")
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= _MAX_SIZE:
            raise errors.InvalidSpec(
                f"{s_where} must be a non-negative integer number of bytes (at most 2**53), not {size!r}"
            )
        sizes[pid] = size
    ordered = {pid: partitions[pid] for pid in sorted(partitions)}
    return TopicSnapshot(MappingProxyType(ordered), MappingProxyType(sizes))


def _id(text: str, where: str, what: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) > _MAX_ID:
        raise errors.InvalidSpec(
            f"{where}: {what} must be a non-negative integer (as a string key), not {text!r}"
        )
    return int(text)


def _printable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return text.isprintable()


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number" if isinstance(value, int | float) else type(value).__name__)


def snapshot_to_arrays(snapshot: ClusterSnapshot) -> ClusterArrays:
    """The engine's array view of a snapshot."""
    brokers = list(snapshot.brokers)
    index = {b.id: i for i, b in enumerate(brokers)}
    names = list(snapshot.topics)
    count = sum(len(t.partitions) for t in snapshot.topics.values())
    width = max((len(r) for t in snapshot.topics.values() for r in t.partitions.values()), default=0)
    topic_of = np.empty(count, dtype=np.int64)
    partition_of = np.empty(count, dtype=np.int64)
    sizes = np.zeros(count, dtype=np.int64)
    replicas = np.full((count, width), EMPTY, dtype=np.int64)
    row = 0
    for t, name in enumerate(names):
        topic = snapshot.topics[name]
        for pid, reps in topic.partitions.items():
            topic_of[row] = t
            partition_of[row] = pid
            sizes[row] = topic.sizes.get(pid, 0)
            replicas[row, : len(reps)] = [index[b] for b in reps]
            row += 1
    return build_arrays(brokers, names, topic_of, partition_of, replicas, sizes)


def arrays_to_snapshot(cluster: ClusterArrays, *, with_sizes: bool = True) -> dict[str, object]:
    """The snapshot document of ``cluster`` (the inverse of :func:`snapshot_to_arrays`)."""
    ids = cluster.broker_ids
    brokers = {
        str(int(b)): {"rack": cluster.racks[int(r)]} for b, r in zip(ids, cluster.broker_rack, strict=True)
    }
    topics: dict[str, dict[str, dict[str, object]]] = {}
    for row in range(cluster.n_partitions):
        name = cluster.topics[int(cluster.topic_of[row])]
        entry = topics.setdefault(name, {"partitions": {}, "sizes": {}})
        reps = cluster.replicas[row]
        pid = str(int(cluster.partition_of[row]))
        entry["partitions"][pid] = [int(ids[b]) for b in reps[reps >= 0]]
        if with_sizes:
            entry["sizes"][pid] = int(cluster.sizes[row])
    if not with_sizes:
        for entry in topics.values():
            del entry["sizes"]
    return {"brokers": brokers, "topics": topics}
