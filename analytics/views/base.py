"""What every dashboard page shares: its filters read into a query, the links that carry them to
another page, the page frame (navigation, freshness, which filters show) and the CSV download of
any of its tables."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from analytics.exports import csv_response
from analytics.families import FAMILY_PREFIX, Families
from analytics.forms import ReportForm
from analytics.models import ToolCallDaily
from analytics.overview import freshness
from analytics.selectors import ReportQuery, families_present, hosts_and_tools
from analytics.tables import Table


def form_and_query(request: HttpRequest, *, default_preset: str = "") -> tuple[ReportForm, ReportQuery]:
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


def render_page(
    request: HttpRequest, template: str, title: str, form: ReportForm, query: ReportQuery, **context: Any
) -> HttpResponse:
    nav = [
        ("Overview", link("analytics:overview", query), "overview"),
        ("Widgets", link("analytics:dashboard", whole_days(query)), "widgets"),
        ("Tool calls", link("analytics:tool_calls", whole_days(query)), "tool_calls"),
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


def whole_days(query: ReportQuery) -> ReportQuery:
    """The whole days a window of hours falls in (for the pages that report by day)."""
    return narrowed(query, since=None, until=None)


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
