"""The named stats of the widget-failure report: one registry for the dashboard, the API and the docs.

A count stat is the number of app-status events of one kind. A rate stat is a ratio of counts,
computed when it is read and never stored, so it stays right however the counts are summed
(by hour, by day, over a whole range). docs/analytics.md describes every stat by name; a test
keeps the two in step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from analytics.models import UNKNOWN_KIND
from core.app_status import Cancelled, DecodeFailed, Drawn, Failed, FetchFailed, HostDropped, TooLarge


@dataclass(frozen=True, slots=True)
class CountStat:
    """How many app-status events of `kind` there were."""

    name: str
    kind: str
    title: str
    description: str


@dataclass(frozen=True, slots=True)
class RateStat:
    """`numerator / sum(denominator)` over count stats; None when the denominator is zero."""

    name: str
    numerator: str
    denominator: tuple[str, ...]
    title: str
    description: str

    def value(self, counts: Mapping[str, int]) -> float | None:
        total = sum(counts[name] for name in self.denominator)
        return counts[self.numerator] / total if total else None


COUNT_STATS: tuple[CountStat, ...] = (
    CountStat("widgets_drawn", Drawn.KIND, "Drawn", "Widgets that reported `App drawn`."),
    CountStat("widgets_failed", Failed.KIND, "Failed", "Widgets that reported `App failed`."),
    CountStat(
        "widgets_cancelled",
        Cancelled.KIND,
        "Cancelled",
        "Widgets that reported `App cancelled`: the host cancelled the call before it drew.",
    ),
    CountStat(
        "too_large",
        TooLarge.KIND,
        "Too large",
        "Results whose app data did not fit even simplified, so the widget cannot draw.",
    ),
    CountStat(
        "host_dropped",
        HostDropped.KIND,
        "Host dropped",
        "Inline app data the host lost: the widget had to ask for it again.",
    ),
    CountStat(
        "decode_failed",
        DecodeFailed.KIND,
        "Decode failed",
        "Inline app data that reached the widget, which could not decode it.",
    ),
    CountStat(
        "fetch_failed",
        FetchFailed.KIND,
        "Fetch failed",
        "Widget requests for app data that failed.",
    ),
    CountStat(
        "unknown_events",
        UNKNOWN_KIND,
        "Unknown",
        "App-status lines with a message the contract does not know (a newer server, or a typo).",
    ),
)

FAILURE_RATE = RateStat(
    "failure_rate",
    numerator="widgets_failed",
    denominator=("widgets_drawn", "widgets_failed"),
    title="Failure rate",
    description="`widgets_failed / (widgets_drawn + widgets_failed)`; empty when no widget reported.",
)

RATE_STATS: tuple[RateStat, ...] = (FAILURE_RATE,)

STAT_NAMES: tuple[str, ...] = (*(stat.name for stat in COUNT_STATS), *(stat.name for stat in RATE_STATS))
REPORT_KINDS: frozenset[str] = frozenset(stat.kind for stat in COUNT_STATS)
"""The kinds the widget-failure report counts."""
