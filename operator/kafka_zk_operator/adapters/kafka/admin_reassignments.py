"""Partition reassignments, preferred-leader elections and replication throttles through the Admin
API (KIP-455, ElectLeaders, IncrementalAlterConfigs), on an ``AdminBackend``'s client.

What the ZooKeeper store does with ``/admin/reassign_partitions``, ``/admin/preferred_replica_election``
and ``/config/{brokers,topics}/<name>``, for the phases where ZooKeeper is not authoritative:

* :func:`submit` sends new targets (AlterPartitionReassignments). Unlike the znode, a partition
  already moving gets the new target (KIP-455 replaces it) and other batches may be running.
* :func:`cancel` reverts partitions to their replicas before the reassignment (a ``None`` target).
* :func:`ongoing` lists what moves (ListPartitionReassignments): the target is ``replicas`` minus
  ``removing``.
* :func:`elect_preferred` asks for preferred leaders (ElectLeaders, PREFERRED); a partition whose
  leader already is the preferred one is no error.
* :func:`read_entity_config` / :func:`update_entity_config`: the read-modify-write the throttle code
  uses (``domain.reassignment.throttles`` works on override dicts), writing only the four
  throttle keys, and only those that change. A broker's config goes to that broker (Kafka's
  rule): a broker that is down cannot be changed until it is back.

Every request that changes something counts one write on the backend; errors are the domain's
(``adapters.kafka.admin_errors``). ``admin_reassignment_calls`` makes them the backend's
``service.backend.ReassignmentBackend`` methods. Each function returns per-partition refusals instead of raising
for them, as kazoo's transactions do: the caller decides what a refused partition means.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol

from kafka_zk_operator.adapters.kafka import admin_client, admin_errors, admin_results, own_writes
from kafka_zk_operator.domain import errors, model


class AdminBackend(Protocol):
    """What these functions use of ``adapters.kafka.admin_backend.AdminBackend``: its client with
    the error mapping, its write counter, and its topic read (package-internal plumbing)."""

    bootstrap_servers: str
    read_your_writes_s: float

    def _call(self, action: str, request: Callable[[Any], Any]) -> Any: ...

    def _raise_for(self, code: int, message: str | None, action: str) -> None: ...

    def _count_write(self) -> None: ...

    def read_assignment(self, topic: str) -> model.Versioned[model.TopicAssignment] | None: ...


Partition = tuple[str, int]

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
#: The only keys :func:`update_entity_config` writes, per entity type (``/config`` directory names).
THROTTLE_KEYS: Mapping[str, frozenset[str]] = {
    "brokers": frozenset({LEADER_RATE, FOLLOWER_RATE}),
    "topics": frozenset({LEADER_REPLICAS, FOLLOWER_REPLICAS}),
}
#: DescribeConfigs' source of an entity's own overrides (what ``/config/<type>/<name>`` holds).
_OWN_SOURCE = {"brokers": "DYNAMIC_BROKER_CONFIG", "topics": admin_results.TOPIC_OVERRIDE_SOURCE}
_RESOURCE_TYPE = {"brokers": "BROKER", "topics": "TOPIC"}
#: NO_REASSIGNMENT_IN_PROGRESS: cancelling a partition that does not move is no error; nor is
#: UNKNOWN_TOPIC_OR_PARTITION (the topic was deleted meanwhile: nothing of it moves).
_NOTHING_TO_CANCEL = frozenset({85, 3})


def _partition_errors(
    backend: AdminBackend,
    answers: Iterable[tuple[Partition, int, str | None]],
    action: str,
    ignored: Collection[int] = (),
) -> dict[Partition, errors.KzoError]:
    refused: dict[Partition, errors.KzoError] = {}
    for (topic, partition), code, message in answers:
        if code == 0 or code in ignored:
            continue
        error = admin_errors.error_for(
            code, message, action=f"{action} {topic}-{partition}", bootstrap=backend.bootstrap_servers
        )
        if error is not None:
            refused[(topic, partition)] = error
    return refused


def _topic_partition(topic: str, partition: int) -> Any:
    return admin_client.kafka_module().TopicPartition(topic, partition)


def submit(
    backend: AdminBackend, targets: Mapping[Partition, Sequence[int]]
) -> dict[Partition, errors.KzoError]:
    """Reassign each partition to its target replicas (the first is the preferred leader).

    :returns: the partitions Kafka refused, with why (empty: all accepted).
    :raises ClusterUnavailable: Kafka could not be asked.
    """
    if not targets:
        return {}
    request = {_topic_partition(t, p): [int(b) for b in replicas] for (t, p), replicas in targets.items()}
    answer = backend._call(
        f"reassigning {len(request)} partitions", lambda admin: admin.alter_partition_reassignments(request)
    )
    refused = _partition_errors(
        backend,
        (
            ((tp.topic, tp.partition), int(getattr(error, "errno", 0) or 0) if error else 0, None)
            for tp, error in answer.items()
        ),
        "reassigning",
    )
    if len(refused) < len(request):
        backend._count_write()
    return refused


def cancel(backend: AdminBackend, partitions: Iterable[Partition]) -> dict[Partition, errors.KzoError]:
    """Stop the reassignment of ``partitions``: Kafka puts back their replicas from before it.
    A partition that is not moving, or whose topic is gone, is no error."""
    request = {_topic_partition(t, p): None for t, p in sorted(set(partitions))}
    if not request:
        return {}
    answer = backend._call(
        f"cancelling the reassignment of {len(request)} partitions",
        lambda admin: admin.alter_partition_reassignments(request),
    )
    codes = [
        ((tp.topic, tp.partition), int(getattr(error, "errno", 0) or 0) if error else 0)
        for tp, error in answer.items()
    ]
    refused = _partition_errors(
        backend,
        ((key, code, None) for key, code in codes),
        "cancelling the reassignment of",
        _NOTHING_TO_CANCEL,
    )
    if any(code == 0 for _, code in codes):
        backend._count_write()
    return refused


def ongoing(
    backend: AdminBackend, partitions: Mapping[str, Sequence[int]] | None = None
) -> dict[Partition, admin_results.PartitionMoves]:
    """The partitions being reassigned (of ``partitions`` only, ``{topic: [ids]}``, when given)."""
    asked = None if partitions is None else {t: list(ps) for t, ps in partitions.items()}
    listing = backend._call(
        "listing partition reassignments", lambda admin: admin.list_partition_reassignments(asked)
    )
    moves: dict[Partition, admin_results.PartitionMoves] = {}
    for topic in sorted({key.topic for key in listing}):
        for partition, moving in admin_results.moves_of(listing, topic).items():
            moves[(topic, partition)] = moving
    return moves


def elect_preferred(
    backend: AdminBackend, partitions: Mapping[str, Sequence[int]]
) -> dict[Partition, errors.KzoError]:
    """Make each partition's first replica its leader where it is not already.

    :returns: the partitions whose election failed (e.g. PREFERRED_LEADER_NOT_AVAILABLE: that
        replica is not in sync yet), with why.
    """
    asked = {t: sorted(set(ps)) for t, ps in partitions.items() if ps}
    if not asked:
        return {}
    answer = backend._call(
        f"electing the preferred leaders of {sum(len(ps) for ps in asked.values())} partitions",
        lambda admin: admin.elect_leaders(0, asked, raise_errors=False),
    )
    backend._raise_for(int(getattr(answer, "error_code", 0) or 0), None, "electing preferred leaders")
    answers = [
        ((result.topic, int(p.partition_id)), int(p.error_code), p.error_message)
        for result in answer.replica_election_results
        for p in result.partition_result
    ]
    backend._count_write()
    return _partition_errors(
        backend, answers, "electing the preferred leader of", {admin_errors.ELECTION_NOT_NEEDED}
    )


def _resource(entity_type: str, name: str, configs: dict[str, Any] | None = None) -> Any:
    kafka_admin = admin_client.kafka_admin()
    if entity_type not in _RESOURCE_TYPE:
        raise errors.NotSupported(
            f"the Admin backend changes only broker and topic configs, not {entity_type!r}"
        )
    return kafka_admin.ConfigResource(
        kafka_admin.ConfigResourceType[_RESOURCE_TYPE[entity_type]], name, configs=configs
    )


def read_entity_config(backend: AdminBackend, entity_type: str, name: str) -> dict[str, str] | None:
    """The entity's own overrides (a broker's per-broker dynamic config, a topic's overrides);
    None for a topic Kafka does not know (every entry is asked for: kafka-python drops
    DescribeConfigs' error code, and only "no entries at all" says the topic is unknown; asked
    again for up to ``read_your_writes_s`` for a broker that has not learned of it yet)."""
    if entity_type == "topics" and backend.read_assignment(name) is None:
        return None
    resource = _resource(entity_type, name)
    section_name = _RESOURCE_TYPE[entity_type].lower()

    def read() -> Mapping[str, Any]:
        described = backend._call(
            f"describing the config of {entity_type}/{name}",
            lambda admin: admin.describe_configs([resource], config_filter="all"),
        )
        entries: Mapping[str, Any] = (described.get(section_name) or {}).get(str(name)) or {}
        return entries

    entries = own_writes.until_shown(backend.read_your_writes_s, read, bool)
    if not entries:
        return None
    return {
        str(key): str(data["value"])
        for key, data in entries.items()
        if isinstance(data, Mapping)
        and data.get("config_source") == _OWN_SOURCE[entity_type]
        and data.get("value") is not None
    }


def update_entity_config(
    backend: AdminBackend, entity_type: str, name: str, change: Callable[[dict[str, str]], dict[str, str]]
) -> bool:
    """Read the entity's overrides, apply ``change``, and write the throttle keys that changed
    (SET or DELETE) in one IncrementalAlterConfigs; False when none did (nothing sent).

    Other keys ``change`` may alter are not written: this module only manages throttles. Returns
    once a read shows the write (up to ``read_your_writes_s``), so the next update starts from it.

    :raises TopicBeingDeleted: a topic Kafka does not know (its config is not re-created).
    """
    current = read_entity_config(backend, entity_type, name)
    if current is None:
        raise errors.TopicBeingDeleted(
            f"topic {name!r} is deleted or being deleted in Kafka; its throttles are not written"
        )
    keys = THROTTLE_KEYS[entity_type]
    wanted = change(dict(current))
    operations = admin_results.config_operations(
        {k: v for k, v in current.items() if k in keys}, {k: v for k, v in wanted.items() if k in keys}
    )
    if not operations:
        return False
    action = f"changing the throttles of {entity_type}/{name}"
    resource = _resource(entity_type, name, operations)
    answer = backend._call(
        action, lambda admin: admin.alter_configs([resource], incremental=True, raise_on_unknown=False)
    )
    result = (answer.get(_RESOURCE_TYPE[entity_type].lower()) or {}).get(name, "OK")
    code, message = admin_errors.alter_result(str(result))
    backend._raise_for(code, message, action)
    backend._count_write()
    # KRaft brokers apply it once they replay the metadata log: the next read-modify-write
    # must start from it, so wait (bounded) until a read shows it.
    written = {k: v for k, v in wanted.items() if k in keys}
    own_writes.until_shown(
        backend.read_your_writes_s,
        lambda: read_entity_config(backend, entity_type, name) or {},
        lambda got: {k: v for k, v in got.items() if k in keys} == written,
    )
    return True
