"""The staff dashboards: widget failures and tool calls by host over time, sortable tables,
drill-down to events, and every table as CSV (`?csv=<table id>`).

Every number comes from analytics/selectors.py and analytics/tool_stats.py, the same functions
the JSON API calls.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from analytics.charts import error_rate_chart, failure_rate_chart
from analytics.families import FAMILY_PREFIX, Families
from analytics.forms import ReportForm
from analytics.models import FAILING_KINDS
from analytics.selectors import (
    FailureRow,
    OldCaller,
    ReportQuery,
    failing_events,
    failure_counts,
    families_present,
    hosts_and_tools,
    old_callers,
)
from analytics.stats import COUNT_STATS, RATE_STATS, STAT_NAMES, CountStat, RateStat
from analytics.tool_stats import ERROR_CODES, OTHER_ERRORS, TOOL_CALL_STATS, CallRow, CallStat, tool_call_stats

ERROR_CODE_COLUMNS = frozenset({*ERROR_CODES, OTHER_ERRORS})

DEFAULT_SORT = "-failure_rate"
SORT_KEYS = ("client", "tool", *STAT_NAMES)
EVENTS_PER_PAGE = 50
_DRILL_KIND = {stat.name: stat.kind for stat in COUNT_STATS if stat.kind in FAILING_KINDS}
"""Count columns whose figure links to the events behind it."""


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    title: str
    description: str
    sort_link: str
    sorted_as: str
    """"asc", "desc" or "" (not the sort column)."""


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    link: str
    title: str = ""
    small_sample: bool = False


@dataclass(frozen=True, slots=True)
class TableRow:
    client: str
    tool: str
    link: str
    cells: tuple[Cell, ...]


def _filtered_form(request: HttpRequest) -> tuple[ReportForm, ReportQuery]:
    """The filters of a request, its query, and the host and tool choices of the query's range."""
    form = ReportForm(request.GET)
    form.is_valid()
    query = form.report_query()
    hosts, tools = hosts_and_tools(query)
    form.set_choices(hosts=hosts, families=families_present(hosts, Families.load()), tools=tools)
    return form, query


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    form, query = _filtered_form(request)
    sort = request.GET.get("sort", DEFAULT_SORT)
    totals = sort_rows(failure_counts(query, by=("client", "tool")), sort)
    callers = old_callers(query)
    if (table := request.GET.get("csv")) is not None:
        return _csv(
            table, query, {"failure-table": lambda: _failure_csv(totals), "old-callers": lambda: _callers_csv(callers)}
        )
    series = failure_counts(query, by=("bucket", "client"))
    context = {
        **admin.site.each_context(request),
        "title": "Widget failures by host",
        "form": form,
        "query": query,
        "min_events": settings.ANALYTICS_MIN_EVENTS,
        "chart": failure_rate_chart(
            query.buckets(),
            series,
            query.bucket,
            min_events=settings.ANALYTICS_MIN_EVENTS,
            zoom=bool(form.cleaned_data.get("zoom")),
        ),
        "columns": _columns(request, sort),
        "rows": [_table_row(query, row) for row in totals],
        "callers": callers,
        "csv_links": _csv_links(request, ("failure-table", "old-callers")),
        "api_link": f"{reverse('analytics_api:failure_totals')}?{_filters(query)}",
        "events_link": f"{reverse('analytics:failing_events')}?{_filters(query)}",
        "calls_link": f"{reverse('analytics:tool_calls')}?{_filters(query)}",
    }
    return render(request, "analytics/dashboard.html", context)


@dataclass(frozen=True, slots=True)
class CallTable:
    id: str
    title: str
    dimensions: tuple[tuple[str, str], ...]
    """(dimension, column title) pairs."""
    rows: list[CallRow]


