"""handlers.indexes and adapters.k8s.listing: the start-up listing fills every index page by page
(starting over when the API server expired the listing), events keep them current or drop a
resource, a malformed resource is left out without stopping the others, and the sweep drops
what was deleted before kopf's own listing while keeping what it cannot check yet."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest
import urllib3
from kubernetes.client.exceptions import ApiException

from kafka_zk_operator import config
from kafka_zk_operator.adapters.k8s import listing
from kafka_zk_operator.adapters.k8s.api import KubernetesApiError
from kafka_zk_operator.domain.crd_identity import KAFKA_TOPIC, PARTITION_REASSIGNMENT
from kafka_zk_operator.handlers import indexes, kafkatopic, kafkatopic_resync_views
from kafka_zk_operator.runtime.resource_index import ResourceIndex


def _res(uid: str, namespace: str = "team-a", topic: str | None = None) -> dict[str, Any]:
    return {
        "metadata": {"uid": uid, "namespace": namespace, "name": f"res-{uid}"},
        "spec": {"topic": topic or f"t-{uid}"},
    }


def _by_topic(body: Mapping[str, Any], memo: Any) -> dict[Any, Any]:
    if body["spec"].get("broken"):
        raise ValueError("spec.broken is set")
    return {body["spec"]["topic"]: body["metadata"]["uid"]}


class FakeCustomApi:
    """The two list calls and the get the operator makes, over a set of KafkaTopics, in pages."""

    def __init__(self, objects: list[dict[str, Any]], *, expire_once_at: str | None = None) -> None:
        self.objects = objects
        self.expire_once_at = expire_once_at
        self.calls: list[tuple[str | None, str | None]] = []
        self.gets: list[str] = []
        self.unreachable = False

    def _page(
        self, plural: str, namespace: str | None, limit: int, _continue: str | None = None
    ) -> dict[str, Any]:
        if plural != KAFKA_TOPIC.plural:
            return {"items": [], "metadata": {}}
        self.calls.append((namespace, _continue))
        if _continue is not None and _continue == self.expire_once_at:
            self.expire_once_at = None
            raise ApiException(status=410, reason="Expired")
        chosen = [o for o in self.objects if namespace is None or o["metadata"]["namespace"] == namespace]
        start = int(_continue or 0)
        rest = start + limit
        return {
            "items": chosen[start:rest],
            "metadata": {"continue": str(rest) if rest < len(chosen) else ""},
        }

    def list_cluster_custom_object(
        self, group: str, version: str, plural: str, **options: Any
    ) -> dict[str, Any]:
        return self._page(plural, None, **options)

    def list_namespaced_custom_object(
        self, group: str, version: str, namespace: str, plural: str, **options: Any
    ) -> dict[str, Any]:
        return self._page(plural, namespace, **options)

    def get_namespaced_custom_object(
        self, group: str, version: str, namespace: str, plural: str, name: str
    ) -> dict[str, Any]:
        self.gets.append(name)
        if self.unreachable:
            raise urllib3.exceptions.MaxRetryError(None, "/", "connection refused")  # type: ignore[arg-type]
        for o in self.objects:
            if o["metadata"]["namespace"] == namespace and o["metadata"]["name"] == name:
                return o
        raise ApiException(status=404, reason="Not Found")


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing, "PAGE_SIZE", 2)


@pytest.fixture
def topics_index(monkeypatch: pytest.MonkeyPatch) -> ResourceIndex:
    index = ResourceIndex("by-topic", _by_topic)
    monkeypatch.setattr(indexes, "INDEXES", {KAFKA_TOPIC: (index,), PARTITION_REASSIGNMENT: ()})
    return index


def test_the_listing_reads_page_by_page_in_each_namespace(small_pages: None) -> None:
    api = FakeCustomApi([_res(str(n), "team-a" if n % 2 else "team-b") for n in range(7)])
    everywhere = list(listing.list_resources(api, KAFKA_TOPIC, ()))  # type: ignore[arg-type]
    assert [o["metadata"]["uid"] for o in everywhere] == [str(n) for n in range(7)]
    assert api.calls == [(None, None), (None, "2"), (None, "4"), (None, "6")]
    api.calls.clear()
    in_b = list(listing.list_resources(api, KAFKA_TOPIC, ("team-b",)))  # type: ignore[arg-type]
    assert [o["metadata"]["uid"] for o in in_b] == ["0", "2", "4", "6"]
    assert api.calls == [("team-b", None), ("team-b", "2")]


def test_an_expired_listing_starts_over(small_pages: None) -> None:
    api = FakeCustomApi([_res(str(n)) for n in range(5)], expire_once_at="4")
    found = [o["metadata"]["uid"] for o in listing.list_resources(api, KAFKA_TOPIC, ())]  # type: ignore[arg-type]
    assert found == ["0", "1", "2", "3", "0", "1", "2", "3", "4"]  # the index keeps the last of each


def test_a_refused_or_unreachable_listing_says_which(
    small_pages: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeCustomApi([_res("1")])

    def refuse(*_: Any, **__: Any) -> Any:
        raise ApiException(status=403, reason="Forbidden")

    monkeypatch.setattr(api, "list_namespaced_custom_object", refuse)
    with pytest.raises(
        KubernetesApiError, match="listing kafkatopics in namespace team-a failed: 403 Forbidden"
    ):
        list(listing.list_resources(api, KAFKA_TOPIC, ("team-a",)))  # type: ignore[arg-type]

    def unreachable(*_: Any, **__: Any) -> Any:
        raise urllib3.exceptions.NewConnectionError(None, "connection refused")  # type: ignore[arg-type]

    monkeypatch.setattr(api, "list_cluster_custom_object", unreachable)
    with pytest.raises(KubernetesApiError, match="could not be reached"):
        list(listing.list_resources(api, KAFKA_TOPIC, ()))  # type: ignore[arg-type]


def test_fill_indexes_everything_listed_and_leaves_out_a_malformed_resource(
    small_pages: None, topics_index: ResourceIndex
) -> None:
    broken = _res("3")
    broken["spec"]["broken"] = True
    api = FakeCustomApi([_res("1"), _res("2", topic="t-1"), broken, _res("4")])
    counts = indexes.fill(api, (), None)  # type: ignore[arg-type]
    assert counts == {"KafkaTopic": 4, "PartitionReassignment": 0}
    assert sorted(topics_index.get("t-1")) == ["1", "2"] and topics_index.get("t-4") == ["4"]
    assert topics_index.get("t-3") == []
    assert set(topics_index.unconfirmed()) == {"1", "2", "4"}


def test_events_keep_the_index_current_and_a_deletion_drops_the_resource(topics_index: ResourceIndex) -> None:
    indexes.feed(KAFKA_TOPIC, None, _res("1"), None)  # kopf's own listing
    indexes.feed(KAFKA_TOPIC, "MODIFIED", _res("1", topic="renamed"), None)
    assert topics_index.get("t-1") == [] and topics_index.get("renamed") == ["1"]
    broken = _res("1", topic="renamed")
    broken["spec"]["broken"] = True
    indexes.feed(KAFKA_TOPIC, "MODIFIED", broken, None)  # nothing known of it any more
    assert topics_index.keys() == []
    indexes.feed(KAFKA_TOPIC, "ADDED", _res("2"), None)
    indexes.feed(KAFKA_TOPIC, "DELETED", _res("2"), None)
    assert topics_index.keys() == []


def test_the_real_kafkatopic_indexes_follow_events() -> None:
    memo = SimpleNamespace(settings=config.load({"KZO_ZOOKEEPER": "zk:2181/kafka"}))
    body = {
        "metadata": {
            "uid": "u-feed-1",
            "namespace": "team-a",
            "name": "orders",
            "creationTimestamp": "2026-11-28T10:00:00Z",
        },
        "spec": {"partitions": 1, "replicationFactor": 1},
    }
    indexes.feed(KAFKA_TOPIC, "ADDED", body, memo)
    try:
        (claim,) = kafkatopic.OWNERS.get(("default", "orders"))
        assert claim[1:] == ("u-feed-1", "team-a/orders")
        assert kafkatopic_resync_views.VIEWS.first("u-feed-1") is not None
    finally:
        indexes.feed(KAFKA_TOPIC, "DELETED", body, memo)
    assert kafkatopic.OWNERS.get(("default", "orders")) == []
    assert kafkatopic_resync_views.VIEWS.first("u-feed-1") is None


def test_the_sweep_drops_the_deleted_keeps_the_rest_and_asks_again_when_it_cannot_tell(
    topics_index: ResourceIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexes, "SWEEP_AFTER_SECONDS", 0.05)
    api = FakeCustomApi([_res("1"), _res("2"), _res("3")])
    indexes.fill(api, (), None)  # type: ignore[arg-type]
    indexes.feed(KAFKA_TOPIC, None, _res("1"), None)  # kopf delivered this one
    api.objects = [_res("2")]  # "3" was deleted before kopf listed it
    api.unreachable = True

    async def scenario() -> None:
        sweeper = indexes.Sweeper()
        sweeper.start(api, SimpleNamespace(executor=None))  # type: ignore[arg-type]
        await asyncio.sleep(0.12)  # a sweep or two while the API server is unreachable
        assert set(topics_index.unconfirmed()) == {"2", "3"} and topics_index.get("t-3") == ["3"]
        api.unreachable = False
        assert sweeper.task is not None
        await asyncio.wait_for(sweeper.task, 1.0)  # it ends once nothing is left to check

    asyncio.run(scenario())
    assert topics_index.unconfirmed() == {}
    assert (
        topics_index.get("t-3") == []
        and topics_index.get("t-2") == ["2"]
        and topics_index.get("t-1") == ["1"]
    )
    assert "res-1" not in api.gets  # what kopf delivered is not checked


def test_a_resource_replaced_under_the_same_name_counts_as_gone() -> None:
    api = FakeCustomApi([_res("new")])
    api.objects[0]["metadata"]["name"] = "res-old"
    assert indexes.still_there(api, KAFKA_TOPIC, ("team-a", "res-old"), "old") is False  # type: ignore[arg-type]
    assert indexes.still_there(api, KAFKA_TOPIC, ("team-a", "res-old"), "new") is True  # type: ignore[arg-type]
    assert indexes.still_there(api, KAFKA_TOPIC, ("team-a", "res-none"), "x") is False  # type: ignore[arg-type]
    api.unreachable = True
    assert indexes.still_there(api, KAFKA_TOPIC, ("team-a", "res-old"), "new") is None  # type: ignore[arg-type]
