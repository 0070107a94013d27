"""The staff dashboards: the overview (the landing page), widget failures and tool calls by host,
the drill-down to the failing calls and widget events behind a figure, and every event of one
request. Every table sorts by any column and downloads as CSV (`?csv=<table id>`); every page
takes the same filters, tenant and backend included, and says how fresh its data is.

Every number comes from analytics/overview.py, analytics/selectors.py and analytics/tool_stats.py,
the same functions the JSON API calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from analytics.charts import error_rate_chart, failure_rate_chart
from analytics.exports import csv_response
from analytics.families import FAMILY_PREFIX, Families
from analytics.forms import ReportForm
from analytics.funnel import FAILED_COLUMNS, FIGURE_NAMES, SIZE_LABELS, FunnelRow, funnel
from analytics.models import FAILING_KINDS, ToolCallDaily
from analytics.overview import DEFAULT_PRESET, Figure, Ranked, Window, freshness, overview
from analytics.selectors import (
    REQUEST_WINDOW,
    ReportQuery,
    call_details,
    failing_call_groups,
    failing_calls,
    failing_event_groups,
    failing_events,
    failure_counts,
    families_present,
    hosts_and_tools,
    old_callers,
    request_events,
    retention_gap,
)
from analytics.stats import COUNT_STATS, FAILURE_RATE, STAT_NAMES
from analytics.tables import Col, Table, as_count, as_number, as_rate
from analytics.tool_stats import ERROR_CODES, OTHER_ERRORS, TOOL_CALL_STATS, CallRow, tool_call_stats

PER_PAGE = 50
_DRILL_KIND = {stat.name: stat.kind for stat in COUNT_STATS if stat.kind in FAILING_KINDS}
"""Count columns whose figure links to the events behind it."""


# -- Filters, links, shared page parts ---------------------------------------------------------------


def _form(request: HttpRequest, *, default_preset: str = "") -> tuple[ReportForm, ReportQuery]:
    """The filters of a request, its query, and the choices present in the query's range."""
    form = ReportForm(request.GET, default_preset=default_preset)
    form.is_valid()
    query = form.report_query()
    hosts, tools = hosts_and_tools(query)
    tenants = sorted(
        set(
            ToolCallDaily.objects.filter(day__gte=query.start_time, day__lt=query.end_time)
            .values_list("tenant", flat=True)
            .distinct()
            .order_by()
        )
    )
    form.set_choices(hosts=hosts, families=families_present(hosts, Families.load()), tools=tools, tenants=tenants)
    return form, query


def filters(query: ReportQuery, **extra: str) -> str:
    """The query string of `query` (and `extra`): a window of hours as `since`/`until`, else dates."""
    params: dict[str, str] = {"start": query.start.isoformat(), "end": query.end.isoformat()}
    if query.since is not None and query.until is not None:
        params = {"since": query.since.isoformat(), "until": query.until.isoformat()}
    if query.bucket != "day":
        params["bucket"] = query.bucket
    client = f"{FAMILY_PREFIX}{query.family}" if query.family else query.client
    given = (
        ("tool", query.tool),
        ("client", client),
        ("group", "" if query.group == "client" else query.group),
        ("tenant", query.tenant),
        ("backend", query.backend),
    )
    params |= {name: value for name, value in (*given, *extra.items()) if value}
    return urlencode(params)


def narrowed(query: ReportQuery, host: str = "", **changes: Any) -> ReportQuery:
    """`query` for one host (a family's name when grouping by family) and other changes."""
    fields = {name: getattr(query, name) for name in query.__dataclass_fields__}
    if host:
        fields |= {"family": host, "client": ""} if query.group == "family" else {"client": host, "family": ""}
    return ReportQuery(**(fields | changes))


def link(name: str, query: ReportQuery, **extra: str) -> str:
    return f"{reverse(name)}?{filters(query, **extra)}"


