"""kopf's diff base is kept in the status (one PATCH per handled change instead of two), a large
spec as its digest, and the annotation of earlier versions is still read and left out of the copy
(found by the spec fuzzing of issue #17: in an annotation, a KafkaTopic with 100 config values of
4096 characters could never be patched by kopf, nor deleted)."""

from __future__ import annotations

import json
from typing import Any

import kopf

from kafka_zk_operator.config import legacy_kopf_annotations
from kafka_zk_operator.domain import crd_identity
from kafka_zk_operator.handlers import diffbase

LEGACY_KEY = f"{crd_identity.KOPF_PREFIX}/{crd_identity.LAST_HANDLED_KEY}"


def _body(
    spec: dict[str, Any], annotations: dict[str, str] | None = None, status: dict[str, Any] | None = None
) -> kopf.Body:
    return kopf.Body(
        {
            "apiVersion": "kafka.zk-operator.io/v1alpha1",
            "kind": "KafkaTopic",
            "metadata": {"name": "t", "namespace": "ns", "uid": "u", "annotations": annotations or {}},
            "spec": spec,
            "status": status if status is not None else {"conditions": []},
        }
    )


def _stored(storage: diffbase.DigestingStatusDiffBaseStorage, body: kopf.Body) -> kopf.Patch:
    patch = kopf.Patch()
    storage.store(body=body, patch=patch, essence=storage.build(body=body))
    return patch


def test_the_copy_is_written_into_the_status_only() -> None:
    storage = diffbase.DigestingStatusDiffBaseStorage()
    spec = {"partitions": 3, "replicationFactor": 2, "config": {"retention.ms": "1000"}}
    patch = _stored(storage, _body(spec, {"kafka.zk-operator.io/paused": "true"}))
    assert set(patch) == {"status"}  # kopf then sends the status PATCH alone
    copy = json.loads(patch["status"]["kopf"]["last-handled-configuration"])
    assert copy == {"spec": spec, "metadata": {"annotations": {"kafka.zk-operator.io/paused": "true"}}}


def test_what_was_stored_reads_back_as_what_the_next_event_builds() -> None:
    storage = diffbase.DigestingStatusDiffBaseStorage()
    spec = {"partitions": 3, "replicationFactor": 2}
    patch = _stored(storage, _body(spec))
    later = _body(spec, status={"conditions": [], **patch["status"]})
    assert storage.fetch(body=later) == storage.build(body=later)  # no change: no update handler


def test_a_spec_up_to_the_threshold_is_kept_whole_as_kopf_keeps_it() -> None:
    spec = {"partitions": 3, "replicationFactor": 2, "config": {"retention.ms": "1000"}}
    plain = kopf.StatusDiffBaseStorage(field=diffbase.STATUS_FIELD)
    assert diffbase.DigestingStatusDiffBaseStorage().build(body=_body(spec)) == plain.build(body=_body(spec))


def test_a_large_spec_is_stored_as_a_digest() -> None:
    spec = {"partitions": 1, "replicationFactor": 1, "config": {f"k{i}": "v" * 4096 for i in range(100)}}
    storage = diffbase.DigestingStatusDiffBaseStorage()
    essence = storage.build(body=_body(spec))
    assert set(essence["spec"]) == {"sha256", "bytes"}
    assert essence["spec"]["bytes"] > diffbase.SPEC_DIGEST_ABOVE
    stored = _stored(storage, _body(spec))["status"]["kopf"]["last-handled-configuration"]
    assert len(stored) < 1024


def test_any_change_of_a_large_spec_changes_its_digest() -> None:
    spec = {"mode": "Explicit", "reassignmentJson": '{"version":1,"partitions":[' + " " * 100_000 + "]}"}
    changed = {**spec, "approval": "Manual"}
    storage = diffbase.DigestingStatusDiffBaseStorage()
    assert storage.build(body=_body(spec)) == storage.build(body=_body(dict(spec)))
    assert storage.build(body=_body(spec)) != storage.build(body=_body(changed))


def test_an_upgraded_resource_is_read_from_the_annotation_of_earlier_versions_and_shows_no_change() -> None:
    spec = {"partitions": 3, "replicationFactor": 2}
    earlier = kopf.AnnotationsDiffBaseStorage(
        prefix=crd_identity.KOPF_PREFIX, key=crd_identity.LAST_HANDLED_KEY
    )
    annotation_patch = kopf.Patch()
    earlier.store(body=_body(spec), patch=annotation_patch, essence=earlier.build(body=_body(spec)))
    upgraded = _body(spec, dict(annotation_patch["metadata"]["annotations"]))
    storage = diffbase.DigestingStatusDiffBaseStorage()
    assert storage.fetch(body=upgraded) == storage.build(body=upgraded) == {"spec": spec}
    # The handlers remove that annotation at their next reconcile.
    assert LEGACY_KEY in legacy_kopf_annotations(upgraded["metadata"]["annotations"])


def test_the_status_copy_wins_over_a_leftover_annotation() -> None:
    spec = {"partitions": 3, "replicationFactor": 2}
    storage = diffbase.DigestingStatusDiffBaseStorage()
    status = {"kopf": {"last-handled-configuration": json.dumps({"spec": {"partitions": 1}})}}
    body = _body(spec, {LEGACY_KEY: json.dumps({"spec": spec})}, status)
    assert storage.fetch(body=body) == {"spec": {"partitions": 1}}
