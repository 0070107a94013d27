"""The session caps: how many widget reports, naming how many tools, one client session counts.

A widget sends one report per result it handles (`tomtom-report-app-status`), naming the tool
whose result it was; nothing but the caller stops it sending more, or naming made-up tools, each
of which would be a row of every rollup it counts in. So the reports of one client session
(core.events.SessionKey) on one UTC day count up to `ANALYTICS_SESSION_MAX_REPORTS` reports and
`ANALYTICS_SESSION_MAX_TOOLS` distinct tool names; a sessionless caller's reports, which name no
session, count per client name and day, against the tool-name cap only (every sessionless caller
of one host shares that name: a cap on its reports would drop honest ones).

A report over a cap is **dropped**: stored like every event, with the kind `dropped`
(analytics.models.DROPPED_KIND) so that nothing counts or joins it again, and counted only as
the funnel's `dropped` (on the row of its day and client, `OVER_CAP`), and in its session's row.

The caps hold where the reports land, not in a replica's memory: each session's count is a row
of `WidgetReportSession`, read and locked (`INSERT ... ON CONFLICT DO UPDATE ... RETURNING`, in
key order, so writers lock rows in one order) and written back in the transaction that stores
the reports. Only reports the store actually inserted count: a line ingested twice counts once.
Which reports of a session go over a cap follows the order they are stored in (logs: time order);
how many do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson
from django.conf import settings
from django.db import connection

from analytics.ingest.rollups import FUNNEL_REPORTS
from analytics.models import DROPPED_KIND, WidgetReportSession

_CHUNK = 500
"""Sessions per statement (6 parameters each: SQLite takes up to 32,766 parameters)."""


def limits() -> tuple[int, int]:
    """The caps: reports per session and day, distinct tool names per session (or sessionless
    client name) and day (`ANALYTICS_SESSION_MAX_REPORTS`, `ANALYTICS_SESSION_MAX_TOOLS`)."""
    return settings.ANALYTICS_SESSION_MAX_REPORTS, settings.ANALYTICS_SESSION_MAX_TOOLS


def over_caps(rows: Sequence[Any], dialect: Any, table: str) -> list[Any]:
    """Of `rows` (app-status events just inserted into `table`), the widget reports over a
    session cap: counted against their sessions' rows (updated here), and stored as `dropped`."""
    reports = sorted((row for row in rows if row.kind in FUNNEL_REPORTS), key=lambda row: (row.time, row.event_id))
    if not reports:
        return []
    by_key: dict[tuple[datetime, str, str], list[Any]] = {}
    for row in reports:
        key = (row.time.replace(hour=0, minute=0, second=0, microsecond=0), row.session, row.client)
        by_key.setdefault(key, []).append(row)
    state = _locked(sorted(by_key), dialect)
    max_reports, max_tools = limits()
    dropped: list[Any] = []
    changed = []
    for key, rows_of_key in by_key.items():
        count, tools, over = state[key]
        known = set(tools)
        sessionless = not key[1]
        for row in rows_of_key:
            if (not sessionless and count >= max_reports) or (row.tool not in known and len(known) >= max_tools):
                over += 1
                dropped.append(row)
                continue
            count += 1
            if row.tool not in known:
                known.add(row.tool)
                tools.append(row.tool)
        changed.append((count, orjson.dumps(tools).decode(), over, dialect.adapt(key[0]), key[1], key[2]))
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {WidgetReportSession._meta.db_table} SET reports = %s, tools = %s, dropped = %s "
            "WHERE day = %s AND session = %s AND client = %s",
            changed,
        )
        if dropped:
            cursor.executemany(
                f"UPDATE {table} SET kind = %s WHERE time = %s AND event_id = %s",
                [(DROPPED_KIND, dialect.adapt(row.time), row.event_id) for row in dropped],
            )
    return dropped


def _locked(keys: list[tuple[datetime, str, str]], dialect: Any) -> dict[tuple, tuple[int, list[str], int]]:
    """Each session row of `keys` (made when missing) as stored, locked until the transaction
    ends: (reports, tool names, dropped)."""
    table = WidgetReportSession._meta.db_table
    found: dict[tuple, tuple[int, list[str], int]] = {}
    with connection.cursor() as cursor:
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            values = ", ".join(["(%s, %s, %s, 0, '[]', 0)"] * len(chunk))
            cursor.execute(
                f"INSERT INTO {table} (day, session, client, reports, tools, dropped) VALUES {values} "
                f"ON CONFLICT (day, session, client) DO UPDATE SET reports = {table}.reports "
                "RETURNING day, session, client, reports, tools, dropped",
                [value for day, session, client in chunk for value in (dialect.adapt(day), session, client)],
            )
            for day, session, client, reports, tools, dropped in cursor.fetchall():
                found[(dialect.returned(day), session, client)] = (reports, list(orjson.loads(tools)), dropped)
    return found
