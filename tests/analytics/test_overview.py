"""The overview's figures are the ones the raw events give, for every preset (windows that cut
days at an hour) and dates, with tenant and backend filters; the worst hosts and tools; the
drill-down's groups; what the retention removed."""

from __future__ import annotations

from bisect import bisect_left
from datetime import UTC, date, datetime, timedelta

import pytest

from analytics.models import LATENCY_BOUNDS_MS, AppStatusEvent, IngestionMark, ToolCallEvent
from analytics.overview import Window, overview, spans
from analytics.selectors import ReportQuery, failing_call_groups, request_events, retention_gap
from analytics.tool_stats import CALLER_ERRORS, histogram_quantile
from tests.analytics.conftest import ingest
from tests.analytics.ops_data import ERRORS, JOINED, ops_lines

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 30, 14, 25, tzinfo=UTC)


@pytest.fixture
def ops() -> None:
    ingest(*ops_lines(NOW))


def raw(window: Window, **filters: str) -> dict[str, float | int | None]:
    """The overview's figures computed from the raw events of the window."""
    calls = ToolCallEvent.objects.filter(time__gte=window.start, time__lt=window.end, **filters)
    total = calls.count()
    errors = calls.exclude(outcome="ok").count()
    times = [t for t in calls.values_list("total_ms", flat=True) if t is not None]
    buckets = [bisect_left(LATENCY_BOUNDS_MS, t) for t in times]
    cumulative = [sum(1 for b in buckets if b <= i) for i in range(len(LATENCY_BOUNDS_MS))]
    caller = calls.filter(outcome__in=CALLER_ERRORS).count()
    widgets = AppStatusEvent.objects.filter(time__gte=window.start, time__lt=window.end)
    failed, drawn = widgets.filter(kind="failed").count(), widgets.filter(kind="drawn").count()
    counted = not filters
    return {
        "calls": total,
        "error_rate": errors / total if total else None,
        "server_error_rate": (errors - caller) / total if total else None,
        "caller_error_rate": caller / total if total else None,
        "widget_failure_rate": (failed / (failed + drawn) if failed + drawn else None) if counted else None,
        "p95_ms": histogram_quantile(0.95, len(times), cumulative),
        "upstream_calls": sum(calls.values_list("upstream_calls", flat=True)),
    }


def figures(found) -> tuple[dict, dict]:
    shown = [f for f in found.figures if f.available and f.name != "widget_unreported_rate"]  # test_funnel
    return {f.name: f.value for f in shown}, {f.name: f.previous for f in shown}


@pytest.mark.parametrize("preset", ["24h", "7d", "30d"])
def test_every_preset_equals_the_raw_events_now_and_before(ops, preset):
    window = Window.preset(preset, NOW)
    query = ReportQuery.from_filters(
        start=None, end=None, bucket=None, tool=None, client=None, since=window.start, until=window.end
    )

    now, before = figures(overview(query, window, now=NOW))

    assert now == pytest.approx(raw(window))
    assert before == pytest.approx(raw(window.previous))
    assert now["calls"] > 0 and before["calls"] > 0


def test_whole_days_and_the_tenant_and_backend_filters_equal_the_raw_events(ops):
    query = ReportQuery(date(2026, 11, 20), date(2026, 11, 27), tenant="acme", backend="tomtom-orbis-maps")
    window = Window.days(query)

    now, _ = figures(overview(query, window, now=NOW))

    assert now == pytest.approx(raw(window, tenant="acme", backend="tomtom-orbis-maps"))
    assert now["widget_failure_rate"] is None  # widget events record no tenant: not a fake zero


