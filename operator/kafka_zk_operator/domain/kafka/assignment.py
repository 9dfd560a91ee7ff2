"""Kafka's default replica assignment, ported exactly from Kafka 3.9 so our znodes match Kafka's.

Sources (apache/kafka 3.9): ``server-common/.../admin/AdminUtils.java :: assignReplicasToBrokers``
and ``core/.../zk/AdminZkClient.scala :: getBrokerMetadatas, createNewPartitionsAssignment``
(reference §7). Callers: topic planning (create a topic, add partitions), the ``kzo assign``
command, and the placement engine, which uses :func:`assign_replicas_to_brokers` to model what
Kafka's own tools (``kafka-topics``, ``kafka-reassign-partitions --generate``) would produce.

Pipeline, as in ``AdminZkClient``::

    brokers_for_assignment(live brokers, RackAwareMode)   # rack mode applied, sorted by id
      -> assign_replicas_to_brokers(...)                  # new topic
      -> assign_new_partitions(existing, ...)             # more partitions for an existing topic

The algorithm (Kafka's wording): the first replica of each partition is placed round-robin from a
start index; the other replicas follow with a shift that grows by one every full round, so
partitions led by one broker spread their followers over the others. With racks, the round-robin
runs over a *rack-alternated* broker list (racks sorted by name, brokers by id) and followers
prefer racks, then brokers, without a replica yet.

Deviations from Kafka, all on inputs Kafka itself never receives: duplicate broker ids are
refused, and parameters that would overflow Kafka's 32-bit integer arithmetic (start index or
partition ids near 2**31) are refused instead of producing Kafka's undefined results.

Pure and fast (plain lists and ints); randomness only through an injected ``random.Random``.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Collection, Mapping, Sequence

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.model import Broker, BrokerId, PartitionId

_JAVA_INT_MAX = 2**31 - 1

#: The draws of callers that pass no ``rng``. One generator for the process: a new
#: ``random.Random()`` per call seeds itself from ``os.urandom``, a system call that gives up the
#: GIL: 16 us alone, but py-spy found the handler threads of a 2,000-topic burst in it for about
#: 0.45 ms a create (waiting for the GIL again, issue #16). Its draws are safe from several
#: threads (CPython's Mersenne Twister draws under the GIL).
_SHARED_RNG = random.Random()


class RackAwareMode(enum.StrEnum):
    """Kafka's ``kafka.admin.RackAwareMode``: what to do with ``broker.rack`` when assigning."""

    #: Use racks; refuse when only some brokers have one (Kafka's default).
    ENFORCED = "enforced"
    #: Use racks when every broker has one, otherwise ignore all of them.
    SAFE = "safe"
    #: Ignore racks (``--disable-rack-aware``).
    DISABLED = "disabled"


def brokers_for_assignment(
    brokers: Sequence[Broker],
    mode: RackAwareMode = RackAwareMode.ENFORCED,
    *,
    only_ids: Collection[BrokerId] | None = None,
) -> list[Broker]:
    """The brokers as ``AdminZkClient.getBrokerMetadatas`` hands them to the algorithm.

    Applies ``mode`` (``DISABLED`` drops every rack; ``SAFE`` drops them all when only some brokers
    have one) and sorts by broker id. ``brokers`` are the live brokers (children of
    ``/brokers/ids``); an empty-string rack counts as a rack, as in Kafka. ``only_ids`` is Kafka's
    ``brokerList`` argument: keep only those brokers (ids not among ``brokers`` are ignored).

    :raises InvalidSpec: ``ENFORCED`` and only some brokers have a rack.
    """
    if only_ids is not None:
        wanted = set(only_ids)
        brokers = [broker for broker in brokers if broker.id in wanted]
    with_rack = sum(1 for broker in brokers if broker.rack is not None)
    mixed = 0 < with_rack < len(brokers)
    if mode is RackAwareMode.ENFORCED and mixed:
        raise errors.InvalidSpec(
            "Not all brokers have rack information. Add --disable-rack-aware in command line to make "
            f"replica assignment without rack information (brokers without a rack: {_rackless(brokers)})."
        )
    if mode is RackAwareMode.DISABLED or (mode is RackAwareMode.SAFE and mixed):
        return sorted((Broker(broker.id) for broker in brokers), key=lambda broker: broker.id)
    return sorted(brokers, key=lambda broker: broker.id)


