"""The overview of a window: the cards, the ranked hosts and tools, the silent hosts and the
heartbeat, put together from the other parts so the page and the API show the same figures."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

from analytics.families import Families
from analytics.funnel import FunnelRow
from analytics.overview.figures import Figure, unreported_figure, widget_funnel
from analytics.overview.heartbeat import Freshness, freshness
from analytics.overview.ranking import Ranked, ranked
from analytics.overview.sparklines import trends
from analytics.overview.tally import tallies
from analytics.overview.window import TREND, Window
from analytics.selectors import Bucket, ReportQuery
from analytics.tool_stats import CALLER_ERRORS


@dataclass(frozen=True, slots=True)
class Overview:
    window: Window
    previous: Window
    figures: tuple[Figure, ...]
    worst_hosts: tuple[Ranked, ...]
    """Every host with calls or widget reports in the window, most changed first (`rank`)."""
    worst_tools: tuple[Ranked, ...]
    widgets_counted: bool
    freshness: Freshness
    partial_hour: bool
    """The window's last hour has not ended yet (a preset): its counts are still growing."""
    baseline: Window
    """The period the ranking compares each host with (`Window.baseline`)."""
    bucket: Bucket
    """The sparklines' bucket: hours for windows up to `TREND` (25 hours), else UTC days."""
    silent_hosts: tuple[FunnelRow, ...] = ()
    """Hosts whose widgets never reported back: deliveries past the grace window, no report."""
    funnel_days: tuple[date, date] | None = None
    """The whole UTC days the funnel figures cover; None when widget figures are not counted."""

    @property
    def figure(self) -> dict[str, Figure]:
        return {figure.name: figure for figure in self.figures}


def overview(
    query: ReportQuery, window: Window, *, now: datetime | None = None, previous_by_host: bool = True
) -> Overview:
    """The overview of `window` against the window before it (the cards) and each host's and
    tool's baseline (the ranking), with `query`'s filters (tenant, backend, host, tool, hosts by
    family). Without `previous_by_host` the previous window is summed in all only (the cards'
    figures; each host's `before` is then empty), which is all the page shows."""
    now = now or datetime.now(UTC)
    host = Families.load().family_of if query.group == "family" else None
    baseline_window, previous = window.baseline, window.previous
    current = tallies(query, window, host)
    before = tallies(query, previous, host, by_host=previous_by_host)
    same = (baseline_window.start, baseline_window.end) == (previous.start, previous.end)
    baseline = before if same else tallies(query, baseline_window, host, light=True)
    trend = window.trend
    bucket: Bucket = "hour" if window.end - window.start <= TREND else "day"
    buckets = replace(query, bucket=bucket).narrowed_to(trend.start, trend.end).buckets(now)
    host_series, tool_series = trends(query, trend, bucket, host)
    widgets = widget_funnel(query, window)
    now_t, then_t = current.total, before.total
    counted = current.widgets_counted
    widgets_note = "" if counted else "Widget events record no tenant or backend."
    not_ingested = "Events not ingested yet (see the heartbeat above)."
    figures = (
        Figure(
            "calls",
            "Tool calls",
            "count",
            "Tool calls, every outcome.",
            now_t.calls,
            then_t.calls,
            blind=f"Calls that never reached the server (a host that failed before calling). {not_ingested}",
        ),
        Figure(
            "error_rate",
            "Error rate",
            "rate",
            "Calls that ended with an error code / all calls: caller, server and upstream errors together.",
            now_t.error_rate,
            then_t.error_rate,
            sample=f"{now_t.errors:,} of {now_t.calls:,} calls",
            drill="calls",
            blind="Wrong answers that ended `ok`. " + not_ingested,
        ),
        Figure(
            "widget_failure_rate",
            "Widget failures",
            "rate",
            "Widgets that reported `App failed` / widgets that reported (drawn + failed).",
            now_t.failure_rate if counted else None,
            then_t.failure_rate if counted else None,
            sample=f"{now_t.failed:,} of {now_t.reported:,} widgets" if counted else "",
            drill="widgets" if counted else "",
            available=True,
            note=widgets_note,
            blind="Widgets that never report (see Never reported); tenant and backend (widget events record neither).",
        ),
        unreported_figure(widgets),
        Figure(
            "p95_ms",
            "p95 latency",
            "ms",
            "95th percentile of a call's total time (from the histograms).",
            now_t.p95_ms,
            then_t.p95_ms,
            sample=f"{now_t.timed:,} timed calls",
            blind="Calls without a logged time; precision within a histogram bucket (1-2-5 ms steps).",
        ),
        Figure(
            "upstream_calls",
            "TomTom requests",
            "count",
            "Requests made to TomTom, retries included: what the calls cost.",
            now_t.upstream_calls,
            then_t.upstream_calls,
            blind="The map tiles a widget loads from TomTom with the caller's own key.",
        ),
        Figure(
            "server_error_rate",
            "Server & upstream errors",
            "rate",
            "Calls that ended `internal`, `unavailable`, `retry_later`, `malformed` or a code this "
            "version does not know / all calls: ours or TomTom's to fix.",
            now_t.server_error_rate,
            then_t.server_error_rate,
            sample=f"{now_t.server_errors:,} of {now_t.calls:,} calls",
            drill="calls",
            blind="Wrong answers that ended `ok`; `retry_later` from a tenant's own quota and "
            "`unavailable` from a caller's `data_url` look like TomTom's. " + not_ingested,
        ),
        Figure(
            "caller_error_rate",
            "Caller errors",
            "rate",
            f"Calls that ended {', '.join(f'`{code}`' for code in CALLER_ERRORS)} / all calls: only the "
            "caller can fix them.",
            now_t.caller_error_rate,
            then_t.caller_error_rate,
            sample=f"{now_t.caller_errors:,} of {now_t.calls:,} calls",
            drill="calls",
            blind="Mistakes a host corrected before calling; `unauthorized` from the server's own "
            "TomTom key is ours, counted here.",
        ),
    )
    return Overview(
        window=window,
        previous=window.previous,
        figures=figures,
        worst_hosts=ranked(
            current.hosts,
            before.hosts,
            baseline.hosts,
            baseline.total,
            host_series,
            buckets,
            widgets.hosts if widgets else None,
        ),
        worst_tools=ranked(current.tools, before.tools, baseline.tools, baseline.total, tool_series, buckets),
        widgets_counted=counted,
        freshness=freshness(now),
        partial_hour=window.end > now,
        baseline=baseline_window,
        bucket=bucket,
        silent_hosts=widgets.silent if widgets else (),
        funnel_days=(widgets.first, widgets.last) if widgets else None,
    )
