"""The sizes ZooKeeper can hold, and the smallest topic znode a spec can make: refusals before building.

A ZooKeeper server reads no request longer than its ``jute.maxbuffer`` (1 MiB less one byte by
default) and closes the connection of a client that sends one. A KafkaTopic whose topic znode
(``/brokers/topics/<t>``) cannot be shorter than that can never be created or grown, so
:func:`check_topic_znode_fits` refuses it from its partition count and replication factor alone,
before any assignment is computed (a million partitions would otherwise be placed, held and
encoded only to be refused at the write: hundreds of MiB for nothing). docs/reliability.md
("Memory bound per admitted input") has the arithmetic; the CRD's maxima follow from it.
The same limit holds for a PartitionReassignment's batch: its ``/admin/reassign_partitions``
znode and the ``/admin/preferred_replica_election`` after it list every partition of the batch, so
:func:`admin_znode_bytes` gives their exact compact-JSON length and
``domain.reassignment.batches.check_batches_fit`` refuses a plan with a batch that could never be
written, when the proposal is made (not at batch 7 of a running move).
Used by ``domain.topic.planning``, ``domain.reassignment.batches`` and by
``adapters.zk.store_writes`` (the check of the real request).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from kafka_zk_operator.domain import errors

#: The longest request a ZooKeeper server accepts: its ``jute.maxbuffer`` default (0xfffff bytes).
MAX_REQUEST_BYTES = 0xFFFFF
#: What a create request carries besides the znode's data: header, path, ACL and the
#: transaction's guard operations (generous; the write still checks the exact request).
REQUEST_ENVELOPE_BYTES = 4096
#: The longest ``/admin/...`` znode data the operator plans to write.
MAX_ADMIN_DATA_BYTES = MAX_REQUEST_BYTES - REQUEST_ENVELOPE_BYTES
#: ``{"version":1,"partitions":[`` ... ``]}`` around the entries of an admin znode.
_ADMIN_ENVELOPE = len('{"version":1,"partitions":[]}')


def admin_znode_bytes(entries: Iterable[tuple[str, int, Sequence[int] | None]]) -> int:
    """The length of ``/admin/reassign_partitions`` (entries with replicas) or
    ``/admin/preferred_replica_election`` (replicas ``None``) as Kafka's compact JSON, UTF-8."""
    total, count = _ADMIN_ENVELOPE, 0
    names: dict[str, int] = {}  # a batch holds few topics: one encoding each
    for topic, partition, replicas in entries:
        name = names.get(topic)
        if name is None:
            name = names[topic] = len(json.dumps(topic, ensure_ascii=False).encode("utf-8"))
        total += len('{"topic":,"partition":}') + name + len(str(partition))
        if replicas is not None:
            total += len(',"replicas":[]') + sum(len(str(b)) for b in replicas) + max(len(replicas) - 1, 0)
        count += 1
    return total + max(count - 1, 0)


def digits_below(n: int) -> int:
    """The number of decimal digits written for all of 0, 1, ..., n-1 (0 for n <= 0)."""
    total, width, low = 0, 1, 0
    while low < n:
        high = min(n, 10**width)
        total += (high - low) * width
        low, width = high, width + 1
    return total


def min_topic_znode_bytes(partitions: int, replication_factor: int) -> int:
    """A lower bound on the topic znode's JSON for ``partitions`` partitions of ``replication_factor``.

    Each partition is at least ``"p":[b0,...,b(r-1)]`` with distinct broker ids as short as they
    can be (0 .. r-1), entries are comma-separated, and the envelope (version, braces, topic id)
    is left out: the real znode is never shorter.
    """
    if partitions <= 0 or replication_factor <= 0:
        return 0
    replicas = digits_below(replication_factor) + (replication_factor - 1) + 2  # [..] and commas
    per_partition = 3 + replicas  # two quotes and the colon around the partition id
    return partitions * per_partition + digits_below(partitions) + (partitions - 1)


def check_topic_znode_fits(topic: str, partitions: int, replication_factor: int) -> None:
    """Refuse a topic whose znode cannot fit in one ZooKeeper request, before any placement.

    :raises RequestTooLarge: even the shortest znode for that spec exceeds :data:`MAX_REQUEST_BYTES`.
    """
    smallest = min_topic_znode_bytes(partitions, replication_factor)
    if smallest > MAX_REQUEST_BYTES:
        raise errors.RequestTooLarge(
            f"Topic {topic!r} with {partitions:,} partitions of replication factor {replication_factor} cannot "
            f"be written to ZooKeeper: its topic znode takes at least {smallest:,} bytes, more than the "
            f"{MAX_REQUEST_BYTES:,} a ZooKeeper server accepts in one request (jute.maxbuffer). Kafka's own "
            "tools cannot write it either; ask for fewer partitions (nothing was computed or sent)."
        )
