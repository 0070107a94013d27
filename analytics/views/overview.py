"""The overview, the landing page: what broke, where, since when. First the host and the tool that
moved most against their own baseline, in a sentence; then the headline figures as cards against
the previous window (caller errors apart from server and upstream ones, the hosts whose widgets
never report); then every host and tool ranked by that change, each with a sparkline, its rates
and since when it is off (analytics/overview/ranking.py says the rule)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from analytics.charts import sparkline
from analytics.overview import RISE, SIGNAL, Change, Figure, Overview, Ranked, Window, overview
from analytics.selectors import PRESETS, ReportQuery
from analytics.tables import Col, Table, as_count, as_number, as_rate
from analytics.templatetags.analytics_tags import analytics_duration
from analytics.views.base import csv_export, filters, form_and_query, link, narrowed, render_page, shown_table

SHOWN_ROWS = 8
"""Hosts and tools the page lists before its "show all" link."""
CARDS = (
    "calls",
    "server_error_rate",
    "caller_error_rate",
    "widget_failure_rate",
    "widget_unreported_rate",
    "p95_ms",
    "upstream_calls",
)
"""The figures shown as cards, in order (the API has `error_rate`, every error together, too)."""
SERVER, CALLER = {"class": "server"}, {"class": "caller"}
ERROR_CLASS = {
    "server_error_rate": SERVER,
    "caller_error_rate": CALLER,
    "server_errors": SERVER,
    "caller_errors": CALLER,
}
"""The failing-calls page's class of a figure or signal (`?class=`): its calls only."""


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
    """What broke, where, since when: the most changed host and tool, headline figures against the
    previous window, every host and tool ranked by its change against its baseline, and the
    freshness of the data (analytics/overview/)."""
    form, query = form_and_query(request)
    label = PRESETS[query.window][0] if query.window else ("Chosen hours" if query.since else "")
    window = Window(query.start_time, query.end_time, label) if label else Window.days(query)
    found = overview(query, window, previous_by_host="csv" in request.GET)  # the page shows no host's previous
    drills = {"calls": "analytics:failing_calls", "widgets": "analytics:failing_events"}
    figures = found.figure
    cards = []
    for name in CARDS:
        figure = figures[name]
        change, worse = _change(figure)
        target = link(drills[figure.drill], query, **ERROR_CLASS.get(name, {})) if figure.drill else ""
        cards.append(
            Card(figure, _show(figure.value, figure.unit), _show(figure.previous, figure.unit), change, worse, target)
        )
    tables = {
        "worst-hosts": lambda: _ranked_table("worst-hosts", "Host", found, query, by_host=True),
        "worst-tools": lambda: _ranked_table("worst-tools", "Tool", found, query, by_host=False),
    }
    if (response := csv_export(request, query, tables)) is not None:
        return response
    silent = [
        (row.client, link("analytics:dashboard", narrowed(query, host=row.client or "")) + "#funnel-table-title")
        for row in found.silent_hosts
    ]
    return render_page(
        request,
        "analytics/overview.html",
        "Analytics overview",
        form,
        query,
        overview=found,
        freshness=found.freshness,
        cards=cards,
        active="overview",
        headline=[
            _headline(found, found.worst_hosts, "host", query, by_host=True),
            _headline(found, found.worst_tools, "tool", query, by_host=False),
        ],
        silent=silent,
        rise_pp=round(RISE * 100),
        figures=[figures[name] for name in CARDS],
        worst=[shown_table(request, t(), limit=SHOWN_ROWS) for t in tables.values()],
        previous_label=f"{found.previous.start:%Y-%m-%d %H:00} to {found.previous.end:%Y-%m-%d %H:00} UTC",
        baseline_label=f"{found.baseline.start:%Y-%m-%d %H:00} to {found.baseline.end:%Y-%m-%d %H:00} UTC",
        baseline_days=(found.baseline.end - found.baseline.start) // timedelta(days=1),
        baseline_is_previous=found.baseline.start == found.previous.start,
        api_link=f"{reverse('analytics_api:overview')}?{filters(query)}",
    )


def _own(query: ReportQuery, name: str, *, by_host: bool) -> ReportQuery:
    return narrowed(query, host=name) if by_host else narrowed(query, tool=name)


