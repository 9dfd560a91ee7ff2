"""Every watch event of the operator's kinds, fed to its indexes (``handlers.indexes``) before kopf
handles it, and reported to the KafkaTopic resync passes once kopf has.

Through kopf's ``@kopf.on.event`` this cost kopf's whole handler invocation per event (a keyword
argument set of about twenty entries, loggers, a context copy): a fifth of the event loop's time
when a restarted operator adopts 10,000 KafkaTopics, and a sixth in a burst of creations (py-spy,
issue #16), for two dictionary updates. :func:`install` wraps kopf's per-event processor instead
(``kopf._core.reactor.processing.process_resource_event``, which every watcher calls with the
raw event): the indexes are fed before kopf's processing of the event starts, as the event
handler was run before the change handlers, and the resync passes hear of the event once kopf's
processing ends (``kafkatopic_resync.kopf_saw``: its Event queue is set in the worker's context
by then). A listing event of a settled KafkaTopic kopf has no memory of is resumed without kopf
(``handlers.kafkatopic_adoption``) when kopf would do nothing else with it; kopf's processor is
then not called for that event.

That processor is kopf's internal: when it is not there, or not with the arguments this wrapper
reads, :func:`install` registers the ``@kopf.on.event`` handlers instead, which do the same, and says
so (a warning, ``kzo_private_hook_active{hook="kopf_event_feed"} 0``). Its shape is checked by
``tests/unit/test_private_hooks.py``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

import kopf

from kafka_zk_operator import metrics
from kafka_zk_operator.domain.crd_identity import (
    GROUP,
    KAFKA_TOPIC,
    PARTITION_REASSIGNMENT,
    VERSION,
    CustomResource,
)
from kafka_zk_operator.handlers import indexes, kafkatopic_adoption, kafkatopic_resync
from kafka_zk_operator.runtime.resource_index import uid_of

log = logging.getLogger(__name__)

#: Where kopf keeps the processor every watcher calls for each event (kopf 1.x).
PROCESSOR_MODULE = "kopf._core.reactor.processing"
#: This hook's name in ``kzo_private_hook_active`` and its warning.
HOOK = "kopf_event_feed"
#: The kinds whose events are fed, by their plural (kopf watches each under a ``Resource``).
_KINDS: dict[str, CustomResource] = {kind.plural: kind for kind in indexes.INDEXES}
#: The keyword arguments this wrapper reads from kopf's processor.
_READ = ("resource", "raw_event", "memobase")
#: Marks kopf's processor once wrapped.
_WRAPPED = "__kzo_event_feed__"


def install(module: str = PROCESSOR_MODULE, registry: kopf.OperatorRegistry | None = None) -> str:
    """Feed the indexes from every event; once, before ``kopf.run`` (``main`` does it on import).
    ``"processor"``: through kopf's processor in ``module``; ``"handlers"``: through
    ``@kopf.on.event`` handlers in ``registry`` (kopf's default one: None), when that processor is
    not there or not as expected (see the module docstring)."""
    processing: Any
    try:
        processing = importlib.import_module(module)
    except ImportError:
        processing = None
    original = getattr(processing, "process_resource_event", None)
    if original is not None and getattr(original, _WRAPPED, False):
        return "processor"
    if original is None or not _takes(original, _READ):
        metrics.private_hook(
            HOOK,
            False,
            f"{module}.process_resource_event is missing or takes no {', '.join(_READ)}: the indexes are"
            " fed from @kopf.on.event handlers instead (handlers/event_feed.py)",
        )
        kopf.on.event(GROUP, VERSION, KAFKA_TOPIC.plural, registry=registry)(kafkatopic_events)
        kopf.on.event(GROUP, VERSION, PARTITION_REASSIGNMENT.plural, registry=registry)(
            partitionreassignment_events
        )
        return "handlers"
    processing.process_resource_event = feeding(original)
    metrics.private_hook(HOOK, True)
    return "processor"


def feeding(original: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Coroutine[Any, Any, Any]]:
    """``original`` (kopf's per-event processor), feeding the indexes first (see the module docstring)."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    async def process_resource_event(*args: Any, **kwargs: Any) -> Any:
        # kopf passes keywords only; a positional argument is bound by name (slower, never lost).
        given = signature.bind_partial(*args, **kwargs).arguments if args else kwargs
        resource = given.get("resource")
        plural = getattr(resource, "plural", None) if getattr(resource, "group", None) == GROUP else None
        kind = _KINDS.get(plural) if plural is not None else None
        if kind is None:
            return await original(*args, **kwargs)
        raw_event: Mapping[str, Any] = given["raw_event"]
        body: Mapping[str, Any] = raw_event.get("object") or {}
        indexes.feed(kind, raw_event.get("type"), body, given.get("memobase"))
        if (
            kind is KAFKA_TOPIC
            and raw_event.get("type") is None
            and await kafkatopic_adoption.adopt(given, body)
        ):
            kafkatopic_resync.kopf_saw(uid_of(body))
            return None  # resumed without kopf (handlers.kafkatopic_adoption): nothing for it to do
        result = await original(*args, **kwargs)
        if kind is KAFKA_TOPIC:
            kafkatopic_resync.kopf_saw(uid_of(body))
        return result

    setattr(process_resource_event, _WRAPPED, True)
    return process_resource_event


def _takes(function: Callable[..., Any], names: tuple[str, ...]) -> bool:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return all(name in parameters for name in names)


async def kafkatopic_events(type: str | None, body: kopf.Body, memo: Any, **_: Any) -> None:
    """The fallback: ``async`` although it never awaits, so that kopf does not send it through
    its thread pool on every event."""
    indexes.feed(KAFKA_TOPIC, type, body, memo)
    kafkatopic_resync.kopf_saw(uid_of(body))


async def partitionreassignment_events(type: str | None, body: kopf.Body, memo: Any, **_: Any) -> None:
    indexes.feed(PARTITION_REASSIGNMENT, type, body, memo)
