"""Domain errors, each carrying a stable ``Reason`` that becomes a status condition reason.

Tree::

    KzoError (reason)
    ├── InvalidSpec                 InvalidSpec        bad user input (CR, CLI flag, snapshot)
    │   ├── InvalidTopicName        InvalidSpec
    │   ├── InvalidReplicationFactor InvalidSpec
    │   ├── InvalidPartitions       InvalidSpec
    │   └── InvalidConfig           InvalidSpec
    ├── NotSupported                NotSupported       valid but not possible (e.g. shrinking partitions)
    │   └── RequestTooLarge         NotSupported       a write over ZooKeeper's request limit (jute.maxbuffer)
    ├── ResourceConflict            ResourceConflict   another resource or writer owns the object
    ├── ReassignmentInProgress      ReassignmentInProgress   retry later
    ├── TopicBeingDeleted           TopicBeingDeleted  retry later
    ├── TopicDeletedInKafka         TopicDeletedInKafka deleted out of band, policy "report"
    ├── ReplicationFactorChanging   ReplicationFactorChanging  handed to a PartitionReassignment
    ├── ClusterUnavailable          ClusterUnavailable ZooKeeper unreachable, no brokers, no controller
    │   └── KafkaLineMismatch       ClusterUnavailable kafkaVersion setting contradicts the registrations
    ├── KRaftMigrationDetected      KRaftMigration     ZooKeeper is not authoritative in this migration phase: retry
    └── ZooKeeperError              ZooKeeperError     unexpected ZooKeeper failure
        ├── MalformedZnode          ZooKeeperError     a znode whose data Kafka would not have written
        ├── VersionConflict         ZooKeeperError     a conditional write lost a race; re-plan and retry
        └── LeadershipLost          ZooKeeperError     this replica is no longer the elected leader

Handlers map ``InvalidSpec``/``NotSupported`` to permanent failures and the others to retries.
"""

from __future__ import annotations

import enum


class Reason(enum.StrEnum):
    """Stable condition reasons (part of the public status API; never rename)."""

    CREATED = "Created"
    UPDATED = "Updated"
    ADOPTED = "Adopted"
    IN_SYNC = "InSync"
    INVALID_SPEC = "InvalidSpec"
    NOT_SUPPORTED = "NotSupported"
    RESOURCE_CONFLICT = "ResourceConflict"
    REASSIGNMENT_IN_PROGRESS = "ReassignmentInProgress"
    TOPIC_BEING_DELETED = "TopicBeingDeleted"
    CLUSTER_UNAVAILABLE = "ClusterUnavailable"
    ZOOKEEPER_ERROR = "ZooKeeperError"
    TOPIC_DELETED_IN_KAFKA = "TopicDeletedInKafka"
    REPLICATION_FACTOR_CHANGING = "ReplicationFactorChanging"
    PLAN_JOB_FAILED = "PlanJobFailed"
    KRAFT_MIGRATION = "KRaftMigration"
    INTERNAL_ERROR = "InternalError"


class KzoError(Exception):
    """Base of every error the project raises on purpose. ``str(err)`` is a complete sentence."""

    reason: Reason = Reason.INTERNAL_ERROR
    retryable: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidSpec(KzoError):
    reason = Reason.INVALID_SPEC


class InvalidTopicName(InvalidSpec):
    pass


class InvalidReplicationFactor(InvalidSpec):
    pass


class InvalidPartitions(InvalidSpec):
    pass


class InvalidConfig(InvalidSpec):
    pass


class NotSupported(KzoError):
    reason = Reason.NOT_SUPPORTED


class RequestTooLarge(NotSupported):
    """A write longer than a ZooKeeper server accepts in one request (``jute.maxbuffer``, 1 MiB less
    one byte by default). The server would close the connection instead of answering, and a retry
    would do the same, so such a request is never sent (e.g. a topic znode for 250,000 partitions)."""


class ResourceConflict(KzoError):
    reason = Reason.RESOURCE_CONFLICT


class ReassignmentInProgress(KzoError):
    reason = Reason.REASSIGNMENT_IN_PROGRESS
    retryable = True


class TopicBeingDeleted(KzoError):
    reason = Reason.TOPIC_BEING_DELETED
    retryable = True


class TopicDeletedInKafka(KzoError):
    """The topic was deleted in Kafka behind the operator's back and the policy is to report it."""

    reason = Reason.TOPIC_DELETED_IN_KAFKA


class ReplicationFactorChanging(KzoError):
    """spec.replicationFactor differs from Kafka's; a PartitionReassignment is carrying it out."""

    reason = Reason.REPLICATION_FACTOR_CHANGING
    retryable = True


class ClusterUnavailable(KzoError):
    reason = Reason.CLUSTER_UNAVAILABLE
    retryable = True


class KafkaLineMismatch(ClusterUnavailable):
    """The cluster's ``kafkaVersion`` setting is newer than a live broker's registration allows.

    Retried: a broker re-registers as it is upgraded, and the setting may be corrected."""


class KRaftMigrationDetected(KzoError):
    """The cluster is in a phase of its ZooKeeper → KRaft migration where the operator must not
    write ZooKeeper (``domain.migration.phase``): the initial copy (writes wait for it), hybrid,
    dual-write or KRaft (they need the Admin API backend), or no controller during a rollback.

    Retryable: every one of these phases moves on (the copy ends, a rollback brings ZooKeeper
    back, an operator with the Admin API backend takes over), and each retry reads the phase again;
    a permanent failure would, for one, fail a PartitionReassignment that only had to wait."""

    reason = Reason.KRAFT_MIGRATION
    retryable = True

    def __init__(self, message: str, *, phase: str) -> None:
        super().__init__(message)
        #: The ``domain.migration.phase.Phase`` value the refusal was decided in.
        self.phase = phase


class ZooKeeperError(KzoError):
    reason = Reason.ZOOKEEPER_ERROR
    retryable = True


class MalformedZnode(ZooKeeperError):
    """A znode holds data Kafka would not have written. Not retryable: a person must look."""

    retryable = False

    def __init__(self, path: str, problem: str) -> None:
        # The problem quotes what the znode holds: escape its control characters so that a damaged
        # or hostile znode cannot split a status message, an Event or a CLI error line.
        problem = "".join(c if c.isprintable() else repr(c)[1:-1] for c in problem)
        super().__init__(f"znode {path} is malformed: {problem}")
        self.path = path
        self.problem = problem


class VersionConflict(ZooKeeperError):
    """A conditional (versioned) write found the znode changed since it was read."""


class LeadershipLost(ZooKeeperError):
    """This operator replica lost its leader lease, or another replica claimed the cluster's fence
    znode since: nothing was written, the replica writes nothing more and exits, and the elected
    leader carries on (``runtime.leadership``)."""
