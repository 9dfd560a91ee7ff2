"""A handler's progress wait (StillWaiting) is logged at INFO by kopf's object logger; a real
temporary failure stays an error."""

from __future__ import annotations

import logging

import pytest

from kafka_zk_operator.handlers import waiting


def _record(message: str) -> logging.LogRecord:
    return logging.LogRecord(waiting.KOPF_OBJECT_LOGGER, logging.ERROR, __file__, 1, message, None, None)


def test_a_wait_is_logged_at_info() -> None:
    wait = waiting.StillWaiting("asked Kafka to delete topic 'orders'", delay=2)
    record = _record(f"Handler 'kafkatopic_delete' failed temporarily: {wait}")
    assert waiting.WaitsAreNotErrors().filter(record)
    assert (record.levelno, record.levelname) == (logging.INFO, "INFO")
    assert wait.delay == 2


def test_a_real_failure_stays_an_error() -> None:
    record = _record("Handler 'kafkatopic_update' failed temporarily: ZooKeeper is unreachable")
    assert waiting.WaitsAreNotErrors().filter(record)
    assert record.levelno == logging.ERROR


def test_kopf_logs_a_wait_at_info(caplog: pytest.LogCaptureFixture) -> None:
    waiting.install()
    waiting.install()  # idempotent
    logger = logging.getLogger(waiting.KOPF_OBJECT_LOGGER)
    assert sum(isinstance(f, waiting.WaitsAreNotErrors) for f in logger.filters) == 1
    with caplog.at_level(logging.INFO, logger=waiting.KOPF_OBJECT_LOGGER):
        logger.error("Handler 'x' failed temporarily: %s", waiting.StillWaiting("batch 2 settling", delay=5))
    assert [r.levelname for r in caplog.records] == ["INFO"]
