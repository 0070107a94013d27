"""The ranking rule (`rank`; docs/analytics.md and ADR 40 say it in words), kept in one place so the
page, the API and the tests read the same rule.

Each host (and tool) has three failure rates: server and upstream errors / calls, caller errors /
calls (`CALLER_ERRORS`) and widget failures / widgets that reported. A rate counts only from at
least `ANALYTICS_MIN_EVENTS` events in the window. Its *baseline* is the same host's rate over the
baseline period (`Window.baseline`: the 7 whole UTC days before the window's first day, or for a
window of 7 days or more the window of the same length before it); a host with fewer than
`ANALYTICS_MIN_EVENTS` events there is compared with every host's rate over that period (with 0
when nothing at all was stored then). A host's change is the largest rise of its rates over their
baselines, in percentage points, and hosts are ranked by it, largest first; ties, and hosts whose
rates all stay at their baselines, by their highest rate. Hosts with no rate from enough events
come after every other, by failures. So a host that broke three hours ago leads a steady offender
with a higher but unchanged rate, and a host with three calls cannot lead at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings

from analytics.funnel import FunnelRow
from analytics.overview.sparklines import Series
from analytics.overview.tally import Tally

RISE = 0.05
"""A rate this far (5 percentage points) above its baseline is *up*: the headline names the host,
and its sparkline's trailing run of such buckets says since when."""


@dataclass(frozen=True, slots=True)
class Signal:
    """A failure rate a host is ranked by: failures of a tally over its sample."""

    name: str
    title: str
    noun: str
    failures: Callable[[Tally], int]
    sample: Callable[[Tally], int]

    def rate(self, tally: Tally) -> float | None:
        sample = self.sample(tally)
        return self.failures(tally) / sample if sample else None


SIGNALS: tuple[Signal, ...] = (
    Signal("server_errors", "server & upstream errors", "calls", lambda t: t.server_errors, lambda t: t.calls),
    Signal("caller_errors", "caller errors", "calls", lambda t: t.caller_errors, lambda t: t.calls),
    Signal("widget_failures", "widget failures", "widgets", lambda t: t.failed, lambda t: t.reported),
)
SIGNAL = {signal.name: signal for signal in SIGNALS}


@dataclass(frozen=True, slots=True)
class Change:
    """A host's leading signal: its rate in the window against its baseline."""

    signal: str
    rate: float
    sample: int
    baseline: float
    baseline_sample: int
    own_baseline: bool
    """The host's own baseline; False: too few of its events there, so every host's rate."""

    @property
    def delta(self) -> float:
        """The rise, as a fraction (0.72 is 72 percentage points)."""
        return self.rate - self.baseline

    @property
    def up(self) -> bool:
        return self.delta >= RISE


def leading_change(tally: Tally, own: Tally | None, fleet: Tally, min_events: int) -> Change | None:
    """The largest rise of a host's rates over their baselines, among the rates from at least
    `min_events` events; the host's own baseline when it has `min_events` events there, else the
    fleet's (every host's) rate over the baseline period. None: no rate from enough events."""
    best: Change | None = None
    for signal in SIGNALS:
        sample = signal.sample(tally)
        if sample < min_events:
            continue
        base = own if own is not None and signal.sample(own) >= min_events else fleet
        base_sample = signal.sample(base)
        change = Change(
            signal.name,
            signal.failures(tally) / sample,
            sample,
            signal.failures(base) / base_sample if base_sample else 0.0,
            base_sample,
            base is own,
        )
        if best is None or (change.delta, change.rate) > (best.delta, best.rate):
            best = change
    return best


def rank(
    now: Mapping[str, Tally], baseline: Mapping[str, Tally], fleet: Tally, *, min_events: int
) -> list[tuple[str, Change | None]]:
    """Every name of `now` with its leading change, most changed first (the module's ranking rule):
    by the rise over the baseline, then the rate; names without a rate from `min_events` events
    last, by their highest rate and failures."""

    def key(item: tuple[str, Change | None]) -> tuple:
        name, change = item
        tally = now[name]
        failures = tally.errors + tally.failed
        if change is None:
            rates = (tally.error_rate, tally.failure_rate)
            return (1, 0.0, -max((r for r in rates if r is not None), default=0.0), -failures, name)
        return (0, -round(change.delta, 9), -change.rate, -failures, name)

    return sorted(
        ((name, leading_change(tally, baseline.get(name), fleet, min_events)) for name, tally in now.items()),
        key=key,
    )


def since_when(points: Sequence[tuple[datetime, int, int]], baseline: float) -> tuple[datetime | None, bool]:
    """The start of the trailing run of buckets whose rate is `RISE` or more above `baseline`
    (buckets without events neither break nor start it), and whether the run reaches back to the
    first bucket with events (so it may have started earlier); None when the newest bucket with
    events is not up."""
    started, earlier = None, False
    for bucket, failures, sample in reversed(points):
        if not sample:
            continue
        if failures / sample < baseline + RISE:
            return started, False
        started, earlier = bucket, True
    return started, earlier


@dataclass(frozen=True, slots=True)
class Ranked:
    """A host or tool, with its figures in the window, the previous window and the baseline."""

    name: str
    now: Tally
    before: Tally
    small_sample: bool
    """No rate from `ANALYTICS_MIN_EVENTS` events: ranked after every other."""
    baseline: Tally = field(default_factory=Tally)
    change: Change | None = None
    since: datetime | None = None
    """When its leading rate went up (`since_when`); None when it is not up now."""
    since_earlier: bool = False
    """Up since the first bucket the sparkline has: maybe earlier."""
    trend: tuple[tuple[datetime, int, int], ...] = ()
    """Its leading signal (server errors when it has none) per bucket: (bucket, failures, sample)."""
    funnel: FunnelRow | None = None
    """Its widget funnel over the whole UTC days the window touches (hosts only)."""

    @property
    def signal(self) -> Signal:
        return SIGNAL[self.change.signal if self.change else "server_errors"]

    @property
    def top_code(self) -> str:
        """The error code behind its leading signal, when that is an error rate."""
        if self.signal.name == "widget_failures":
            return ""
        return self.now.top_code(caller=self.signal.name == "caller_errors")


def ranked(
    now: Mapping[str, Tally],
    before: Mapping[str, Tally],
    baseline: Mapping[str, Tally],
    fleet: Tally,
    series: Mapping[str, Series],
    buckets: Sequence[datetime],
    funnels: Mapping[str, FunnelRow] | None = None,
) -> tuple[Ranked, ...]:
    found = []
    for name, change in rank(now, baseline, fleet, min_events=settings.ANALYTICS_MIN_EVENTS):
        signal = SIGNAL[change.signal if change else "server_errors"]
        points = series.get(name, {})
        trend = tuple(
            (bucket, signal.failures(t), signal.sample(t)) if (t := points.get(bucket)) else (bucket, 0, 0)
            for bucket in buckets
        )
        since, earlier = since_when(trend, change.baseline) if change and change.up else (None, False)
        found.append(
            Ranked(
                name,
                now[name],
                before.get(name) or Tally(),
                small_sample=change is None,
                baseline=baseline.get(name) or Tally(),
                change=change,
                since=since,
                since_earlier=earlier,
                trend=trend,
                funnel=(funnels or {}).get(name),
            )
        )
    return tuple(found)
