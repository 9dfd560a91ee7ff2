"""A restarted operator's resume of each settled KafkaTopic, without kopf's change machinery.

kopf's start-up listing brings every KafkaTopic once; for each it detects a cause (its diff base
against the resource), finds the resume handler, builds its invocation (about twenty keyword
arguments, loggers, a context copy), sends it to the thread pool, records the outcome in its
progress storage and applies the patch: a quarter of the event loop's time when a restarted
operator adopts 10,000 KafkaTopics (py-spy, issue #16), around one reconcile each.

:func:`adopt` does what that resume comes to, for a resource whose resume is certain to be all kopf
would do with the event: the same reconcile (``kafkatopic._reconcile``) in the same pool, its
status changes merge-patched, its Events posted through kopf's queue. It is called by
``handlers.event_feed`` for a listing event (kopf's own start-up listing, or a listing after its
watch was lost) of a resource kopf has no memory of yet, when:

- the resource carries the operator's finalizer and is not being deleted (else kopf adds the
  finalizer or runs the delete handler);
- a handler has reported on it (``status.observedGeneration``), no handler progress is stored
  (``status.kopf.progress``: a retry or a multi-step handler kopf must continue) and no legacy
  annotation waits for removal (only kopf's patch of the main resource removes it);
- kopf's diff base equals the resource's essence as kopf computes both (with kopf's own storages
  from the operator's settings): kopf would see no change, so its only cause is the resume.

Anything else, or a reconcile that failed (it asks for a retry, its status did not land, it
raised), is handed to kopf's processor as before: kopf then resumes the resource with its retries
(a reconcile is level-based: running it again does no harm). kopf keeps no memory of an adopted
resource; its next event (a spec change, say) is processed by kopf as for any resource it
remembers without a listing: a change is a change, no event means nothing to do.

kopf's processor also holds every event until the operator's resources are all listed
(``operator_indexed``): :func:`adopt` waits the same way before it reconciles.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Mapping
from typing import Any, cast

import kopf

from kafka_zk_operator import config, metrics
from kafka_zk_operator.domain.crd_identity import FINALIZER
from kafka_zk_operator.handlers import in_pool, kafkatopic, kafkatopic_resync

log = logging.getLogger(__name__)

#: kopf's module of the Event queue's context variables (kopf 1.x), set before a handler runs.
_POSTING_MODULE = "kopf._core.engines.posting"
#: This hook's name in ``kzo_private_hook_active`` and its warning (tests/unit/test_private_hooks.py).
HOOK = "kopf_adoption"


def adoptable(body: Mapping[str, Any], settings: Any) -> bool:
    """Whether kopf would do nothing with ``body``'s listing event but resume it (see the module
    docstring). ``settings``: kopf's operator settings (its diff base and progress storages)."""
    meta = body.get("metadata") or {}
    status = body.get("status") or {}
    if (
        meta.get("deletionTimestamp")
        or FINALIZER not in (meta.get("finalizers") or ())
        or status.get("observedGeneration") is None
        or (status.get("kopf") or {}).get("progress")
        or config.legacy_kopf_annotations(meta.get("annotations"))
    ):
        return False
    persistence = settings.persistence
    wrapped = kopf.Body(cast(kopf.RawBody, body))
    old = persistence.diffbase_storage.fetch(body=wrapped)
    if old is None:
        return False
    new = persistence.diffbase_storage.build(body=wrapped)
    return bool(
        persistence.progress_storage.clear(essence=old) == persistence.progress_storage.clear(essence=new)
    )


async def adopt(given: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    """Resume the resource of a listing event the way its resume handler would; True when done,
    False when kopf is to process the event instead. ``given``: the arguments of kopf's processor
    (``handlers.event_feed``)."""
    settings = given.get("settings")
    memories = given.get("memories")
    memo = given.get("memobase")
    uid = str((body.get("metadata") or {}).get("uid", ""))
    known = getattr(memories, "_items", None)
    if not isinstance(known, dict):
        metrics.private_hook(
            HOOK, False, "kopf's ResourceMemories has no _items dict (handlers/kafkatopic_adoption.py)"
        )
        return False
    if settings is None or memo is None or uid in known:
        return False
    try:
        if not adoptable(body, settings):
            return False
    except Exception as error:  # kopf's storages refused the body: kopf will say why
        log.debug("KafkaTopic %s: left to kopf (%s)", uid, error)
        return False
    if not _post_through(given):
        return False
    operator_indexed = given.get("operator_indexed")
    resource_indexed = given.get("resource_indexed")
    if operator_indexed is not None and resource_indexed is not None:
        await operator_indexed.drop_toggle(resource_indexed)
    if operator_indexed is not None:
        await operator_indexed.wait_for(True)
    try:
        return await in_pool.run_in_pool(memo, _reconcile, body, memo)
    except kopf.TemporaryError:
        return False  # kopf resumes it, with its retries
    except Exception as error:
        log.warning("KafkaTopic %s: adopting it failed (%s); kopf resumes it", uid, error)
        return False


def _post_through(given: Mapping[str, Any]) -> bool:
    """Set kopf's Event queue for this task, as kopf does before any handler: the reconcile posts
    its Events with ``kopf.event``. False when kopf's posting module is not as expected."""
    event_queue = given.get("event_queue")
    try:
        posting = importlib.import_module(_POSTING_MODULE)
        queue_var = posting.event_queue_var
        loop_var = posting.event_queue_loop_var
    except (ImportError, AttributeError):
        metrics.private_hook(
            HOOK,
            False,
            f"{_POSTING_MODULE} has no event_queue_var/event_queue_loop_var"
            " (handlers/kafkatopic_adoption.py)",
        )
        return False
    if event_queue is None:
        return False
    loop_var.set(asyncio.get_running_loop())
    queue_var.set(event_queue)
    return True


def _reconcile(body: Mapping[str, Any], memo: Any) -> bool:
    """The resume handler's reconcile (in a pool thread), then its status patch: True when the
    patch landed or there was none. A reconcile that asks for a retry still has its report
    patched (kopf's retry then starts from it, and posts no Event twice) before kopf takes over."""
    patch = kopf.Patch()
    try:
        kafkatopic._reconcile(
            kopf.Body(cast(kopf.RawBody, body)), patch, memo, kafkatopic.OWNERS, body.get("status") or {}
        )
    except kopf.TemporaryError:
        kafkatopic_resync.land_status(body, patch)
        raise
    return kafkatopic_resync.land_status(body, patch)
