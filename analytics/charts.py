"""The dashboard's line chart, drawn on the server as SVG geometry (no script, no CDN).

`failure_rate_chart` turns report rows grouped by bucket and client into one line per host:
the failure rate in each bucket, 0 to 100 %. A bucket where the host drew no widget and none
failed has no rate; the line breaks there rather than pretending zero.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from analytics.selectors import Bucket, FailureRow
from analytics.stats import FAILURE_RATE

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


def failure_rate_chart(buckets: list[datetime], rows: Iterable[FailureRow], bucket: Bucket) -> LineChart:
    """One line per host (client) through `buckets`; `rows` grouped by bucket and client."""
    rates: dict[str, dict[datetime, tuple[float, str]]] = defaultdict(dict)
    for row in rows:
        rate = FAILURE_RATE.value(row.counts)
        if rate is not None and row.client is not None and row.bucket is not None:
            failed, drawn = row.counts["widgets_failed"], row.counts["widgets_drawn"]
            rates[row.client][row.bucket] = (rate, f"{failed} of {failed + drawn} widgets failed")
    label = "%b %d %H:00" if bucket == "hour" else "%b %d"
    marked = len(buckets) <= MAX_MARKED_BUCKETS
    lines = []
    for index, host in enumerate(sorted(rates)):
        path: list[str] = []
        points: list[Point] = []
        gap = True
        for position, start in enumerate(buckets):
            if (found := rates[host].get(start)) is None:
                gap = True
                continue
            rate, detail = found
            x, y = _x(position, len(buckets)), TOP + (1 - rate) * PLOT_HEIGHT
            path.append(f"{'M' if gap else 'L'}{x:.1f},{y:.1f}")
            points.append(Point(x, y, f"{host}, {start.strftime(label)}: {rate:.1%} ({detail})"))
            gap = False
        lines.append(Line(host, PALETTE[index % len(PALETTE)], " ".join(path), tuple(points)))
    step = max(1, -(-len(buckets) // MAX_X_TICKS))
    x_ticks = tuple(
        Tick(_x(position, len(buckets)), start.strftime(label))
        for position, start in enumerate(buckets)
        if position % step == 0
    )
    y_ticks = tuple(Tick(TOP + (1 - share) * PLOT_HEIGHT, f"{share:.0%}") for share in (0, 0.25, 0.5, 0.75, 1))
    return LineChart(tuple(lines), x_ticks, y_ticks, marked)


def _x(position: int, count: int) -> float:
    if count == 1:
        return LEFT + PLOT_WIDTH / 2
    return LEFT + position / (count - 1) * PLOT_WIDTH
