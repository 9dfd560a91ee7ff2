"""runtime.health.HealthReporter on the real stack: watches follow tracking, and do not pile up."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk import znodes_topics
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.devstack.zookeeper import four_letter_word
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import assignment
from kafka_zk_operator.domain.topic.resource import parse_resource
from kafka_zk_operator.domain.topic.status import PARTITION_FIELDS, partition_fields
from kafka_zk_operator.runtime.health import SETTLE_S, HealthReporter
from kafka_zk_operator.service.topics import TopicPolicies, reconcile_topic
from tests.e2e.kafka_client import KafkaView
from tests.integration.helpers import wait_for


def test_untracking_and_tracking_again_leaves_one_set_of_watches(
    kafka_cluster: Any, unique_topic: str
) -> None:
    client: KazooClient = kafka_cluster.zk_client()
    patches: list[tuple[tuple[str, str], dict[str, Any]]] = []
    seen = threading.Event()

    def patcher(ref: tuple[str, str], fields: dict[str, Any]) -> None:
        patches.append((ref, fields))
        seen.set()

    store = ZkStore(client)
    brokers = assignment.brokers_for_assignment(store.live_brokers(), assignment.RackAwareMode.ENFORCED)
    store.create_topic(unique_topic, assignment.assign_replicas_to_brokers(brokers, 2, 3), {})
    reporter = HealthReporter(store, patcher, "test")
    reporter.start()
    topic_path = znodes_topics.topic_path(unique_topic)
    state_path = znodes_topics.partition_state_path(unique_topic, 0)
    watched = client._data_watchers  # kazoo keeps them by full path, chroot included

    def watches(path: str) -> int:
        return len(watched.get(client.chroot + path, ()))

    try:
        ref = ("ns", "t")
        reporter.track(unique_topic, ref)
        wait_for(lambda: watches(state_path), what="the partition state watch")
        reporter.untrack(unique_topic, ref)
        reporter.track(unique_topic, ref)  # before the old watches fired

        # Touch the topic znode (same data, new version) until only one watch is left: a watch
        # of the earlier tracking ends at its next event (which may also be the controller
        # writing the topic id); with watches that never end there would be two forever.
        # Under load the events arrive late: keep touching for up to 20 s (a watch that never
        # ends stays at 2 however long this runs).
        data, _ = client.get(topic_path)
        deadline = time.monotonic() + 20
        while watches(topic_path) != 1 and time.monotonic() < deadline:
            client.set(topic_path, data)
            time.sleep(0.5)
        wait_for(lambda: seen.wait(0.1) and patches, what="a status refresh after the change")
        assert watches(topic_path) == 1, f"{watches(topic_path)} watches on the topic znode"
        assert all(r == ref for r, _ in patches)
    finally:
        reporter.stop()
        client.stop()
        client.close()


def test_a_topic_deleted_after_untracking_leaves_no_watch_in_the_client_or_the_server(
    kafka_cluster: Any, kafka: KafkaView, unique_topic: str
) -> None:
    """Issue #17 (soak memory growing with churn): kazoo sets a DataWatch again before calling
    it, so a watch told to stop by a deleted topic's last event stayed registered, in kazoo and
    in ZooKeeper, on a path that never changes again. The topic is deleted by Kafka's controller
    (a Kafka client's DeleteTopics); ZooKeeper's own ``wchc`` says which watches it still holds."""
    client: KazooClient = kafka_cluster.zk_client()
    store = ZkStore(client)
    brokers = assignment.brokers_for_assignment(store.live_brokers(), assignment.RackAwareMode.ENFORCED)
    store.create_topic(unique_topic, assignment.assign_replicas_to_brokers(brokers, 2, 3), {})
    reporter = HealthReporter(store, lambda ref, fields: None, "test")
    reporter.start()
    prefix = f"{kafka_cluster.chroot}/brokers/topics/{unique_topic}"

    def client_watches() -> list[str]:
        return [path for path, found in client._data_watchers.items() if path.startswith(prefix) and found]

    def server_watches() -> list[str]:
        return _server_watches(kafka_cluster, client, prefix)

    try:
        ref = ("ns", "t")
        reporter.track(unique_topic, ref)
        wait_for(lambda: len(client_watches()) == 3, what="watches on the topic and its 2 partition states")
        # kazoo records a watch before ZooKeeper has registered it: under load the server's table
        # lagged the client's by a moment (seen once in the full suite).
        wait_for(lambda: len(server_watches()) == 3, what="ZooKeeper holding the 3 watches", timeout=10)
        reporter.untrack(unique_topic, ref)  # what the delete handler does before marking the topic
        wait_for(lambda: unique_topic in kafka.topic_names(), what="Kafka knowing the topic")
        kafka.admin.delete_topics([unique_topic])
        wait_for(lambda: unique_topic not in kafka.topic_names(), what="Kafka deleting the topic", timeout=60)
        wait_for(
            lambda: not client.exists(znodes_topics.topic_path(unique_topic)), what="the topic znode gone"
        )
        wait_for(lambda: not client_watches(), what="no watch left in kazoo", timeout=10)
        assert server_watches() == []
    finally:
        reporter.stop()
        client.stop()
        client.close()


def _server_watches(kafka_cluster: Any, client: KazooClient, prefix: str) -> list[str]:
    """The session of ``client``'s watches under ``prefix``, from ZooKeeper's ``wchc`` (session,
    then its paths indented); the controller's own watches are not counted."""
    zookeeper = kafka_cluster.stack.zookeeper
    assert zookeeper is not None
    session, paths, ours = f"0x{client.client_id[0]:x}", [], False
    for line in four_letter_word(zookeeper.port, "wchc", timeout=5).splitlines():
        if line and not line[0].isspace():
            ours = line.strip() == session
        elif ours and line.strip().startswith(prefix):
            paths.append(line.strip())
    return paths


def _status_recorder() -> tuple[dict[str, Any], list[dict[str, Any]], Any]:
    """A patcher merging into one status dict, as the API server does for a merge patch."""
    status: dict[str, Any] = {}
    patches: list[dict[str, Any]] = []

    def patcher(ref: tuple[str, str], fields: dict[str, Any]) -> None:
        patches.append(dict(fields))
        for key, value in fields.items():
            if value is None:
                status.pop(key, None)
            else:
                status[key] = value

    return status, patches, patcher


@pytest.fixture
def hand_driven(
    kafka_cluster: Any, unique_topic: str
) -> Iterator[tuple[HealthReporter, dict[str, Any], list[dict[str, Any]]]]:
    """A reporter on a real 2-partition topic, its worker not started: the tests drive refreshes
    and the clock by hand to make interleavings with a reconcile exact."""
    client: KazooClient = kafka_cluster.zk_client()
    status, patches, patcher = _status_recorder()
    store = ZkStore(client)
    brokers = assignment.brokers_for_assignment(store.live_brokers(), assignment.RackAwareMode.ENFORCED)
    store.create_topic(unique_topic, assignment.assign_replicas_to_brokers(brokers, 2, 3), {})
    wait_for(lambda: len(store.partition_states(unique_topic, [0, 1])) == 2, what="leaders")
    reporter = HealthReporter(store, patcher, "test")
    now = [1000.0]
    reporter.clock = lambda: now[0]
    reporter.track(unique_topic, REF)
    reporter._refresh_one(unique_topic)

    def full_isr() -> bool:
        reporter._refresh_one(unique_topic)
        return all(len(state["isr"]) == 3 for state in status.get("partitionStates") or [{"isr": []}])

    wait_for(full_isr, what="a full ISR in the reported status")
    try:
        yield reporter, status, patches
    finally:
        reporter.stop()
        client.stop()
        client.close()


REF = ("ns", "t")


def _stale(status: dict[str, Any]) -> dict[str, Any]:
    """The live fields as a reconcile that read before the leaders were elected would have them."""
    states = [{**s, "leader": -1, "isr": []} for s in status["partitionStates"]]
    return {**{k: status.get(k) for k in PARTITION_FIELDS}, "partitionStates": states, "offlinePartitions": 2}


def _reconcile(
    reporter: HealthReporter, topic: str, live: dict[str, Any], during: Any = None
) -> dict[str, Any]:
    """A handler's reconcile whose patch carries ``live``; returns the patch (sent by the caller,
    as kopf sends it after the handler returns)."""
    with reporter.reconciling(topic, REF) as written:
        if during is not None:
            during()
        written.fields = dict(live)
        written.status = dict(live)
    return live


def _after_window(reporter: HealthReporter, now_shift: float = SETTLE_S + 0.1) -> None:
    reporter.clock = (lambda base: lambda: base + now_shift)(reporter.clock())
    with reporter._lock:
        reporter._due_rechecks()


def test_a_refresh_overlapping_a_reconcile_is_repeated_after_the_reconciles_patch_lands(
    hand_driven: tuple[HealthReporter, dict[str, Any], list[dict[str, Any]]], unique_topic: str
) -> None:
    reporter, status, _ = hand_driven
    truth = {k: status.get(k) for k in PARTITION_FIELDS}
    late = _reconcile(
        reporter, unique_topic, _stale(status), during=lambda: reporter._refresh_one(unique_topic)
    )
    status.update(late)  # kopf's patch lands last
    assert status["offlinePartitions"] == 2, "the interleaving under test"
    assert unique_topic in reporter._rechecks, "repeated once the window has passed, not before"
    _after_window(reporter)
    assert unique_topic not in reporter._rechecks and unique_topic in reporter._dirty
    reporter._refresh_one(unique_topic)
    assert {k: status.get(k) for k in PARTITION_FIELDS} == truth


def test_a_refresh_disagreeing_with_a_reconcile_just_before_it_is_repeated_after_the_window(
    hand_driven: tuple[HealthReporter, dict[str, Any], list[dict[str, Any]]], unique_topic: str
) -> None:
    """No overlap: the refresh comes after the reconcile, but kopf's patch may land after it."""
    reporter, status, patches = hand_driven
    truth = {k: status.get(k) for k in PARTITION_FIELDS}
    late = _reconcile(reporter, unique_topic, _stale(status))
    reporter._refresh_one(unique_topic)  # fresh data, sent (it differs from the reconcile's)
    assert patches[-1]["offlinePartitions"] == 0
    status.update(late)  # ... and kopf's patch lands after it
    _after_window(reporter)
    reporter._refresh_one(unique_topic)
    assert {k: status.get(k) for k in PARTITION_FIELDS} == truth


def test_a_reconcile_that_agrees_with_the_refreshes_costs_no_extra_write(
    hand_driven: tuple[HealthReporter, dict[str, Any], list[dict[str, Any]]], unique_topic: str
) -> None:
    reporter, status, patches = hand_driven
    truth = {k: status.get(k) for k in PARTITION_FIELDS}
    count = len(patches)
    _reconcile(reporter, unique_topic, truth, during=lambda: reporter._refresh_one(unique_topic))
    reporter._refresh_one(unique_topic)
    assert unique_topic in reporter._rechecks, "the overlap is checked once more"
    _after_window(reporter)
    reporter._refresh_one(unique_topic)
    assert all(p.get("partitionStates") == truth["partitionStates"] for p in patches[count:])
    assert len(patches) <= count + 1, "at most the one write the overlap forces"
    count = len(patches)
    _reconcile(reporter, unique_topic, truth)  # no overlap, agreeing data: nothing at all
    reporter._refresh_one(unique_topic)
    assert unique_topic not in reporter._rechecks and len(patches) == count


def test_refreshes_keep_under_min_isr_partitions_of_a_topic_with_min_insync_replicas(
    kafka_cluster: Any, unique_topic: str
) -> None:
    """The handler reports underMinIsrPartitions when the topic sets min.insync.replicas; a
    refresh used to drop it (and the next resync to put it back, and so on)."""
    client: KazooClient = kafka_cluster.zk_client()
    status, _, patcher = _status_recorder()
    store = ZkStore(client)
    brokers = assignment.brokers_for_assignment(store.live_brokers(), assignment.RackAwareMode.ENFORCED)
    store.create_topic(
        unique_topic, assignment.assign_replicas_to_brokers(brokers, 2, 3), {"min.insync.replicas": "2"}
    )
    wait_for(lambda: len(store.partition_states(unique_topic, [0, 1])) == 2, what="leaders")
    reporter = HealthReporter(store, patcher, "test")
    try:
        reporter.track(unique_topic, ("ns", "t"))
        reporter._refresh_one(unique_topic)
        assert status["underMinIsrPartitions"] == 0 and status["underReplicatedPartitions"] == 0
    finally:
        reporter.stop()
        client.stop()
        client.close()


def test_a_refresh_without_zookeeper_logs_one_line(
    kafka_cluster: Any, unique_topic: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A batch of status refreshes while the ZooKeeper session is gone (a leader change, an
    outage) is one warning of one line naming the topics and the reason, not an error with a
    traceback, and the topics are kept to be refreshed later."""
    client: KazooClient = kafka_cluster.zk_client()
    _, patches, patcher = _status_recorder()
    reporter = HealthReporter(ZkStore(client), patcher, "test")
    other = f"{unique_topic}-2"
    reporter.track(unique_topic, REF)
    reporter.track(other, ("ns", "other"))
    client.stop()
    try:
        with caplog.at_level(logging.WARNING, logger="kafka_zk_operator.runtime.health"):
            reporter._refresh_batch([unique_topic, other])
    finally:
        client.close()
    assert not patches
    assert [(r.levelname, r.exc_info) for r in caplog.records] == [("WARNING", None)]
    message = caplog.records[0].getMessage()
    assert f"2 topics ({unique_topic}, {other})" in message and "ZooKeeper" in message, message
    assert reporter._dirty == {unique_topic, other}


def test_a_topic_tracked_from_a_current_read_is_not_read_again(
    kafka_cluster: Any, unique_topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An adopting reconcile reads each topic once (issue #16): tracking it from that read sets
    its watches since the read's zxid and refreshes it only if a znode changed meanwhile. Here
    one topic is left alone and the other's znode is touched between the read and the tracking."""
    client: KazooClient = kafka_cluster.zk_client()
    _, _, patcher = _status_recorder()
    store = ZkStore(client)
    brokers = assignment.brokers_for_assignment(store.live_brokers(), assignment.RackAwareMode.ENFORCED)
    quiet, touched = unique_topic, f"{unique_topic}-touched"
    for topic in (quiet, touched):
        store.create_topic(topic, assignment.assign_replicas_to_brokers(brokers, 2, 3), {})
        wait_for(
            lambda: [len(s.isr) for s in store.partition_states(topic, [0, 1]).values()] == [3, 3],  # noqa: B023
            what="leaders with a full ISR (no state change left to come)",
        )
    reporter, refreshed = _counting_reporter(store, patcher, monkeypatch)
    reporter.start()
    try:
        for topic, ref in ((quiet, ("ns", "quiet")), (touched, ("ns", "touched"))):
            with reporter.reconciling(topic, ref) as written:
                observed = store.read_topic(topic)
                if topic == touched:
                    data, _ = client.get(znodes_topics.topic_path(topic))
                    client.set(znodes_topics.topic_path(topic), data)  # after the read
                reporter.track(topic, ref, read_since=written.read_since, priming=written.priming)
                written.status = partition_fields(observed, store.broker_ids())
        wait_for(lambda: touched in refreshed, what="the touched topic refreshed")
        for topic in (quiet, touched):
            state = znodes_topics.partition_state_path(topic, 1)
            wait_for(lambda: client._data_watchers.get(client.chroot + state), what="its partition watches")  # noqa: B023
        time.sleep(1)  # the debounce of a refresh, had one been asked
        assert quiet not in refreshed, "an unchanged topic is not read again"
        assert {t for _, t, _, _ in reporter._gauge_samples()} == {quiet, touched}, "gauges for both"
    finally:
        reporter.stop()
        client.stop()
        client.close()


def test_a_topic_tracked_after_the_reconcile_that_created_it_is_not_read_again(
    kafka_cluster: Any, unique_topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A create writes the topic, waits for its leader and reads it again (issue #16): tracked
    from that read (``TopicResult.read_since``, as the handler passes it on), the reporter does not
    read the topic a third time. Before, every created topic was refreshed once: six more
    ZooKeeper requests per create in a burst."""
    client: KazooClient = kafka_cluster.zk_client()
    _, patches, patcher = _status_recorder()
    store = ZkStore(client)
    reporter, refreshed = _counting_reporter(store, patcher, monkeypatch)
    reporter.start()
    resource = parse_resource(
        {
            "metadata": {"name": unique_topic, "namespace": "ns", "uid": "u1", "generation": 1},
            "spec": {"partitions": 2, "replicationFactor": 3},
        }
    )
    try:
        with reporter.reconciling(unique_topic, resource.ref) as written:
            result = reconcile_topic(
                resource, store, previous_status={}, policies=TopicPolicies(create_wait_seconds=60)
            )
            assert result.outcome is errors.Reason.CREATED, result.status
            assert result.read_since is not None and result.read_since > (written.read_since or 0)
            written.read_since = result.read_since
            reporter.track(unique_topic, resource.ref, read_since=written.read_since, priming=written.priming)
            written.fields = {key: result.status.get(key) for key in PARTITION_FIELDS}
            written.status = dict(written.fields)
        for partition in (0, 1):
            state = znodes_topics.partition_state_path(unique_topic, partition)
            wait_for(lambda: client._data_watchers.get(client.chroot + state), what="its partition watches")  # noqa: B023
        time.sleep(1)  # the debounce of a refresh, had one been asked
        assert refreshed == [], "the create's own read is current"
        assert patches == []
        assert [t for _, t, _, _ in reporter._gauge_samples()] == [unique_topic]
        # Still watched: a change in Kafka is reported.
        data, _ = client.get(znodes_topics.topic_path(unique_topic))
        client.set(znodes_topics.topic_path(unique_topic), data)
        wait_for(lambda: unique_topic in refreshed, what="a refresh after the topic znode changed")
    finally:
        reporter.stop()
        client.stop()
        client.close()


def test_a_reconciles_reads_are_the_reporters_watches_with_no_request_of_their_own(
    kafka_cluster: Any, unique_topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #16: the reads of a reconcile that tracks a topic set the watches the reporter
    needs (``HandlerWrite.priming``), so tracking it sends nothing - before, a ``get`` of the topic
    and an ``exists`` per partition, 2 of an adopted topic's 8 requests. ZooKeeper's ``wchc`` shows
    the watches, and a change of the topic znode is reported through them."""
    client: KazooClient = kafka_cluster.zk_client()
    _, patches, patcher = _status_recorder()
    store = ZkStore(client)
    brokers = assignment.brokers_for_assignment(store.live_brokers(), assignment.RackAwareMode.ENFORCED)
    store.create_topic(unique_topic, assignment.assign_replicas_to_brokers(brokers, 2, 3), {})
    wait_for(
        lambda: [len(s.isr) for s in store.partition_states(unique_topic, [0, 1]).values()] == [3, 3],
        what="leaders with a full ISR (no state change left to come)",
    )
    reporter, refreshed = _counting_reporter(store, patcher, monkeypatch)
    reporter.start()
    sent: list[tuple[str, str]] = []

    def counting(name: str, original: Any) -> Any:
        def call(path: str, *args: Any, **kwargs: Any) -> Any:
            sent.append((name, path))
            return original(path, *args, **kwargs)

        return call

    ref = ("ns", "adopted")
    topic_path = znodes_topics.topic_path(unique_topic)
    try:
        with reporter.reconciling(unique_topic, ref) as written:
            observed = store.read_topic(unique_topic)
            for name in ("get", "get_async", "exists", "exists_async"):
                monkeypatch.setattr(client, name, counting(name, getattr(client, name)))
            reporter.track(unique_topic, ref, read_since=written.read_since, priming=written.priming)
            written.status = partition_fields(observed, store.broker_ids())
        assert sent == [], "tracking sent no request"
        assert reporter._watches.watched() == 3
        prefix = f"{kafka_cluster.chroot}{topic_path}"
        wait_for(
            lambda: len(_server_watches(kafka_cluster, client, prefix)) == 3,
            what="ZooKeeper holding the watches the reads set (topic and 2 partition states)",
            timeout=10,
        )
        time.sleep(1)  # the debounce of a refresh, had one been asked
        assert refreshed == [] and patches == []
        data, _ = client.get(topic_path)
        client.set(topic_path, data)
        wait_for(lambda: unique_topic in refreshed, what="a refresh after the topic znode changed")
    finally:
        reporter.stop()
        client.stop()
        client.close()


def _counting_reporter(
    store: ZkStore, patcher: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[HealthReporter, list[str]]:
    """A reporter (not started) and the topics it refreshes, in order."""
    reporter = HealthReporter(store, patcher, "test")
    refreshed: list[str] = []
    refresh = reporter._refresh_one

    def counted(topic: str) -> errors.ClusterUnavailable | None:
        refreshed.append(topic)
        return refresh(topic)

    monkeypatch.setattr(reporter, "_refresh_one", counted)
    return reporter, refreshed
