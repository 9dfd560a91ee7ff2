"""Keep kopf's per-run success lines of the periodic timers and of the index feeders out of the
operator's log.

kopf logs ``Timer 'partitionreassignment_poll' succeeded.`` at INFO for every run of every timer,
and ``Handler 'kafkatopic_events' succeeded.`` for every event of every resource (the feeders of
the operator's indexes, ``handlers.indexes``: 40,000 lines in a burst of 10,000 KafkaTopics):
lines that say nothing happened. What a poll finds is already in the resource's status, its
Events and the metrics (``kzo_reconciliations_total``). (The KafkaTopic resync is no kopf timer:
``handlers.kafkatopic_resync``.) ``--verbose`` keeps them. Failures and retries are logged by
kopf at WARNING or ERROR and always pass.
"""

from __future__ import annotations

import logging

#: The timers whose successful runs are not logged.
QUIET_TIMERS = ("partitionreassignment_poll",)
#: The event handlers whose successful runs are not logged.
QUIET_EVENT_HANDLERS = ("kafkatopic_events", "partitionreassignment_events")
_QUIET_MESSAGES = frozenset(
    [f"Timer {name!r} succeeded." for name in QUIET_TIMERS]
    + [f"Handler {name!r} succeeded." for name in QUIET_EVENT_HANDLERS]
)


class QuietTimerSuccesses(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.INFO and record.msg in _QUIET_MESSAGES)


def quiet_timer_successes(logger_name: str = "kopf.objects") -> None:
    """Install the filter on kopf's per-object logger (idempotent)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(existing, QuietTimerSuccesses) for existing in logger.filters):
        logger.addFilter(QuietTimerSuccesses())
