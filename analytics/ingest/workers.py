"""Worker processes: each runs the decode, batch and store stages on the chunks it is handed.

The pipeline (analytics/ingest/pipeline.py) reads and cuts the lines; a worker turns a chunk into
one batch (analytics/ingest/batches.py) and writes it in its own connection and transaction
(analytics/ingest/store.py), then sends back the counts. A worker is forked from the command's
process, with Django set up, or started afresh ("spawn"): then these functions are looked up by
name in a process where Django is not set up yet, so this module imports nothing of the
analytics stages until `start` has set Django up.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analytics.ingest.batches import Chunk, IngestReport
    from analytics.ingest.store import Store

WRITE_ATTEMPTS = 3
"""Times a batch is written that PostgreSQL chose as a deadlock's victim."""

_failed: BaseException | None = None
"""Why `start` failed: raised by every `ingest` instead (a pool restarts a worker whose initializer
raises, forever; a task's error reaches the caller)."""
_store: Store | None = None
_horizon: datetime | None = None


def start(horizon: datetime | None, database: str) -> None:
    """Set Django up on the caller's database (`database`: its name, which a test run changes)
    unless the worker was forked with Django set up; then the worker's store and the retention
    horizon."""
    global _failed, _store, _horizon
    try:
        from django.apps import apps

        if not apps.ready:  # started afresh
            import django
            from django.conf import settings

            settings.DATABASES["default"]["NAME"] = database
            django.setup()
        from analytics.ingest.store import Store

        _store, _horizon = Store(), horizon
    except Exception as error:
        _failed = error


def started() -> None:
    """Nothing, once this worker has started (or why it could not): the pipeline stores chunks
    itself until one worker has."""
    if _failed is not None:
        raise _failed


def ingest(chunk: Chunk) -> IngestReport:
    """Decode, batch and store one chunk in this worker; return its counts."""
    if _failed is not None:
        raise _failed
    assert _store is not None
    report = store_chunk(chunk, _store, _horizon)
    report.worker_batches = report.batches
    return report


def store_chunk(chunk: Chunk, store: Store, horizon: datetime | None) -> IngestReport:
    """Decode and batch one chunk (one batch: the chunk was cut to size already), with the
    cyclic garbage collector paused, and write it; return its counts.

    Two workers whose batches hold the same lines in another order (an unsorted log ingested twice
    at once) can each wait for a row the other inserted: PostgreSQL then rolls one transaction
    back, and its batch is written again, which is safe (the transaction left nothing)."""
    from django.db import OperationalError
    from psycopg.errors import DeadlockDetected

    from analytics.ingest.batches import IngestReport, batches
    from analytics.ingest.sources import BrokenLog

    before, lines, broken = chunk

    def numbered() -> Iterator[bytes]:
        yield from lines
        if broken is not None:
            raise BrokenLog(broken)

    report = IngestReport()
    with _no_cycle_collection():
        parsed = list(batches(numbered(), store, report, size=len(lines) + 1, max_bytes=sys.maxsize, horizon=horizon))
    for batch in parsed:
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                report.add_new(batch, store.write(batch))
                break
            except OperationalError as error:
                if attempt == WRITE_ATTEMPTS or not isinstance(error.__cause__, DeadlockDetected):
                    raise
    report.malformed_lines = [(before + number, reason) for number, reason in report.malformed_lines]
    report.lines += before
    return report


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector paused (reference counting still frees every row): parsing a
    chunk keeps thousands of rows alive until it ends, none in a cycle, and the young collections
    that would traverse them again and again took about 8 % of the parse (docs/adr/0027-ingestion.md)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
