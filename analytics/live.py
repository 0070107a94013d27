"""The live path: the server writes its app-status and tool-call events to the database as it logs them.

`DatabaseHandler` is one logging handler on the `tools.app_status`, `tools.calls` and
`tools.mcp.requests` (the exchange events: sessions started, listings, refused requests) loggers
(installed by `AnalyticsConfig.ready()` when `ANALYTICS_LIVE_INGEST` is on). `emit` formats the record
exactly as the stderr log line and puts it on a bounded queue without waiting: a tool call
never waits for the database. When the queue is full the line is dropped and counted; the
stderr log still has it, and ingesting that log later fills the gap.

One background thread per process takes the lines off the queue, gathers them for up to
`linger` seconds (or `batch_size` lines) and stores them with the ingestion pipeline, as
`manage.py ingest_app_status` does (analytics/ingest/pipeline.py). A line has the same identity on both paths, so the
two can overlap: whatever one stored, the other adds nothing for.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable

from django.db import connection

from analytics.ingest.pipeline import ingest
from core import app_status, calls, exchange
from core.events import log
from core.logging import JsonLinesFormatter
from core.operations import LiveIngestDropped, LiveIngestFailed

calls_logger = logging.getLogger(calls.LOGGER)
app_status_logger = logging.getLogger(app_status.LOGGER)
exchange_logger = logging.getLogger(exchange.LOGGER)

Write = Callable[[list[bytes]], object]


class DatabaseHandler(logging.Handler):
    """Queue app-status lines for a background writer; never block the caller."""

    def __init__(
        self,
        *,
        queue_size: int = 10_000,
        batch_size: int = 1_000,
        linger: float = 1.0,
        write: Write = ingest,
    ) -> None:
        super().__init__()
        self.setFormatter(JsonLinesFormatter())
        self.batch_size = batch_size
        self.linger = linger
        self.dropped = 0
        """Lines not queued because the queue was full."""
        self.lost = 0
        """Lines queued but not stored because writing their batch failed."""
        self._write = write
        self._queue: queue.Queue[bytes | threading.Event | None] = queue.Queue(maxsize=queue_size)
        self._worker: threading.Thread | None = None
        self._worker_pid = 0
        self._start = threading.Lock()
        self._dropped_reported = 0

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record).encode()
        except Exception:
            self.handleError(record)
            return
        self._ensure_worker()
        try:
            self._queue.put_nowait(line)
        except queue.Full:
            self.dropped += 1

    # Handler.flush returns None; this one also says whether the queue drained (logging ignores it).
    def flush(self, timeout: float = 5.0) -> bool:  # type: ignore[override]
        """Wait until every line queued so far is written (or failed); False on timeout."""
        if self._worker is None:
            return True
        done = threading.Event()
        try:
            self._queue.put(done, timeout=timeout)
        except queue.Full:
            return False
        return done.wait(timeout)

    def close(self) -> None:
        """Write what is queued (waiting up to 5 s), then stop the writer."""
        if self._worker is not None and self.flush():
            self._queue.put_nowait(None)
            self._worker.join(5)
            self._worker = None
        super().close()

    def _ensure_worker(self) -> None:
        # Started on first use, and again in a forked child (threads do not survive a fork).
        if self._worker is not None and self._worker_pid == os.getpid():
            return
        with self._start:
            if self._worker is None or self._worker_pid != os.getpid():
                self._worker_pid = os.getpid()
                self._worker = threading.Thread(target=self._run, name="analytics-live", daemon=True)
                self._worker.start()

    def _run(self) -> None:
        running = True
        while running:
            lines: list[bytes] = []
            waiting: list[threading.Event] = []
            item = self._queue.get()
            deadline = time.monotonic() + self.linger
            while True:
                if item is None:  # close(): write what was gathered, then stop
                    running = False
                    break
                if isinstance(item, threading.Event):  # flush(): write what is queued up to it
                    waiting.append(item)
                    break
                lines.append(item)
                if len(lines) >= self.batch_size:
                    break
                try:
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
            if lines:
                self._write_batch(lines)
            if (dropped := self.dropped) > self._dropped_reported:
                log(LiveIngestDropped(lines_dropped=dropped - self._dropped_reported))
                self._dropped_reported = dropped
            for event in waiting:
                event.set()
        connection.close()  # this thread's own connection

    def _write_batch(self, lines: list[bytes]) -> None:
        try:
            self._write(lines)
        except Exception:
            self.lost += len(lines)
            log(LiveIngestFailed(lines_lost=len(lines)), exc_info=True)
            connection.close()  # a broken connection is opened anew for the next batch


def install(*targets: logging.Logger) -> DatabaseHandler:
    """Attach one DatabaseHandler to the app-status, tool-call and exchange loggers (or `targets`); again:
    the one already there."""
    targets = targets or (app_status_logger, calls_logger, exchange_logger)
    handler = (
        next(
            (found for target in targets for found in target.handlers if isinstance(found, DatabaseHandler)),
            None,
        )
        or DatabaseHandler()
    )
    for target in targets:
        if handler not in target.handlers:
            target.addHandler(handler)
    return handler
