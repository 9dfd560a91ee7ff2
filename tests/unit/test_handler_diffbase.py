"""kopf's diff base keeps a large spec as its digest, so that its annotation stays within the
256 KiB Kubernetes allows for all annotations (found by the spec fuzzing of issue #17: a KafkaTopic
with 100 config values of 4096 characters could never be patched by kopf, nor deleted)."""

from __future__ import annotations

import json
from typing import Any

import kopf

from kafka_zk_operator.domain import crd_identity
from kafka_zk_operator.handlers import diffbase

#: What Kubernetes allows for all annotations of one object together.
ANNOTATIONS_LIMIT = 256 * 1024


def _storage() -> diffbase.DigestingDiffBaseStorage:
    return diffbase.DigestingDiffBaseStorage(
        prefix=crd_identity.KOPF_PREFIX, key="last-handled-configuration"
    )


def _body(spec: dict[str, Any], annotations: dict[str, str] | None = None) -> kopf.Body:
    return kopf.Body(
        {
            "apiVersion": "kafka.zk-operator.io/v1alpha1",
            "kind": "KafkaTopic",
            "metadata": {"name": "t", "namespace": "ns", "uid": "u", "annotations": annotations or {}},
            "spec": spec,
            "status": {"conditions": []},
        }
    )


def _stored(storage: diffbase.DigestingDiffBaseStorage, body: kopf.Body) -> dict[str, str]:
    patch = kopf.Patch()
    storage.store(body=body, patch=patch, essence=storage.build(body=body))
    return dict(patch["metadata"]["annotations"])


def test_a_spec_up_to_the_threshold_is_kept_whole_as_kopf_keeps_it() -> None:
    spec = {"partitions": 3, "replicationFactor": 2, "config": {"retention.ms": "1000"}}
    plain = kopf.AnnotationsDiffBaseStorage(prefix=crd_identity.KOPF_PREFIX, key="last-handled-configuration")
    assert _storage().build(body=_body(spec)) == plain.build(body=_body(spec))


def test_a_large_spec_is_stored_as_a_digest_within_the_annotations_limit() -> None:
    spec = {"partitions": 1, "replicationFactor": 1, "config": {f"k{i}": "v" * 4096 for i in range(100)}}
    storage = _storage()
    essence = storage.build(body=_body(spec))
    assert set(essence["spec"]) == {"sha256", "bytes"}
    assert essence["spec"]["bytes"] > diffbase.SPEC_DIGEST_ABOVE
    annotations = _stored(storage, _body(spec))
    assert sum(len(k) + len(v) for k, v in annotations.items()) < ANNOTATIONS_LIMIT // 4
    # What was stored reads back as what the next event builds: no change, no update handler.
    stored = next(v for k, v in annotations.items() if k.endswith("last-handled-configuration"))
    body = _body(spec, {k: v for k, v in annotations.items()})
    assert storage.fetch(body=body) == json.loads(stored) == storage.build(body=body)


def test_any_change_of_a_large_spec_changes_its_digest() -> None:
    spec = {"mode": "Explicit", "reassignmentJson": '{"version":1,"partitions":[' + " " * 100_000 + "]}"}
    changed = {**spec, "approval": "Manual"}
    storage = _storage()
    assert storage.build(body=_body(spec)) == storage.build(body=_body(dict(spec)))
    assert storage.build(body=_body(spec)) != storage.build(body=_body(changed))
