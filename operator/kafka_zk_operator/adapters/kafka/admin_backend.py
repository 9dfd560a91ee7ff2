"""The Kafka Admin API topic backend: ``service.backend.TopicBackend`` (and, through
``admin_reassignment_calls``, ``ReassignmentBackend``) with kafka-python 3.x.

Where ZooKeeper is not authoritative (a migration past the KRaft controller's takeover, a KRaft
cluster) the services use this backend instead of ``adapters.zk.store``; ZooKeeper-mode 2.4+
brokers answer the same requests (the tests use 3.9.2 in both modes). Against the ZooKeeper store:

* reads are DescribeTopics, DescribeConfigs (only ``DYNAMIC_TOPIC_CONFIG`` overrides) and
  ListPartitionReassignments; there are no versions (``config_version`` None, ``assignment_version`` -1);
* writes are CreateTopics (assignment and overrides in one request), describe → diff → one
  IncrementalAlterConfigs of the differing keys (nothing when equal), CreatePartitions of exactly
  the new partitions, DeleteTopics by topic id. No compare-and-set: each write reads right before
  it, and a lost race is a ``VersionConflict``, so the next pass plans again;
* nothing is ever "marked for deletion" (KRaft deletes at once); ``delete.topic.enable=false`` is
  reported as a marker Kafka removed while keeping the topic (``service.deletion`` releases the resource);
* brokers learn of changes one by one and kafka-python asks any of them, so a read right after this
  backend's own write waits (bounded, ``read_your_writes_s``) to see it (``own_writes``); changes
  made by others show up a pass later.

Every write increments ``writes`` and calls ``on_write``; errors are domain errors
(``adapters.kafka.admin_errors``) naming the bootstrap servers when Kafka cannot be reached.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafka_zk_operator.adapters.kafka import admin_client, admin_errors, admin_results, own_writes
from kafka_zk_operator.adapters.kafka.admin_reassignment_calls import ReassignmentCalls
from kafka_zk_operator.adapters.kafka.admin_results import AdminBroker
from kafka_zk_operator.adapters.kafka.admin_topic_configs import TopicConfigCalls
from kafka_zk_operator.config.kafka_security import PLAINTEXT, KafkaClientSecurity
from kafka_zk_operator.domain import errors, model
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.topic.plan import ObservedTopic

#: The line whose rules apply when neither ``kafkaVersion`` nor a finalized ``metadata.version``
#: tells (ZooKeeper-mode brokers during a migration): the newest 3.x, the newest ZooKeeper-mode line.
ADMIN_LINE: kafka_lines.KafkaLine = kafka_lines.NEWEST_ZK_LINE
ADMIN_LINE_BASIS = (
    "the Admin API shows no broker registration versions and the cluster has no finalized "
    "metadata.version, so the operator follows its newest 3.x line; set kafkaVersion in the "
    "operator's cluster settings to change that"
)
#: How long the line read from the cluster's ``metadata.version`` is reused before it is read again.
LINE_TTL_S = 60.0
#: Topic-level Metadata codes of a topic that exists but is not fully led yet.
_STILL_LEADING = frozenset({5, 9})  # LEADER_NOT_AVAILABLE, REPLICA_NOT_AVAILABLE


class AdminBackend(TopicConfigCalls, ReassignmentCalls):
    """Topic reads and writes through one ``KafkaAdminClient`` (created on first use); the
    reassignment side (``service.backend.ReassignmentBackend``) comes from :class:`ReassignmentCalls`,
    the topic config reads and writes from :class:`TopicConfigCalls`.

    :param bootstrap_servers: ``host:port,...`` of the brokers' listeners.
    :param client_id: the client id Kafka logs (``kzo-operator-<cluster>``).
    :param security: the cluster's ``kafkaSecurity`` (TLS, SASL; default plaintext).
    :param kafka_version: the cluster's ``kafkaVersion`` setting (None: :data:`ADMIN_LINE`).
    :param timeout_s: bound of each request and of the first bootstrap.
    :param read_your_writes_s: how long a read waits for a broker to show this backend's own write.
    :param on_write: called after every write that Kafka accepted (the runtime counts it).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        client_id: str,
        security: KafkaClientSecurity = PLAINTEXT,
        kafka_version: kafka_lines.KafkaLine | None = None,
        timeout_s: float = 15.0,
        read_your_writes_s: float = 2.0,
        on_write: Callable[[], None] | None = None,
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.client_id = client_id
        self.security = security
        self.kafka_version = kafka_version
        self.timeout_s = timeout_s
        self.read_your_writes_s = read_your_writes_s
        self.on_write = on_write
        #: Writes Kafka accepted (a no-op pass makes none).
        self.writes = 0
        self._lock = threading.Lock()  # guards writes
        self._connecting = threading.Lock()  # one bootstrap at a time
        self._admin: Any = None
        self._own = own_writes.OwnWrites()
        self._line: tuple[float, kafka_lines.ClusterLine] | None = None  # (when read, line)

    # ------------------------------------------------------------------ plumbing

    def close(self) -> None:
        with self._connecting:
            admin, self._admin = self._admin, None
        if admin is not None:
            with admin_client.quiet("kafka"):
                admin.close()

    def _client(self) -> Any:
        with self._connecting:
            if self._admin is None:
                self._admin = admin_client.open_admin(
                    self.bootstrap_servers,
                    client_id=self.client_id,
                    timeout_s=self.timeout_s,
                    security=self.security,
                )
            return self._admin

    def _call(self, action: str, request: Callable[[Any], Any]) -> Any:
        """``request(admin)``, its failures as domain errors (``admin_errors.mapped``).

        A client that failed to reach Kafka is closed, and the next call builds a new one: during
        a migration the brokers restart in another mode, and a client kept from before answered
        every request sent to the controller with ``UnknownBrokerIdError`` from then on (its
        cached metadata named a controller the cluster no longer had)."""
        admin = self._client()
        try:
            with admin_errors.mapped(self.bootstrap_servers, action):
                return request(admin)
        except errors.ClusterUnavailable:
            with self._lock:
                stale, self._admin = (self._admin, None) if self._admin is admin else (None, self._admin)
            if stale is not None:
                with admin_client.quiet("kafka"):
                    stale.close()
            raise

    def _raise_for(self, code: int, message: str | None, action: str) -> None:
        """Raise the domain error of an answer's error code (``admin_errors.error_for``); nothing for 0."""
        admin_errors.raise_for(code, message, action=action, bootstrap=self.bootstrap_servers)

    def _count_write(self) -> None:
        with self._lock:
            self.writes += 1
        if self.on_write is not None:
            self.on_write()

    # ------------------------------------------------------------------ reads

    def _describe_once(self, topic: str) -> Mapping[str, Any] | None:
        described = self._call(f"describing topic {topic!r}", lambda admin: admin.describe_topics([topic]))
        entry: Mapping[str, Any] | None = admin_results.topic_entry(described, topic)
        if entry is not None:
            code, message = admin_results.entry_error(entry)
            if code in _STILL_LEADING and not entry.get("partitions"):
                raise errors.ClusterUnavailable(
                    f"Kafka at {self.bootstrap_servers} does not lead topic {topic!r} yet "
                    f"({admin_errors.error_name(code)}); retrying"
                )
            if code not in _STILL_LEADING:
                self._raise_for(code, message, f"describing topic {topic!r}")
        return entry

    def _describe(self, topic: str) -> Mapping[str, Any] | None:
        """The topic's metadata (None: Kafka does not know it), showing this backend's own
        create or growth of it if it made one lately."""
        partitions, _ = self._own.written(topic)
        if partitions is None:
            return self._describe_once(topic)
        return own_writes.until_shown(
            self.read_your_writes_s,
            lambda: self._describe_once(topic),
            lambda entry: entry is not None and len(admin_results.partitions_of(entry)) >= partitions,
        )

    def _moves(self, topic: str, partitions: Sequence[int] | None) -> dict[int, admin_results.PartitionMoves]:
        """The topic's partitions in an ongoing reassignment (all of the cluster's listed, then
        this topic's kept, when ``partitions`` is None)."""
        asked = None if partitions is None else {topic: list(partitions)}
        listing = self._call(
            f"listing the partition reassignments of topic {topic!r}",
            lambda admin: admin.list_partition_reassignments(asked),
        )
        return admin_results.moves_of(listing, topic)

    def _marked(self, topic: str, entry: Mapping[str, Any]) -> bool:
        topic_id = entry.get("topic_id")
        return self._own.deletion_of(topic, str(topic_id) if topic_id else None)

    def topic_names(self) -> list[str]:
        return sorted(self._call("listing topics", lambda admin: admin.list_topics()))

    def read_topic(
        self, topic: str, *, with_states: bool = True, expected_partitions: int = 0
    ) -> ObservedTopic:
        """The topic's metadata, overrides and reassignment place (three requests; one when Kafka
        does not know the topic). ``expected_partitions`` is not needed: every read is one answer."""
        entry = self._describe(topic)
        if entry is None:
            self._own.gone(topic)
            return admin_results.observed_topic(None, overrides={}, moves={})
        note = None
        try:
            moves = self._moves(topic, sorted(admin_results.partitions_of(entry)))
        except errors.NotSupported as unsupported:  # brokers before 2.4: no KIP-455 listing
            moves, note = {}, unsupported.message
        return admin_results.observed_topic(
            entry,
            overrides=self._known_overrides(topic),
            moves=moves,
            marked_for_deletion=self._marked(topic, entry),
            with_states=with_states,
            reassignment_note=note,
        )

    def _registrations(self) -> list[AdminBroker]:
        described = self._call("describing the cluster", lambda admin: admin.describe_cluster())
        return [b for b in admin_results.brokers_of(described) if not b.fenced]

    def read_topic_and_brokers(
        self, topic: str, *, expected_partitions: int = 0
    ) -> tuple[ObservedTopic, list[AdminBroker]]:
        return self.read_topic(topic, expected_partitions=expected_partitions), self._registrations()

    def read_assignment(self, topic: str) -> model.Versioned[model.TopicAssignment] | None:
        """The assignment with the adding/removing replicas, at version -1 (no versions here)."""
        entry = self._describe(topic)
        if entry is None:
            return None
        moves = self._moves(topic, sorted(admin_results.partitions_of(entry)))
        return model.Versioned(admin_results.topic_assignment(entry, moves), -1)

    def partition_states(self, topic: str, partitions: Sequence[int]) -> dict[int, model.PartitionState]:
        entry = self._describe(topic)
        return {} if entry is None else admin_results.partition_states(entry, partitions)

    def broker_ids(self) -> list[int]:
        return [b.broker.id for b in self._registrations()]

    def live_brokers(self) -> list[model.Broker]:
        """Registered, unfenced brokers with racks (DescribeCluster)."""
        return [b.broker for b in self._registrations()]

    def topics_marked_for_deletion(self) -> list[str]:
        """Always empty: Kafka's DeleteTopics leaves no marker (KRaft deletes from its metadata at once)."""
        return []

    def cluster_line(self, registrations: Sequence[Any] | None = None) -> kafka_lines.ClusterLine:
        """The ``kafkaVersion`` setting (no request), else the line that introduced the cluster's
        finalized ``metadata.version`` (ApiVersions, read at most every :data:`LINE_TTL_S`), else
        :data:`ADMIN_LINE` (``domain.kafka.lines.kraft_cluster_line``)."""
        fallback = kafka_lines.ClusterLine(ADMIN_LINE, basis=ADMIN_LINE_BASIS)
        if self.kafka_version is not None:
            return kafka_lines.kraft_cluster_line(None, self.kafka_version, fallback)
        now = time.monotonic()
        cached = self._line
        if cached is not None and now - cached[0] < LINE_TTL_S:
            return cached[1]
        level = self._call("reading the cluster's metadata.version", _finalized_metadata_version)
        line = kafka_lines.kraft_cluster_line(level, None, fallback)
        self._line = (now, line)
        return line

    def maybe_in_reassignment(self, topic: str) -> tuple[bool, str | None]:
        return bool(self._moves(topic, None)), None

    def controller_registration_version(self) -> int | None:
        """None: no ZooKeeper-mode controller registration is visible through the Admin API."""
        return None

    def last_zxid(self) -> int | None:
        """None: there is no ZooKeeper session."""
        return None

    def wait_for_leaders(self, topic: str, partitions: int, timeout: float) -> bool:
        """Poll DescribeTopics until each of the first ``partitions`` partitions has a leader;
        False if one does not within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            if admin_results.leaders_elected(self._describe_once(topic), partitions):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)

    # ------------------------------------------------------------------ writes

    def create_topic(
        self,
        topic: str,
        partitions: Mapping[int, Sequence[int]],
        config: Mapping[str, str],
        *,
        observed: ObservedTopic | None = None,
    ) -> None:
        """CreateTopics with exactly this assignment and these overrides (one request, atomic).

        :raises VersionConflict: the topic exists already (the next pass adopts it).
        :raises TopicBeingDeleted: this backend's deletion of that name has not finished.
        :raises InvalidSpec: Kafka refused the assignment, a config or its create policy.
        """
        if (observed is not None and observed.marked_for_deletion) or self._own.deletion_pending(topic):
            raise errors.TopicBeingDeleted(
                f"topic {topic!r} is still being deleted by Kafka; it can be created again once Kafka has removed it"
            )
        action = f"creating topic {topic!r} with {len(partitions)} partitions"
        request = {
            topic: {
                "assignments": {
                    int(p): [int(b) for b in replicas] for p, replicas in sorted(partitions.items())
                },
                "configs": dict(config),
            }
        }
        answer = self._call(
            action,
            lambda admin: admin.create_topics(
                request, timeout_ms=int(self.timeout_s * 1000), raise_errors=False
            ),
        )
        for result in answer.get("topics") or []:
            code, message = admin_results.entry_error(result)
            if code != admin_errors.REQUEST_TIMED_OUT:  # timed out: created, still propagating
                self._raise_for(code, message, action)
        self._count_write()
        self._own.wrote(topic, partitions=len(partitions), config=config)

    def add_partitions(
        self,
        topic: str,
        new_partitions: Mapping[int, Sequence[int]],
        *,
        expected: model.Versioned[model.TopicAssignment],
    ) -> None:
        """CreatePartitions for exactly ``new_partitions`` (numbered on from ``expected``'s count).

        :raises InvalidPartitions: not a pure growth, or Kafka refused the new assignment.
        :raises VersionConflict: the partition count is no longer ``expected``'s (or the topic is gone).
        :raises ReassignmentInProgress / TopicBeingDeleted: not now (the ZooKeeper store's rules).
        """
        count = expected.value.partition_count
        if not new_partitions or sorted(new_partitions) != list(range(count, count + len(new_partitions))):
            raise errors.InvalidPartitions(
                f"new partitions of {topic!r} must be numbered {count}..{count + max(len(new_partitions), 1) - 1} "
                "(partitions are only ever added after the existing ones)"
            )
        entry = self._describe(topic)
        if entry is None or self._marked(topic, entry):
            raise errors.VersionConflict(
                f"topic {topic!r} disappeared while adding partitions; re-reading it"
            )
        now = len(admin_results.partitions_of(entry))
        if now != count:
            raise errors.VersionConflict(
                f"topic {topic!r} has {now} partitions, not the {count} its new partitions were planned from; re-reading it"
            )
        if expected.value.is_reassigning or self._moves(topic, list(range(count))):
            raise errors.ReassignmentInProgress(
                f"topic {topic!r} has partitions being reassigned; partitions are added once it finishes"
            )
        total = count + len(new_partitions)
        action = f"adding partitions {count}..{total - 1} to topic {topic!r}"
        request = {
            topic: {
                "count": total,
                "assignments": [[int(b) for b in new_partitions[p]] for p in sorted(new_partitions)],
            }
        }
        answer = self._call(
            action,
            lambda admin: admin.create_partitions(
                request, timeout_ms=int(self.timeout_s * 1000), raise_errors=False
            ),
        )
        for result in answer.results:
            code, message = int(result.error_code), result.error_message
            if code == admin_errors.INVALID_PARTITIONS:
                again = self._describe_once(topic)
                if again is None or len(admin_results.partitions_of(again)) != count:
                    raise errors.VersionConflict(
                        f"the partitions of topic {topic!r} changed while adding some ({message}); re-reading it"
                    )
            if code != admin_errors.REQUEST_TIMED_OUT:
                self._raise_for(code, message, action)
        self._count_write()
        self._own.wrote(topic, partitions=total)

    # ------------------------------------------------------------------ deletion

    def is_marked_for_deletion(self, topic: str) -> bool:
        """True while a deletion this backend requested is not known to be finished: the topic
        still exists with the id it had then, or this answer already lacks it while another broker
        may still list it (brokers learn of a deletion one by one; ``topic_fully_deleted`` ends
        it). Kafka itself keeps no marker."""
        if not self._own.deletion_pending(topic):
            return False
        entry = self._describe_once(topic)
        return entry is None or self._marked(topic, entry)

    def mark_topic_for_deletion(self, topic: str) -> bool:
        """DeleteTopics of the topic, by its id when Kafka reports one (a topic re-created under
        the name meanwhile is not deleted), else by name. False when Kafka's controller does not know
        the topic.

        With ``delete.topic.enable=false`` Kafka refuses at once: True is returned all the same
        (the request was made), and the topic is never reported as marked, which is what
        ``service.deletion`` reads as "Kafka removed the marker but kept the topic".
        """
        entry = self._describe_once(topic)  # None: maybe a broker that has not learned of it yet
        topic_id = str(entry["topic_id"]) if entry is not None and entry.get("topic_id") else None
        target: str | uuid.UUID = uuid.UUID(topic_id) if topic_id else topic
        action = f"deleting topic {topic!r}"
        answer = self._call(
            action,
            lambda admin: admin.delete_topics(
                [target], timeout_ms=int(self.timeout_s * 1000), raise_errors=False
            ),
        )
        for result in answer.get("topics") or []:
            code, message = admin_results.entry_error(result)
            if code == admin_errors.UNKNOWN_TOPIC_OR_PARTITION:
                return False
            if code == admin_errors.TOPIC_DELETION_DISABLED:
                return True
            if code != admin_errors.REQUEST_TIMED_OUT:  # timed out: the deletion goes on
                self._raise_for(code, message, action)
        self._count_write()
        self._own.deleting(topic, topic_id)
        return True

    def withdraw_deletion_marker(self, topic: str) -> bool:
        """False: there is no marker to withdraw (Kafka answers a refused deletion at once)."""
        return False

    def topic_fully_deleted(self, topic: str) -> bool:
        """Kafka's metadata no longer lists the topic."""
        if self._describe_once(topic) is None:
            self._own.gone(topic)
            return True
        return False


def _finalized_metadata_version(admin: Any) -> int | None:
    """The finalized ``metadata.version`` feature level one broker reports (None: not finalized)."""
    finalized = admin.describe_features().get("metadata.version", {}).get("finalized")
    return None if not finalized else int(finalized[1])
