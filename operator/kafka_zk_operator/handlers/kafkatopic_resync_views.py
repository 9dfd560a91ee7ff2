"""What the KafkaTopic resync keeps of each resource, and which resources it takes up.

The index :data:`VIEWS` (fed by ``handlers.indexes``) maps each KafkaTopic's uid to its
:func:`resync_view`: its identity, generation, the annotations that steer it, spec and status,
kept as compact JSON (:func:`packed_view`, about 1 KB a resource; issue #16). Every event updates
it and the resource's deletion drops it. :func:`resyncable` and :func:`awaiting_handler` decide,
from a view alone, whether the passes resync a resource or look for a create kopf left unhandled.

Used by ``handlers.kafkatopic_resync`` (the passes and each resync) and ``handlers.indexes``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kafka_zk_operator import config
from kafka_zk_operator.domain.crd_identity import FINALIZER, MANAGED_ANNOTATION, PAUSED_ANNOTATION
from kafka_zk_operator.runtime.resource_index import ResourceIndex, uid_of

#: A resource's entry in ``kafkatopic_resync_views``: the parts of its body a resync reads.
View = dict[str, Any]


def resync_view(body: Mapping[str, Any]) -> View:
    """What a resync needs of a KafkaTopic: ``parse_resource``'s input, the status, and what an
    Event names. Leaves out ``managedFields``, other annotations (``kubectl apply`` keeps a whole
    copy of the resource in one) and kopf's own status field."""
    meta = body.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    kept = {MANAGED_ANNOTATION, PAUSED_ANNOTATION, *config.legacy_kopf_annotations(annotations)}
    status = body.get("status") or {}
    return {
        "apiVersion": body.get("apiVersion"),
        "kind": body.get("kind"),
        "metadata": {
            key: meta[key]
            for key in ("name", "namespace", "uid", "generation", "creationTimestamp", "deletionTimestamp")
            if key in meta
        }
        | {
            "annotations": {key: value for key, value in annotations.items() if key in kept},
            "finalizers": [name for name in meta.get("finalizers") or () if name == FINALIZER],
        },
        "spec": body.get("spec") or {},
        "status": {key: value for key, value in status.items() if key != "kopf"},
    }


def packed_view(body: Mapping[str, Any]) -> bytes:
    """:func:`resync_view` as compact JSON, what the index keeps: about 1 KB a resource instead
    of the 5.8 KB of the same view as Python dicts and lists (48 MB at 10,000 KafkaTopics,
    issue #16). Unpacked (:func:`unpacked_view`) when a resync or a check reads it."""
    return json.dumps(resync_view(body), separators=(",", ":")).encode()


def unpacked_view(packed: bytes) -> View:
    view: View = json.loads(packed)
    return view


def kafkatopic_resync_views(body: Mapping[str, Any], memo: Any) -> dict[str, bytes]:
    """uid → :func:`packed_view`."""
    return {uid_of(body): packed_view(body)}


#: uid → what a resync reads of the resource (:func:`kafkatopic_resync_views`).
VIEWS = ResourceIndex("kafkatopic_resync_views", kafkatopic_resync_views)


def resyncable(view: View) -> bool:
    """Whether the passes resync this resource: it carries the operator's finalizer (so its
    deletion will come through the delete handler), is not being deleted, and a handler has
    reported on it once (``status.observedGeneration``). A resource created a moment ago is left
    to its create handler, however long a burst keeps that queued: a resync must not create the
    topic before the finalizer is there, nor race the create."""
    meta = view["metadata"]
    return (
        FINALIZER in meta.get("finalizers", ())
        and not meta.get("deletionTimestamp")
        and view["status"].get("observedGeneration") is not None
    )


def awaiting_handler(view: View) -> bool:
    """Whether no handler has reported on this resource yet and it is not being deleted: its
    create handler is queued, running, or was left out by kopf. Every report has conditions (a
    resource created paused has no ``observedGeneration``, but a ``Paused`` condition)."""
    status = view["status"]
    return (
        not view["metadata"].get("deletionTimestamp")
        and status.get("observedGeneration") is None
        and not status.get("conditions")
    )
