"""What every dashboard page shares: its filters read into a query, the links that carry them to
another page, the page frame (navigation, the ingestion heartbeat, one time-range picker, which
filters show), tables cut to their first rows behind a "show all" link, and the CSV download of any
of its tables.

One time range for every page: every link a page makes (the tabs, the drill-downs, the presets)
carries the range in force as the same query parameters (`window=6h`, or `start`/`end`, or
`since`/`until`), and the range last chosen is kept in the session, so a page reached by a link
that carries none (a request's page, a bookmark) keeps it too."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from html import escape
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from analytics.exports import csv_response
from analytics.families import FAMILY_PREFIX, Families
from analytics.forms import ReportForm
from analytics.models import ToolCallDaily
from analytics.overview import Freshness, freshness
from analytics.selectors import DEFAULT_PRESET, PRESETS, ReportQuery, auto_bucket, families_present, hosts_and_tools
from analytics.tables import Cell, Table

TIME_PARAMS = ("window", "start", "end", "since", "until")
"""The query parameters of a time range."""
SESSION_RANGE = "analytics_range"
"""The session key of the range last chosen."""
SHORT_LABELS = {"1h": "1 h", "6h": "6 h", "24h": "24 h", "7d": "7 d", "30d": "30 d"}
assert set(SHORT_LABELS) == set(PRESETS), "label every preset"


def form_and_query(request: HttpRequest, *, default_preset: str = DEFAULT_PRESET) -> tuple[ReportForm, ReportQuery]:
    """The filters of a request, its query, and the choices present in the query's range. A
    request without a time range gets the one last chosen in this session, else the default
    preset; one with a range keeps it in the session."""
    data: QueryDict = request.GET
    session = getattr(request, "session", None)
    given = any(name in data for name in TIME_PARAMS)
    if not given and session is not None and (saved := session.get(SESSION_RANGE)):
        data = request.GET.copy()
        for name, value in saved.items():
            data[name] = value
    form = ReportForm(data, default_preset=default_preset)
    form.is_valid()
    query = form.report_query()
    if given and session is not None and not form.errors and session.get(SESSION_RANGE) != range_params(query):
        session[SESSION_RANGE] = range_params(query)
    hosts, tools = hosts_and_tools(query)
    tenants = sorted(
        set(
            ToolCallDaily.objects.filter(day__gte=query.whole_days.start_time, day__lt=query.end_time)
            .values_list("tenant", flat=True)
            .distinct()
            .order_by()
        )
    )
    form.set_choices(hosts=hosts, families=families_present(hosts, Families.load()), tools=tools, tenants=tenants)
    return form, query


def range_params(query: ReportQuery) -> dict[str, str]:
    """The query parameters of `query`'s time range: its preset, else its window of hours, else its dates."""
    if query.window:
        return {"window": query.window}
    if query.since is not None and query.until is not None:
        return {"since": query.since.isoformat(), "until": query.until.isoformat()}
    return {"start": query.start.isoformat(), "end": query.end.isoformat()}


def filters(query: ReportQuery, **extra: str) -> str:
    """The query string of `query` (and `extra`): its preset (`window`), else its window of hours
    as `since`/`until`, else its dates; the bucket only when not the range's own (`auto_bucket`)."""
    params = range_params(query)
    if query.bucket != auto_bucket(query.start_time, query.end_time):
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


def _row(cells: list[Cell]) -> SafeString:
    """One body row of `analytics/_table.html`, as its loop over the cells would write it (plain
    string building: `format_html` per cell costs as much as the template)."""
    parts = ["<tr>"]
    for cell in cells:
        tag = "th" if cell.header else "td"
        classes = " ".join(
            name for name, on in (("number", cell.numeric), ("wrap", cell.wrap), ("small-sample", cell.muted)) if on
        )
        text = _escaped(cell.text)
        if cell.link:
            text = f'<a href="{escape(cell.link)}">{text}</a>'
        title = f' title="{escape(cell.title)}"' if cell.title else ""
        scope = ' scope="row"' if cell.header else ""
        parts.append(f'<{tag}{scope} class="{classes}"{title}>{text}</{tag}>')
    parts.append("</tr>")
    return mark_safe("".join(parts))  # every value above is escaped, or already safe markup


