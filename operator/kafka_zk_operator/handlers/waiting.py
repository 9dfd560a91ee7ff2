"""Progress waits, told apart from failures in the log.

kopf runs a handler again only when it raises ``kopf.TemporaryError``, and logs every such raise
at ERROR level ("Handler 'x' failed temporarily: ...", also posted as an Event). A deletion that
waits for Kafka to finish deleting the topic, or for a reassignment batch to settle, is progress,
not a failure: those handlers raise :class:`StillWaiting`, and :class:`WaitsAreNotErrors`, a filter
on kopf's object logger, logs them at INFO. Real failures (ZooKeeper unreachable, a write refused)
keep raising plain ``TemporaryError`` and stay errors, so an alert on error-level lines means
something.
"""

from __future__ import annotations

import logging

import kopf

#: How a wait's message starts; kopf puts the exception's text after "failed temporarily: ".
MARK = "still waiting: "

#: The logger kopf logs handler outcomes to (``kopf._core.actions.loggers``).
KOPF_OBJECT_LOGGER = "kopf.objects"


class StillWaiting(kopf.TemporaryError):
    """Run the handler again after ``delay`` seconds: it is waiting for Kafka, nothing failed."""

    def __init__(self, message: str, delay: float) -> None:
        super().__init__(MARK + message, delay=delay)


class WaitsAreNotErrors(logging.Filter):
    """Log kopf's "failed temporarily" line for a :class:`StillWaiting` at INFO, not ERROR."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.ERROR and f"failed temporarily: {MARK}" in record.getMessage():
            record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        return True


def install() -> None:
    """Add the filter to kopf's object logger (once)."""
    logger = logging.getLogger(KOPF_OBJECT_LOGGER)
    if not any(isinstance(f, WaitsAreNotErrors) for f in logger.filters):
        logger.addFilter(WaitsAreNotErrors())
