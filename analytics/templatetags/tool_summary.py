"""`{% tool_callers tool as callers %}` and `{% tool_callers_csv tool %}`: who still calls one
tool name the old way, summed, for the summary header of the tool's admin pages (a total and one
figure per host family) and its CSV download. The governance admin loads this library by name
when the analytics are installed (the apps do not import each other); the full rows stay in
`{% still_calling_table %}` (still_calling.py)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django import template
from django.urls import reverse

from analytics.selectors import DEFAULT_DAYS, ReportQuery, still_calling

register = template.Library()

MAX_CSV_ROWS = 10_000
"""The most rows one CSV download carries (one per host, tenant and kind of old call)."""
CSV_COLUMNS = ("tool", "host family", "client name", "tenant", "how", "calls", "first seen", "last seen")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _query(tool: str) -> ReportQuery:
    end = datetime.now(UTC).date()
    return ReportQuery(start=end - timedelta(days=DEFAULT_DAYS - 1), end=end, tool=tool)


@register.simple_tag
def tool_callers(tool: str) -> dict[str, Any]:
    """The last `DEFAULT_DAYS` UTC days of calls to `tool` the old way: the total, each host
    family's calls (most first), the range, and links to the rows."""
    query = _query(tool)
    families: dict[str, int] = {}
    for row in still_calling(query):
        families[row.family] = families.get(row.family, 0) + row.calls
    filters = urlencode({"tool": tool, "start": query.start.isoformat(), "end": query.end.isoformat()})
    return {
        "start": query.start,
        "end": query.end,
        "days": DEFAULT_DAYS,
        "total": sum(families.values()),
        "families": [
            {"family": family, "calls": calls}
            for family, calls in sorted(families.items(), key=lambda item: (-item[1], item[0]))
        ],
        "api_url": f"{reverse('analytics_api:still_calling')}?{filters}",
        "dashboard_url": f"{reverse('analytics:dashboard')}?{filters}#old-callers",
    }


def _cell(value: object) -> str:
    """A CSV cell a spreadsheet shows as text: client names are the callers' own words."""
    text = value.isoformat() if isinstance(value, datetime) else str(value)
    return f"'{text}" if text.startswith(_FORMULA_START) else text


@register.simple_tag
def tool_callers_csv(tool: str) -> str:
    """The same calls as CSV, one row per host, tenant and kind of old call (`CSV_COLUMNS`), at
    most `MAX_CSV_ROWS`, most calls first within each kind."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for row in still_calling(_query(tool))[:MAX_CSV_ROWS]:
        writer.writerow(
            _cell(value)
            for value in (
                row.tool,
                row.family,
                row.client,
                row.tenant or "(API key)",
                row.how,
                row.calls,
                row.first_seen,
                row.last_seen,
            )
        )
    return out.getvalue()
