"""Transaction-scoped advisory locks on PostgreSQL, for joins across batches.

A join whose figures depend on stored events of the same key (a session's calls for the
self-correction, a call's outdated-input lines for who still calls) reads those events before it
inserts its batch. Two writers storing events of one key at once would each miss the other's, so
each first locks every key of its batch, in key order (two writers cannot wait on each other),
until its transaction ends; the other writer's events are then committed and read, or not stored
yet and will read these. SQLite has one writer at a time and takes no lock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.db import connection

SESSIONS = 0x636F7272
"""The lock space of client sessions (analytics/ingest/corrections.py)."""
CALLS = 0x6F6C6463
"""The lock space of request ids (analytics/ingest/old_calls.py)."""


def key_of(text: str) -> int:
    """A key's 32-bit lock number within its space: 32 bits of its SHA-256 (two keys sharing one
    only wait for each other)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big", signed=True)


def lock(space: int, keys: Iterable[str]) -> None:
    """On PostgreSQL, lock each of `keys` in `space` until the transaction ends, in number order."""
    if connection.vendor != "postgresql":
        return
    numbers = sorted({key_of(key) for key in keys})
    if numbers:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_advisory_xact_lock(%s, key)) FROM unnest(%s::integer[]) AS key", [space, numbers]
            )
