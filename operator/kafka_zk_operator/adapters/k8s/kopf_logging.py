"""The operator's log as kopf writes it: every line about a resource names it, and kopf's success
lines that say nothing happened are left out.

:func:`configure` sets up kopf's logging for the operator process: text lines (``plain``,
``full``) start with the resource they are about, ``[namespace/name]``, as ``kopf run`` writes
them (``kopf.configure`` leaves the prefix out unless asked, and the operator's log then said
"Handler 'kafkatopic_create' succeeded." a thousand times without naming a resource); JSON lines
carry the resource in their ``object`` field instead.

Left out (:class:`QuietTimerSuccesses`, unless ``--verbose``):

- ``Timer 'partitionreassignment_poll' succeeded.``, logged at INFO for every run of the timer;
  what a poll finds is in the resource's status, its Events and the metrics
  (``kzo_reconciliations_total``). The KafkaTopic resync is no kopf timer
  (``handlers.kafkatopic_resync``).
- ``Handler 'kafkatopic_events' succeeded.`` and the like, when the operator's indexes are fed by
  event handlers (``handlers.event_feed``'s fallback): one for every event of every resource
  (40,000 lines in a burst of 10,000 KafkaTopics).
- ``Handler 'kafkatopic_resume' succeeded.``: one line per KafkaTopic each time the operator starts
  or takes over, for a reconcile that most often finds the topic in sync (about 5 % of the event
  loop's time in an adoption of 10,000 topics); what one changes is in its Events and status. A
  settled KafkaTopic is resumed without kopf (``handlers.kafkatopic_adoption``): the line remains
  for those kopf resumes.
- kopf's summary of a cause whose one handler succeeded (``Creation is processed: 1 succeeded; 0
  failed.``, and the same for resuming, updating and deletion): each kind has one handler per
  cause, so it repeats the handler's line just before it (another 10,000 lines in that burst).

Failures and retries are logged by kopf at WARNING or ERROR and always pass, and so do the
success lines of the create, update and delete handlers.
"""

from __future__ import annotations

import logging

#: The timers whose successful runs are not logged.
QUIET_TIMERS = ("partitionreassignment_poll",)
#: The handlers whose successful runs are not logged: the fallback index feeders, the KafkaTopic resume.
QUIET_HANDLERS = ("kafkatopic_events", "partitionreassignment_events", "kafkatopic_resume")
#: kopf's summary of a cause whose one handler succeeded (any kind).
QUIET_SUMMARIES = tuple(
    f"{cause} is processed: 1 succeeded; 0 failed."
    for cause in ("Resuming", "Creation", "Updating", "Deletion")
)
_QUIET_MESSAGES = frozenset(
    [f"Timer {name!r} succeeded." for name in QUIET_TIMERS]
    + [f"Handler {name!r} succeeded." for name in QUIET_HANDLERS]
    + list(QUIET_SUMMARIES)
)


class QuietTimerSuccesses(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.INFO and record.msg in _QUIET_MESSAGES)


def quiet_timer_successes(logger_name: str = "kopf.objects") -> None:
    """Install the filter on kopf's per-object logger (idempotent)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(existing, QuietTimerSuccesses) for existing in logger.filters):
        logger.addFilter(QuietTimerSuccesses())


def configure(log_format: str, *, verbose: bool) -> None:
    """kopf's log handler for ``log_format`` (``plain``, ``full`` or ``json``), with each line's
    resource named (see the module docstring); without ``verbose``, the lines above dropped."""
    import kopf

    # None: kopf's own choice, a prefix on text formats and none on JSON (its ``object`` field).
    kopf.configure(verbose=verbose, log_format=kopf.LogFormat[log_format.upper()], log_prefix=None)
    if not verbose:
        quiet_timer_successes()
