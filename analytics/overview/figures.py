"""The overview's cards: a headline figure of the window against the previous one, saying what it
counts and what it cannot see; and the widget funnel behind the *Never reported* card, which is
rolled up per UTC day and so covers the whole days the window touches."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Literal

from analytics.funnel import FunnelRow, funnel
from analytics.overview.window import Window
from analytics.selectors import ReportQuery

Unit = Literal["count", "rate", "ms"]


@dataclass(frozen=True, slots=True)
class Figure:
    """A headline figure: this window's value, the previous window's, what it counts and what it
    cannot see."""

    name: str
    title: str
    unit: Unit
    description: str
    value: float | None = None
    previous: float | None = None
    sample: str = ""
    drill: Literal["calls", "widgets", ""] = ""
    """The drill-down behind the figure: the failing calls, or the failing widget events."""
    available: bool = True
    """False: the events do not record what it counts yet (the page keeps its place hidden)."""
    note: str = ""
    blind: str = ""
    """What the figure cannot see."""

    @property
    def change(self) -> float | None:
        """The change from the previous window: a ratio for counts and times, percentage points
        (as a fraction) for rates; None when either side has no value (or a count was zero)."""
        if self.value is None or self.previous is None:
            return None
        if self.unit == "rate":
            return self.value - self.previous
        return (self.value - self.previous) / self.previous if self.previous else None


UNREPORTED_RATE = "widget_unreported_rate"


@dataclass(frozen=True, slots=True)
class WidgetFunnel:
    """The funnel of the whole UTC days a window touches, per host, in all, and the days before."""

    first: date
    last: date
    now: FunnelRow
    before: FunnelRow
    hosts: dict[str, FunnelRow]

    @property
    def silent(self) -> tuple[FunnelRow, ...]:
        """Hosts with settled deliveries and not one report, joined or not: their widgets never
        report back (a host that does not run them, or strips what they need)."""
        return tuple(
            row
            for _, row in sorted(self.hosts.items(), key=lambda item: (-item[1].never_reported, item[0]))
            if row.never_reported > 0 and row.sums["reported"] == 0 and row.unjoined_reports == 0
        )


def widget_funnel(query: ReportQuery, window: Window) -> WidgetFunnel | None:
    """The funnel per host over the whole UTC days the window touches, and in all over the same
    number of days before; None when a filter widget events do not record is on."""
    if query.call_filters:
        return None
    first, last = window.start.date(), (window.end - timedelta(microseconds=1)).date()
    days = (last - first).days + 1
    rows = funnel(replace(query, start=first, end=last, since=None, until=None, window=""), by=("client",))
    before = funnel(
        replace(
            query,
            start=first - timedelta(days=days),
            end=first - timedelta(days=1),
            since=None,
            until=None,
            window="",
        ),
        by=(),
    )
    return WidgetFunnel(
        first,
        last,
        _sum(rows),
        before[0] if before else FunnelRow(None, None, None, None, None),
        {row.client: row for row in rows if row.client is not None},
    )


def _sum(rows: Iterable[FunnelRow]) -> FunnelRow:
    total = FunnelRow(None, None, None, None, None)
    for row in rows:
        for name, value in row.sums.items():
            total.sums[name] += value
        total.unjoined_reports += row.unjoined_reports
        total.pending += row.pending
    return total


def unreported_figure(found: WidgetFunnel | None) -> Figure:
    """Deliveries past the grace window that no widget report joined, of the whole UTC days the
    window touches, against as many days before them (analytics/funnel.py)."""
    description = (
        "Results delivered with app data whose widget never reported back (neither drawn, failed nor "
        "cancelled) / deliveries past the grace window (ANALYTICS_WIDGET_GRACE_SECONDS)."
    )
    blind = (
        "Hours: the funnel is rolled up per UTC day, so it covers the whole days the window touches. "
        "Why a widget stayed silent (a host that never runs it, a page closed first, a lost report)."
    )
    if found is None:
        return Figure(
            UNREPORTED_RATE,
            "Never reported",
            "rate",
            description,
            note="Widget events record no tenant or backend.",
            blind=blind,
        )
    settled = found.now.sums["delivered"] - found.now.pending
    return Figure(
        UNREPORTED_RATE,
        "Never reported",
        "rate",
        description,
        found.now.unreported_rate,
        found.before.unreported_rate,
        sample=f"{found.now.never_reported:,} of {settled:,} deliveries",
        note=f"Whole UTC days {found.first:%Y-%m-%d} to {found.last:%Y-%m-%d}.",
        blind=blind,
    )
