"""Tool calls by host: a summary line, the error-rate chart, and one table per grouping of calls,
errors (caller errors apart from server and upstream ones), errors by code, latency, TomTom
requests and answer bytes: by host and tool (the most errors first, ten rows before "show all"), by
tool, and folded away by backend and by tenant."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from analytics.charts import error_rate_chart
from analytics.selectors import ReportQuery
from analytics.tables import Col, Table, as_count, as_number, as_rate
from analytics.tool_stats import (
    CALLER_ERRORS,
    ERROR_CODES,
    OTHER_ERRORS,
    TOOL_CALL_STATS,
    CallRow,
    tool_call_stats,
)
from analytics.views.base import csv_export, filters, form_and_query, link, narrowed, render_page, shown_table


@dataclass(frozen=True, slots=True)
class CallTable:
    id: str
    title: str
    dimensions: tuple[tuple[str, str], ...]
    """(dimension, column title) pairs."""
    default_sort: str = ""
    folded: bool = False
    """Shown folded away (`<details>`): a breakdown for when the summary points at it."""


CALL_TABLES = (
    CallTable("calls-by-host", "By host and tool", (("client", "Host"), ("tool", "Tool")), "-errors"),
    CallTable("calls-by-tool", "By tool", (("tool", "Tool"),), "-errors"),
    CallTable("calls-by-backend", "By backend", (("backend", "Backend"),), folded=True),
    CallTable("calls-by-tenant", "By tenant", (("tenant", "Tenant"),), folded=True),
)
SHOWN_ROWS = 10
"""Rows a table shows before its "show all" link."""
SHOWN_CALL_STATS = (
    "calls",
    "errors",
    "error_rate",
    "p50_total_ms",
    "p95_total_ms",
    "p95_upstream_ms",
    "upstream_calls",
    "bytes",
    "bytes_per_call",
)
"""The tool-call stats a page's table shows (the rest, each error code among them, are in the CSV)."""


@staff_member_required
def tool_calls_page(request: HttpRequest) -> HttpResponse:
    """Tool calls: error rate by host over time, and calls, errors by code, latency, TomTom
    requests and answer bytes by host and tool, by tool, by backend and by tenant."""
    form, query = form_and_query(request)
    found = {
        spec.id: (spec, tool_call_stats(query, by=tuple(name for name, _ in spec.dimensions)))  # type: ignore[misc]
        for spec in CALL_TABLES
    }
    if not any(row.tenant for row in found["calls-by-tenant"][1]):
        del found["calls-by-tenant"]  # no tenant logged in the range
    tables = {
        table_id: (lambda spec=spec, rows=rows: _call_table(query, spec, rows))
        for table_id, (spec, rows) in found.items()
    }
    if (response := csv_export(request, query, tables)) is not None:
        return response
    chart = error_rate_chart(
        query.buckets(datetime.now(UTC)),
        tool_call_stats(query, by=("bucket", "client"), figures="counts"),
        query.bucket,
        min_events=settings.ANALYTICS_MIN_EVENTS,
        zoom=bool(form.cleaned_data.get("zoom")),
    )
    by_tool = found["calls-by-tool"][1]
    calls = sum(row.calls for row in by_tool)
    caller = sum(row.outcomes.get(code, 0) for row in by_tool for code in CALLER_ERRORS)
    errors = sum(row.errors for row in by_tool)
    return render_page(
        request,
        "analytics/tool_calls.html",
        "Tool calls by host",
        form,
        query,
        active="tool_calls",
        chart=chart,
        summary={
            "calls": calls,
            "server": errors - caller,
            "caller": caller,
            "server_rate": as_rate((errors - caller) / calls) if calls else "—",
            "caller_rate": as_rate(caller / calls) if calls else "—",
        },
        failing_link=link("analytics:failing_calls", query),
        tables=[
            {
                **shown_table(request, table(), limit=None if found[table_id][0].folded else SHOWN_ROWS),
                "folded": found[table_id][0].folded,
            }
            for table_id, table in tables.items()
        ],
        api_link=f"{reverse('analytics_api:tool_call_totals')}?{filters(query)}",
    )


def _call_table(query: ReportQuery, spec: CallTable, found: list[CallRow]) -> Table:
    names = [name for name, _ in spec.dimensions]
    rows = []
    for row in found:
        values = row.as_dict()
        values["host"] = values["client"]
        values["by_code"] = {code: values[code] for code in (*ERROR_CODES, OTHER_ERRORS) if values[code]}
        rows.append(values)
    stats = {stat.name: stat for stat in TOOL_CALL_STATS}

    def own(row: Mapping[str, Any]) -> ReportQuery:
        changes = {name: (row[name] or ("-" if name == "tenant" else "")) for name in names if name != "client"}
        return narrowed(query, host=row["client"] or "", **changes)

    columns = [
        Col(name, title, header=index == 0, wrap=name in ("client", "tenant"), show=lambda v: v if v else "—")
        for index, (name, title) in enumerate(spec.dimensions)
    ]
    for name in SHOWN_CALL_STATS:
        stat = stats[name]
        shown = as_rate if name == "error_rate" else as_number if name.endswith("_ms") else as_count
        drill = (lambda r: link("analytics:failing_calls", own(r)) if r["errors"] else "") if name == "errors" else None
        columns.append(Col(name, stat.title, stat.description, numeric=True, show=shown, link=drill))
        if name == "errors":
            columns.append(
                Col(
                    "by_code",
                    "By code",
                    "The errors by code (every code is a column of the CSV).",
                    show=lambda v: ", ".join(f"{c} {n:,}" for c, n in v.items()) or "—",
                    wrap=True,
                    sort_key="errors",
                )
            )
    header = [*("host" if name == "client" else name for name in names), *(stat.name for stat in TOOL_CALL_STATS)]
    return Table(
        spec.id,
        spec.title,
        columns,
        rows,
        default_sort=spec.default_sort,
        empty="No tool calls in this range.",
        csv_columns=header,
    )