@staff_member_required
def tool_calls_page(request: HttpRequest) -> HttpResponse:
    """Tool calls: error rate by host over time, and calls, errors by code, latency, upstream
    calls and answer bytes by host and tool, by tool, by backend (and by tenant once logged)."""
    form, query = _filtered_form(request)
    tables = [
        CallTable("calls-by-host", "By host and tool", (("client", "Host"), ("tool", "Tool")),
                  tool_call_stats(query, by=("client", "tool"))),
        CallTable("calls-by-tool", "By tool", (("tool", "Tool"),), tool_call_stats(query, by=("tool",))),
        CallTable("calls-by-backend", "By backend", (("backend", "Backend"),), tool_call_stats(query, by=("backend",))),
    ]  # fmt: skip
    tenants = tool_call_stats(query, by=("tenant",))
    if any(row.tenant for row in tenants):
        tables.append(CallTable("calls-by-tenant", "By tenant", (("tenant", "Tenant"),), tenants))
    if (table := request.GET.get("csv")) is not None:
        return _csv(table, query, {t.id: (lambda t=t: _calls_csv(t)) for t in tables})
    context = {
        **admin.site.each_context(request),
        "title": "Tool calls by host",
        "form": form,
        "query": query,
        "min_events": settings.ANALYTICS_MIN_EVENTS,
        "chart": error_rate_chart(
            query.buckets(),
            tool_call_stats(query, by=("bucket", "client"), figures="counts"),
            query.bucket,
            min_events=settings.ANALYTICS_MIN_EVENTS,
            zoom=bool(form.cleaned_data.get("zoom")),
        ),
        "tables": [
            (
                table,
                stats,
                [_call_cells(row, table, stats) for row in table.rows],
                _csv_links(request, (table.id,))[0][1],
            )
            for table in tables
            for stats in [_shown_stats(table.rows)]
        ],
        "api_link": f"{reverse('analytics_api:tool_call_totals')}?{_filters(query)}",
        "dashboard_link": f"{reverse('analytics:dashboard')}?{_filters(query)}",
    }
    return render(request, "analytics/tool_calls.html", context)


def _shown_stats(rows: list[CallRow]) -> list[CallStat]:
    """Every stat, less the error-code columns that are zero in every row (the CSV keeps them all)."""
    stats = [row.stats() for row in rows]
    return [
        stat
        for stat in TOOL_CALL_STATS
        if stat.name not in ERROR_CODE_COLUMNS or any(values[stat.name] for values in stats)
    ]


def _call_cells(row: CallRow, table: CallTable, stats: list[CallStat]) -> list[str]:
    values = row.as_dict()
    cells = [str(values[name]) for name, _ in table.dimensions]
    for stat in stats:
        value = values[stat.name]
        if value is None:
            cells.append("—")
        elif stat.name == "error_rate":
            cells.append(f"{value:.1%}")
        elif isinstance(value, float):
            cells.append(f"{value:,.1f}")
        else:
            cells.append(f"{value:,}")
    return cells


def _csv_links(request: HttpRequest, tables: Sequence[str]) -> list[tuple[str, str]]:
    return [(table, f"?{urlencode({**request.GET.dict(), 'csv': table})}") for table in tables]


FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection")."""