def assign_replicas_to_brokers(
    brokers: Sequence[Broker],
    n_partitions: int,
    replication_factor: int,
    *,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: random.Random | None = None,
) -> dict[PartitionId, list[BrokerId]]:
    """Kafka's ``AdminUtils.assignReplicasToBrokers``: partition id → replicas, leader first.

    :param brokers: used in the order given (``AdminZkClient`` sorts by id first, see
        :func:`brokers_for_assignment`). Either every broker has a rack (rack-aware assignment)
        or none has (rack-unaware).
    :param fixed_start_index: index of the first partition's leader and initial follower shift;
        negative means both are drawn from ``rng`` (two independent draws, as in Kafka).
    :param start_partition_id: first partition id to assign; negative means 0. Partition ids
        continue from it, and the round/shift rule uses the absolute partition id.
    :param rng: used only when ``fixed_start_index`` is negative; the module's own unseeded
        generator when omitted.
    :returns: a dict ordered by partition id.
    :raises InvalidPartitions: ``n_partitions <= 0``.
    :raises InvalidReplicationFactor: ``replication_factor <= 0`` or above the broker count.
    :raises InvalidSpec: only some brokers have a rack, duplicate broker ids, or parameters that
        overflow Kafka's 32-bit arithmetic.
    """
    if n_partitions <= 0:
        raise errors.InvalidPartitions(f"Number of partitions must be larger than 0 (got {n_partitions}).")
    if replication_factor <= 0:
        raise errors.InvalidReplicationFactor(
            f"Replication factor must be larger than 0 (got {replication_factor})."
        )
    if replication_factor > len(brokers):
        raise errors.InvalidReplicationFactor(
            f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}. "
            "Lower the replication factor or add brokers."
        )
    ids = [broker.id for broker in brokers]
    if len(set(ids)) != len(ids):
        duplicates = sorted({broker_id for broker_id in ids if ids.count(broker_id) > 1})
        raise errors.InvalidSpec(f"Duplicate broker ids {duplicates}: each broker may be listed once.")
    with_rack = sum(1 for broker in brokers if broker.rack is not None)
    if 0 < with_rack < len(brokers):
        raise errors.InvalidSpec(
            "Not all brokers have rack information for replica rack aware assignment "
            f"(brokers without a rack: {_rackless(brokers)}). Give every broker a rack, "
            "or disable rack awareness (--disable-rack-aware)."
        )
    n_racks = len({broker.rack for broker in brokers}) if with_rack else 0
    _check_java_int_range(
        len(brokers), n_partitions, replication_factor, fixed_start_index, start_partition_id, n_racks
    )
    if fixed_start_index < 0 and rng is None:
        rng = _SHARED_RNG
    if with_rack == 0:
        return _assign_rack_unaware(
            ids, n_partitions, replication_factor, fixed_start_index, start_partition_id, rng
        )
    rack_by_broker = {broker.id: broker.rack for broker in brokers if broker.rack is not None}
    return _assign_rack_aware(
        rack_by_broker, n_partitions, replication_factor, fixed_start_index, start_partition_id, rng
    )


def assign_new_partitions(
    existing: Mapping[PartitionId, Sequence[BrokerId]],
    brokers: Sequence[Broker],
    new_partition_count: int,
) -> dict[PartitionId, list[BrokerId]]:
    """Replicas for the partitions added to a topic: ``AdminZkClient.createNewPartitionsAssignment``.

    The replication factor is partition 0's replica count (Kafka counts the full replica list,
    adding replicas included); the start index (used as start *and* shift, so the result is
    deterministic) is the position of the first broker whose id is ``>=`` partition 0's leader,
    or 0; new partition ids are ``len(existing) .. new_partition_count - 1``. ``brokers`` are
    used in the order given; pass them through :func:`brokers_for_assignment` as Kafka does. In
    rack-aware mode Kafka applies that index, found in the id-sorted list, to the rack-alternated
    list; this port keeps that quirk.

    :returns: only the new partitions, ordered by partition id.
    :raises InvalidSpec: partition 0 is missing from ``existing``.
    :raises InvalidPartitions: ``new_partition_count`` is not above the current count.
    :raises InvalidReplicationFactor: partition 0 has no replicas, or more than there are brokers.
    """
    partition0 = existing.get(0)
    if partition0 is None:
        raise errors.InvalidSpec(
            "Unexpected existing replica assignment: partition id 0 is missing "
            f"(partitions: {sorted(existing)})."
        )
    if not partition0:
        raise errors.InvalidReplicationFactor(
            "Partition 0 has no replicas, so the replication factor of new partitions is unknown."
        )
    current_count = len(existing)
    to_add = new_partition_count - current_count
    if to_add <= 0:
        raise errors.InvalidPartitions(
            "The number of partitions for a topic can only be increased. "
            f"The topic currently has {current_count} partitions, "
            f"{new_partition_count} would not be an increase."
        )
    leader = partition0[0]
    start_index = next((index for index, broker in enumerate(brokers) if broker.id >= leader), 0)
    return assign_replicas_to_brokers(
        brokers,
        to_add,
        len(partition0),
        fixed_start_index=start_index,
        start_partition_id=current_count,
    )


