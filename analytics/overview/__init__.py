"""The ops overview: what broke, where, since when. Headline figures of a window against the
window of the same length before it; every host and tool ranked by how far it moved from its own
baseline, each with a sparkline and since when it is off; the hosts whose widgets never report;
and the ingestion heartbeat, so live figures cannot stop silently.

A window is whole UTC hours, `[start, end)`: a preset (the last hour, 6 hours, 24 hours, 7 days or
30 days: the whole hours before the current one and the current hour so far) or whole days chosen
by date. Its figures are read from the rollups only, never the raw events: the whole UTC days inside
the window from the daily rollups, the hours at its edges from the hourly ones
(`analytics.selectors.rollups`), so a 30-day window reads 30 daily rows per combination and at most
46 hourly ones, and the figures are exact to the hour. No query runs per host: each figure is one
grouped query (two when a window has both whole days and edge hours); the baseline is whole days,
read from the daily rollups alone, and only its calls, caller errors and widget reports.

Every figure says what it counts and what it cannot see (`Figure.description`, `Figure.blind`); a
rate from no sample is None, never zero. The widget *unreported* figures (deliveries whose widget
never reported back) come from the widget funnel (analytics/funnel.py), which is rolled up per UTC
day: they cover the whole UTC days the window touches, and say so.

The parts, each using only those below it (import-linter checks this):

- ``report``: `overview`, the page's and the API's `Overview`, put together from the others.
- ``ranking``: the ranking rule (`rank`, `ranked`); ``figures``: the cards and the widget funnel
  behind *Never reported*; ``heartbeat``: how far each family of events reaches (`freshness`).
- ``sparklines``: each host's and tool's figures per bucket (`trends`).
- ``tally``: a window's sums per host and tool from the rollups (`tallies`, `Tally`).
- ``window``: the window and the periods it is compared with (`Window`).

Callers import from this package: `from analytics.overview import overview, Window`.
"""

from analytics.overview.figures import (
    UNREPORTED_RATE,
    Figure,
    Unit,
    WidgetFunnel,
    unreported_figure,
    widget_funnel,
)
from analytics.overview.heartbeat import FAMILY_LABELS, Freshness, Heartbeat, freshness
from analytics.overview.ranking import (
    RISE,
    SIGNAL,
    SIGNALS,
    Change,
    Ranked,
    Signal,
    leading_change,
    rank,
    ranked,
    since_when,
)
from analytics.overview.report import Overview, overview
from analytics.overview.sparklines import Series, trends
from analytics.overview.tally import Tallies, Tally, tallies
from analytics.overview.window import BASELINE, TREND, Window, floor_hour
from analytics.selectors import DEFAULT_PRESET, PRESETS, spans

__all__ = [
    "BASELINE",
    "DEFAULT_PRESET",
    "FAMILY_LABELS",
    "PRESETS",
    "RISE",
    "SIGNAL",
    "SIGNALS",
    "TREND",
    "UNREPORTED_RATE",
    "Change",
    "Figure",
    "Freshness",
    "Heartbeat",
    "Overview",
    "Ranked",
    "Series",
    "Signal",
    "Tallies",
    "Tally",
    "Unit",
    "WidgetFunnel",
    "Window",
    "floor_hour",
    "freshness",
    "leading_change",
    "overview",
    "rank",
    "ranked",
    "since_when",
    "spans",
    "tallies",
    "trends",
    "unreported_figure",
    "widget_funnel",
]
