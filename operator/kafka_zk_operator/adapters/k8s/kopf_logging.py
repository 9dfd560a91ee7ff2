"""Keep kopf's per-run success line of the periodic timers out of the operator's log.

kopf logs ``Timer 'kafkatopic_resync' succeeded.`` at INFO for every run of every timer: with
10,000 KafkaTopics and a 30 s resync, 333 lines a second that say nothing happened. What a resync
finds is already in the resource's status, its Events and the metrics
(``kzo_reconciliations_total``, ``kzo_resyncs_unchanged_total``). ``--verbose`` keeps them.
Failures and retries are logged by kopf at WARNING or ERROR and always pass.
"""

from __future__ import annotations

import logging

#: The timers whose successful runs are not logged.
QUIET_TIMERS = ("kafkatopic_resync", "partitionreassignment_poll")
_QUIET_MESSAGES = frozenset(f"Timer {name!r} succeeded." for name in QUIET_TIMERS)


class QuietTimerSuccesses(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.INFO and record.msg in _QUIET_MESSAGES)


def quiet_timer_successes(logger_name: str = "kopf.objects") -> None:
    """Install the filter on kopf's per-object logger (idempotent)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(existing, QuietTimerSuccesses) for existing in logger.filters):
        logger.addFilter(QuietTimerSuccesses())