def rack_alternated_broker_list(rack_by_broker: Mapping[BrokerId, str]) -> list[BrokerId]:
    """Kafka's ``AdminUtils.getRackAlternatedBrokerList``: one broker per rack in turn.

    Racks in Java ``String`` order (UTF-16 code units), each rack's brokers by id; e.g.
    ``{0: r1, 1: r3, 2: r3, 3: r2, 4: r2, 5: r1}`` → ``[0, 3, 1, 5, 4, 2]``.
    """
    brokers_by_rack: dict[str, list[BrokerId]] = {}
    for broker_id, rack in rack_by_broker.items():
        brokers_by_rack.setdefault(rack, []).append(broker_id)
    columns = [sorted(brokers_by_rack[rack]) for rack in sorted(brokers_by_rack, key=_java_string_key)]
    depth = max((len(column) for column in columns), default=0)
    return [column[row] for row in range(depth) for column in columns if row < len(column)]


def _assign_rack_unaware(
    ids: list[BrokerId],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random | None,
) -> dict[PartitionId, list[BrokerId]]:
    n = len(ids)
    start_index, shift = _start_and_shift(n, fixed_start_index, rng)
    followers = n - 1
    result: dict[PartitionId, list[BrokerId]] = {}
    partition_id = max(0, start_partition_id)
    for _ in range(n_partitions):
        if partition_id > 0 and partition_id % n == 0:
            shift += 1
        first = (partition_id + start_index) % n
        replicas = [ids[first]]
        for j in range(replication_factor - 1):
            replicas.append(ids[(first + 1 + (shift + j) % followers) % n])
        result[partition_id] = replicas
        partition_id += 1
    return result


def _assign_rack_aware(
    rack_by_broker: dict[BrokerId, str],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random | None,
) -> dict[PartitionId, list[BrokerId]]:
    n_racks = len(set(rack_by_broker.values()))
    arranged = rack_alternated_broker_list(rack_by_broker)
    n = len(arranged)
    start_index, shift = _start_and_shift(n, fixed_start_index, rng)
    followers = n - 1
    result: dict[PartitionId, list[BrokerId]] = {}
    partition_id = max(0, start_partition_id)
    for _ in range(n_partitions):
        if partition_id > 0 and partition_id % n == 0:
            shift += 1
        first = (partition_id + start_index) % n
        leader = arranged[first]
        replicas = [leader]
        racks_used = {rack_by_broker[leader]}
        brokers_used = {leader}
        base = shift * n_racks
        k = 0
        for _replica in range(replication_factor - 1):
            while True:
                broker = arranged[(first + 1 + (base + k) % followers) % n]
                rack = rack_by_broker[broker]
                k += 1
                # Skip a broker whose rack already has a replica while some rack has none, and a
                # broker that already has a replica while some broker has none.
                if (rack not in racks_used or len(racks_used) == n_racks) and (
                    broker not in brokers_used or len(brokers_used) == n
                ):
                    replicas.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    break
        result[partition_id] = replicas
        partition_id += 1
    return result


def _start_and_shift(n: int, fixed_start_index: int, rng: random.Random | None) -> tuple[int, int]:
    """Kafka draws the start index first, then the initial shift, each uniformly in ``[0, n)``."""
    if fixed_start_index >= 0:
        return fixed_start_index, fixed_start_index
    assert rng is not None  # ensured by assign_replicas_to_brokers
    start_index = rng.randrange(n)
    return start_index, rng.randrange(n)


def _check_java_int_range(
    n_brokers: int,
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int,
    start_partition_id: int,
    n_racks: int,
) -> None:
    """Refuse inputs for which Kafka's ``int`` arithmetic would overflow (its result is then garbage).

    Bounds the largest intermediate values: partition id + start index, and the follower shift
    (times the rack count, plus the rack-aware search counter, which stays below
    ``(rf - 1) * (n - 1)`` because each follower is found within ``n - 1`` candidates).
    """
    start_bound = fixed_start_index if fixed_start_index >= 0 else n_brokers - 1
    last_partition_id = max(0, start_partition_id) + n_partitions - 1
    max_shift = start_bound + last_partition_id // n_brokers
    if n_racks:
        shift_bound = max_shift * n_racks + (replication_factor - 1) * (n_brokers - 1)
    else:
        shift_bound = max_shift + replication_factor - 2
    if last_partition_id + start_bound > _JAVA_INT_MAX or shift_bound > _JAVA_INT_MAX:
        fix = (
            "Use fewer partitions or a lower start partition id"
            if fixed_start_index < n_brokers
            else "Use a start index below the broker count"
        )
        given = f"{n_partitions} partitions"
        if start_partition_id >= 0:
            given += f" from partition id {start_partition_id}"
        if fixed_start_index >= 0:
            given += f" with start index {fixed_start_index}"
        raise errors.InvalidSpec(
            f"{given} are out of range: Kafka computes assignments with 32-bit integers. {fix}."
        )


def _java_string_key(text: str) -> bytes:
    """Sort key giving Java's ``String.compareTo`` order (UTF-16 code units, not code points)."""
    return text.encode("utf-16-be", "surrogatepass")


def _rackless(brokers: Sequence[Broker]) -> str:
    return ", ".join(str(broker.id) for broker in sorted(brokers, key=lambda b: b.id) if broker.rack is None)