def test_a_window_is_read_from_whole_days_and_hourly_edges():
    hours, days = spans(datetime(2026, 11, 23, 15, tzinfo=UTC), datetime(2026, 11, 30, 15, tzinfo=UTC))
    assert hours == [
        (datetime(2026, 11, 23, 15, tzinfo=UTC), datetime(2026, 11, 24, tzinfo=UTC)),
        (datetime(2026, 11, 30, tzinfo=UTC), datetime(2026, 11, 30, 15, tzinfo=UTC)),
    ]
    assert days == (datetime(2026, 11, 24, tzinfo=UTC), datetime(2026, 11, 30, tzinfo=UTC))
    assert spans(datetime(2026, 11, 30, 1, tzinfo=UTC), datetime(2026, 11, 30, 5, tzinfo=UTC)) == (
        [(datetime(2026, 11, 30, 1, tzinfo=UTC), datetime(2026, 11, 30, 5, tzinfo=UTC))],
        None,
    )


def test_every_host_and_tool_is_ranked_with_its_figures_now_before_and_in_its_baseline(ops, settings):
    settings.ANALYTICS_MIN_EVENTS = 5
    window = Window.preset("30d", NOW)
    query = ReportQuery.from_filters(
        start=None, end=None, bucket=None, tool=None, client=None, since=window.start, until=window.end
    )

    found = overview(query, window, now=NOW)

    assert len(found.worst_hosts) == 9 and len(found.worst_tools) == 4  # every host and tool with calls
    steady = next(rank for rank in found.worst_hosts if rank.name == "ChatGPT/1.2026.317")
    calls = ToolCallEvent.objects.filter(client=steady.name, time__gte=window.start, time__lt=window.end)
    assert (steady.now.calls, steady.now.errors) == (calls.count(), calls.exclude(outcome="ok").count())
    assert steady.now.caller_errors == calls.filter(outcome__in=CALLER_ERRORS).count()
    before = ToolCallEvent.objects.filter(client=steady.name, time__gte=window.previous.start, time__lt=window.start)
    assert steady.before.calls == before.count()
    assert (found.baseline.start, found.baseline.end) == (window.previous.start, window.start)  # 30 days: the same
    assert steady.baseline.calls == before.count()
    assert len(steady.trend) == 31  # the days the window touches, whole, none after now
    assert [bucket for bucket, _, _ in steady.trend] == query.buckets(NOW)
    days = ToolCallEvent.objects.filter(client=steady.name, time__gte=query.buckets(NOW)[0], time__lt=window.end)
    widgets = AppStatusEvent.objects.filter(
        client=steady.name, kind__in=("drawn", "failed"), time__gte=query.buckets(NOW)[0], time__lt=window.end
    )
    sample = days.count() if steady.signal.noun == "calls" else widgets.count()
    assert sum(n for _, _, n in steady.trend) == sample


def test_the_failing_calls_group_by_message_and_a_request_id_finds_every_event(ops):
    query = ReportQuery(date(2026, 11, 1), date(2026, 11, 30))

    groups, count = failing_call_groups(query)

    assert count == 3 and {(g.code, g.message) for g in groups} == set(ERRORS.items())
    assert (
        sum(g.count for g in groups)
        == ToolCallEvent.objects.filter(time__gte=query.start_time, time__lt=query.end_time)
        .exclude(outcome="ok")
        .count()
    )
    events = request_events(JOINED, NOW - timedelta(days=1), NOW + timedelta(days=1))
    assert [(e.message, e.kind) for e in events] == [
        ("Tool call", "ok"),
        ("App data", "app_data"),
        ("App failed", "failed"),
    ]


def test_what_the_retention_removed_is_said_with_what_the_figures_still_count(ops):
    kept_from = datetime(2026, 11, 10, tzinfo=UTC)
    ToolCallEvent.objects.filter(time__lt=kept_from).delete()
    IngestionMark.objects.filter(family="ToolCall").update(kept_from=kept_from)
    query = ReportQuery(date(2026, 11, 1), date(2026, 11, 30))

    gap = retention_gap(query, "ToolCall")

    assert gap is not None and gap.kept_from == kept_from
    window = Window(query.start_time, kept_from, "")
    assert (
        gap.counted
        == overview(query, window, now=NOW).figures[1].value
        * overview(  # errors of those days
            query, window, now=NOW
        )
        .figures[0]
        .value
    )
    assert retention_gap(ReportQuery(date(2026, 11, 10), date(2026, 11, 30)), "ToolCall") is None
