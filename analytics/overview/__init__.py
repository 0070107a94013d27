"""The ops overview: is anything broken, where, since when. Headline figures of a window against
the window of the same length before it, the worst hosts and tools, and how fresh the data is.

A window is whole UTC hours, `[start, end)`: a preset (the last 24 hours, 7 days or 30 days, the
current hour included, so its last hour is partial) or whole days chosen by date. Its figures are
read from the rollups only, never the raw events: the whole UTC days inside the window from the
daily rollups, the hours at its edges from the hourly ones (`spans`), so a 30-day window reads 30
daily rows per combination and at most 46 hourly ones, and the figures are exact to the hour.

Every figure says what it counts and its sample; a rate from no sample is None, never zero. The
widget *unreported* rate (deliveries whose widget never reported back) comes from the widget
funnel (analytics/funnel.py), which is rolled up per UTC day: it covers the whole UTC days the
window touches, and says so in its note.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from django.conf import settings
from django.db.models import Q, Sum

from analytics.families import Families
from analytics.funnel import FunnelRow, funnel
from analytics.models import (
    LATENCY_COLUMNS,
    OUTCOME_COLUMNS,
    AppStatusDailyCount,
    AppStatusHourlyCount,
    IngestionMark,
    ToolCallDaily,
    ToolCallHourly,
)
from analytics.selectors import ReportQuery, _filtered
from analytics.tool_stats import OK, histogram_quantile
from core.app_status import Drawn, Failed

HOUR, DAY = timedelta(hours=1), timedelta(days=1)
PRESETS: dict[str, tuple[str, timedelta]] = {
    "24h": ("Last 24 hours", timedelta(hours=24)),
    "7d": ("Last 7 days", timedelta(days=7)),
    "30d": ("Last 30 days", timedelta(days=30)),
}
DEFAULT_PRESET = "24h"
WORST = 5
"""How many hosts and tools the overview ranks."""
_CALL_SUMS = ("calls", OUTCOME_COLUMNS[OK], "upstream_calls", "total_timed", *LATENCY_COLUMNS["total"])
_WIDGET_KINDS = (Drawn.KIND, Failed.KIND)


def floor_hour(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


@dataclass(frozen=True, slots=True)
class Window:
    """Whole UTC hours `[start, end)`."""

    start: datetime
    end: datetime
    label: str

    @classmethod
    def preset(cls, name: str, now: datetime) -> Window:
        """The last 24 hours, 7 days or 30 days: up to the end of the current hour."""
        label, span = PRESETS[name]
        end = floor_hour(now) + HOUR
        return cls(end - span, end, label)

    @classmethod
    def days(cls, query: ReportQuery) -> Window:
        """The whole UTC days of a report query (or its window of hours)."""
        label = f"{query.start:%Y-%m-%d} to {query.end:%Y-%m-%d}" if query.since is None else "Chosen hours"
        return cls(query.start_time, query.end_time, label)

    @property
    def previous(self) -> Window:
        """The window of the same length just before this one."""
        return Window(self.start - (self.end - self.start), self.start, "previous")

    @property
    def hours(self) -> int:
        return (self.end - self.start) // HOUR


def spans(start: datetime, end: datetime) -> tuple[list[tuple[datetime, datetime]], tuple[datetime, datetime] | None]:
    """How rollups cover `[start, end)` (whole hours): the hourly ranges at the edges, and the
    range of whole UTC days between them (None when no whole day fits)."""
    first_day = start.replace(hour=0) + (DAY if start.hour else timedelta())
    last_day = end.replace(hour=0)
    if first_day >= last_day:
        return [(start, end)], None
    edges = [(a, b) for a, b in ((start, first_day), (last_day, end)) if a < b]
    return edges, (first_day, last_day)


def _rows(
    query: ReportQuery,
    window: Window,
    hourly: Any,
    daily: Any,
    by: Sequence[str],
    sums: Mapping[str, Any],
    where: Q | None = None,
) -> list[dict[str, Any]]:
    """`sums` per group of `by` over the window: the daily rollup for its whole days, the hourly
    one for its edges (the query's host, tool, tenant and backend filters applied)."""
    hours, days = spans(window.start, window.end)
    sets = []
    if hours:
        covered = Q()
        for a, b in hours:
            covered |= Q(hour__gte=a, hour__lt=b)
        sets.append(hourly.objects.filter(covered))
    if days is not None:
        sets.append(daily.objects.filter(day__gte=days[0], day__lt=days[1]))
    merged: dict[tuple, dict[str, Any]] = {}
    for rows in sets:
        rows = _filtered(rows.filter(where) if where is not None else rows, query)
        for row in rows.values(*by).annotate(**sums).order_by():
            key = tuple(row[name] for name in by)
            found = merged.setdefault(key, {**dict(zip(by, key, strict=True)), **dict.fromkeys(sums, 0)})
            for name in sums:
                found[name] += row[name] or 0
    return list(merged.values())


@dataclass(slots=True)
class Tally:
    """What one window holds for one group (everything, a host or a tool)."""

    calls: int = 0
    ok: int = 0
    upstream_calls: int = 0
    timed: int = 0
    latency: list[int] = field(default_factory=lambda: [0] * len(LATENCY_COLUMNS["total"]))
    drawn: int = 0
    failed: int = 0

    @property
    def errors(self) -> int:
        return self.calls - self.ok

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.calls if self.calls else None

    @property
    def reported(self) -> int:
        """Widgets that reported back (drawn + failed): the failure rate's sample."""
        return self.drawn + self.failed

    @property
    def failure_rate(self) -> float | None:
        return self.failed / self.reported if self.reported else None

    @property
    def p95_ms(self) -> float | None:
        return histogram_quantile(0.95, self.timed, self.latency)

    def add_calls(self, row: Mapping[str, Any]) -> None:
        self.calls += int(row["calls"])
        self.ok += int(row[OUTCOME_COLUMNS[OK]])
        self.upstream_calls += int(row["upstream_calls"])
        self.timed += int(row["total_timed"])
        for index, column in enumerate(LATENCY_COLUMNS["total"]):
            self.latency[index] += int(row[column])

    def add_widgets(self, kind: str, count: int) -> None:
        if kind == Drawn.KIND:
            self.drawn += count
        elif kind == Failed.KIND:
            self.failed += count


@dataclass(slots=True)
class Tallies:
    """A window's tallies: in all, per host (client or family) and per tool."""

    total: Tally = field(default_factory=Tally)
    hosts: dict[str, Tally] = field(default_factory=dict)
    tools: dict[str, Tally] = field(default_factory=dict)
    widgets_counted: bool = True
    """False when a filter widget events do not record (tenant, backend) is on."""


def tallies(query: ReportQuery, window: Window, host: Callable[[str], str] | None = None) -> Tallies:
    """The window's tool calls and widget reports, per host and per tool, from the rollups."""
    result = Tallies(widgets_counted=not query.call_filters)
    name_of = host or (lambda client: client)
    sums = {name: Sum(name) for name in _CALL_SUMS}
    for row in _rows(query, window, ToolCallHourly, ToolCallDaily, ("client", "tool"), sums):
        for tally in (result.total, _of(result.hosts, name_of(row["client"])), _of(result.tools, row["tool"])):
            tally.add_calls(row)
    if result.widgets_counted:
        where = Q(kind__in=_WIDGET_KINDS)
        count = {"count": Sum("count")}
        for row in _rows(
            query, window, AppStatusHourlyCount, AppStatusDailyCount, ("client", "tool", "kind"), count, where
        ):
            for tally in (result.total, _of(result.hosts, name_of(row["client"])), _of(result.tools, row["tool"])):
                tally.add_widgets(row["kind"], int(row["count"]))
    return result


def _of(tallies: dict[str, Tally], name: str) -> Tally:
    if (found := tallies.get(name)) is None:
        found = tallies[name] = Tally()
    return found


Unit = Literal["count", "rate", "ms"]


@dataclass(frozen=True, slots=True)
class Figure:
    """A headline figure: this window's value, the previous window's, and what it counts."""

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

    @property
    def change(self) -> float | None:
        """The change from the previous window: a ratio for counts and times, percentage points
        (as a fraction) for rates; None when either side has no value (or a count was zero)."""
        if self.value is None or self.previous is None:
            return None
        if self.unit == "rate":
            return self.value - self.previous
        return (self.value - self.previous) / self.previous if self.previous else None


@dataclass(frozen=True, slots=True)
class Ranked:
    """A host or tool among the worst, with its figures now and in the previous window."""

    name: str
    now: Tally
    before: Tally
    small_sample: bool


@dataclass(frozen=True, slots=True)
class Freshness:
    """How far the stored events reach and when ingestion last ran (IngestionMark)."""

    data_up_to: datetime | None
    last_ingest: datetime | None
    kept_from: datetime | None
    lag: timedelta | None
    lagging: bool
    threshold: timedelta


@dataclass(frozen=True, slots=True)
class Overview:
    window: Window
    previous: Window
    figures: tuple[Figure, ...]
    worst_hosts: tuple[Ranked, ...]
    worst_tools: tuple[Ranked, ...]
    widgets_counted: bool
    freshness: Freshness
    partial_hour: bool
    """The window's last hour has not ended yet (a preset): its counts are still growing."""


UNREPORTED_RATE = "widget_unreported_rate"


def unreported_rate(query: ReportQuery, window: Window) -> Figure:
    """Deliveries past the grace window that no widget report joined, of the whole UTC days the
    window touches and of the days before them (analytics/funnel.py)."""
    description = (
        "Results delivered with app data whose widget never reported back (neither drawn, failed nor "
        "cancelled), of those past the grace window."
    )
    if query.call_filters:
        return Figure(
            UNREPORTED_RATE,
            "Widget unreported rate",
            "rate",
            description,
            note="Widget events record no tenant or backend.",
        )
    first, last = window.start.date(), (window.end - timedelta(microseconds=1)).date()
    days = (last - first).days + 1
    now = _total(funnel(replace(query, start=first, end=last, since=None, until=None), by=()))
    before = _total(
        funnel(
            replace(query, start=first - timedelta(days=days), end=first - timedelta(days=1), since=None, until=None),
            by=(),
        )
    )
    settled = now.sums["delivered"] - now.pending
    return Figure(
        UNREPORTED_RATE,
        "Widget unreported rate",
        "rate",
        description,
        now.unreported_rate,
        before.unreported_rate,
        sample=f"{now.never_reported:,} of {settled:,} deliveries",
        note=f"Whole UTC days {first:%Y-%m-%d} to {last:%Y-%m-%d}.",
    )


def _total(rows: list[FunnelRow]) -> FunnelRow:
    return rows[0] if rows else FunnelRow(None, None, None, None, None)


def overview(query: ReportQuery, window: Window, *, now: datetime | None = None) -> Overview:
    """The overview of `window` against the window before it, with `query`'s filters (tenant,
    backend, host, tool, hosts by family)."""
    now = now or datetime.now(UTC)
    host = Families.load().family_of if query.group == "family" else None
    current, before = tallies(query, window, host), tallies(query, window.previous, host)
    now_t, then_t = current.total, before.total
    widgets_note = "" if current.widgets_counted else "Widget events record no tenant or backend."
    figures = (
        Figure("calls", "Tool calls", "count", "Tool calls, every outcome.", now_t.calls, then_t.calls, sample=""),
        Figure(
            "error_rate",
            "Error rate",
            "rate",
            "Calls that ended with an error code / all calls.",
            now_t.error_rate,
            then_t.error_rate,
            sample=f"{now_t.errors:,} of {now_t.calls:,} calls",
            drill="calls",
        ),
        Figure(
            "widget_failure_rate",
            "Widget failure rate",
            "rate",
            "Widgets that reported `App failed` / widgets that reported (drawn + failed).",
            now_t.failure_rate if current.widgets_counted else None,
            then_t.failure_rate if current.widgets_counted else None,
            sample=f"{now_t.failed:,} of {now_t.reported:,} widgets" if current.widgets_counted else "",
            drill="widgets" if current.widgets_counted else "",
            available=True,
            note=widgets_note,
        ),
        unreported_rate(query, window),
        Figure(
            "p95_ms",
            "p95 latency",
            "ms",
            "95th percentile of a call's total time (from the histograms).",
            now_t.p95_ms,
            then_t.p95_ms,
            sample=f"{now_t.timed:,} timed calls",
        ),
        Figure(
            "upstream_calls",
            "TomTom requests",
            "count",
            "Requests made to TomTom, retries included: what the calls cost.",
            now_t.upstream_calls,
            then_t.upstream_calls,
        ),
    )
    return Overview(
        window=window,
        previous=window.previous,
        figures=figures,
        worst_hosts=worst(current.hosts, before.hosts),
        worst_tools=worst(current.tools, before.tools),
        widgets_counted=current.widgets_counted,
        freshness=freshness(now),
        partial_hour=window.end > now,
    )


def badness(tally: Tally, min_events: int) -> tuple[bool, float, int]:
    """How bad a host or tool looks: the higher of its error rate and widget failure rate, each
    counted only from at least `min_events` events (a rate from three events is not a signal);
    then its failures. Sorted descending: the sampled first."""
    rates = [
        rate
        for rate, sample in ((tally.error_rate, tally.calls), (tally.failure_rate, tally.reported))
        if rate is not None and sample >= min_events
    ]
    if rates:
        return True, max(rates), tally.errors + tally.failed
    fallback = max((r for r in (tally.error_rate, tally.failure_rate) if r is not None), default=0.0)
    return False, fallback, tally.errors + tally.failed


def worst(now: Mapping[str, Tally], before: Mapping[str, Tally], count: int = WORST) -> tuple[Ranked, ...]:
    """The `count` worst of `now` by `badness`, those without failures left out."""
    min_events = settings.ANALYTICS_MIN_EVENTS
    ranked = sorted(
        ((badness(tally, min_events), name) for name, tally in now.items() if tally.errors or tally.failed),
        key=lambda pair: (not pair[0][0], -pair[0][1], -pair[0][2], pair[1]),
    )
    return tuple(
        Ranked(name, now[name], before.get(name) or Tally(), small_sample=not sampled)
        for (sampled, _, _), name in ranked[:count]
    )


def freshness(now: datetime | None = None, marks: Iterable[IngestionMark] | None = None) -> Freshness:
    """The newest event stored and the last ingest over every family; lagging when the newest
    event is older than ANALYTICS_INGEST_LAG_SECONDS."""
    now = now or datetime.now(UTC)
    found = list(IngestionMark.objects.all() if marks is None else marks)
    data_up_to = max((m.data_up_to for m in found if m.data_up_to), default=None)
    last_ingest = max((m.last_ingest for m in found if m.last_ingest), default=None)
    kept_from = max((m.kept_from for m in found if m.kept_from), default=None)
    threshold = timedelta(seconds=settings.ANALYTICS_INGEST_LAG_SECONDS)
    lag = now - data_up_to if data_up_to else None
    return Freshness(data_up_to, last_ingest, kept_from, lag, lag is None or lag > threshold, threshold)
