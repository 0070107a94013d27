"""The dashboards' line charts, drawn on the server as SVG geometry (no script, no CDN).

`failure_rate_chart` turns report rows grouped by bucket and client into one line per host:
the failure rate in each bucket. A bucket where the host drew no widget and none failed has no
rate; the line breaks there rather than pretending zero. `error_rate_chart` does the same for
tool calls. Every point says its sample size on hover, and a point from fewer than `min_events`
events is drawn hollow: a rate from three events is not a trend. The y axis runs 0 to 100 %, or
with `zoom` from 0 to just above the highest rate, so low series stay apart.

At most `TOP_SERIES` hosts get a line of their own: those with the most events in the range
(ties by name); the rest are summed into one `other` line (their failures over their events).
Colours are Paul Tol's "bright" scheme, chosen to stay distinct for colour-blind readers, and
`other` is grey; the template draws them as CSS variables (analytics/dashboard.css), so dark
mode (the admin's own theme switch) has its own shades.

The x axis is the buckets the page asks for (`ReportQuery.buckets(now)`): none that starts after
now, so a chart of a range that ends in the future stops at the current hour or day, and the chart
says its first and last bucket (`data-first-bucket`, `data-last-bucket`).

`sparkline` draws the overview's small trend of one rate per host or tool as inline SVG markup
(no script): the rate per bucket, a gap where a bucket had no events, the baseline dashed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.utils.html import format_html
from django.utils.safestring import SafeString

from analytics.selectors import Bucket, FailureRow
from analytics.stats import FAILURE_RATE
from analytics.tool_stats import CallRow

WIDTH, HEIGHT = 900, 300
LEFT, RIGHT, TOP, BOTTOM = 48, 40, 12, 40
PLOT_WIDTH, PLOT_HEIGHT = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
MAX_X_TICKS = 8
MAX_MARKED_BUCKETS = 200
"""Up to this many buckets each point gets a marker with a tooltip."""
TOP_SERIES = 6
PALETTE = tuple(f"var(--analytics-series-{index})" for index in range(1, TOP_SERIES + 1))
"""Tol's bright scheme (blue, red, green, yellow, cyan, purple), set in analytics/dashboard.css."""
OTHER = "other"
OTHER_COLOR = "var(--analytics-series-other)"


@dataclass(frozen=True, slots=True)
class Point:
    x: float
    y: float
    title: str
    hollow: bool = False
    """Fewer events than the chart's minimum behind this rate."""


@dataclass(frozen=True, slots=True)
class Line:
    host: str
    color: str
    index: int
    """1 to TOP_SERIES; 0 for `other`."""
    path: str
    """SVG path data; a new `M` after every bucket without a rate."""
    points: tuple[Point, ...]


@dataclass(frozen=True, slots=True)
class Tick:
    position: float
    label: str


@dataclass(frozen=True, slots=True)
class LineChart:
    lines: tuple[Line, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    marked: bool
    first: datetime | None = None
    """The first bucket on the x axis."""
    last: datetime | None = None
    """The last bucket on the x axis: never after now."""
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    top: int = TOP
    plot_width: int = PLOT_WIDTH
    plot_height: int = PLOT_HEIGHT

    @property
    def bottom(self) -> int:
        return self.top + self.plot_height

    @property
    def right(self) -> int:
        return self.left + self.plot_width


Series = dict[str, dict[datetime, tuple[int, int]]]
"""host -> bucket -> (failures, events): the rate is failures / events."""
ZOOM_STEPS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0)


def failure_rate_chart(
    buckets: list[datetime], rows: Iterable[FailureRow], bucket: Bucket, *, min_events: int = 1, zoom: bool = False
) -> LineChart:
    """One line per host (client) through `buckets`; `rows` grouped by bucket and client."""
    series: Series = defaultdict(dict)
    for row in rows:
        failed, drawn = row.counts[FAILURE_RATE.numerator], row.counts["widgets_drawn"]
        if failed + drawn and row.client is not None and row.bucket is not None:
            series[row.client][row.bucket] = (failed, failed + drawn)
    return line_chart(buckets, series, bucket, noun="widgets", min_events=min_events, zoom=zoom)


def error_rate_chart(
    buckets: list[datetime], rows: Iterable[CallRow], bucket: Bucket, *, min_events: int = 1, zoom: bool = False
) -> LineChart:
    """One line per host through `buckets`: the share of its tool calls that ended with an error."""
    series: Series = defaultdict(dict)
    for row in rows:
        errors, calls = row.errors, row.calls
        if row.client is not None and row.bucket is not None and calls:
            series[row.client][row.bucket] = (errors, calls)
    return line_chart(buckets, series, bucket, noun="calls", min_events=min_events, zoom=zoom)


def top_series(series: Series, count: int = TOP_SERIES) -> Series:
    """The `count` hosts with the most events, each its own; the rest summed as `other`."""
    sizes = sorted(series, key=lambda host: (-sum(events for _, events in series[host].values()), host))
    kept: Series = {host: series[host] for host in sizes[:count]}
    rest: dict[datetime, tuple[int, int]] = {}
    for host in sizes[count:]:
        for start, (failures, events) in series[host].items():
            before = rest.get(start, (0, 0))
            rest[start] = (before[0] + failures, before[1] + events)
    if rest:
        kept[OTHER] = rest
    return kept


