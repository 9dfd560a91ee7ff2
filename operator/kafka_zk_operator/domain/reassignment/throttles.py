"""Replication throttles for one batch, computed exactly as Kafka 3.x's reassignment tool does.

Kafka's computation (reference §10; ``ReassignPartitionsCommand :: calculateProposedMoveMap,
calculateLeaderThrottles, calculateFollowerThrottles, calculateReassigningBrokers``):

* the move map holds every partition of the batch **plus every partition already moving**;
  *sources* are the current replicas (for a partition in flight: its replicas minus those being
  added), *destinations* the target replicas that are not sources;
* per topic, ``leader.replication.throttled.replicas`` lists ``partition:source`` for every source
  of every move-map partition, ``follower.replication.throttled.replicas`` lists
  ``partition:destination``; each list is a sorted set of those strings (Java ``TreeSet``, so
  ``"10:1"`` sorts before ``"2:1"``), comma-joined;
* ``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate`` are set to the
  throttle on every source and destination broker.

Unlike the tool, which overwrites those keys, the operator must leave other people's throttles
alone (reference §13 rule 10, product-landscape §7): a :class:`ThrottleRecord` remembers the
previous broker rates and exactly which replica entries it added (not those already there), so
:func:`restore_broker_config` / :func:`restore_topic_config` undo only the operator's part:
a rate someone changed meanwhile stays, entries someone else added stay, and a ``"*"`` (all
replicas) written by someone else is never touched.

Pure: config maps in, config maps out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_zk_operator.domain.model import BrokerId, PartitionId, TopicName

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
ALL_REPLICAS = "*"

TopicPartitionKey = tuple[TopicName, PartitionId]


@dataclass(frozen=True, slots=True)
class ThrottledMove:
    sources: frozenset[BrokerId]
    destinations: frozenset[BrokerId]


MoveMap = dict[TopicName, dict[PartitionId, ThrottledMove]]


def proposed_move_map(
    targets: Mapping[TopicPartitionKey, Sequence[BrokerId]],
    current: Mapping[TopicPartitionKey, Sequence[BrokerId]],
    in_flight: Mapping[TopicPartitionKey, tuple[Sequence[BrokerId], Sequence[BrokerId]]] = {},
) -> MoveMap:
    """Kafka's move map. ``in_flight`` maps partitions being reassigned to (replicas, adding)."""
    move_map: MoveMap = {}
    for (topic, partition), (replicas, adding) in in_flight.items():
        sources = frozenset(replicas) - frozenset(adding)
        move_map.setdefault(topic, {})[partition] = ThrottledMove(sources, frozenset(adding))
    for (topic, partition), target in targets.items():
        moves = move_map.setdefault(topic, {})
        if partition in moves:
            sources = moves[partition].sources
        elif (topic, partition) in current:
            sources = frozenset(current[(topic, partition)])
        else:
            raise ValueError(f"partition {topic}-{partition} has no current replicas")
        moves[partition] = ThrottledMove(sources, frozenset(target) - sources)
    return move_map


def leader_throttles(move_map: MoveMap) -> dict[TopicName, str]:
    return {
        topic: ",".join(sorted({f"{p}:{s}" for p, move in moves.items() for s in move.sources}))
        for topic, moves in move_map.items()
    }


def follower_throttles(move_map: MoveMap) -> dict[TopicName, str]:
    return {
        topic: ",".join(
            sorted(
                {f"{p}:{d}" for p, move in moves.items() for d in move.destinations if d not in move.sources}
            )
        )
        for topic, moves in move_map.items()
    }


def reassigning_brokers(move_map: MoveMap) -> list[BrokerId]:
    brokers: set[BrokerId] = set()
    for moves in move_map.values():
        for move in moves.values():
            brokers |= move.sources | move.destinations
    return sorted(brokers)


# ------------------------------------------------------------------ what the operator added
@dataclass(frozen=True, slots=True)
class PreviousRates:
    """A broker's throttle rates before the operator set them (``None``: not set)."""

    broker: BrokerId
    leader: str | None = None
    follower: str | None = None


@dataclass(frozen=True, slots=True)
class AddedReplicas:
    """Replica entries the operator added to a topic's throttle lists (not those already there)."""

    topic: TopicName
    leader: tuple[str, ...] = ()
    follower: tuple[str, ...] = ()
    leader_key_existed: bool = False
    follower_key_existed: bool = False


@dataclass(frozen=True)
class ThrottleRecord:
    """Everything needed to undo a batch's throttles, kept in ``status.throttle``."""

    batch: int
    rate: int
    brokers: tuple[PreviousRates, ...]
    topics: tuple[AddedReplicas, ...]


def parse_replica_list(value: str | None) -> list[str]:
    """``"0:1, 0:2"`` → ``["0:1", "0:2"]``; ``None``/``""`` → ``[]`` (``"*"`` stays ``["*"]``)."""
    if not value:
        return []
    return [item.strip() for item in value.split(",") if item.strip()]


