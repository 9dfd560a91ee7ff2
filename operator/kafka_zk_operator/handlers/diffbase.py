"""kopf's bookkeeping in the status: its diff base (the copy of the spec it last handled), with a
large spec kept as its digest, and its progress (``status.kopf.progress``, with the ``dummy`` field
kopf writes to hear from a resource again: :func:`touch_fields`).

kopf compares that copy with the resource to tell a change of the spec from the operator's own
status writes. Where it is kept decides what a handled change costs: kopf patches the main
resource and its ``status`` subresource in two separate requests, so a copy in an annotation made
every create and every spec change cost two PATCH requests (and two watch events) where one
suffices. It is kept in the status instead (``status.kopf.last-handled-configuration``, next to
kopf's progress), written in the same request as the handler's status.

Earlier versions kept it in an annotation (``last-handled-configuration`` under
``crd_identity.KOPF_PREFIX``).
A resource that still has only that copy is read from it (so an upgrade sees no change), the
annotation is left out of the copy, and the handlers remove it at their next reconcile
(``crd_identity.LEGACY_KOPF_ANNOTATIONS``).

A spec whose JSON is longer than :data:`SPEC_DIGEST_ABOVE` bytes is kept in the copy as its SHA-256
and length: every change still shows as a change (the handlers never read kopf's ``diff``; they
reconcile the whole resource), and the copy stays small. (In an annotation, kopf's patch of such a
resource was refused with 422, since all annotations share 256 KiB; found by the spec fuzzing of
issue #17. In the status it would only double the object's size towards etcd's limit.) A smaller
spec is kept whole, as kopf does by itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any, cast

import kopf

from kafka_zk_operator.domain import crd_identity

#: Longer specs are kept as a digest.
SPEC_DIGEST_ABOVE = 64 * 1024
#: Where the copy is kept.
STATUS_FIELD = "status.kopf.last-handled-configuration"
#: Where kopf keeps the progress of handlers that are retried or take several steps.
PROGRESS_FIELD = "status.kopf.progress"

#: The annotation storage of earlier versions: read when the status has no copy yet.
_ANNOTATION_STORAGE = kopf.AnnotationsDiffBaseStorage(
    prefix=crd_identity.KOPF_PREFIX, key=crd_identity.LAST_HANDLED_KEY
)
#: That storage's annotation keys. kopf derives them from the body only for a ReplicaSet owned by a
#: Deployment (``mark_key``), never for the operator's kinds: built once, not on every event.
_LEGACY_KEYS = frozenset(_ANNOTATION_STORAGE.make_keys(crd_identity.LAST_HANDLED_KEY))


def progress_storage() -> kopf.StatusProgressStorage:
    """kopf's progress storage of the operator's resources (set in ``main.configure``)."""
    return kopf.StatusProgressStorage(field=PROGRESS_FIELD)


def touch_fields(value: str) -> dict[str, Any]:
    """The status fields kopf itself writes to get a new watch event for a resource ("touch"),
    set to ``value`` (any value that differs from the last one)."""
    patch = kopf.Patch()
    progress_storage().touch(body=kopf.Body(cast(kopf.RawBody, {})), patch=patch, value=value)
    return dict(patch["status"])


def digested(essence: kopf.BodyEssence) -> kopf.BodyEssence:
    """``essence`` with a spec over :data:`SPEC_DIGEST_ABOVE` bytes replaced by
    ``{"sha256": ..., "bytes": ...}``."""
    spec = essence.get("spec")
    if spec is None:
        return essence
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if len(text) <= SPEC_DIGEST_ABOVE:
        return essence
    smaller = dict(essence)
    smaller["spec"] = {"sha256": hashlib.sha256(text).hexdigest(), "bytes": len(text)}
    return cast(kopf.BodyEssence, smaller)


class DigestingStatusDiffBaseStorage(kopf.StatusDiffBaseStorage):
    """kopf's status storage of the diff base, with large specs digested and the annotation of
    earlier versions read as a fallback and left out of the copy."""

    def __init__(self) -> None:
        super().__init__(field=STATUS_FIELD)

    def build(self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None) -> kopf.BodyEssence:
        essence = super().build(body=body, extra_fields=extra_fields)
        self.remove_annotations(essence, _LEGACY_KEYS)
        self.remove_empty_stanzas(essence)
        return digested(essence)

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        stored = super().fetch(body=body)
        if stored is not None:
            return stored
        return _ANNOTATION_STORAGE.fetch(body=body)