def _drill(query: ReportQuery, rank: Ranked, *, by_host: bool) -> str:
    """The drill-down behind a host's (or tool's) leading signal: its failing calls or widget events."""
    own = _own(query, rank.name, by_host=by_host)
    widgets = rank.signal.name == "widget_failures"
    if (widgets and rank.now.failed) or not rank.now.errors:
        return link("analytics:failing_events", own) if rank.now.failed else ""
    return link("analytics:failing_calls", own, **ERROR_CLASS.get(rank.signal.name, {}))


def _since(rank: Ranked, found: Overview) -> str:
    if rank.since is None:
        return ""
    when = "%Y-%m-%d %H:00" if found.bucket == "hour" else "%Y-%m-%d"
    return f"since {rank.since:{when}} UTC" + (" or earlier" if rank.since_earlier else "")


def _ago(moment: datetime | None) -> str:
    """How long ago `moment` was."""
    now = datetime.now(UTC)
    return "" if moment is None or moment > now else f"{analytics_duration(now - moment)} ago"


def _headline(
    found: Overview, ranks: tuple[Ranked, ...], noun: str, query: ReportQuery, *, by_host: bool
) -> dict[str, Any]:
    """The most changed host (or tool), when one of its rates is up (`RISE` over its baseline)."""
    top = ranks[0] if ranks else None
    if top is None or top.change is None or not top.change.up:
        return {"noun": noun, "rank": None}
    change, signal = top.change, SIGNAL[top.change.signal]
    return {
        "noun": noun,
        "rank": top,
        "signal": signal.title,
        "rate": f"{change.rate:.1%}",
        "failures": f"{signal.failures(top.now):,} of {change.sample:,} {signal.noun}",
        "baseline": _baseline_words(change, noun),
        "delta": f"{change.delta * 100:+.1f} pp",
        "since": _since(top, found),
        "ago": _ago(top.since),
        "code": top.top_code,
        "link": _drill(query, top, by_host=by_host),
    }


def _baseline_words(change: Change, noun: str) -> str:
    """How a change's baseline is said: its own, every host's, or none (nothing stored before)."""
    if not change.baseline_sample:
        return "with no baseline (no event in the baseline period): its rate is its change"
    whose = "its own baseline" if change.own_baseline else f"every {noun}'s baseline (too few of its own events then)"
    return f"against {change.baseline:.1%} of {change.baseline_sample:,} in {whose}"


