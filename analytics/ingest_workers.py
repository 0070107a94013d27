"""The entry points of the ingestion's worker processes (analytics/services.py, `_ingest_in_workers`).

A worker process is forked from the command's, with Django set up, or started afresh ("spawn"):
then these functions are looked up by name in a process where Django is not set up yet, so this
module imports nothing of Django's models until `start` has set Django up.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analytics.services import Chunk, IngestReport


_failed: BaseException | None = None
"""Why `start` failed: raised by every `ingest` instead (a pool restarts a worker whose initializer
raises, forever; a task's error reaches the caller)."""


def start(horizon: datetime | None, database: str) -> None:
    """Set Django up on the caller's database (`database`: its name, which a test run changes)
    unless the worker was forked with Django set up, then the worker's state (the retention
    horizon, the COPY encoder)."""
    global _failed
    try:
        from django.apps import apps

        if not apps.ready:  # started afresh
            import django
            from django.conf import settings

            settings.DATABASES["default"]["NAME"] = database
            django.setup()
        from analytics import services

        services.start_worker(horizon)
    except Exception as error:
        _failed = error


def started() -> None:
    """Nothing, once this worker has started (or why it could not): the caller stores chunks
    itself until one worker has."""
    if _failed is not None:
        raise _failed


def ingest(chunk: Chunk) -> IngestReport:
    """Parse one chunk of lines and store it; return its counts."""
    if _failed is not None:
        raise _failed
    from analytics import services

    return services.ingest_chunk(chunk)
