"""Widget failures by host: a summary line, the failure-rate chart, the failures by host and tool
(the worst first, ten rows before "show all"), the widget funnel by host and tool, and folded away
the funnel by answer size and the callers of old tool names and inputs.

The chart and the failure table cover the range exactly (hourly rollups at a window's edges); the
funnel and the old callers are rolled up per UTC day, so they cover the whole days the range
touches, and the page says so."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from analytics.charts import failure_rate_chart
from analytics.funnel import FAILED_COLUMNS, FIGURE_NAMES, GUARD_HELP, SIZE_LABELS, FunnelRow, funnel
from analytics.models import FAILING_KINDS
from analytics.selectors import FailureRow, ReportQuery, failure_counts, old_callers
from analytics.stats import COUNT_STATS, FAILURE_RATE, STAT_NAMES
from analytics.tables import Col, Table, as_count, as_rate
from analytics.views.base import (
    csv_export,
    filters,
    form_and_query,
    link,
    narrowed,
    render_page,
    shown_table,
    whole_days,
)

_DRILL_KIND = {stat.name: stat.kind for stat in COUNT_STATS if stat.kind in FAILING_KINDS}
"""Count columns whose figure links to the events behind it."""
SHOWN_ROWS = 10
"""Rows a table shows before its "show all" link."""


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    form, query = form_and_query(request)
    days = whole_days(query)
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
    failures = failure_counts(query, by=("client", "tool"))
    funnel_rows = funnel(days, by=("client", "tool"))
    tables = {
        "failure-table": lambda: _failure_table(query, failures),
        "funnel-table": lambda: _funnel_table(days, funnel_rows),
        "funnel-by-size": lambda: _funnel_by_size_table(days),
        "old-callers": lambda: _callers_table(days),
    }
    if (response := csv_export(request, query, tables)) is not None:
        return response
    chart = failure_rate_chart(
        query.buckets(datetime.now(UTC)),
        failure_counts(query, by=("bucket", "client")),
        query.bucket,
        min_events=settings.ANALYTICS_MIN_EVENTS,
        zoom=bool(form.cleaned_data.get("zoom")),
    )
    drawn = sum(row.counts["widgets_drawn"] for row in failures)
    failed = sum(row.counts["widgets_failed"] for row in failures)
    delivered = sum(row.sums["delivered"] for row in funnel_rows)
    return render_page(
        request,
        "analytics/dashboard.html",
        "Widget failures by host",
        form,
        query,
        active="widgets",
        chart=chart,
        summary={
            "reported": drawn + failed,
            "failed": failed,
            "rate": as_rate(failed / (drawn + failed)) if drawn + failed else None,
            "delivered": delivered,
            "never_reported": sum(row.never_reported for row in funnel_rows),
            "silent": sorted(
                {
                    row.client or ""
                    for row in funnel_rows
                    if row.never_reported and not row.sums["reported"] and not row.unjoined_reports
                }
                - {row.client or "" for row in funnel_rows if row.sums["reported"] or row.unjoined_reports}
            ),
        },
        days=days,
        failures=shown_table(request, tables["failure-table"](), limit=SHOWN_ROWS),
        callers=shown_table(request, tables["old-callers"](), limit=SHOWN_ROWS),
        funnel=shown_table(request, tables["funnel-table"](), limit=SHOWN_ROWS),
        funnel_by_size=shown_table(request, tables["funnel-by-size"]()),
        callers_open=any(name.startswith("old-callers") for name in request.GET),
        grace_minutes=round(settings.ANALYTICS_WIDGET_GRACE_SECONDS / 60, 1),
        funnel_api_link=f"{reverse('analytics_api:funnel')}?{filters(days)}",
        api_link=f"{reverse('analytics_api:failure_totals')}?{filters(query)}",
        events_link=link("analytics:failing_events", query),
    )


def _failure_table(query: ReportQuery, found: list[FailureRow]) -> Table:
    rows = [{"host": row.client, **row.as_dict()} for row in found]
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
    """The figures of a funnel table (docs/analytics.md, "Widget funnel"); the reports not taken as
    sent last (`GUARD_HELP`), so the `(over a session cap)` row shows what it counts."""
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
        *(
            Col(name, name.capitalize(), help_text, numeric=True, show=as_count)
            for name, help_text in GUARD_HELP.items()
        ),
    ]


def _funnel_rows(rows: list[FunnelRow], *dimensions: str) -> list[dict[str, Any]]:
    return [{**{name: getattr(row, name) for name in dimensions}, **row.figures()} for row in rows]


def _funnel_table(query: ReportQuery, found: list[FunnelRow]) -> Table:
    rows = [{"host": row.client, **row.as_dict(("tool",))} for row in found]
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
