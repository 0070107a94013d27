"""Log lines exactly as the server writes them, at chosen times, and a way to ingest them."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connections

from analytics.ingest.batches import IngestReport
from analytics.ingest.pipeline import ingest as ingest_lines
from core import events
from core.app_status import (
    AppData,
    AppStatusEvent,
    DecodeFailed,
    Drawn,
    Failed,
    FetchFailed,
    HostDropped,
    OutdatedCall,
    RetiredToolCalled,
    Simplification,
    TooLarge,
)
from core.calls import ToolCall
from core.events import Event
from core.logging import JsonLinesFormatter


class _Capture(logging.Handler):
    def __init__(self, at: datetime) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(JsonLinesFormatter())
        self.at = at
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        record.created = self.at.timestamp()
        self.lines.append(self.format(record))


@contextlib.contextmanager
def _captured(at: datetime, logger: logging.Logger) -> Iterator[_Capture]:
    handler = _Capture(at)
    level, propagate = logger.level, logger.propagate
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def written(event: Event, at: str, **extra: Any) -> str:
    """The line the server writes for `event`, logged at `at` (ISO 8601, UTC); `extra` fields, which
    the event does not declare, follow its own (as a newer server's would)."""
    with _captured(datetime.fromisoformat(at).replace(tzinfo=UTC), logging.getLogger(event.LOGGER)) as capture:
        events.log(event)
    (text,) = capture.lines
    if not extra:
        return text
    return json.dumps({**json.loads(text), **extra}, ensure_ascii=False, separators=(",", ":"))


def line(
    event: type[AppStatusEvent],
    at: str,
    *,
    tool: str = "tomtom-routing",
    client: str = "claude-ai",
    user_agent: str | None = "claude-ai/1.0",
    request_id: str = "req-1",
    **fields: Any,
) -> str:
    """One app-status line of `event`'s kind, logged at `at` (ISO 8601, UTC). Fields its kind does
    not declare are written after its own (see `written`)."""
    declared = {name: value for name, value in fields.items() if name in event.__struct_fields__}
    if isinstance(simplification := declared.get("simplification"), dict):
        declared["simplification"] = Simplification(**simplification)
    extra = {name: value for name, value in fields.items() if name not in declared}
    status = event(tool=tool, client=client, user_agent=user_agent, request_id=request_id, **declared)
    return written(status, at, **extra)


def call_line(
    at: str,
    *,
    tool: str = "tomtom-routing",
    client: str = "claude-ai",
    outcome: str = "ok",
    backend: str = "tomtom-orbis-maps",
    upstream_calls: int = 1,
    upstream_ms: float = 80.0,
    total_ms: float = 100.0,
    bytes: int = 2_000,
    tenant: str | None = None,
    **extra: Any,
) -> str:
    """One `Tool call` line as the dispatcher's call log writes it, logged at `at` (UTC)."""
    call = ToolCall(
        tool=tool,
        client=client,
        user_agent=f"{client}/1.0",
        transport="http",
        tenant=tenant,
        backend=backend,
        outcome=outcome,
        upstream_calls=upstream_calls,
        upstream_ms=upstream_ms,
        total_ms=total_ms,
        bytes=bytes,
        request_id="req-1",
    )
    return written(call, at, **extra)


def log(*lines: str) -> bytes:
    """A log file's bytes: one line each, newline-terminated."""
    return "".join(f"{text}\n" for text in lines).encode()


def ingest(*lines: str, batch_size: int = 5000) -> IngestReport:
    return ingest_lines([text.encode() + b"\n" for text in lines], batch_size=batch_size)


def ingest_concurrently(*parts: list[str], batch_size: int) -> None:
    """Each part ingested by a writer of its own (a thread with its own connection), all started
    at once: two replicas or workers storing lines of one session. Raises what a writer raised."""
    start = threading.Barrier(len(parts))
    failures: list[BaseException] = []

    def write(lines: list[str]) -> None:
        try:
            start.wait()
            ingest(*lines, batch_size=batch_size)
        except BaseException as error:  # raised below, on the test's thread
            failures.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=write, args=(part,)) for part in parts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