def _escaped(value: Any) -> str:
    return value.__html__() if hasattr(value, "__html__") else escape(str(value))


def narrowed(query: ReportQuery, host: str = "", **changes: Any) -> ReportQuery:
    """`query` for one host (a family's name when grouping by family) and other changes."""
    fields = {name: getattr(query, name) for name in query.__dataclass_fields__}
    if "since" in changes or "until" in changes:
        fields["window"] = ""  # exact hours replace the preset
    if host:
        fields |= {"family": host, "client": ""} if query.group == "family" else {"client": host, "family": ""}
    return ReportQuery(**(fields | changes))


def link(name: str, query: ReportQuery, **extra: str) -> str:
    return f"{reverse(name)}?{filters(query, **extra)}"


def render_page(
    request: HttpRequest, template: str, title: str, form: ReportForm, query: ReportQuery, **context: Any
) -> HttpResponse:
    now = datetime.now(UTC)
    nav = [
        ("Overview", link("analytics:overview", query), "overview"),
        ("Widgets", link("analytics:dashboard", query), "widgets"),
        ("Tool calls", link("analytics:tool_calls", query), "tool_calls"),
        ("Failing calls", link("analytics:failing_calls", query), "failing_calls"),
        ("Failing widget events", link("analytics:failing_events", query), "failing_events"),
        ("Evidence", link("analytics:evidence", query), "evidence"),
    ]
    active = context.get("active", "")
    fresh: Freshness = context.pop("freshness", None) or freshness(now)
    return render(
        request,
        template,
        {
            **admin.site.each_context(request),
            "title": title,
            "form": form,
            "query": query,
            "nav": nav,
            "now": now,
            "freshness": fresh,
            "min_events": settings.ANALYTICS_MIN_EVENTS,
            "ranges": preset_links(request, query),
            "more_filters": form.more_filters,
            "partial": query.end_time > now,
            "show_window": True,
            "show_bucket": active in ("widgets", "tool_calls"),
            "show_kind": active == "failing_events",
            "show_code": active == "failing_calls",
            **context,
        },
    )


def preset_links(request: HttpRequest, query: ReportQuery) -> list[dict[str, Any]]:
    """A link per preset: this page with the same filters (and sorting), the range replaced."""
    links = []
    for name in PRESETS:
        params = request.GET.copy()
        for dropped in (*TIME_PARAMS, "page", "csv"):
            params.pop(dropped, None)
        params["window"] = name
        links.append(
            {
                "name": name,
                "label": SHORT_LABELS[name],
                "title": PRESETS[name][0],
                "href": f"?{params.urlencode()}",
                "active": query.window == name,
            }
        )
    return links


def shown_table(request: HttpRequest, table: Table, *, limit: int | None = None) -> dict[str, Any]:
    """What `analytics/_table.html` renders of `table`, sorted as the request asks: its first
    `limit` rows and a link to show all of them (`<table id>-all=1`), or every row and a link back;
    each row's markup made here (`rows`: a template loop per cell costs more than the queries)."""
    table.sorted_by(request)
    total, param = len(table.rows), f"{table.id}-all"
    if limit is not None and total > limit and not request.GET.get(param):
        table.rows = table.rows[:limit]  # the cells of the rows shown only
    context = table.context(request)
    context["rows"] = [_row(cells) for cells in context["body"]]
    if limit is None or total <= limit:
        return context
    params = request.GET.copy()
    params.pop("csv", None)
    if request.GET.get(param):
        params.pop(param, None)
        context["fewer"] = {"limit": limit, "link": f"?{params.urlencode()}#{table.id}-title"}
        return context
    params[param] = "1"
    context["more"] = {"shown": limit, "total": total, "link": f"?{params.urlencode()}#{table.id}-title"}
    return context


def whole_days(query: ReportQuery) -> ReportQuery:
    """The whole days a window of hours falls in (for the reports that are rolled up by day only:
    the widget funnel, the old callers)."""
    return query.whole_days


def csv_export(
    request: HttpRequest, query: ReportQuery, tables: Mapping[str, Callable[[], Table]]
) -> HttpResponse | None:
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
