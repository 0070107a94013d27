"""The dashboards' line charts, drawn on the server as SVG geometry (no script, no CDN).

`failure_rate_chart` turns report rows grouped by bucket and client into one line per host:
the failure rate in each bucket. A bucket where the host drew no widget and none failed has no
rate; the line breaks there rather than pretending zero. `error_rate_chart` does the same for
tool calls. Every point says its sample size on hover, and a point from fewer than `min_events`
events is drawn hollow: a rate from three events is not a trend. The y axis runs 0 to 100 %, or
with `zoom` from 0 to just above the highest rate, so low series stay apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from analytics.selectors import Bucket, FailureRow
from analytics.stats import FAILURE_RATE
from analytics.tool_stats import CallRow

WIDTH, HEIGHT = 900, 300
LEFT, RIGHT, TOP, BOTTOM = 48, 40, 12, 40
PLOT_WIDTH, PLOT_HEIGHT = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
MAX_X_TICKS = 8
MAX_MARKED_BUCKETS = 200
"""Up to this many buckets each point gets a marker with a tooltip."""
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")


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


Series = dict[str, dict[datetime, tuple[float, int, str]]]
"""host -> bucket -> (rate, events behind it, what they were)."""
ZOOM_STEPS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0)


def failure_rate_chart(
    buckets: list[datetime], rows: Iterable[FailureRow], bucket: Bucket, *, min_events: int = 1, zoom: bool = False
) -> LineChart:
    """One line per host (client) through `buckets`; `rows` grouped by bucket and client."""
    series: Series = defaultdict(dict)
    for row in rows:
        rate = FAILURE_RATE.value(row.counts)
        if rate is not None and row.client is not None and row.bucket is not None:
            failed, drawn = row.counts["widgets_failed"], row.counts["widgets_drawn"]
            series[row.client][row.bucket] = (rate, failed + drawn, f"{failed} of {failed + drawn} widgets failed")
    return line_chart(buckets, series, bucket, min_events=min_events, zoom=zoom)


def error_rate_chart(
    buckets: list[datetime], rows: Iterable[CallRow], bucket: Bucket, *, min_events: int = 1, zoom: bool = False
) -> LineChart:
    """One line per host through `buckets`: the share of its tool calls that ended with an error."""
    series: Series = defaultdict(dict)
    for row in rows:
        errors, calls = row.errors, row.calls
        if row.client is not None and row.bucket is not None and calls:
            series[row.client][row.bucket] = (errors / calls, calls, f"{errors} of {calls} calls failed")
    return line_chart(buckets, series, bucket, min_events=min_events, zoom=zoom)


def line_chart(buckets: list[datetime], series: Series, bucket: Bucket, *, min_events: int, zoom: bool) -> LineChart:
    top = _zoomed_top(series) if zoom else 1.0
    label = "%Y-%m-%d %H:00" if bucket == "hour" else "%Y-%m-%d"
    marked = len(buckets) <= MAX_MARKED_BUCKETS
    lines = []
    for index, host in enumerate(sorted(series)):
        path: list[str] = []
        points: list[Point] = []
        gap = True
        for position, start in enumerate(buckets):
            if (found := series[host].get(start)) is None:
                gap = True
                continue
            rate, events, detail = found
            x, y = _x(position, len(buckets)), TOP + (1 - rate / top) * PLOT_HEIGHT
            path.append(f"{'M' if gap else 'L'}{x:.1f},{y:.1f}")
            title = f"{host}, {start.strftime(label)}: {rate:.1%} ({detail}; n = {events})"
            points.append(Point(x, y, title, hollow=events < min_events))
            gap = False
        lines.append(Line(host, PALETTE[index % len(PALETTE)], " ".join(path), tuple(points)))
    step = max(1, -(-len(buckets) // MAX_X_TICKS))
    x_ticks = tuple(
        Tick(_x(position, len(buckets)), start.strftime(label))
        for position, start in enumerate(buckets)
        if position % step == 0
    )
    y_ticks = tuple(
        Tick(TOP + (1 - share) * PLOT_HEIGHT, f"{share * top:.{0 if top >= 0.1 else 1}%}")
        for share in (0, 0.25, 0.5, 0.75, 1)
    )
    return LineChart(tuple(lines), x_ticks, y_ticks, marked)


def _zoomed_top(series: Series) -> float:
    """The smallest step in ZOOM_STEPS at or above every rate (100 % at most)."""
    highest = max((rate for points in series.values() for rate, _, _ in points.values()), default=1.0)
    return next((step for step in ZOOM_STEPS if step >= highest), 1.0)


def _x(position: int, count: int) -> float:
    if count == 1:
        return LEFT + PLOT_WIDTH / 2
    return LEFT + position / (count - 1) * PLOT_WIDTH