def _ranked_table(table_id: str, title: str, found: Overview, query: ReportQuery, *, by_host: bool) -> Table:
    ranks = found.worst_hosts if by_host else found.worst_tools
    rows = []
    for position, rank in enumerate(ranks):
        now, before, change = rank.now, rank.before, rank.change
        signal = rank.signal
        funnel = rank.funnel
        rows.append(
            {
                "position": position,
                "name": rank.name,
                "rank": rank,
                "trend": sparkline(
                    rank.trend,
                    baseline=change.baseline if change else None,
                    label=f"{rank.name}: {signal.title}",
                    bucket=found.bucket,
                    noun=signal.noun,
                ),
                "signal": signal.name if change else "",
                "change": change.delta if change else None,
                "rate": change.rate if change else None,
                "baseline_rate": change.baseline if change else None,
                "since": rank.since,
                "calls": now.calls,
                "errors": now.errors,
                "error_rate": now.error_rate,
                "error_rate_change": _delta(now.error_rate, before.error_rate),
                "server_errors": now.server_errors,
                "server_error_rate": now.server_error_rate,
                "caller_errors": now.caller_errors,
                "caller_error_rate": now.caller_error_rate,
                "widgets_failed": now.failed,
                "reported": now.reported,
                "failure_rate": now.failure_rate,
                "failure_rate_change": _delta(now.failure_rate, before.failure_rate),
                "never_reported": funnel.never_reported if funnel else None,
                "unreported_rate": funnel.unreported_rate if funnel else None,
                "settled": (funnel.sums["delivered"] - funnel.pending) if funnel else 0,
                "p95_ms": now.p95_ms,
                "p95_change": _delta(now.p95_ms, before.p95_ms, ratio=True),
                "small_sample": rank.small_sample,
            }
        )
    min_events = settings.ANALYTICS_MIN_EVENTS

    def own(row: Mapping[str, Any]) -> ReportQuery:
        return _own(query, row["name"], by_host=by_host)

    def change_text(row: Mapping[str, Any]) -> str:
        if row["change"] is None:
            return "small sample"
        return f"{SIGNAL[row['signal']].title} {row['change'] * 100:+.1f} pp"

    def change_title(row: Mapping[str, Any]) -> str:
        rank: Ranked = row["rank"]
        if rank.change is None:
            return f"No rate from {min_events} events in the window: ranked after every other."
        c, signal = rank.change, SIGNAL[rank.change.signal]
        return (
            f"{signal.title}: {c.rate:.1%} of {c.sample:,} {signal.noun} in the window, "
            f"{_baseline_words(c, title.lower())}"
        )

    columns = [
        Col("position", "#", "Rank: most changed against its baseline first.", numeric=True, show=lambda v: str(v + 1)),
        Col(
            "name",
            title,
            "A cell opens the failing calls (or widget events) behind its leading rate.",
            header=True,
            wrap=True,
            link=lambda r: _drill(query, r["rank"], by_host=by_host),
        ),
        Col(
            "trend",
            "Trend",
            f"Its leading rate per {found.bucket} (by the hour: the last 25 hours at least; by the day: the days "
            "the window touches, whole); dashed: its baseline.",
            show=lambda v: v,
            sort_key="change",
        ),
        Col(
            "change_shown",
            "Change",
            f"The rate that rose most over its baseline (from at least {min_events} events), in percentage points: "
            "the ranking key.",
            numeric=True,
            sort_key="change",
            title_of=change_title,
            muted=lambda r: r["change"] is None,
        ),
        Col(
            "since",
            "Since",
            f"Start of the trailing run of {found.bucket}s with that rate {round(RISE * 100)} points or more above "
            "its baseline.",
            show=lambda v: "" if v is None else f"{v:%m-%d %H:00}" if found.bucket == "hour" else f"{v:%Y-%m-%d}",
            title_of=lambda r: _ago(r["since"]) + (" or earlier" if r["rank"].since_earlier else ""),
        ),
        Col(
            "server_error_rate",
            "Server errors",
            "Server and upstream errors / calls: ours or TomTom's to fix.",
            numeric=True,
            show=as_rate,
            link=lambda r: link("analytics:failing_calls", own(r), **SERVER) if r["server_errors"] else "",
            title_of=lambda r: f"{r['server_errors']:,} of {r['calls']:,} calls",
            muted=lambda r: r["calls"] < min_events,
        ),
        Col(
            "caller_error_rate",
            "Caller errors",
            "Caller errors / calls: arguments, tool name, backend or key; only the caller can fix them.",
            numeric=True,
            show=as_rate,
            link=lambda r: link("analytics:failing_calls", own(r), **CALLER) if r["caller_errors"] else "",
            title_of=lambda r: f"{r['caller_errors']:,} of {r['calls']:,} calls",
            muted=lambda r: r["calls"] < min_events,
        ),
        Col(
            "failure_rate",
            "Widget failures",
            "Widgets that failed / widgets that reported; cannot see widgets that never report.",
            numeric=True,
            show=as_rate,
            link=lambda r: link("analytics:failing_events", own(r)) if r["widgets_failed"] else "",
            title_of=lambda r: f"{r['widgets_failed']:,} of {r['reported']:,} widgets failed",
            muted=lambda r: r["reported"] < min_events,
        ),
    ]
    if by_host:
        columns.append(
            Col(
                "never_reported",
                "Never reported",
                "Widget deliveries no report joined, past the grace window: over the whole UTC days the window "
                "touches (the funnel is rolled up by day).",
                numeric=True,
                show=as_count,
                link=lambda r: (
                    link("analytics:dashboard", own(r)) + "#funnel-table-title" if r["never_reported"] else ""
                ),
                title_of=lambda r: (
                    f"{r['never_reported']:,} of {r['settled']:,} deliveries ({as_rate(r['unreported_rate'])})"
                    if r["never_reported"] is not None
                    else "No widget delivered"
                ),
            )
        )
    columns += [
        Col("calls", "Calls", numeric=True, show=as_count),
        Col("p95_ms", "p95 ms", "95th percentile of the total time.", numeric=True, show=as_number),
    ]
    for row in rows:
        row["change_shown"] = change_text(row)
    return Table(
        table_id,
        f"{title}s, most changed first",
        columns,
        rows,
        empty="No call and no widget report in this window.",
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
            "server_errors",
            "server_error_rate",
            "caller_errors",
            "caller_error_rate",
            "signal",
            "rate",
            "baseline_rate",
            "change",
            "since",
            *(("never_reported", "unreported_rate") if by_host else ()),
            "small_sample",
        ],
    )


def _delta(now: float | None, before: float | None, *, ratio: bool = False) -> float | None:
    if now is None or before is None:
        return None
    if ratio:
        return (now - before) / before if before else None
    return now - before
