"""The overview, the landing page: is anything broken, where, since when. Headline figures as cards
against the previous window, and the worst hosts and tools with how each of their figures moved."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from analytics.overview import DEFAULT_PRESET, Figure, Ranked, Window, overview
from analytics.selectors import ReportQuery
from analytics.tables import Col, Table, as_count, as_number, as_rate
from analytics.views.base import csv_export, filters, form_and_query, link, narrowed, render_page, whole_days


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
    form, query = form_and_query(request, default_preset=DEFAULT_PRESET)
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
    if (response := csv_export(request, query, tables)) is not None:
        return response
    return render_page(
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
                link("analytics:failing_events", whole_days(own(r)) if query.since is None else own(r))
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
