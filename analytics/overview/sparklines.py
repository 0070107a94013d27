"""Each host's and tool's figures per bucket (hours, or UTC days for long windows): what the
sparklines draw and what "since when" reads, grouped in SQL by bucket so a host's trend costs no
query of its own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from django.db.models import Q, Sum

from analytics.models import OUTCOME_COLUMNS, AppStatusDailyCount, AppStatusHourlyCount, ToolCallDaily, ToolCallHourly
from analytics.overview.tally import _WIDGET_KINDS, Tally, _caller_sum
from analytics.overview.window import Window
from analytics.selectors import Bucket, ReportQuery, rollups
from analytics.tool_stats import OK
from core.app_status import Drawn, Failed

Series = dict[datetime, Tally]
"""A host's (or tool's) tallies per bucket: calls, errors by class, widget reports (no latency)."""


def trends(
    query: ReportQuery, window: Window, bucket: Bucket, host: Callable[[str], str] | None = None
) -> tuple[dict[str, Series], dict[str, Series]]:
    """Per host and per tool, the calls, caller errors and widget reports per bucket of `window`
    (the overview's `Window.trend`; by the day, the days it touches, whole): grouped in SQL by
    bucket and host and by bucket and tool for the calls, by bucket, host and tool for the widget
    reports (three grouped queries; never one per host)."""
    name_of = host or (lambda client: client)
    call_sums = {"s_calls": Sum("calls"), "s_ok": Sum(OUTCOME_COLUMNS[OK]), "s_caller": _caller_sum()}
    widget_sums = {
        "s_drawn": Sum("count", filter=Q(kind=Drawn.KIND), default=0),
        "s_failed": Sum("count", filter=Q(kind=Failed.KIND), default=0),
    }
    hosts: dict[str, Series] = {}
    tools: dict[str, Series] = {}
    bucketed = replace(query, bucket=bucket)
    if bucket == "day":  # the UTC days the window touches, whole: the daily rollup alone
        last = (window.end - timedelta(microseconds=1)).replace(hour=0, minute=0, second=0, microsecond=0)
        window = Window(window.start.replace(hour=0), last + timedelta(days=1), window.label)
    # Calls: by bucket and host, and by bucket and tool (two small groupings beat one large one).
    for rows in rollups(bucketed, ToolCallHourly, ToolCallDaily, bucketed=True, start=window.start, end=window.end):
        for dimension, found, named in (("client", hosts, name_of), ("tool", tools, None)):
            grouped = rows.values("bucket", dimension).annotate(**call_sums).order_by()
            for moment, name, calls, ok, caller_errors in grouped.values_list("bucket", dimension, *call_sums):
                tally = _point(found, named(name) if named else name, moment)
                tally.calls += int(calls or 0)
                tally.ok += int(ok or 0)
                tally.caller_errors += int(caller_errors or 0)
    if query.call_filters:
        return hosts, tools
    # Widget reports: few tools have a widget, so one grouping by bucket, host and tool.
    for rows in rollups(
        bucketed, AppStatusHourlyCount, AppStatusDailyCount, bucketed=True, start=window.start, end=window.end
    ):
        grouped = rows.filter(kind__in=_WIDGET_KINDS).values("bucket", "client", "tool").annotate(**widget_sums)
        for moment, client, tool, drawn, failed in grouped.order_by().values_list(
            "bucket", "client", "tool", *widget_sums
        ):
            for tally in (_point(hosts, name_of(client), moment), _point(tools, tool, moment)):
                tally.drawn += int(drawn)
                tally.failed += int(failed)
    return hosts, tools


def _point(found: dict[str, Series], name: str, bucket: datetime) -> Tally:
    series = found.setdefault(name, {})
    if (tally := series.get(bucket)) is None:
        tally = series[bucket] = Tally(latency=[])
    return tally
