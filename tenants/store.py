"""Admitting a signed-in call: who the tenant is, its key, and whether its quota allows the call.

`admit(claim, calls)` answers from the database on every request (nothing is cached, so a
tenant disabled in the admin is refused by every replica on its next request) and, when the
request carries tool calls, counts them against the tenant's quotas in the same statement:

- PostgreSQL: one statement, one round trip. A data-modifying CTE reads the tenant and its newest
  active key and upserts the tenant's `TenantUsage` row (`INSERT ... ON CONFLICT DO UPDATE ...
  WHERE <within both quotas>`); the row lock the upsert takes makes concurrent calls on any
  replica count one after another, so the calls admitted never exceed a quota.
- SQLite (one machine): the same upsert after a plain read of the tenant, two statements in the
  same process; SQLite runs one writer at a time, so the upsert is atomic there too.

A refused call counts nothing (the upsert's WHERE), so calls bounced by the per-minute quota do
not use up the day. Windows are fixed: the current minute and the current UTC day by the
replica's clock (buckets `epoch // 60` and `epoch // 86400`); a replica whose clock lags counts
into the newer window it finds. At a window's edge a tenant can therefore get up to twice a
quota within a few seconds, the usual price of fixed windows.

The queries run on a small pool of threads of their own, each keeping its database connection
open between requests (a connection dropped by the server is reopened once), so a request costs
one thread hop and the round trip, not a connect.
"""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError, InterfaceError, OperationalError, connections

from core.events import log
from core.operations import TenantKeyUndecryptable
from tenants import crypto

POOL_THREADS = 4
_pool = ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix="tenants")

_COLUMNS = (
    "t.id, t.name, t.enabled, t.default_backend, t.allowed_tools, t.calls_per_minute, t.calls_per_day, "
    "(SELECT k.secret FROM tenants_tenantkey k WHERE k.tenant_id = t.id AND k.active "
    "ORDER BY k.created_at DESC, k.id DESC LIMIT 1)"
)
_USAGE_COLUMNS = "u.minute, u.minute_calls, u.day, u.day_calls"

_NEW_MINUTE_CALLS = (
    "CASE WHEN excluded.minute > u.minute THEN excluded.minute_calls ELSE u.minute_calls + excluded.minute_calls END"
)
_NEW_DAY_CALLS = "CASE WHEN excluded.day > u.day THEN excluded.day_calls ELSE u.day_calls + excluded.day_calls END"
_UPSERT_CONFLICT = f"""
ON CONFLICT (tenant_id) DO UPDATE SET
    minute_calls = {_NEW_MINUTE_CALLS},
    minute = CASE WHEN excluded.minute > u.minute THEN excluded.minute ELSE u.minute END,
    day_calls = {_NEW_DAY_CALLS},
    day = CASE WHEN excluded.day > u.day THEN excluded.day ELSE u.day END
WHERE (q.calls_per_minute IS NULL OR {_NEW_MINUTE_CALLS} <= q.calls_per_minute)
  AND (q.calls_per_day IS NULL OR {_NEW_DAY_CALLS} <= q.calls_per_day)
RETURNING tenant_id
"""
# `q` is the tenant's row; an ON CONFLICT ... WHERE may read other tables only through a subquery,
# so both dialects spell it as a subquery on the row being inserted (the same tenant_id).
_UPSERT_CONFLICT = _UPSERT_CONFLICT.replace(
    "q.calls_per_minute", "(SELECT q.calls_per_minute FROM tenants_tenant q WHERE q.id = excluded.tenant_id)"
).replace("q.calls_per_day", "(SELECT q.calls_per_day FROM tenants_tenant q WHERE q.id = excluded.tenant_id)")

POSTGRESQL_ADMIT = f"""
WITH t AS (SELECT {_COLUMNS} AS secret FROM tenants_tenant t WHERE t.claim = %(claim)s),
prior AS (SELECT u.tenant_id, {_USAGE_COLUMNS} FROM tenants_tenantusage u JOIN t ON u.tenant_id = t.id),
counted AS (
    INSERT INTO tenants_tenantusage AS u (tenant_id, minute, minute_calls, day, day_calls)
    SELECT t.id, %(minute)s, %(calls)s, %(day)s, %(calls)s FROM t
    WHERE t.enabled AND %(calls)s > 0
      AND (t.calls_per_minute IS NULL OR %(calls)s <= t.calls_per_minute)
      AND (t.calls_per_day IS NULL OR %(calls)s <= t.calls_per_day)
    {_UPSERT_CONFLICT}
)
SELECT t.id, t.name, t.enabled, t.default_backend, t.allowed_tools, t.calls_per_minute, t.calls_per_day, t.secret,
       prior.minute, prior.minute_calls, prior.day, prior.day_calls, EXISTS (SELECT 1 FROM counted)
FROM t LEFT JOIN prior ON true
"""