def spreadsheet_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows and never runs: text starting with `FORMULA_PREFIXES` (a
    host's name is whatever its client sent) gets a leading single quote, as OWASP advises; the
    csv writer quotes whatever holds a delimiter, a quote or a line break. None is an empty cell;
    numbers stay numbers."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def _csv(table: str, query: ReportQuery, tables: dict) -> HttpResponse:
    """One table as CSV: a header row, then raw values (rates as fractions, empty for none),
    every text cell through `spreadsheet_cell`."""
    if table not in tables:
        return HttpResponse(f"no table {table!r}; tables: {', '.join(tables)}\n", status=404, content_type="text/plain")
    header, rows = tables[table]()
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows([spreadsheet_cell(value) for value in row] for row in rows)
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{table}_{query.start}_{query.end}.csv"'
    return response


def _failure_csv(rows: list[FailureRow]) -> tuple[list[str], Iterable[list[object]]]:
    header = ["host", "tool", *STAT_NAMES]
    return header, ([row.client, row.tool, *(row.as_dict()[name] for name in STAT_NAMES)] for row in rows)


def _callers_csv(callers: list[OldCaller]) -> tuple[list[str], Iterable[list[object]]]:
    header = ["host", "kind", "tool", "replaced_by", "input", "change", "calls", "first_seen", "last_seen"]
    return header, (
        [c.client, c.kind, c.tool, c.replaced_by, c.input, c.change, c.calls,
         c.first_seen.isoformat(), c.last_seen.isoformat()]
        for c in callers
    )  # fmt: skip


def _calls_csv(table: CallTable) -> tuple[list[str], Iterable[list[object]]]:
    names = [name for name, _ in table.dimensions]
    header = [*("host" if name == "client" else name for name in names), *(stat.name for stat in TOOL_CALL_STATS)]
    return header, (
        [row.as_dict()[name] for name in (*names, *(s.name for s in TOOL_CALL_STATS))] for row in table.rows
    )


@staff_member_required
def failing_events_page(request: HttpRequest) -> HttpResponse:
    form, query = _filtered_form(request)
    kind = form.cleaned_data.get("kind", "")
    events = failing_events(query, kinds=[kind] if kind else FAILING_KINDS)
    page = Paginator(events, EVENTS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        **admin.site.each_context(request),
        "title": "Failing widget events",
        "form": form,
        "query": query,
        "kind": kind,
        "page": page,
        "page_query": urlencode({k: v for k, v in request.GET.items() if k != "page"}),
        "dashboard_link": f"{reverse('analytics:dashboard')}?{_filters(query)}",
    }
    return render(request, "analytics/failing_events.html", context)


def sort_rows(rows: list[FailureRow], sort: str) -> list[FailureRow]:
    """Rows ordered by a column ("-name" for descending), ties in host and tool order; rows
    without a value (an empty rate) come last either way. An unknown column keeps the order."""
    name = sort.removeprefix("-")
    if name not in SORT_KEYS:
        return rows
    keyed = [({"client": row.client, "tool": row.tool, **row.counts, **row.rates}[name], row) for row in rows]
    present = sorted(
        ((value, row) for value, row in keyed if value is not None),
        key=lambda pair: pair[0],
        reverse=sort.startswith("-"),
    )
    return [row for _, row in present] + [row for value, row in keyed if value is None]


def _columns(request: HttpRequest, sort: str) -> list[Column]:
    columns = [("client", "Host", "The client name."), ("tool", "Tool", "")]
    stats: tuple[CountStat | RateStat, ...] = (*COUNT_STATS, *RATE_STATS)
    columns += [(stat.name, stat.title, stat.description) for stat in stats]
    result = []
    for name, title, description in columns:
        sorted_as = "desc" if sort == f"-{name}" else "asc" if sort == name else ""
        params = {**request.GET.dict(), "sort": name if sorted_as == "desc" else f"-{name}"}
        result.append(Column(name, title, description, f"?{urlencode(params)}", sorted_as))
    sample = "Widgets that reported (drawn + failed): the failure rate's sample size."
    return [*result, Column("reported", "n", sample, "", "")]


def _table_row(query: ReportQuery, row: FailureRow) -> TableRow:
    """A table row: counts (failure counts link to their events), the rate, and its sample."""
    assert row.client is not None and row.tool is not None
    events = reverse("analytics:failing_events")
    host = {"family": row.client} if query.group == "family" else {"client": row.client}
    own = ReportQuery(query.start, query.end, query.bucket, tool=row.tool, group=query.group, **host)
    cells = [
        Cell(
            f"{row.counts[stat.name]:,}",
            f"{events}?{_filters(own, kind=_DRILL_KIND[stat.name])}"
            if stat.name in _DRILL_KIND and row.counts[stat.name]
            else "",
        )
        for stat in COUNT_STATS
    ]
    reported = row.counts["widgets_drawn"] + row.counts["widgets_failed"]
    small = reported < settings.ANALYTICS_MIN_EVENTS
    detail = f"{row.counts['widgets_failed']} of {reported} widgets failed"
    cells += [
        Cell("—" if (rate := row.rates[stat.name]) is None else f"{rate:.1%}", "", detail, small and rate is not None)
        for stat in RATE_STATS
    ]
    cells.append(Cell(f"{reported:,}", "", "drawn + failed: the sample the failure rate is from", small))
    return TableRow(row.client, row.tool, f"{events}?{_filters(own)}", tuple(cells))


def _filters(query: ReportQuery, **extra: str) -> str:
    params = {"start": query.start.isoformat(), "end": query.end.isoformat(), "bucket": query.bucket}
    client = f"{FAMILY_PREFIX}{query.family}" if query.family else query.client
    given = (("tool", query.tool), ("client", client), ("group", "" if query.group == "client" else query.group))
    params |= {name: value for name, value in (*given, *extra.items()) if value}
    return urlencode(params)