D1, D2 = "2026-11-02", "2026-11-03"
"""A small known data set: four hosts, four tools, two days (tests assert its reports whole)."""
KNOWN_DATA = [
    line(AppData, f"{D1}T10:00:00", delivery="inline", raw_bytes=9_000),  # not a report stat
    line(Drawn, f"{D1}T10:00:00", source="inline"),
    line(Drawn, f"{D1}T10:05:00", source="inline"),
    line(Drawn, f"{D1}T10:10:00", tool="tomtom-geocode", source="inline"),
    line(Drawn, f"{D1}T10:06:00", source="inline").replace("App drawn", "App drawn twice"),  # unknown
    line(Failed, f"{D1}T11:00:00", source="inline", stage="render", error="WebGL context lost"),
    line(HostDropped, f"{D1}T10:20:00", client="cursor-vscode", source="inline"),
    line(Failed, f"{D1}T10:20:01", client="cursor-vscode", source="none", stage="result"),
    line(HostDropped, f"{D1}T10:40:00", client="cursor-vscode", source="inline"),
    line(Failed, f"{D1}T10:40:01", client="cursor-vscode", source="none", stage="result"),
    line(TooLarge, f"{D1}T12:00:00", client="goose", raw_bytes=900_000, result_chars=160_000),
    line(
        RetiredToolCalled, f"{D1}T12:30:00", client="goose", tool="tomtom-fuzzy-search", replaced_by=["tomtom-geocode"]
    ),
    line(FetchFailed, f"{D1}T10:00:00", client="ChatGPT", tool="tomtom-data-viz", error_code="upstream"),
    line(Failed, f"{D1}T10:00:01", client="ChatGPT", tool="tomtom-data-viz", source="data_url", stage="fetch"),
    line(DecodeFailed, f"{D1}T10:30:00", client="ChatGPT", tool="tomtom-data-viz", source="inline", error="bad"),
    line(Failed, f"{D1}T10:30:01", client="ChatGPT", tool="tomtom-data-viz", source="inline", stage="decode"),
    line(Drawn, f"{D1}T11:00:00", client="ChatGPT", tool="tomtom-data-viz", source="data_url"),
    line(Drawn, f"{D2}T09:00:00", source="inline"),
    line(Failed, f"{D2}T09:00:00", client="cursor-vscode", source="none", stage="result"),
    line(
        RetiredToolCalled, f"{D2}T09:30:00", client="goose", tool="tomtom-fuzzy-search", replaced_by=["tomtom-geocode"]
    ),
    line(
        OutdatedCall,
        f"{D2}T09:45:00",
        client="ChatGPT",
        tool="tomtom-traffic",
        input="language",
        change="string_now_list",
    ),
]


@pytest.fixture
def known_data() -> None:
    ingest(*KNOWN_DATA)


KNOWN_CALLS = [
    # claude-ai, routing: four calls, one unavailable
    call_line(f"{D1}T10:00:00", total_ms=100, upstream_ms=80),
    call_line(f"{D1}T10:10:00", total_ms=300, upstream_ms=250, upstream_calls=2, bytes=4_000),
    call_line(f"{D1}T10:20:00", total_ms=15, upstream_ms=0, upstream_calls=0, outcome="invalid_arguments", bytes=200),
    call_line(
        f"{D1}T11:00:00", total_ms=1_500, upstream_ms=1_450, outcome="unavailable", bytes=300, backend="tomtom-maps"
    ),
    # claude-code (family Claude Code), geocode
    call_line(f"{D1}T10:30:00", client="claude-code", tool="tomtom-geocode", total_ms=40, upstream_ms=30, bytes=1_000),
    # Two ChatGPT versions, one family
    call_line(f"{D1}T10:00:00", client="ChatGPT/1.2026.1", tool="tomtom-geocode", total_ms=60, upstream_ms=45),
    call_line(
        f"{D2}T09:00:00",
        client="ChatGPT/1.2026.2",
        tool="tomtom-geocode",
        total_ms=70,
        upstream_ms=55,
        outcome="retry_later",
        bytes=250,
    ),
    # An unknown host stays as it is
    call_line(f"{D2}T09:30:00", client="fleet-agent", tool="tomtom-routing", total_ms=900, upstream_ms=850),
]
"""Tool calls on the two days of KNOWN_DATA (tests assert their reports whole)."""


@pytest.fixture
def known_calls() -> None:
    ingest(*KNOWN_CALLS)