SQLITE_READ = f"""
SELECT {_COLUMNS}, {_USAGE_COLUMNS}
FROM tenants_tenant t LEFT JOIN tenants_tenantusage u ON u.tenant_id = t.id WHERE t.claim = %s
"""
SQLITE_COUNT = f"""
INSERT INTO tenants_tenantusage AS u (tenant_id, minute, minute_calls, day, day_calls) VALUES (%s, %s, %s, %s, %s)
{_UPSERT_CONFLICT}
"""


@dataclass(frozen=True, slots=True)
class Admission:
    """What the database says about one signed-in request."""

    tenant: str
    enabled: bool
    api_key: str | None = field(repr=False)
    """The newest active TomTom key, decrypted; None when the tenant has none (or it cannot be opened)."""
    default_backend: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    """None: every tool."""
    over_quota: str | None = None
    """Why the request's tool calls were refused (`per minute` / `per day`), None when admitted."""
    retry_after: int | None = None
    """Seconds until the window that refused them ends."""


def _buckets(now: float) -> tuple[int, int]:
    return int(now // 60), int(now // 86400)


def _admission(row: tuple[Any, ...], calls: int, counted: bool, now: float) -> Admission:
    (_id, name, enabled, backend, allowed, per_minute, per_day, secret, minute, minute_calls, _day, _day_calls) = row
    if isinstance(allowed, str):  # SQLite hands JSON back as text
        allowed = json.loads(allowed)
    api_key = None
    if secret:
        try:
            api_key = crypto.decrypt(secret)
        except crypto.InvalidToken:
            log(TenantKeyUndecryptable(tenant=name))
    over, retry_after = None, None
    if enabled and calls > 0 and not counted:
        this_minute, _today = _buckets(now)
        used_minute = minute_calls if minute is not None and minute >= this_minute else 0
        if per_minute is not None and used_minute + calls > per_minute:
            over, retry_after = f"{per_minute} calls per minute", max(1, int(60 - now % 60) + 1)
        else:
            over, retry_after = f"{per_day} calls per day", max(1, int(86400 - now % 86400) + 1)
    return Admission(
        tenant=name,
        enabled=bool(enabled),
        api_key=api_key,
        default_backend=backend or None,
        allowed_tools=tuple(allowed) if allowed else None,
        over_quota=over,
        retry_after=retry_after,
    )


def admit_now(claim: str, calls: int, now: float | None = None, using: str = "default") -> Admission | None:
    """`admit` on the calling thread (synchronous): None when no tenant has this claim value."""
    now = time.time() if now is None else now
    minute, day = _buckets(now)
    connection = connections[using]
    for attempt in (1, 2):
        try:
            with connection.cursor() as cursor:
                if connection.vendor == "postgresql":
                    cursor.execute(POSTGRESQL_ADMIT, {"claim": claim, "minute": minute, "day": day, "calls": calls})
                    row = cursor.fetchone()
                    if row is None:
                        return None
                    return _admission(row[:12], calls, bool(row[12]), now)
                cursor.execute(SQLITE_READ, [claim])
                row = cursor.fetchone()
                if row is None:
                    return None
                counted = False
                if row[2] and calls > 0:
                    cursor.execute(SQLITE_COUNT, [row[0], minute, calls, day, calls])
                    counted = cursor.fetchone() is not None
                return _admission(row, calls, counted, now)
        except (OperationalError, InterfaceError):
            connection.close()  # a connection the database dropped: reopen once
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


async def admit(claim: str, calls: int) -> Admission | None:
    """The tenant whose claim value is `claim`, with `calls` tool calls counted against its
    quotas when it is enabled (see the module docstring); None when there is no such tenant.
    Raises `DatabaseError` when the database cannot answer."""
    return await asyncio.get_running_loop().run_in_executor(_pool, admit_now, claim, calls)


__all__ = ["Admission", "DatabaseError", "admit", "admit_now"]


def close_connections() -> None:
    """Close the database connection every pool thread holds (ASGI shutdown, tests)."""
    import threading

    barrier = threading.Barrier(POOL_THREADS)

    def close() -> None:
        barrier.wait(timeout=10)  # one task per thread: each waits until all threads hold one
        connections.close_all()

    for future in [_pool.submit(close) for _ in range(POOL_THREADS)]:
        future.result(timeout=15)
