"""kopf's diff base (the copy of the spec it last handled) in an annotation, with a large spec
kept as its digest.

kopf compares that copy with the resource to tell a change of the spec from the operator's own
status writes, and stores it in an annotation (``last-handled-configuration`` under
``crd_identity.KOPF_PREFIX``).
Kubernetes allows 256 KiB for all of an object's annotations together, and the CRDs allow much
larger specs: 100 KafkaTopic config values of 4096 characters, a PartitionReassignment's 1 MiB
``reassignmentJson`` or 20,000 explicit partitions. kopf's patch of such a resource was refused
(422) on every attempt, so its finalizer was never removed and the log filled with tracebacks
(found by the spec fuzzing of issue #17).

A spec whose JSON is longer than :data:`SPEC_DIGEST_ABOVE` bytes is kept in the copy as its SHA-256
and length: every change still shows as a change (the handlers never read kopf's ``diff``; they
reconcile the whole resource), and the annotation stays small. A smaller spec is kept whole, as
kopf does by itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any, cast

import kopf

#: Longer specs are kept as a digest: a quarter of the 256 KiB that all annotations share, which
#: leaves room for the labels and annotations in the copy and for the users' own annotations.
SPEC_DIGEST_ABOVE = 64 * 1024


class DigestingDiffBaseStorage(kopf.AnnotationsDiffBaseStorage):
    """kopf's annotation storage of the diff base, with a spec over :data:`SPEC_DIGEST_ABOVE`
    bytes replaced by ``{"sha256": ..., "bytes": ...}``."""

    def build(self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None) -> kopf.BodyEssence:
        essence = super().build(body=body, extra_fields=extra_fields)
        spec = essence.get("spec")
        if spec is None:
            return essence
        text = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        if len(text) <= SPEC_DIGEST_ABOVE:
            return essence
        digested = dict(essence)
        digested["spec"] = {"sha256": hashlib.sha256(text).hexdigest(), "bytes": len(text)}
        return cast(kopf.BodyEssence, digested)
