"""adapters.k8s.kopf_logging: the per-run success lines of the timers, of the index feeders and
of the KafkaTopic resume are dropped, nothing else; every line about a resource names it."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import kopf
import pytest

from kafka_zk_operator.adapters.k8s import kopf_logging
from kafka_zk_operator.domain.crd_identity import API_VERSION


def test_only_info_successes_of_the_timers_index_feeders_resumes_and_one_handler_summaries_are_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
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
        logger.info("Creation is processed: 1 succeeded; 0 failed.")
        logger.info("Updating is processed: 1 succeeded; 0 failed.")
        logger.info("Deletion is processed: 1 succeeded; 0 failed.")
        logger.info("Deletion is processed: 0 succeeded; 1 failed.")
        logger.info("Handler 'partitionreassignment_resume' succeeded.")
        logger.error("Handler 'kafkatopic_resume' failed temporarily: ZooKeeper is not reachable.")
        logger.error("Handler 'kafkatopic_events' failed with an exception. Will ignore.")
        logger.warning("Timer 'kafkatopic_resync' succeeded.")
        logger.error("Timer 'kafkatopic_resync' failed with an exception. Will retry.")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", "Timer 'another_timer' succeeded."),
        ("INFO", "Handler 'kafkatopic_create' succeeded."),
        ("INFO", "Resuming is processed: 0 succeeded; 1 failed."),
        ("INFO", "Deletion is processed: 0 succeeded; 1 failed."),
        ("INFO", "Handler 'partitionreassignment_resume' succeeded."),
        ("ERROR", "Handler 'kafkatopic_resume' failed temporarily: ZooKeeper is not reachable."),
        ("ERROR", "Handler 'kafkatopic_events' failed with an exception. Will ignore."),
        ("WARNING", "Timer 'kafkatopic_resync' succeeded."),
        ("ERROR", "Timer 'kafkatopic_resync' failed with an exception. Will retry."),
    ]


@pytest.fixture
def root_logging() -> Iterator[None]:
    """The root and asyncio loggers as they were, after a test configured kopf's logging."""
    root, asyncio_logger = logging.getLogger(), logging.getLogger("asyncio")
    saved = (root.handlers[:], root.level, asyncio_logger.handlers[:], asyncio_logger.propagate)
    yield
    root.handlers[:], asyncio_logger.handlers[:] = saved[0], saved[2]
    root.setLevel(saved[1])
    asyncio_logger.propagate = saved[3]


def _log_about_a_resource(message: str) -> None:
    """A line of kopf's per-object logger, as a handler's success is logged."""
    body = kopf.Body(
        {
            "apiVersion": API_VERSION,
            "kind": "KafkaTopic",
            "metadata": {"namespace": "kafka", "name": "orders", "uid": "u-1"},
        }
    )
    kopf.ObjectLogger(body=body, settings=kopf.OperatorSettings()).info(message)


@pytest.mark.usefixtures("root_logging")
@pytest.mark.parametrize("log_format", ["plain", "full"])
def test_a_text_line_about_a_resource_starts_with_its_namespace_and_name(
    log_format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kopf_logging.configure(log_format, verbose=False)
    _log_about_a_resource("Handler 'kafkatopic_create' succeeded.")
    _log_about_a_resource("Handler 'kafkatopic_resume' succeeded.")  # still dropped
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].endswith("[kafka/orders] Handler 'kafkatopic_create' succeeded."), lines


@pytest.mark.usefixtures("root_logging")
def test_a_json_line_about_a_resource_carries_it_as_a_field(capsys: pytest.CaptureFixture[str]) -> None:
    kopf_logging.configure("json", verbose=False)
    _log_about_a_resource("Handler 'kafkatopic_create' succeeded.")
    (line,) = capsys.readouterr().err.splitlines()
    record = json.loads(line)
    assert record["message"] == "Handler 'kafkatopic_create' succeeded."
    assert (record["object"]["namespace"], record["object"]["name"]) == ("kafka", "orders")
