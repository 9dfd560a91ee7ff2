"""adapters.k8s.kopf_logging: the per-run success lines of the timers, of the index feeders and
of the KafkaTopic resume are dropped, nothing else."""

from __future__ import annotations

import logging

import pytest

from kafka_zk_operator.adapters.k8s import kopf_logging


def test_only_info_successes_of_the_periodic_timers_index_feeders_and_resumes_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("kopf.objects.test-quiet")
    kopf_logging.quiet_timer_successes(logger.name)
    kopf_logging.quiet_timer_successes(logger.name)
    assert sum(isinstance(f, kopf_logging.QuietTimerSuccesses) for f in logger.filters) == 1
    with caplog.at_level(logging.DEBUG, logger=logger.name):
        logger.info("Timer 'partitionreassignment_poll' succeeded.")
        logger.info("Timer 'another_timer' succeeded.")
        logger.info("Handler 'kafkatopic_create' succeeded.")
        logger.info("Handler 'kafkatopic_events' succeeded.")
        logger.info("Handler 'partitionreassignment_events' succeeded.")
        logger.info("Handler 'kafkatopic_resume' succeeded.")
        logger.info("Resuming is processed: 1 succeeded; 0 failed.")
        logger.info("Resuming is processed: 0 succeeded; 1 failed.")
        logger.info("Handler 'partitionreassignment_resume' succeeded.")
        logger.error("Handler 'kafkatopic_resume' failed temporarily: ZooKeeper is not reachable.")
        logger.error("Handler 'kafkatopic_events' failed with an exception. Will ignore.")
        logger.warning("Timer 'kafkatopic_resync' succeeded.")
        logger.error("Timer 'kafkatopic_resync' failed with an exception. Will retry.")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", "Timer 'another_timer' succeeded."),
        ("INFO", "Handler 'kafkatopic_create' succeeded."),
        ("INFO", "Resuming is processed: 0 succeeded; 1 failed."),
        ("INFO", "Handler 'partitionreassignment_resume' succeeded."),
        ("ERROR", "Handler 'kafkatopic_resume' failed temporarily: ZooKeeper is not reachable."),
        ("ERROR", "Handler 'kafkatopic_events' failed with an exception. Will ignore."),
        ("WARNING", "Timer 'kafkatopic_resync' succeeded."),
        ("ERROR", "Timer 'kafkatopic_resync' failed with an exception. Will retry."),
    ]
