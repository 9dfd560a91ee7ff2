"""Keep kopf's per-run success lines of the periodic timers, of the index feeders and of the
KafkaTopic resume out of the operator's log.

kopf logs ``Timer 'partitionreassignment_poll' succeeded.`` at INFO for every run of every timer,
and, when the operator's indexes are fed by event handlers (``handlers.event_feed``'s fallback),
``Handler 'kafkatopic_events' succeeded.`` for every event of every resource (40,000 lines in a
burst of 10,000 KafkaTopics): lines that say nothing happened. So are ``Handler 'kafkatopic_resume' succeeded.`` and ``Resuming
is processed: 1 succeeded; 0 failed.``: two lines per KafkaTopic each time the operator starts or
takes over (20,000 for 10,000 topics, about 5 % of the event loop's time in that adoption), for
a reconcile that most often finds the topic in sync; what one changes is in its Events and
status. (A settled KafkaTopic is now resumed without kopf, ``handlers.kafkatopic_adoption``: the
lines remain for those kopf resumes.) What a poll finds is already in the resource's status, its Events and the metrics
(``kzo_reconciliations_total``). (The KafkaTopic resync is no kopf timer:
``handlers.kafkatopic_resync``.) ``--verbose`` keeps them. Failures and retries are logged by
kopf at WARNING or ERROR and always pass, and so do the success lines of the create, update and
delete handlers.
"""

from __future__ import annotations

import logging

#: The timers whose successful runs are not logged.
QUIET_TIMERS = ("partitionreassignment_poll",)
#: The handlers whose successful runs are not logged: the fallback index feeders, the KafkaTopic resume.
QUIET_HANDLERS = ("kafkatopic_events", "partitionreassignment_events", "kafkatopic_resume")
#: kopf's summary of a resume whose one handler succeeded (any kind).
QUIET_SUMMARIES = ("Resuming is processed: 1 succeeded; 0 failed.",)
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
