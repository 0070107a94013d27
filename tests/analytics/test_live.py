"""The live path: app-status events written to the database as they are logged, off the request path."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest
from django.apps import apps

from analytics.ingest.pipeline import ingest as events_ingest
from analytics.live import DatabaseHandler, calls_logger, exchange_logger, install
from analytics.models import AppStatusEvent, ToolCallEvent
from core import app_status
from core.app_status import Drawn
from core.calls import ToolCall
from core.events import log
from core.logging import JsonLinesFormatter
from tests.analytics.conftest import ingest

logger = logging.getLogger(app_status.LOGGER)


class Lines(logging.Handler):
    """What the stderr handler writes, kept in a list."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JsonLinesFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def attached() -> Iterator[list[logging.Handler]]:
    """Handlers attached to the app-status logger for one test (at INFO, kept off stderr)."""
    handlers: list[logging.Handler] = []
    level, propagate = logger.level, logger.propagate
    logger.setLevel(logging.INFO)
    logger.propagate = False
    calls_level, calls_propagate = calls_logger.level, calls_logger.propagate
    calls_logger.setLevel(logging.INFO)
    calls_logger.propagate = False
    yield handlers
    for handler in handlers:
        for target in (logger, calls_logger, exchange_logger):
            target.removeHandler(handler)
        handler.close()
    logger.setLevel(level)
    logger.propagate = propagate
    calls_logger.setLevel(calls_level)
    calls_logger.propagate = calls_propagate


def record(message: str = "App drawn") -> logging.LogRecord:
    return logging.makeLogRecord({"name": "tools.app_status", "msg": message, "levelno": logging.INFO})


@pytest.mark.django_db(transaction=True)
def test_logged_events_reach_the_database_in_one_batch_and_a_log_ingested_later_adds_nothing(attached):
    batches: list[int] = []

    def write(lines: list[bytes]) -> None:
        batches.append(len(lines))
        events_ingest(lines)

    live, stderr = DatabaseHandler(linger=60, write=write), Lines()
    attached += [live, stderr]
    for handler in attached:
        logger.addHandler(handler)

    for client in ("claude-ai", "ChatGPT", "goose"):
        log(Drawn(tool="tomtom-routing", client=client, source="inline"))
    assert live.flush()

    assert batches == [3]
    assert sorted(AppStatusEvent.objects.values_list("client", flat=True)) == ["ChatGPT", "claude-ai", "goose"]
    assert ingest(*stderr.lines).new == 0


@pytest.mark.django_db(transaction=True)
def test_tool_call_lines_take_the_live_path_too(attached):
    live, stderr = DatabaseHandler(linger=60), Lines()
    attached += [live, stderr]
    for handler in attached:
        calls_logger.addHandler(handler)

    log(
        ToolCall(
            tool="tomtom-geocode",
            client="goose",
            outcome="ok",
            backend="tomtom-maps",
            upstream_calls=1,
            upstream_ms=40.0,
            total_ms=52.5,
            bytes=900,
        )
    )
    assert live.flush()

    assert list(ToolCallEvent.objects.values_list("client", "tool", "total_ms")) == [("goose", "tomtom-geocode", 52.5)]
    assert ingest(*stderr.lines).tool_calls_new == 0


def test_a_full_queue_drops_lines_instead_of_making_the_caller_wait():
    writing, release = threading.Event(), threading.Event()
    written: list[int] = []

    def slow_write(lines: list[bytes]) -> None:
        writing.set()
        release.wait(10)
        written.append(len(lines))

    handler = DatabaseHandler(queue_size=2, batch_size=1, linger=0, write=slow_write)
    handler.handle(record())
    assert writing.wait(5)  # the writer holds the first line; the queue has room for two

    for _ in range(5):
        handler.handle(record())
    release.set()

    assert handler.dropped == 3
    assert handler.flush()
    assert written == [1, 1, 1]


def test_a_batch_that_cannot_be_written_is_counted_as_lost_and_the_writer_goes_on():
    def broken(lines: list[bytes]) -> None:
        raise RuntimeError("database down")

    handler = DatabaseHandler(linger=0, write=broken)
    handler.handle(record())
    assert handler.flush()
    handler.handle(record())
    assert handler.flush()

    assert handler.lost == 2


def test_the_setting_installs_one_handler_on_the_app_status_tool_call_and_exchange_loggers(settings, attached):
    settings.ANALYTICS_LIVE_INGEST = True

    apps.get_app_config("analytics").ready()
    apps.get_app_config("analytics").ready()
    attached += [h for h in logger.handlers if isinstance(h, DatabaseHandler)]

    assert len(attached) == 1
    assert [h for h in calls_logger.handlers if isinstance(h, DatabaseHandler)] == attached
    assert [h for h in exchange_logger.handlers if isinstance(h, DatabaseHandler)] == attached
    assert install() is attached[0]