def plan_throttle(
    batch: int,
    rate: int,
    move_map: MoveMap,
    broker_configs: Mapping[BrokerId, Mapping[str, str]],
    topic_configs: Mapping[TopicName, Mapping[str, str]],
) -> ThrottleRecord:
    """The record of a batch's throttles, from the configs as they are *before* applying them."""
    leaders, followers = leader_throttles(move_map), follower_throttles(move_map)
    brokers = tuple(
        PreviousRates(
            b, broker_configs.get(b, {}).get(LEADER_RATE), broker_configs.get(b, {}).get(FOLLOWER_RATE)
        )
        for b in reassigning_brokers(move_map)
    )
    topics: list[AddedReplicas] = []
    for topic in sorted(move_map):
        config = topic_configs.get(topic, {})
        have_leader = parse_replica_list(config.get(LEADER_REPLICAS))
        have_follower = parse_replica_list(config.get(FOLLOWER_REPLICAS))
        add_leader = () if ALL_REPLICAS in have_leader else _missing(leaders[topic], have_leader)
        add_follower = () if ALL_REPLICAS in have_follower else _missing(followers[topic], have_follower)
        if add_leader or add_follower:
            topics.append(
                AddedReplicas(
                    topic,
                    add_leader,
                    add_follower,
                    leader_key_existed=LEADER_REPLICAS in config,
                    follower_key_existed=FOLLOWER_REPLICAS in config,
                )
            )
    return ThrottleRecord(batch=batch, rate=rate, brokers=brokers, topics=tuple(topics))


def _missing(wanted: str, have: Iterable[str]) -> tuple[str, ...]:
    present = set(have)
    return tuple(item for item in parse_replica_list(wanted) if item not in present)


def apply_broker_config(config: Mapping[str, str], rate: int) -> dict[str, str]:
    updated = dict(config)
    updated[LEADER_RATE] = updated[FOLLOWER_RATE] = str(rate)
    return updated


def apply_topic_config(config: Mapping[str, str], added: AddedReplicas) -> dict[str, str]:
    """Add the operator's entries to the topic's lists (idempotent; ``"*"`` left alone)."""
    updated = dict(config)
    for key, entries in ((LEADER_REPLICAS, added.leader), (FOLLOWER_REPLICAS, added.follower)):
        have = parse_replica_list(updated.get(key))
        if not entries or ALL_REPLICAS in have:
            continue
        updated[key] = ",".join([*have, *(e for e in entries if e not in have)])
    return updated


def restore_broker_config(config: Mapping[str, str], previous: PreviousRates, rate: int) -> dict[str, str]:
    """Put back the previous rates, but only where the value is still the operator's."""
    updated = dict(config)
    for key, before in ((LEADER_RATE, previous.leader), (FOLLOWER_RATE, previous.follower)):
        if updated.get(key) != str(rate):
            continue  # someone changed it since: theirs now
        if before is None:
            del updated[key]
        else:
            updated[key] = before
    return updated


def restore_topic_config(config: Mapping[str, str], added: AddedReplicas) -> dict[str, str]:
    """Remove exactly the operator's entries; drop a key the operator created once it is empty."""
    updated = dict(config)
    for key, entries, existed in (
        (LEADER_REPLICAS, added.leader, added.leader_key_existed),
        (FOLLOWER_REPLICAS, added.follower, added.follower_key_existed),
    ):
        if key not in updated or not entries:
            continue
        have = parse_replica_list(updated[key])
        if ALL_REPLICAS in have:
            continue
        remaining = [item for item in have if item not in set(entries)]
        if remaining or existed:
            updated[key] = ",".join(remaining)
        else:
            del updated[key]
    return updated


# ------------------------------------------------------------------ status form
def record_fields(record: ThrottleRecord) -> dict[str, Any]:
    """``status.throttle`` for an applied record."""
    return {
        "applied": True,
        "batch": record.batch,
        "rate": record.rate,
        "brokers": [p.broker for p in record.brokers],
        "topics": [t.topic for t in record.topics],
        "previousRates": [
            {
                "broker": p.broker,
                **({"leaderRate": p.leader} if p.leader is not None else {}),
                **({"followerRate": p.follower} if p.follower is not None else {}),
            }
            for p in record.brokers
        ],
        "addedReplicas": [
            {
                "topic": t.topic,
                "leader": ",".join(t.leader),
                "follower": ",".join(t.follower),
                "leaderKeyExisted": t.leader_key_existed,
                "followerKeyExisted": t.follower_key_existed,
            }
            for t in record.topics
        ],
    }


#: ``status.throttle`` once the operator's throttles are removed (a merge patch clearing the lists).
CLEARED_FIELDS: dict[str, Any] = {
    "applied": False,
    "batch": None,
    "brokers": None,
    "topics": None,
    "previousRates": None,
    "addedReplicas": None,
}


def record_from_fields(fields: Mapping[str, Any] | None) -> ThrottleRecord | None:
    """The record kept in ``status.throttle``; ``None`` when nothing is (or may be) applied."""
    if not fields or not fields.get("batch") or fields.get("rate") is None:
        return None
    if not fields.get("previousRates") and not fields.get("addedReplicas"):
        return None
    return ThrottleRecord(
        batch=int(fields["batch"]),
        rate=int(fields["rate"]),
        brokers=tuple(
            PreviousRates(int(p["broker"]), p.get("leaderRate"), p.get("followerRate"))
            for p in fields.get("previousRates") or []
        ),
        topics=tuple(
            AddedReplicas(
                str(t["topic"]),
                tuple(parse_replica_list(t.get("leader"))),
                tuple(parse_replica_list(t.get("follower"))),
                leader_key_existed=bool(t.get("leaderKeyExisted")),
                follower_key_existed=bool(t.get("followerKeyExisted")),
            )
            for t in fields.get("addedReplicas") or []
        ),
    )
