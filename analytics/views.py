"""The staff dashboard: failure rate by host over time, a sortable table, drill-down to events.

Every number comes from analytics/selectors.py, the same functions the JSON API calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from analytics.charts import failure_rate_chart
from analytics.forms import ReportForm
from analytics.models import FAILING_KINDS
from analytics.selectors import (
    FailureRow,
    ReportQuery,
    failing_events,
    failure_counts,
    hosts_and_tools,
    old_callers,
)
from analytics.stats import COUNT_STATS, RATE_STATS, STAT_NAMES, CountStat, RateStat

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


@dataclass(frozen=True, slots=True)
class TableRow:
    client: str
    tool: str
    link: str
    cells: tuple[Cell, ...]


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    form = ReportForm(request.GET)
    form.is_valid()
    query = form.report_query()
    sort = request.GET.get("sort", DEFAULT_SORT)
    totals = failure_counts(query, by=("client", "tool"))
    hosts, tools = hosts_and_tools(query)
    context = {
        **admin.site.each_context(request),
        "title": "Widget failures by host",
        "form": form,
        "query": query,
        "chart": failure_rate_chart(query.buckets(), failure_counts(query, by=("bucket", "client")), query.bucket),
        "columns": _columns(request, sort),
        "rows": [_table_row(query, row) for row in sort_rows(totals, sort)],
        "callers": old_callers(query),
        "hosts": hosts,
        "tools": tools,
        "api_link": f"{reverse('analytics_api:failure_totals')}?{_filters(query)}",
        "events_link": f"{reverse('analytics:failing_events')}?{_filters(query)}",
    }
    return render(request, "analytics/dashboard.html", context)


@staff_member_required
def failing_events_page(request: HttpRequest) -> HttpResponse:
    form = ReportForm(request.GET)
    form.is_valid()
    query = form.report_query()
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
    return result


def _table_row(query: ReportQuery, row: FailureRow) -> TableRow:
    assert row.client is not None and row.tool is not None
    events = reverse("analytics:failing_events")
    own = ReportQuery(query.start, query.end, query.bucket, tool=row.tool, client=row.client)
    cells = [
        Cell(
            f"{row.counts[stat.name]:,}",
            f"{events}?{_filters(own, kind=_DRILL_KIND[stat.name])}"
            if stat.name in _DRILL_KIND and row.counts[stat.name]
            else "",
        )
        for stat in COUNT_STATS
    ]
    cells += [Cell("—" if (rate := row.rates[stat.name]) is None else f"{rate:.1%}", "") for stat in RATE_STATS]
    return TableRow(row.client, row.tool, f"{events}?{_filters(own)}", tuple(cells))


def _filters(query: ReportQuery, **extra: str) -> str:
    params = {"start": query.start.isoformat(), "end": query.end.isoformat(), "bucket": query.bucket}
    params |= {name: value for name, value in (("tool", query.tool), ("client", query.client), *extra.items()) if value}
    return urlencode(params)