def _page(
    request: HttpRequest, template: str, title: str, form: ReportForm, query: ReportQuery, **context: Any
) -> HttpResponse:
    nav = [
        ("Overview", link("analytics:overview", query), "overview"),
        ("Widgets", link("analytics:dashboard", _days(query)), "widgets"),
        ("Tool calls", link("analytics:tool_calls", _days(query)), "tool_calls"),
        ("Failing calls", link("analytics:failing_calls", query), "failing_calls"),
        ("Failing widget events", link("analytics:failing_events", query), "failing_events"),
    ]
    active = context.get("active", "")
    return render(
        request,
        template,
        {
            **admin.site.each_context(request),
            "title": title,
            "form": form,
            "query": query,
            "nav": nav,
            "freshness": freshness(),
            "min_events": settings.ANALYTICS_MIN_EVENTS,
            "show_window": active not in ("widgets", "tool_calls"),
            "show_bucket": active in ("widgets", "tool_calls"),
            "show_kind": active == "failing_events",
            "show_code": active == "failing_calls",
            **context,
        },
    )


def _days(query: ReportQuery) -> ReportQuery:
    """The whole days a window of hours falls in (for the pages that report by day)."""
    return narrowed(query, since=None, until=None)


def _csv(request: HttpRequest, query: ReportQuery, tables: Mapping[str, Callable[[], Table]]) -> HttpResponse | None:
    """The table `?csv=<id>` asks for, as CSV; None when no CSV is asked for."""
    wanted = request.GET.get("csv")
    if wanted is None:
        return None
    if wanted not in tables:
        return HttpResponse(
            f"no table {wanted!r}; tables: {', '.join(tables)}\n", status=404, content_type="text/plain"
        )
    header, rows = tables[wanted]().sorted_by(request).csv()
    return csv_response(header, rows, f"{wanted}_{query.start}_{query.end}.csv")


# -- The overview ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Card:
    figure: Figure
    text: str
    previous: str
    change: str
    worse: bool | None
    """Whether the change is for the worse (None: no change to judge)."""
    link: str