def line_chart(
    buckets: list[datetime], series: Series, bucket: Bucket, *, noun: str, min_events: int, zoom: bool
) -> LineChart:
    series = top_series(series)
    top = _zoomed_top(series) if zoom else 1.0
    label = "%Y-%m-%d %H:00" if bucket == "hour" else "%Y-%m-%d"
    marked = len(buckets) <= MAX_MARKED_BUCKETS
    lines = []
    named = sorted(host for host in series if host != OTHER)
    for index, host in enumerate([*named, *([OTHER] if OTHER in series else [])]):
        path: list[str] = []
        points: list[Point] = []
        gap = True
        for position, start in enumerate(buckets):
            if (found := series[host].get(start)) is None:
                gap = True
                continue
            failures, events = found
            rate = failures / events
            x, y = _x(position, len(buckets)), TOP + (1 - rate / top) * PLOT_HEIGHT
            path.append(f"{'M' if gap else 'L'}{x:.1f},{y:.1f}")
            detail = f"{failures} of {events} {noun} failed"
            title = f"{host}, {start.strftime(label)}: {rate:.1%} ({detail}; n = {events})"
            points.append(Point(x, y, title, hollow=events < min_events))
            gap = False
        other = host == OTHER
        color = OTHER_COLOR if other else PALETTE[index % len(PALETTE)]
        lines.append(Line(host, color, 0 if other else index + 1, " ".join(path), tuple(points)))
    step = max(1, -(-len(buckets) // MAX_X_TICKS))
    tick = "%m-%d %H:00" if bucket == "hour" else label
    x_ticks = tuple(
        Tick(_x(position, len(buckets)), start.strftime(tick))
        for position, start in enumerate(buckets)
        if position % step == 0
    )
    y_ticks = tuple(
        Tick(TOP + (1 - share) * PLOT_HEIGHT, f"{share * top:.{0 if top >= 0.1 else 1}%}")
        for share in (0, 0.25, 0.5, 0.75, 1)
    )
    first, last = (buckets[0], buckets[-1]) if buckets else (None, None)
    return LineChart(tuple(lines), x_ticks, y_ticks, marked, first, last)


def _zoomed_top(series: Series) -> float:
    """The smallest step in ZOOM_STEPS at or above every rate (100 % at most)."""
    highest = max((f / n for points in series.values() for f, n in points.values()), default=1.0)
    return next((step for step in ZOOM_STEPS if step >= highest), 1.0)


def _x(position: int, count: int) -> float:
    if count == 1:
        return LEFT + PLOT_WIDTH / 2
    return LEFT + position / (count - 1) * PLOT_WIDTH


SPARK_WIDTH, SPARK_HEIGHT = 120, 26


def sparkline(
    points: Sequence[tuple[datetime, int, int]],
    *,
    baseline: float | None,
    label: str,
    bucket: Bucket,
    noun: str = "events",
) -> SafeString:
    """A rate per bucket (`points`: bucket, failures, sample) as a small inline SVG: a gap where a
    bucket has no events, the baseline as a dashed line, the last point marked. Its `<title>` says
    what it draws, its range and its newest value (`label` names the rate)."""
    if not points:
        return format_html("{}", "—")
    rates = [failures / sample if sample else None for _, failures, sample in points]
    top = max([r for r in rates if r is not None] + [baseline or 0.0, 0.05])
    step = SPARK_WIDTH / max(len(points) - 1, 1)
    path, gap, last = [], True, None
    for index, rate in enumerate(rates):
        if rate is None:
            gap = True
            continue
        x, y = index * step if len(points) > 1 else SPARK_WIDTH / 2, 2 + (1 - rate / top) * (SPARK_HEIGHT - 4)
        path.append(f"{'M' if gap else 'L'}{x:.1f},{y:.1f}")
        gap, last = False, (x, y)
    when = "%Y-%m-%d %H:00" if bucket == "hour" else "%Y-%m-%d"
    newest = next(((b, f, n) for b, f, n in reversed(points) if n), None)
    said = (
        f"{newest[1] / newest[2]:.1%} ({newest[1]} of {newest[2]} {noun}) in {newest[0]:{when}}" if newest else "none"
    )
    title = f"{label} per {bucket}, {points[0][0]:{when}} to {points[-1][0]:{when}} UTC: newest {said}" + (
        f"; baseline {baseline:.1%}" if baseline is not None else ""
    )
    base = (
        format_html(
            '<line class="spark-baseline" x1="0" x2="{}" y1="{y}" y2="{y}"></line>',
            SPARK_WIDTH,
            y=f"{2 + (1 - baseline / top) * (SPARK_HEIGHT - 4):.1f}",
        )
        if baseline is not None
        else ""
    )
    dot = (
        format_html('<circle class="spark-last" cx="{}" cy="{}" r="2"></circle>', *(f"{v:.1f}" for v in last))
        if last
        else ""
    )
    return format_html(
        '<svg class="sparkline" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{t}">'
        '<title>{t}</title>{base}<path d="{d}"></path>{dot}</svg>',
        w=SPARK_WIDTH,
        h=SPARK_HEIGHT,
        t=title,
        base=base,
        d=" ".join(path),
        dot=dot,
    )
