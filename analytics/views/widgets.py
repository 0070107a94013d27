"""Widget failures by host: the failure-rate chart, the failures by host and tool, the widget
funnel (by host and tool, and by answer size) and the callers of old tool names and inputs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from analytics.charts import failure_rate_chart
from analytics.funnel import FAILED_COLUMNS, FIGURE_NAMES, SIZE_LABELS, FunnelRow, funnel
from analytics.models import FAILING_KINDS
from analytics.selectors import ReportQuery, failure_counts, old_callers
from analytics.stats import COUNT_STATS, FAILURE_RATE, STAT_NAMES
from analytics.tables import Col, Table, as_count, as_rate
from analytics.views.base import csv_export, filters, form_and_query, link, narrowed, render_page, whole_days

_DRILL_KIND = {stat.name: stat.kind for stat in COUNT_STATS if stat.kind in FAILING_KINDS}
"""Count columns whose figure links to the events behind it."""


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    form, query = form_and_query(request)
    query = whole_days(query)
    if query.call_filters:
        return render_page(
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
    if (response := csv_export(request, query, tables)) is not None:
        return response
    chart = failure_rate_chart(
        query.buckets(),
        failure_counts(query, by=("bucket", "client")),
        query.bucket,
        min_events=settings.ANALYTICS_MIN_EVENTS,
        zoom=bool(form.cleaned_data.get("zoom")),
    )
    return render_page(
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