def _show(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "rate":
        return f"{value:.1%}"
    if unit == "ms":
        return f"{value:,.0f} ms"
    return f"{value:,.0f}"


def _change(figure: Figure) -> tuple[str, bool | None]:
    change = figure.change
    if change is None:
        return ("new" if figure.value and not figure.previous else "—"), None
    text = f"{change * 100:+.1f} pp" if figure.unit == "rate" else f"{change:+.0%}"
    worse = None if abs(change) < 1e-9 or figure.name in ("calls", "upstream_calls") else change > 0
    return text, worse


@staff_member_required
def overview_page(request: HttpRequest) -> HttpResponse:
    """Is anything broken, where, since when: headline figures against the previous window, the
    worst hosts and tools, and the freshness of the data (analytics/overview.py)."""
    form, query = _form(request, default_preset=DEFAULT_PRESET)
    window = (
        Window(query.start_time, query.end_time, form.preset and _preset_label(form.preset))
        if (query.since or form.preset)
        else Window.days(query)
    )
    found = overview(query, window)
    drills = {"calls": "analytics:failing_calls", "widgets": "analytics:failing_events"}
    cards = []
    for figure in found.figures:
        change, worse = _change(figure)
        target = link(drills[figure.drill], query) if figure.drill else ""
        cards.append(
            Card(figure, _show(figure.value, figure.unit), _show(figure.previous, figure.unit), change, worse, target)
        )
    tables = {
        "worst-hosts": lambda: _worst_table("worst-hosts", "Host", found.worst_hosts, query, by_host=True),
        "worst-tools": lambda: _worst_table("worst-tools", "Tool", found.worst_tools, query, by_host=False),
    }
    if (response := _csv(request, query, tables)) is not None:
        return response
    return _page(
        request,
        "analytics/overview.html",
        "Analytics overview",
        form,
        query,
        overview=found,
        cards=cards,
        active="overview",
        worst=[t().sorted_by(request).context(request) for t in tables.values()],
        previous_label=f"{found.previous.start:%Y-%m-%d %H:00} to {found.previous.end:%Y-%m-%d %H:00} UTC",
        api_link=f"{reverse('analytics_api:overview')}?{filters(query)}",
    )


def _preset_label(preset: str) -> str:
    from analytics.overview import PRESETS

    return PRESETS[preset][0]


def _worst_table(table_id: str, title: str, ranked: tuple[Ranked, ...], query: ReportQuery, *, by_host: bool) -> Table:
    rows = []
    for rank in ranked:
        now, before = rank.now, rank.before
        rows.append(
            {
                "name": rank.name,
                "calls": now.calls,
                "errors": now.errors,
                "error_rate": now.error_rate,
                "error_rate_change": _delta(now.error_rate, before.error_rate),
                "widgets_failed": now.failed,
                "reported": now.reported,
                "failure_rate": now.failure_rate,
                "failure_rate_change": _delta(now.failure_rate, before.failure_rate),
                "p95_ms": now.p95_ms,
                "p95_change": _delta(now.p95_ms, before.p95_ms, ratio=True),
                "small_sample": rank.small_sample,
            }
        )

    def own(row: Mapping[str, Any]) -> ReportQuery:
        return narrowed(query, host=row["name"]) if by_host else narrowed(query, tool=row["name"])

    columns = [
        Col("name", title, header=True, wrap=True),
        Col("calls", "Calls", numeric=True, show=as_count),
        Col(
            "error_rate",
            "Error rate",
            "Calls that ended with an error code / calls.",
            numeric=True,
            show=as_rate,
            link=lambda r: link("analytics:failing_calls", own(r)) if r["errors"] else "",
            title_of=lambda r: f"{r['errors']} of {r['calls']} calls failed",
            muted=lambda r: r["calls"] < settings.ANALYTICS_MIN_EVENTS,
        ),
        Col(
            "error_rate_change",
            "Δ",
            "Change from the previous window, in percentage points.",
            numeric=True,
            show=_show_pp,
        ),
        Col(
            "failure_rate",
            "Widget failure rate",
            "Widgets that failed / widgets that reported.",
            numeric=True,
            show=as_rate,
            link=lambda r: (
                link("analytics:failing_events", _days(own(r)) if query.since is None else own(r))
                if r["widgets_failed"]
                else ""
            ),
            title_of=lambda r: f"{r['widgets_failed']} of {r['reported']} widgets failed",
            muted=lambda r: r["reported"] < settings.ANALYTICS_MIN_EVENTS,
        ),
        Col(
            "failure_rate_change",
            "Δ ",
            "Change from the previous window, in percentage points.",
            numeric=True,
            show=_show_pp,
        ),
        Col("p95_ms", "p95 ms", "95th percentile of the total time.", numeric=True, show=as_number),
        Col("p95_change", "Δ  ", "Change from the previous window.", numeric=True, show=_show_ratio),
    ]
    return Table(
        table_id,
        f"Worst {title.lower()}s",
        columns,
        rows,
        empty="Nothing failed in this window.",
        csv_columns=[
            "name",
            "calls",
            "errors",
            "error_rate",
            "error_rate_change",
            "widgets_failed",
            "reported",
            "failure_rate",
            "failure_rate_change",
            "p95_ms",
            "p95_change",
        ],
    )


def _delta(now: float | None, before: float | None, *, ratio: bool = False) -> float | None:
    if now is None or before is None:
        return None
    if ratio:
        return (now - before) / before if before else None
    return now - before


def _show_pp(value: Any) -> str:
    return "—" if value is None else f"{value * 100:+.1f} pp"


def _show_ratio(value: Any) -> str:
    return "—" if value is None else f"{value:+.0%}"


# -- Widget failures by host -------------------------------------------------------------------------


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    form, query = _form(request)
    query = _days(query)
    if query.call_filters:
        return _page(
            request,
            "analytics/dashboard.html",
            "Widget failures by host",
            form,
            query,
            active="widgets",
            unfiltered=query.call_filters,
        )
    tables = {
        "failure-table": lambda: _failure_table(query),
        "funnel-table": lambda: _funnel_table(query),
        "funnel-by-size": lambda: _funnel_by_size_table(query),
        "old-callers": lambda: _callers_table(query),
    }
    if (response := _csv(request, query, tables)) is not None:
        return response
    chart = failure_rate_chart(
        query.buckets(),
        failure_counts(query, by=("bucket", "client")),
        query.bucket,
        min_events=settings.ANALYTICS_MIN_EVENTS,
        zoom=bool(form.cleaned_data.get("zoom")),
    )
    return _page(
        request,
        "analytics/dashboard.html",
        "Widget failures by host",
        form,
        query,
        active="widgets",
        chart=chart,
        failures=tables["failure-table"]().sorted_by(request).context(request),
        callers=tables["old-callers"]().sorted_by(request).context(request),
        funnel=tables["funnel-table"]().sorted_by(request).context(request),
        funnel_by_size=tables["funnel-by-size"]().sorted_by(request).context(request),
        grace_minutes=round(settings.ANALYTICS_WIDGET_GRACE_SECONDS / 60, 1),
        funnel_api_link=f"{reverse('analytics_api:funnel')}?{filters(query)}",
        api_link=f"{reverse('analytics_api:failure_totals')}?{filters(query)}",
        events_link=link("analytics:failing_events", query),
    )


def _failure_table(query: ReportQuery) -> Table:
    rows = [{"host": row.client, **row.as_dict()} for row in failure_counts(query, by=("client", "tool"))]
    min_events = settings.ANALYTICS_MIN_EVENTS

    def reported(row: Mapping[str, Any]) -> int:
        return row["widgets_drawn"] + row["widgets_failed"]

    def drill(stat: str) -> Callable[[Mapping[str, Any]], str]:
        return lambda r: (
            link("analytics:failing_events", narrowed(query, host=r["host"], tool=r["tool"]), kind=_DRILL_KIND[stat])
            if r[stat]
            else ""
        )

    for row in rows:
        row["reported"] = reported(row)
    columns = [
        Col(
            "host",
            "Host",
            "The client name (or host family).",
            header=True,
            wrap=True,
            link=lambda r: link("analytics:failing_events", narrowed(query, host=r["host"], tool=r["tool"])),
        ),
        Col("tool", "Tool"),
        *(
            Col(
                stat.name,
                stat.title,
                stat.description,
                numeric=True,
                show=as_count,
                link=drill(stat.name) if stat.name in _DRILL_KIND else None,
            )
            for stat in COUNT_STATS
        ),
        Col(
            FAILURE_RATE.name,
            FAILURE_RATE.title,
            FAILURE_RATE.description,
            numeric=True,
            show=as_rate,
            title_of=lambda r: f"{r['widgets_failed']} of {r['reported']} widgets failed",
            muted=lambda r: r[FAILURE_RATE.name] is not None and r["reported"] < min_events,
        ),
        Col(
            "reported",
            "n",
            "Widgets that reported (drawn + failed): the failure rate's sample size.",
            numeric=True,
            show=as_count,
            muted=lambda r: r["reported"] < min_events,
        ),
    ]
    return Table(
        "failure-table",
        "By host and tool",
        columns,
        rows,
        default_sort="-failure_rate",
        empty="No app-status events in this range.",
        csv_columns=["host", "tool", *STAT_NAMES],
    )


def _funnel_columns() -> list[Col]:
    """The figures of a funnel table (docs/analytics.md, "Widget funnel")."""
    return [
        Col(
            "delivered",
            "Delivered",
            "Results that carried app data for a widget (`App data`).",
            numeric=True,
            show=as_count,
        ),
        Col("drawn", "Drawn", "Reports `App drawn`, joined to a delivery or not.", numeric=True, show=as_count),
        Col(
            "failed",
            "Failed",
            "Reports `App failed`, every stage, joined or not.",
            numeric=True,
            show=as_count,
            title_of=lambda r: ", ".join(f"{name[7:]} {r[name]}" for name in FAILED_COLUMNS if r[name]),
        ),
        *(
            Col(name, name[7:].capitalize(), f"Failed at stage {name[7:]}.", numeric=True, show=as_count)
            for name in FAILED_COLUMNS
            if name != "failed_other"
        ),
        Col(
            "cancelled",
            "Cancelled",
            "Reports `App cancelled`: the host cancelled the call.",
            numeric=True,
            show=as_count,
        ),
        Col(
            "never_reported",
            "Never reported",
            "Deliveries past the grace window that no report joined.",
            numeric=True,
            show=as_count,
        ),
        Col(
            "unreported_rate", "Unreported rate", "never reported / (delivered - pending).", numeric=True, show=as_rate
        ),
        Col("failure_rate", "Failure rate", "failed / (drawn + failed), every report.", numeric=True, show=as_rate),
        Col(
            "pending",
            "Pending",
            "Deliveries still within the grace window, not reported yet.",
            numeric=True,
            show=as_count,
        ),
        Col(
            "unjoined_reports",
            "Unjoined",
            "Reports joined to no delivery (an older widget, a late report).",
            numeric=True,
            show=as_count,
        ),
    ]


def _funnel_rows(rows: list[FunnelRow], *dimensions: str) -> list[dict[str, Any]]:
    return [{**{name: getattr(row, name) for name in dimensions}, **row.figures()} for row in rows]


def _funnel_table(query: ReportQuery) -> Table:
    rows = [{"host": row.client, **row.as_dict(("tool",))} for row in funnel(query, by=("client", "tool"))]
    columns = [
        Col("host", "Host", "The client name (or host family).", header=True, wrap=True),
        Col("tool", "Tool"),
        *_funnel_columns(),
    ]
    return Table(
        "funnel-table",
        "Widget funnel by host and tool",
        columns,
        rows,
        default_sort="-unreported_rate",
        empty="No app data delivered and no widget report in this range.",
        csv_columns=["host", "tool", *FIGURE_NAMES],
    )


def _funnel_by_size_table(query: ReportQuery) -> Table:
    rows = _funnel_rows(funnel(query, by=("size", "simplified")), "size", "simplified")
    columns = [
        Col(
            "size",
            "Answer size",
            "The app data's size (`raw_bytes`), or reports joined to no delivery.",
            header=True,
            show=lambda value: SIZE_LABELS.get(value, value),
        ),
        Col("simplified", "Simplified", "Whether the geometry was simplified to fit the result."),
        *_funnel_columns(),
    ]
    return Table(
        "funnel-by-size",
        "Widget funnel by answer size",
        columns,
        rows,
        default_sort="size",
        empty="No app data delivered and no widget report in this range.",
        csv_columns=["size", "simplified", *FIGURE_NAMES],
    )


def _callers_table(query: ReportQuery) -> Table:
    rows = [
        {
            "host": c.client,
            "tenant": c.tenant,
            "kind": c.kind,
            "how": c.how,
            "tool": c.tool,
            "replaced_by": c.replaced_by,
            "input": c.input,
            "change": c.change,
            "calls": c.calls,
            "first_seen": c.first_seen,
            "last_seen": c.last_seen,
            "what": c.what,
        }
        for c in old_callers(query)
    ]
    when = lambda value: "" if value is None else f"{value:%Y-%m-%d %H:%M}"  # noqa: E731
    columns = [
        Col("host", "Host", header=True, wrap=True),
        Col("tenant", "Tenant", "Empty: a caller with an API key.", wrap=True, show=lambda t: t or "—"),
        Col("how", "Kind"),
        Col("tool", "Tool"),
        Col("what", "Replaced by / input", wrap=True),
        Col("calls", "Calls", numeric=True, show=as_count),
        Col("first_seen", "First seen", show=when),
        Col("last_seen", "Last seen", show=when),
    ]
    return Table(
        "old-callers",
        "Old names and inputs still called",
        columns,
        rows,
        empty="No client called a deprecated or retired tool, an alias or an outdated input in this range.",
        csv_columns=[
            "host",
            "tenant",
            "kind",
            "tool",
            "replaced_by",
            "input",
            "change",
            "calls",
            "first_seen",
            "last_seen",
        ],
    )


# -- Tool calls by host ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallTable:
    id: str
    title: str
    dimensions: tuple[tuple[str, str], ...]
    """(dimension, column title) pairs."""


CALL_TABLES = (
    CallTable("calls-by-host", "By host and tool", (("client", "Host"), ("tool", "Tool"))),
    CallTable("calls-by-tool", "By tool", (("tool", "Tool"),)),
    CallTable("calls-by-backend", "By backend", (("backend", "Backend"),)),
    CallTable("calls-by-tenant", "By tenant", (("tenant", "Tenant"),)),
)
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
    form, query = _form(request)
    query = _days(query)
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
    if (response := _csv(request, query, tables)) is not None:
        return response
    chart = error_rate_chart(
        query.buckets(),
        tool_call_stats(query, by=("bucket", "client"), figures="counts"),
        query.bucket,
        min_events=settings.ANALYTICS_MIN_EVENTS,
        zoom=bool(form.cleaned_data.get("zoom")),
    )
    return _page(
        request,
        "analytics/tool_calls.html",
        "Tool calls by host",
        form,
        query,
        active="tool_calls",
        chart=chart,
        tables=[table().sorted_by(request).context(request) for table in tables.values()],
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
    return Table(spec.id, spec.title, columns, rows, empty="No tool calls in this range.", csv_columns=header)


# -- Drill-down ------------------------------------------------------------------------------------


@staff_member_required
def failing_calls_page(request: HttpRequest) -> HttpResponse:
    """The calls behind an error figure: grouped by code and message (the largest groups first),
    then every call, newest first, a page at a time; a group narrows the list to its calls."""
    form, query = _form(request, default_preset=DEFAULT_PRESET)
    code = form.cleaned_data.get("code") or ""
    message = request.GET.get("message")
    groups, group_count = failing_call_groups(query, code=code)
    calls = failing_calls(query, code=code, message=message)
    page = Paginator(calls, PER_PAGE).get_page(request.GET.get("page"))
    rows = [
        {
            "time": call.time,
            "host": call.client,
            "tool": call.tool,
            "code": call.outcome,
            "message": call.error,
            "request_id": call.request_id,
            "tenant": call.tenant,
            "backend": call.backend,
            "total_ms": call.total_ms,
            "request_link": request_url(call.request_id, call.time),
        }
        for call in page
    ]
    return _page(
        request,
        "analytics/failing_calls.html",
        "Failing calls",
        form,
        query,
        active="failing_calls",
        groups=[(g, link("analytics:failing_calls", query, code=g.code, message=g.message)) for g in groups],
        group_count=group_count,
        code=code,
        message=message,
        page=page,
        rows=rows,
        page_query=urlencode({k: v for k, v in request.GET.items() if k != "page"}),
        gap=retention_gap(query, "ToolCall"),
        all_link=link("analytics:failing_calls", query, code=code),
        api_link=f"{reverse('analytics_api:failing_calls')}?{filters(query, code=code)}",
    )


@staff_member_required
def failing_events_page(request: HttpRequest) -> HttpResponse:
    """The widget events behind a failure figure, grouped by kind, stage and error, then each
    event with the tenant and backend of the call that reported it."""
    form, query = _form(request, default_preset=DEFAULT_PRESET)
    kind = form.cleaned_data.get("kind", "")
    if query.call_filters:
        return _page(
            request,
            "analytics/failing_events.html",
            "Failing widget events",
            form,
            query,
            active="failing_events",
            unfiltered=query.call_filters,
            kind=kind,
        )
    kinds = [kind] if kind else list(FAILING_KINDS)
    groups, group_count = failing_event_groups(query, kinds=kinds)
    page = Paginator(failing_events(query, kinds=kinds), PER_PAGE).get_page(request.GET.get("page"))
    events = list(page)
    joined = call_details(
        (e.request_id for e in events), query.start_time - timedelta(hours=1), query.end_time + timedelta(hours=1)
    )
    rows = []
    for event in events:
        tenant, backend = joined.get(event.request_id, ("", ""))
        rows.append(
            {
                "event": event,
                "tenant": tenant,
                "backend": backend,
                "request_link": request_url(event.request_id, event.time),
            }
        )
    return _page(
        request,
        "analytics/failing_events.html",
        "Failing widget events",
        form,
        query,
        active="failing_events",
        kind=kind,
        groups=groups,
        group_count=group_count,
        page=page,
        rows=rows,
        page_query=urlencode({k: v for k, v in request.GET.items() if k != "page"}),
        gap=retention_gap(query, "AppStatus"),
    )


def request_url(request_id: str, at: datetime) -> str:
    """The page of every event of the call `request_id`, looked for around `at`."""
    if not request_id:
        return ""
    return f"{reverse('analytics:request', args=[request_id])}?{urlencode({'at': at.isoformat()})}"


@staff_member_required
def request_page(request: HttpRequest, request_id: str) -> HttpResponse:
    """Every stored event of one call (its tool call, its app data, the widget's reports), found
    within a day either side of `at` (the time of the event that linked here; default now)."""
    form, query = _form(request, default_preset=DEFAULT_PRESET)
    try:
        at = datetime.fromisoformat(request.GET["at"]) if request.GET.get("at") else datetime.now(UTC)
        at = at if at.tzinfo else at.replace(tzinfo=UTC)
    except ValueError:
        at = datetime.now(UTC)
    start, end = at - REQUEST_WINDOW, at + REQUEST_WINDOW
    events = request_events(request_id[:64], start, end)
    gap = retention_gap(
        narrowed(
            query,
            since=start.replace(minute=0, second=0, microsecond=0),
            until=end.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1),
            start=start.date(),
            end=end.date(),
        ),
        "ToolCall",
    )
    return _page(
        request,
        "analytics/request.html",
        f"Request {request_id[:64]}",
        form,
        query,
        active="",
        request_id=request_id[:64],
        events=events,
        searched=(start, end),
        gap=gap,
    )
