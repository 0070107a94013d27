"""Fixed-window rate limits shared by every replica: `allow(bucket, who, limit, window_seconds)`.

One row per (bucket, who) in `RateBucket`, written by one statement (an `INSERT ... ON CONFLICT
DO UPDATE ... RETURNING`, which SQLite 3.35+ and PostgreSQL both run), so replicas behind a load
balancer count together without a lock or a cache server, and two requests arriving at once
cannot both read the old count. The window is fixed (epoch seconds // window_seconds): across a
window's edge a caller may get up to twice the limit within seconds, as with the tenants' quotas.

`who` (a client address) is stored only as a truncated SHA-256, so the table does not keep
addresses in clear. The count stops one above the limit, so a flood cannot overflow the column.
Rows of a bucket older than the previous window are deleted by the first count of each new
window on each replica (`_purge`), so the table holds about the callers of the last two windows,
not every address that ever asked.
"""

from __future__ import annotations

import hashlib
import time

from django.db import connection

from authserver.models import RateBucket

KEY_LENGTH = 100
"""`RateBucket.key`'s max_length: the bucket name, a colon and 32 hex digits must fit."""
WHO_DIGITS = 32
"""128 bits of SHA-256: enough that two addresses never share a row by chance."""
MAX_BUCKET_LENGTH = KEY_LENGTH - WHO_DIGITS - 1


def key_for(bucket: str, who: str) -> str:
    """The row's key: the bucket's name and a hash of who asked (never the address itself)."""
    if not bucket or len(bucket) > MAX_BUCKET_LENGTH or ":" in bucket:
        raise ValueError(f"a bucket name has 1 to {MAX_BUCKET_LENGTH} characters and no colon: {bucket!r}")
    digest = hashlib.sha256(who.encode("utf-8", "surrogatepass")).hexdigest()[:WHO_DIGITS]
    return f"{bucket}:{digest}"


def allow(bucket: str, who: str, limit: int, window_seconds: int, *, now: float | None = None) -> bool:
    """Count one attempt by `who` in `bucket`'s current window; whether it is within `limit`.

    `now` (epoch seconds) is for tests; the server uses the clock. A limit of 0 refuses all."""
    if window_seconds < 1:
        raise ValueError("window_seconds is at least 1")
    window = int((time.time() if now is None else now) // window_seconds)
    key = key_for(bucket, who)
    _purge(bucket, window)
    return _count(key, window, limit) <= limit


_purged: dict[str, int] = {}
"""The window each bucket was last purged in, on this replica (a memo, not request state: a
replica that forgets only purges again)."""


def _purge(bucket: str, window: int) -> None:
    """Delete the bucket's rows of windows before the previous one, once a window per replica."""
    if _purged.get(bucket) == window:
        return
    RateBucket.objects.filter(key__startswith=f"{bucket}:", window__lt=window - 1).delete()
    _purged[bucket] = window


def _count(key: str, window: int, limit: int) -> int:
    """The attempts in this window, this one included (capped at limit + 1), in one statement."""
    meta = RateBucket._meta
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    key_column, window_column, count_column = (
        quote(RateBucket._meta.get_field(name).get_attname_column()[1] or name)  # type: ignore[union-attr]
        for name in ("key", "window", "count")
    )
    # Every right-hand side reads the row as it was (PostgreSQL and SQLite alike), so the window
    # is compared before it is replaced.
    sql = (
        f"INSERT INTO {table} ({key_column}, {window_column}, {count_column}) VALUES (%s, %s, 1) "
        f"ON CONFLICT ({key_column}) DO UPDATE SET "
        f"{count_column} = CASE WHEN {table}.{window_column} <> excluded.{window_column} THEN 1 "
        f"WHEN {table}.{count_column} > %s THEN {table}.{count_column} "
        f"ELSE {table}.{count_column} + 1 END, "
        f"{window_column} = excluded.{window_column} "
        f"RETURNING {count_column}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [key, window, max(limit, 0)])
        row = cursor.fetchone()
    return int(row[0])
