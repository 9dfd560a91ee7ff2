"""How many KafkaTopics of a namespace are Ready, kept from one watch (for the benchmarks).

Listing every resource to count them costs the API server, and the benchmark's own Python, a
full serialisation and parse of all N each time: at 10,000 topics every poll was tens of MB of
JSON, on the same two cores as the operator being measured. A watch sends each change once.
"""

from __future__ import annotations

import threading
from typing import Any

from kubernetes import client, watch

from kafka_zk_operator.domain.crd_identity import GROUP, KAFKA_TOPIC, VERSION

PLURAL = KAFKA_TOPIC.plural


def is_ready(item: dict[str, Any]) -> bool:
    status = item.get("status") or {}
    if status.get("observedGeneration") != item["metadata"].get("generation"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


class ReadyWatch:
    """Counts the Ready KafkaTopics of ``namespace`` from a background watch (started at once)."""

    def __init__(self, custom: client.CustomObjectsApi, namespace: str) -> None:
        self._custom = custom
        self._namespace = namespace
        self._ready: set[str] = set()
        self._changed = threading.Condition()
        self._stopped = False
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="ready-watch", daemon=True)
        self._thread.start()

    def count(self) -> int:
        with self._changed:
            if self._failure is not None:
                raise RuntimeError(f"the watch of KafkaTopics failed: {self._failure}")
            return len(self._ready)

    def wait_for(self, n: int, timeout: float) -> bool:
        """Whether ``n`` were Ready within ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self._ready) >= n or self._failure is not None, timeout)

    def stop(self) -> None:
        self._stopped = True

    def _run(self) -> None:
        try:
            while not self._stopped:
                listed = self._custom.list_namespaced_custom_object(GROUP, VERSION, self._namespace, PLURAL)
                with self._changed:
                    self._ready = {i["metadata"]["name"] for i in listed["items"] if is_ready(i)}
                    self._changed.notify_all()
                self._follow(listed["metadata"]["resourceVersion"])
        except BaseException as error:  # reported by count()
            with self._changed:
                self._failure = error
                self._changed.notify_all()

    def _follow(self, resource_version: str) -> None:
        """Apply events until the stream ends for good (410: list again) or the watch is stopped."""
        stream = watch.Watch()
        while not self._stopped:
            try:
                for event in stream.stream(
                    self._custom.list_namespaced_custom_object, GROUP, VERSION, self._namespace, PLURAL,
                    resource_version=resource_version, timeout_seconds=60, allow_watch_bookmarks=True,
                ):  # fmt: skip
                    item = event["object"]
                    resource_version = item["metadata"]["resourceVersion"]
                    if event["type"] == "BOOKMARK":
                        continue
                    name = item["metadata"]["name"]
                    with self._changed:
                        if event["type"] != "DELETED" and is_ready(item):
                            self._ready.add(name)
                        else:
                            self._ready.discard(name)
                        self._changed.notify_all()
                    if self._stopped:
                        return
            except client.exceptions.ApiException as error:
                if error.status == 410:
                    return  # too old: list again
                raise
